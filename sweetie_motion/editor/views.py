"""
What the editor shows besides the table.

Per-joint plots of the interpolated trajectory, computed here from the RobotModel (the robot
itself is drawn by the GUI kit's QPainter view,
:class:`~sweetie_motion.gui.robot_view.RobotView3D`, shared by both windows; no rviz needed).
"""

from dataclasses import replace
from typing import List, Optional, Tuple

from PyQt5.QtCore import Qt
from PyQt5.QtGui import QColor, QImage, QPainter, QPen
from PyQt5.QtWidgets import QHBoxLayout, QSizePolicy, QWidget
from sweetie_motion.editor.plot_render import PlotRenderer, PlotRequest, RenderedPlot
from sweetie_motion.editor.table_checks import TableCheck
from sweetie_motion.gui.widgets import ElidedLabel, push_button
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.waypoints import WaypointsList


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
        # a long verdict is elided (the whole of it in the tooltip), not a reason for the
        # window to grow
        self.label = ElidedLabel('checks: -', 'checks_label')
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


class TrajectoryPlot(QWidget):
    """
    Positions and velocities of some joints as the controller interpolates them.

    Drawn by a worker thread (:class:`~sweetie_motion.editor.plot_render.PlotRenderer`), so
    that the window's thread, and a click on STOP, never wait for it; the play head and the
    checks' marks are drawn over the newest image here, at once. :meth:`take` (the window's
    pump) shows a finished image.
    """

    def __init__(self, model: Optional[RobotModel] = None) -> None:
        super().__init__()
        self.model = model
        self.renderer = PlotRenderer(model)
        #: the newest plot shown (its figure, violations, keyframe times), None: none yet
        self.rendered: Optional[RenderedPlot] = None
        self._image: Optional[QImage] = None
        self._request: Optional[PlotRequest] = None
        #: the play head's time [s, table time] (None: none)
        self.play_head: Optional[float] = None
        #: the motion checks' findings drawn: (table time [s], 'warn' or 'refuse')
        self.findings: List[Tuple[float, str]] = []
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.destroyed.connect(self.renderer.close)

    @property
    def figure(self):
        """Return the figure of the newest plot shown (None: none yet)."""
        return self.rendered.figure if self.rendered is not None else None

    @property
    def violations(self) -> List[str]:
        """Return the limits the newest plot shows broken."""
        return self.rendered.violations if self.rendered is not None else []

    @property
    def keyframe_times(self) -> List[float]:
        """Return the keyframe times of the newest plot [s, table time]."""
        return self.rendered.keyframe_times if self.rendered is not None else []

    @property
    def drawing(self) -> bool:
        """Return whether a plot is still being drawn (or not shown yet)."""
        return self.renderer.busy

    def show_trajectory(self, waypoints: WaypointsList, joints: Optional[List[str]] = None,
                        interpolation: str = 'akima', cursor: Optional[float] = None) -> None:
        """
        Draw the trajectory of the active rows (in the worker; :meth:`take` shows it).

        :param waypoints: the edited list (copied).
        :param joints: the joints to plot, the first few (``MAX_PLOTTED`` of plot_render) in
            the trajectory; default: those breaking a limit, then those that move most. Limits
            are checked for every joint.
        :param interpolation: the controller's interpolation.
        :param cursor: a time to mark [s, table time] (the selected row's).
        """
        self._request = PlotRequest(waypoints.copy(), None if joints is None else tuple(joints),
                                    interpolation, cursor, self._pixels())
        self.renderer.request(self._request)

    def take(self) -> bool:
        """Show the newest plot the worker finished, if any; return whether one came."""
        rendered = self.renderer.poll()
        if rendered is None:
            return False
        self.rendered = rendered
        rgba = rendered.rgba
        self._image = QImage(rgba.tobytes(), rgba.shape[1], rgba.shape[0],
                             QImage.Format_RGBA8888)
        self._image.setDevicePixelRatio(self.devicePixelRatioF())
        self.update()
        return True

    def set_play_head(self, time: Optional[float]) -> None:
        """Draw the play head at ``time`` [s, table time] (None: none), without replotting."""
        self.play_head = time
        self.update()

    def set_findings(self, findings: List[Tuple[float, str]]) -> None:
        """Mark the checks' findings: (table time [s], severity), without replotting."""
        self.findings = list(findings)
        self.update()

    def _pixels(self) -> Tuple[int, int]:
        ratio = self.devicePixelRatioF()
        return int(self.width() * ratio), int(self.height() * ratio)

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Draw the plot again at the new size."""
        super().resizeEvent(event)
        if self._request is not None and self._request.size != self._pixels():
            self._request = replace(self._request, size=self._pixels())
            self.renderer.request(self._request)

    def paintEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Draw the newest image, the checks' marks and the play head over it."""
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.white)
        if self._image is None or self.rendered is None:
            painter.end()
            return
        painter.drawImage(0, 0, self._image)
        ratio = self.devicePixelRatioF()
        marks = [(t, QColor('red') if severity == 'refuse' else QColor('darkorange'),
                  Qt.DashLine, 1.2) for t, severity in self.findings]
        if self.play_head is not None:
            marks.append((self.play_head, QColor('purple'), Qt.SolidLine, 1.5))
        for (left, top, right, bottom), (t0, t1) in self.rendered.axes:
            for time, color, style, width in marks:
                if t1 <= t0 or not t0 <= time <= t1:
                    continue
                x = (left + (time - t0) / (t1 - t0) * (right - left)) / ratio
                painter.setPen(QPen(color, width, style))
                painter.drawLine(int(round(x)), int(top / ratio), int(round(x)),
                                 int(bottom / ratio))
        painter.end()
