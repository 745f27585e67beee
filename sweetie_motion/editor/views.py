"""
What the editor shows besides the table.

Per-joint plots of the interpolated trajectory, computed here from the RobotModel (the robot
itself is drawn by the console's QPainter view, :class:`~sweetie_motion.console.views.RobotView3D`,
shared by both windows; no rviz needed).
"""

from typing import List, Optional, Tuple

from matplotlib.backends.backend_qt5agg import FigureCanvasQTAgg
from matplotlib.figure import Figure
import numpy as np
from PyQt5.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget
from sweetie_motion.editor.table_checks import TableCheck
from sweetie_motion.editor.widgets import push_button
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.analysis import goal_motion, limit_flags, LimitFlags
from sweetie_motion.trajectory.retime import limits_of
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList

#: at most this many joints are plotted at once (the selected columns, else the first ones)
MAX_PLOTTED = 4


class CheckLine(QWidget):
    """
    The motion checks' verdict on the table in one line, and a button to its first finding.

    The label (``checks_label``) says ok with the worst figures, or the findings' count and
    the first one's check, time and row (all of them in its tooltip); ``checks_show`` moves
    the play head to the next finding, so the 3D view shows that moment.
    """

    def __init__(self) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel('checks: -')
        self.label.setObjectName('checks_label')
        # a long verdict is cut, not a reason for the window to grow
        self.label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.show_button = push_button('Show', 'checks_show', 'move the play head to the '
                                       'next finding of the motion checks')
        self.show_button.setEnabled(False)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.show_button)

    def checking(self) -> None:
        """Say that a check of the changed table runs (the last verdict stays meanwhile)."""
        text = self.label.text()
        if not text.endswith('(checking...)'):
            self.label.setText(f'{text} (checking...)')

    def show_result(self, result: TableCheck) -> None:
        """Show a check's verdict."""
        findings = result.findings
        refused = any(f.finding.severity == 'refuse' for f in findings)
        color = '#c00000' if refused else '#b06000' if findings or result.error else '#207020'
        self.label.setText(result.summary())
        self.label.setStyleSheet(f'color: {color}')
        self.label.setToolTip('\n'.join(f.describe() for f in findings) or result.summary())
        self.show_button.setEnabled(bool(findings))


class TrajectoryPlot(FigureCanvasQTAgg):
    """
    Positions and velocities of some joints as the controller interpolates them.

    Keyframes are marked, position and velocity limits are dashed lines, and samples beyond a
    limit are drawn in red.
    """

    def __init__(self, model: Optional[RobotModel] = None) -> None:
        # fixed margins: tight_layout measured every label at every draw (0.1 s of 0.2)
        self.figure = Figure(figsize=(6, 5))
        self.figure.subplots_adjust(left=0.14, right=0.86, top=0.9, bottom=0.07, hspace=0.3)
        super().__init__(self.figure)
        self.model = model
        self.violations: List[str] = []
        #: the keyframe times drawn [s, table times] and the cursor's time (None: none)
        self.keyframe_times: List[float] = []
        self.cursor: Optional[float] = None
        #: the play head's time [s, table time] (None: none) and its lines on the plots
        self.play_head: Optional[float] = None
        self._play_lines: List = []
        self._position_axes: List = []
        #: the motion checks' findings drawn: (table time [s], 'warn' or 'refuse')
        self.findings: List[Tuple[float, str]] = []
        self._finding_lines: List = []

    def set_play_head(self, time: Optional[float]) -> None:
        """Draw the play head at ``time`` [s, table time] (None: none), without replotting."""
        self.play_head = time
        for line in self._play_lines:
            line.remove()
        self._play_lines = [] if time is None else [
            axes.axvline(time, color='tab:purple', linewidth=1.5, gid='play_head')
            for axes in self._position_axes]
        self.draw_idle()

    def set_findings(self, findings: List[Tuple[float, str]]) -> None:
        """Mark the checks' findings: (table time [s], severity), without replotting."""
        self.findings = list(findings)
        for line in self._finding_lines:
            line.remove()
        self._finding_lines = [
            axes.axvline(time, color='red' if severity == 'refuse' else 'darkorange',
                         linestyle='--', linewidth=1.2, gid='finding')
            for time, severity in self.findings for axes in self._position_axes]
        self.draw_idle()

    def show_trajectory(self, waypoints: WaypointsList, joints: Optional[List[str]] = None,
                        interpolation: str = 'akima', cursor: Optional[float] = None) -> None:
        """
        Redraw the trajectory of the active rows.

        The time axis is the table's: a first row at t = 2 s is drawn at 2 s, where the
        cursor of a selected row at 2 s is.

        :param waypoints: the edited list.
        :param joints: the joints to plot, the first :data:`MAX_PLOTTED` of them that are
            in the trajectory; default: those breaking a limit, then those that move most.
            Limits are checked for every joint.
        :param interpolation: the controller's interpolation.
        :param cursor: a time to mark [s, table time] (the selected row's).
        """
        self.figure.clear()
        self.violations = []
        self.keyframe_times = []
        self.cursor = cursor
        self._position_axes = []
        self._play_lines = []
        self._finding_lines = []
        try:
            goal = waypoints.build_goal(whole=True)
        except WaypointError as error:
            axes = self.figure.add_subplot(111)
            axes.text(0.5, 0.5, str(error), ha='center', va='center', wrap=True)
            axes.set_axis_off()
            self.draw_idle()
            return
        motion = goal_motion(goal, interpolation)
        real = motion.joints
        # build_goal counts from the first active row; the plot counts as the table does
        origin = waypoints.waypoints[waypoints.active_indices()[0]].time
        times = motion.times + origin
        positions = motion.positions
        self.keyframe_times = [float(t) for t in times]
        sampled = motion.sample(300)
        grid, position, velocity = sampled.times + origin, sampled.position, sampled.velocity
        limits = limits_of(self.model, real) if self.model is not None else None
        if limits is not None:
            flags = limit_flags(sampled, limits)
            self.violations.extend(flags.describe(real, limits))
        else:
            flags = LimitFlags(np.zeros_like(position, dtype=bool),
                               np.zeros_like(position, dtype=bool))
        outside, fast = flags.outside, flags.fast
        broken = flags.broken()
        if joints is None:
            spread = np.ptp(positions, axis=0) if len(positions) else np.zeros(len(real))
            order = sorted(range(len(real)), key=lambda k: (-int(broken[k]), -spread[k]))
            chosen = order[:MAX_PLOTTED]
        else:
            chosen = [real.index(j) for j in joints if j in real][:MAX_PLOTTED]
        for n, k in enumerate(chosen):
            joint = real[k]
            axes = self.figure.add_subplot(len(chosen), 1, n + 1)
            axes.plot(grid, position[:, k], color='tab:blue')
            axes.plot(times, positions[:, k], 'o', color='black', markersize=4, gid='keyframes')
            twin = axes.twinx()
            twin.plot(grid, velocity[:, k], color='tab:orange', alpha=0.6)
            twin.tick_params(labelsize=7)
            if self.model is not None:
                info = self.model.get_joint_info(joint)
                for limit in (info.lower, info.upper):
                    if np.isfinite(limit):
                        axes.axhline(limit, color='red', linestyle='--', linewidth=0.8)
                if np.isfinite(info.velocity):
                    for limit in (-info.velocity, info.velocity):
                        twin.axhline(limit, color='orange', linestyle=':', linewidth=0.8)
                if outside[:, k].any():
                    axes.plot(grid[outside[:, k]], position[outside[:, k], k], '.',
                              color='red')
                if fast[:, k].any():
                    twin.plot(grid[fast[:, k]], velocity[fast[:, k], k], '.', color='red')
            if cursor is not None:
                axes.axvline(cursor, color='green', linewidth=1, gid='cursor')
            axes.set_ylabel(joint, fontsize=8)
            axes.tick_params(labelsize=7)
            self._position_axes.append(axes)
        if chosen:
            unseen = [real[k] for k in range(len(real)) if broken[k] and k not in chosen]
            hidden = (f'; beyond a limit, not shown: {", ".join(unseen)}' if unseen else '')
            self.figure.axes[0].set_title(
                f'{len(chosen)} of {len(real)} joints (click a cell or a column header to '
                f'choose){hidden}\nposition (blue), velocity (orange), limits dashed, '
                'violations red', fontsize=8)
        self.set_play_head(self.play_head)
        self.set_findings(self.findings)
