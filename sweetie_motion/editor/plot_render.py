"""
The editor's trajectory plot, drawn in a worker thread (matplotlib's Agg, no Qt).

Building and drawing the plot of a table takes 0.1-0.3 s; on the window's thread it held every
click and key for that long, the STOP button's too (a stop waited behind a plot). Here a worker
draws each request into an RGBA image; a newer request replaces a waiting one, and the window
shows the newest image (:class:`~sweetie_motion.editor.views.TrajectoryPlot`), drawing the play
head and the checks' marks over it itself, at once.
"""

from dataclasses import dataclass, field
import threading
from typing import List, Optional, Tuple

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
import numpy as np
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.analysis import goal_motion, limit_flags, LimitFlags
from sweetie_motion.trajectory.retime import limits_of
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList

#: at most this many joints are plotted at once (the selected columns, else the first ones)
MAX_PLOTTED = 4
#: the figure's resolution [dots per inch]
DPI = 100


@dataclass(frozen=True)
class PlotRequest:
    """
    What to draw: a copy of the table, the joints, the interpolation, the cursor, the size.

    :param joints: the joints to plot (None: those breaking a limit, then those moving most).
    :param cursor: a time to mark [s, table time] (the selected row's), None: none.
    :param size: (width, height) of the image [px].
    """

    waypoints: WaypointsList
    joints: Optional[Tuple[str, ...]]
    interpolation: str
    cursor: Optional[float]
    size: Tuple[int, int]


@dataclass
class RenderedPlot:
    """
    A drawn plot.

    :param rgba: the image, shape (height, width, 4), uint8.
    :param axes: per plotted joint, its position axes: (left, top, right, bottom) [px, from the
        image's top left] and the time span (t0, t1) [s] the axes show.
    """

    request: PlotRequest
    rgba: np.ndarray
    figure: Figure
    violations: List[str] = field(default_factory=list)
    keyframe_times: List[float] = field(default_factory=list)
    axes: List[Tuple[Tuple[float, float, float, float], Tuple[float, float]]] = \
        field(default_factory=list)


def draw_plot(model: Optional[RobotModel], request: PlotRequest) -> RenderedPlot:
    """
    Draw the trajectory of the table's active rows into an image.

    The time axis is the table's: a first row at t = 2 s is drawn at 2 s, where the cursor of
    a selected row at 2 s is. Keyframes are marked, position and velocity limits are dashed
    lines, and samples beyond a limit are drawn in red.
    """
    width, height = max(request.size[0], 50), max(request.size[1], 50)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    # fixed margins: tight_layout measured every label at every draw (0.1 s of 0.2)
    figure.subplots_adjust(left=0.14, right=0.86, top=0.9, bottom=0.07, hspace=0.3)
    canvas = FigureCanvasAgg(figure)
    rendered = RenderedPlot(request, np.zeros((0, 0, 4), np.uint8), figure)
    try:
        _plot_joints(model, request, figure, rendered)
    except Exception as error:  # noqa: B902 -- said in the plot: the worker goes on
        figure.clear()
        axes = figure.add_subplot(111)
        text = str(error) if isinstance(error, WaypointError) else \
            f'the plot failed: {type(error).__name__}: {error}'
        axes.text(0.5, 0.5, text, ha='center', va='center', wrap=True)
        axes.set_axis_off()
    canvas.draw()
    rendered.rgba = np.asarray(canvas.buffer_rgba()).copy()
    rows = rendered.rgba.shape[0]
    for axes in [a for a in figure.axes if a.get_gid() == 'position']:
        box = axes.get_window_extent()      # pixels from the bottom left
        low, high = axes.get_xlim()
        rendered.axes.append(((box.x0, rows - box.y1, box.x1, rows - box.y0), (low, high)))
    return rendered


def _plot_joints(model: Optional[RobotModel], request: PlotRequest, figure: Figure,
                 rendered: RenderedPlot) -> None:
    waypoints = request.waypoints
    goal = waypoints.build_goal(whole=True)
    motion = goal_motion(goal, request.interpolation)
    real = motion.joints
    # build_goal counts from the first active row; the plot counts as the table does
    origin = waypoints.waypoints[waypoints.active_indices()[0]].time
    times = motion.times + origin
    positions = motion.positions
    rendered.keyframe_times = [float(t) for t in times]
    sampled = motion.sample(300)
    grid, position, velocity = sampled.times + origin, sampled.position, sampled.velocity
    limits = limits_of(model, real) if model is not None else None
    if limits is not None:
        flags = limit_flags(sampled, limits)
        rendered.violations.extend(flags.describe(real, limits))
    else:
        flags = LimitFlags(np.zeros_like(position, dtype=bool),
                           np.zeros_like(position, dtype=bool))
    broken = flags.broken()
    if request.joints is None:
        spread = np.ptp(positions, axis=0) if len(positions) else np.zeros(len(real))
        order = sorted(range(len(real)), key=lambda k: (-int(broken[k]), -spread[k]))
        chosen = order[:MAX_PLOTTED]
    else:
        chosen = [real.index(j) for j in request.joints if j in real][:MAX_PLOTTED]
    for n, k in enumerate(chosen):
        axes = figure.add_subplot(len(chosen), 1, n + 1, gid='position')
        axes.plot(grid, position[:, k], color='tab:blue')
        axes.plot(times, positions[:, k], 'o', color='black', markersize=4, gid='keyframes')
        twin = axes.twinx()
        twin.plot(grid, velocity[:, k], color='tab:orange', alpha=0.6)
        twin.tick_params(labelsize=7)
        if model is not None:
            _limits(model, real[k], axes, twin)
            outside, fast = flags.outside[:, k], flags.fast[:, k]
            if outside.any():
                axes.plot(grid[outside], position[outside, k], '.', color='red')
            if fast.any():
                twin.plot(grid[fast], velocity[fast, k], '.', color='red')
        if request.cursor is not None:
            axes.axvline(request.cursor, color='green', linewidth=1, gid='cursor')
        axes.set_ylabel(real[k], fontsize=8)
        axes.tick_params(labelsize=7)
    if chosen:
        unseen = [real[k] for k in range(len(real)) if broken[k] and k not in chosen]
        hidden = (f'; beyond a limit, not shown: {", ".join(unseen)}' if unseen else '')
        figure.axes[0].set_title(
            f'{len(chosen)} of {len(real)} joints (click a cell or a column header to '
            f'choose){hidden}\nposition (blue), velocity (orange), limits dashed, '
            'violations red', fontsize=8)


def _limits(model: RobotModel, joint: str, axes, twin) -> None:
    info = model.get_joint_info(joint)
    for limit in (info.lower, info.upper):
        if np.isfinite(limit):
            axes.axhline(limit, color='red', linestyle='--', linewidth=0.8)
    if np.isfinite(info.velocity):
        for limit in (-info.velocity, info.velocity):
            twin.axhline(limit, color='orange', linestyle=':', linewidth=0.8)


class PlotRenderer:
    """
    Draws plot requests in a thread of its own; the newest request wins.

    :param model: the robot model (limits), None: none.
    """

    def __init__(self, model: Optional[RobotModel]) -> None:
        self.model = model
        self._lock = threading.Condition()
        self._waiting: Optional[PlotRequest] = None
        self._drawing = False
        self._done: Optional[RenderedPlot] = None
        self._closed = False
        self._thread = threading.Thread(target=self._work, name='editor_plot', daemon=True)
        self._thread.start()

    def request(self, request: PlotRequest) -> None:
        """Draw ``request`` next (a request still waiting is dropped)."""
        with self._lock:
            self._waiting = request
            self._lock.notify()

    @property
    def busy(self) -> bool:
        """Return whether a request waits or is being drawn, or an image is not taken yet."""
        with self._lock:
            return self._waiting is not None or self._drawing or self._done is not None

    def poll(self) -> Optional[RenderedPlot]:
        """Return the newest drawn plot not taken yet (None: none)."""
        with self._lock:
            done, self._done = self._done, None
        return done

    def close(self) -> None:
        """End the worker (a drawing under way is finished first)."""
        with self._lock:
            self._closed = True
            self._lock.notify()
        self._thread.join(5.0)

    def _work(self) -> None:
        while True:
            with self._lock:
                while self._waiting is None and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                request, self._waiting = self._waiting, None
                assert request is not None   # the wait above ends on a request or on close
                self._drawing = True
            try:
                rendered = draw_plot(self.model, request)
            finally:
                with self._lock:
                    self._drawing = False
            with self._lock:
                if self._waiting is None:       # a newer request makes this one old news
                    self._done = rendered
