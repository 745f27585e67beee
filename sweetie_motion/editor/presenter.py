"""
The trajectory editor's presenter (R-EDIT-1..8): its state, actions and rules, without Qt or ROS.

The editor has three layers, as rqt plugins do:

- this presenter: the edited :class:`~sweetie_motion.editor.document.EditorDocument`, the
  selection, the robot's pose and links, the running goal, the recording, the messages, and
  every action a person can take, with the rules that refuse bad ones (and say why);
- the views (:mod:`sweetie_motion.editor.window` and its widgets): layout, and forwarding of
  clicks to the presenter; they redraw when the presenter says what changed;
- the adapters (:mod:`sweetie_motion.editor.bridge`): ROS (robot and storage).

The presenter talks to the adapters with plain values only: it hands **requests** (the
dataclasses below, e.g. :class:`ExecuteGoal`) to the ``send`` callable, and the adapters give
**events** back to :meth:`EditorPresenter.handle` (e.g. :class:`GoalFinished`), in the GUI
thread. Nothing here waits: every request's answer is an event, and the adapters guarantee
that one comes (an answer, an error or a time-out).

Listeners (:meth:`EditorPresenter.subscribe`) are called with what changed: one of
:data:`TOPICS`.
"""

from dataclasses import dataclass, field
import math
import re
import time as _time
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.editor.dispatch import EventHandlers
from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.events import LinksChanged, PoseReceived
from sweetie_motion.editor.links import LinkWatch
from sweetie_motion.editor.workspace import (
    dump_table, read_table, tidy, tidy_goal, UnsavedBackups, Workspace,
)
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
from sweetie_motion.trajectory.goal import approach_time, SUPPORT_PREFIX, TrajectoryGoal
from sweetie_motion.trajectory.keyframes import DEFAULT_TOLERANCE, fit_keyframes, KeyframeFit
from sweetie_motion.trajectory.retime import limits_of, retime_waypoints
from sweetie_motion.trajectory.spline import build_spline
from sweetie_motion.trajectory.timing import limit_excess
from sweetie_motion.trajectory.validation import GoalError, validate_goal
from sweetie_motion.trajectory.waypoints import DEFAULT_STEP, Waypoint, WaypointError, \
    WaypointsList

#: what listeners are told changed
TOPICS = ('document', 'selection', 'pose', 'links', 'execution', 'servos', 'message', 'names',
          'recording', 'close')
#: the parts of the robot whose link the editor shows
PARTS = ('controller', 'follow_joint_state', 'storage', 'servos')
#: readable names of :data:`PARTS`
PART_NAMES = {'controller': 'trajectory controller', 'follow_joint_state': 'FollowJointState',
              'storage': 'storage', 'servos': 'torque switch'}
#: the speed slider's range [%]
SPEED_RANGE = (25, 200)
#: seconds a result may come after the goal's planned end before the editor gives up on it
RESULT_MARGIN = 10.0
#: how often the support legs are published while "Publish contact list" is on [s]
SUPPORT_PERIOD = 0.5
#: half-window of the smoothing of a recording [s]: a few samples, enough to take the steps of
#: a slider (or of a servo's resolution) out of the keyframes
RECORD_SMOOTHING = 0.05
#: ways a goal ends
SUCCEEDED, FAILED, STOPPED, LOST = 'succeeded', 'failed', 'stopped', 'lost'

_POINT = re.compile(r'\bpoint (\d+)\b')


# --- requests: presenter -> adapters --------------------------------------------------------


@dataclass(frozen=True)
class ExecuteGoal:
    """Send ``goal`` to the trajectory controller; the outcome comes as :class:`GoalFinished`."""

    goal_id: int
    goal: TrajectoryGoal
    result_timeout: float


@dataclass(frozen=True)
class CancelGoal:
    """Cancel the goal ``goal_id`` (the robot decelerates and holds)."""

    goal_id: int


@dataclass(frozen=True)
class SetPose:
    """Move the robot to a pose through FollowJointState (joint_states_set)."""

    names: Tuple[str, ...]
    positions: Tuple[float, ...]


@dataclass(frozen=True)
class MoveByHand:
    """Move freed servos as a person's hand would (the virtual robot's ``~/move_by_hand``)."""

    names: Tuple[str, ...]
    positions: Tuple[float, ...]


@dataclass(frozen=True)
class PublishMarker:
    """Publish the selected row on joint_states_marker_set."""

    names: Tuple[str, ...]
    positions: Tuple[float, ...]


@dataclass(frozen=True)
class PublishSupport:
    """Publish SupportState on support_state_override: leg -> 1 (supporting) or 0."""

    support: Tuple[Tuple[str, float], ...]


@dataclass(frozen=True)
class SetTorqueOff:
    """
    Free (True) or hold (False) the servos; the outcome comes as :class:`ServoState`.

    :param chains: only the servos of these chains (empty: all of the torque switch's).
    """

    off: bool
    chains: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ListTrajectories:
    """Ask the storage for its names; they come as :class:`TrajectoriesListed`."""


@dataclass(frozen=True)
class LoadTrajectory:
    """Load a stored trajectory; it comes as :class:`TrajectoryLoaded`."""

    name: str


@dataclass(frozen=True)
class SaveTrajectory:
    """Store a trajectory; the outcome comes as :class:`TrajectorySaved`."""

    name: str
    goal: TrajectoryGoal


@dataclass(frozen=True)
class StartRecording:
    """Start keeping every joint_states sample of ``joints``."""

    joints: Tuple[str, ...]


@dataclass(frozen=True)
class StopRecording:
    """Stop recording; the samples come as :class:`RecordingFinished`."""


# --- events: adapters -> presenter ------------------------------------------------------------


@dataclass(frozen=True)
class GoalAccepted:
    """The controller accepted the goal."""

    goal_id: int


@dataclass(frozen=True)
class GoalFeedback:
    """Where the running goal is: ``time`` of ``duration`` [s]."""

    goal_id: int
    time: float
    duration: float


@dataclass(frozen=True)
class GoalFinished:
    """
    How a goal ended.

    :param outcome: :data:`SUCCEEDED`, :data:`FAILED` (rejected or aborted), :data:`STOPPED`
        (cancelled) or :data:`LOST` (no answer: the motion process went away).
    :param code: the action's error_code (0 when none).
    :param message: the controller's error_string, or the adapter's reason.
    """

    goal_id: int
    outcome: str
    code: int
    message: str


@dataclass(frozen=True)
class ServoState:
    """The servos: ``torque_off`` True (free), False (holding), None (unknown)."""

    torque_off: Optional[bool]
    message: str = ''


@dataclass(frozen=True)
class TrajectoriesListed:
    """The stored names (or why there are none)."""

    names: Tuple[str, ...]
    error: str = ''


@dataclass(frozen=True)
class TrajectoryLoaded:
    """A stored trajectory, or why it could not be loaded (``goal`` None)."""

    name: str
    goal: Optional[TrajectoryGoal]
    error: str = ''


@dataclass(frozen=True)
class TrajectorySaved:
    """The outcome of a save: ``error`` is '' when it is stored."""

    name: str
    error: str = ''


@dataclass(frozen=True)
class RecordingFinished:
    """
    The recorded samples.

    :param times: sample times (the joint_states stamps), shape (m,) [s].
    :param names: the recorded joints (n).
    :param positions: shape (m, n) [rad].
    :param error: why nothing was recorded ('' when samples came).
    """

    times: Tuple[float, ...]
    names: Tuple[str, ...]
    positions: Tuple[Tuple[float, ...], ...]
    error: str = ''


# --- state ------------------------------------------------------------------------------------


@dataclass
class Message:
    """
    What the message area shows.

    :param level: 'info', 'warning' or 'error'.
    :param row: the table row it is about (0-based), None when none.
    :param column: the table column it is about ('time', a joint), '' when none.
    """

    text: str
    level: str = 'info'
    row: Optional[int] = None
    column: str = ''


@dataclass
class Execution:
    """
    The goal Execute sent.

    :param rows: the table row of each point of the goal (to name rows in errors).
    :param duration: the goal's duration [s].
    """

    goal_id: int
    rows: List[int]
    duration: float
    accepted: bool = False
    stopping: bool = False
    progress: float = 0.0


@dataclass
class Recording:
    """
    A recording in progress, or its keyframes waiting to be accepted.

    :param tolerance: how far the keyframes' spline may stray from the recording [rad].
    :param smoothing: half-window of the recording's smoothing [s].
    :param slowdown: how much slower the controller would play the keyframes to keep the
        limits (1: within them).
    """

    joints: List[str]
    tolerance: float
    freed_servos: bool
    smoothing: float = 0.0
    #: the chains whose servos the recording freed (empty: all)
    freed_chains: Tuple[str, ...] = ()
    fit: Optional[KeyframeFit] = None
    waypoints: Optional[WaypointsList] = None
    samples: int = 0
    slowdown: float = 1.0
    #: the recording (strictly increasing times [s], positions [rad]), once stopped
    times: Any = None
    positions: Any = None


@dataclass
class _Clip:
    joints: List[str]
    rows: List[Waypoint] = field(default_factory=list)


class EditorError(SweetieMotionError):
    """
    An action the editor refuses; the message says why.

    :param row: the table row concerned (0-based), None when none.
    :param column: the column concerned, '' when none.
    """

    def __init__(self, message: str, row: Optional[int] = None, column: str = '') -> None:
        self.row = row
        self.column = column
        super().__init__(message)


def rows_count(count: int) -> str:
    """Return e.g. '1 row', '5 rows'."""
    return f'{count} row{"" if count == 1 else "s"}'


def rows_named(text: str, rows: Sequence[int]) -> str:
    """
    Return a controller message with its 0-based goal points named as table rows.

    The controller counts the points of the goal it got from 0 ("joint51 point 2 = ..."); the
    table counts rows from 1 and the goal may skip disabled rows or run backward.

    :param rows: the table row (0-based) of each point of the goal.
    """
    def row(match: 're.Match') -> str:
        k = int(match.group(1))
        return f'row {rows[k] + 1}' if 0 <= k < len(rows) else match.group(0)
    return _POINT.sub(row, text)


def clean_recording(times: Sequence[float], positions: Any) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return the samples with strictly increasing times (later duplicates dropped).

    joint_states may repeat a stamp (a publisher that catches up sends the same tick twice) or
    come out of order across a restart; the keyframe fit needs strictly increasing times.

    :param times: shape (m,) [s].
    :param positions: shape (m, n) [rad].
    :return: (times (k,), positions (k, n)).
    """
    t = np.asarray(times, dtype=float)
    y = np.asarray(positions, dtype=float).reshape(len(t), -1)
    keep = []
    last = -math.inf
    for k, stamp in enumerate(t):
        if stamp > last:
            keep.append(k)
            last = stamp
    return t[keep], y[keep]


def parse_number(text: Any, what: str, row: Optional[int] = None) -> float:
    """
    Return ``text`` as a finite float.

    :raises EditorError: not a number (naming ``what`` and the row).
    """
    try:
        value = float(str(text).strip().replace(',', '.'))
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        where = f' (row {row + 1}, {what})' if row is not None else f' ({what})'
        raise EditorError(f'{str(text)!r} is not a number{where}', row, what)
    return value


class EditorPresenter:
    """
    The editor without its widgets.

    :param send: hands a request to the adapters (the bridge's ``submit``).
    :param model: the configured RobotModel (limits, sliders, Fit to limits); None: no limits.
    :param workspace: backups and tables; None: none are written.
    :param legs: the chains that can be support legs.
    :param interpolation: the controller's interpolation (``akima`` or ``cubic``).
    :param backup_period: shortest time between two backups [s].
    :param clock: monotonic clock [s].
    """

    def __init__(self, send: Callable[[object], None], model: Any = None,
                 workspace: Optional[Workspace] = None, legs: Sequence[str] = (),
                 interpolation: str = 'akima', backup_period: float = 30.0,
                 clock: Callable[[], float] = _time.monotonic) -> None:
        self.send = send
        self.model = model
        self.workspace = workspace
        self.legs = list(legs)
        self.interpolation = interpolation
        self.clock = clock
        self._link_watch = LinkWatch(clock(), 'Execute, Save and Load')
        #: the bridge's events and who takes each
        self._handlers = EventHandlers('the editor')
        self._handlers.register(PoseReceived, self._on_pose_received)
        self._handlers.register(LinksChanged, self._on_links_changed)
        self._handlers.register(GoalAccepted, self._on_goal_accepted)
        self._handlers.register(GoalFeedback, self._on_goal_feedback)
        self._handlers.register(GoalFinished, self._on_goal_finished)
        self._handlers.register(ServoState, self._on_servo_state)
        self._handlers.register(TrajectoriesListed, self._on_trajectories_listed)
        self._handlers.register(TrajectoryLoaded, self._on_trajectory_loaded)
        self._handlers.register(TrajectorySaved, self._on_trajectory_saved)
        self._handlers.register(RecordingFinished, self._on_recording_finished)
        self.document = EditorDocument()
        self.document.subscribe(self._document_changed)
        self.selection: List[int] = []
        self.current_pose: Dict[str, float] = {}
        self.links: Dict[str, bool] = dict.fromkeys(PARTS, False)
        self.virtual_robot = False
        self.execution: Optional[Execution] = None
        self.last_outcome = ''
        self.servos_off: Optional[bool] = None
        #: the chains whose servos this editor freed (None: all of them, when any are off)
        self.free_chains: Optional[FrozenSet[str]] = None
        self.servo_message = ''
        self._servo_report = ServoState(None, '')
        self.message = Message('')
        self.names: List[str] = []
        self.recording: Optional[Recording] = None
        self.speed = 100
        self.backward = False
        self.publish_support = False
        self.support: Dict[str, bool] = dict.fromkeys(self.legs, True)
        self._clip: Optional[_Clip] = None
        self._saving: Optional[Tuple[str, WaypointsList, bool]] = None
        self._goal_ids = 0
        self._listeners: List[Callable[[str], None]] = []
        self._last_support = -math.inf
        #: when the table is backed up (None: no workspace, no backups)
        self.backups = UnsavedBackups(workspace.backup, backup_period, clock,
                                      'an untitled trajectory') if workspace is not None else None

    # --- listeners -----------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of :data:`TOPICS` changes."""
        self._listeners.append(listener)

    def _notify(self, topic: str) -> None:
        for listener in list(self._listeners):
            listener(topic)

    def _document_changed(self) -> None:
        count = len(self.document.waypoints)
        kept = [r for r in self.selection if r < count]
        if kept != self.selection:
            self.selection = kept
        self._notify('document')

    # --- messages ------------------------------------------------------------------------------

    def say(self, text: str, level: str = 'info', row: Optional[int] = None,
            column: str = '') -> None:
        """Show a message in the message area (it replaces the one before)."""
        self.message = Message(text, level, row, column)
        self._notify('message')

    def _refused(self, error: SweetieMotionError) -> bool:
        self.say(str(error), 'error', getattr(error, 'row', None), getattr(error, 'column', ''))
        return False

    def _edit(self, label: str, change: Callable[[WaypointsList], Any], done: str = ''
              ) -> bool:
        try:
            self.document.edit(label, change)
        except (WaypointError, EditorError) as error:
            return self._refused(error)
        self.say(done or label)
        return True

    # --- reading -------------------------------------------------------------------------------

    @property
    def waypoints(self) -> WaypointsList:
        """Return the edited list."""
        return self.document.waypoints

    @property
    def running(self) -> bool:
        """Return whether a goal of the editor runs."""
        return self.execution is not None

    @property
    def can_execute(self) -> bool:
        """Return whether Execute may be clicked: the controller is there, nothing runs."""
        return self.links.get('controller', False) and self.execution is None

    @property
    def title(self) -> str:
        """Return the window title: name, unsaved mark."""
        mark = ' *' if self.document.modified else ''
        return f'{self.document.name or "untitled"}{mark} - sweetie_motion trajectory editor'

    def available_joints(self) -> List[str]:
        """Return the joints a trajectory can use: joint_states' (or the model's) and support."""
        joints = list(self.current_pose)
        if not joints and self.model is not None:
            joints = self.model.list_all_joints()
        return joints + [f'{SUPPORT_PREFIX}{leg}' for leg in self.legs]

    def limits_of(self, joint: str) -> Optional[Tuple[float, float]]:
        """Return the position limits of ``joint`` [rad] (None: no model or not a joint)."""
        if self.model is None or joint.startswith(SUPPORT_PREFIX):
            return None
        try:
            info = self.model.get_joint_info(joint)
        except SweetieMotionError:
            return None
        return float(info.lower), float(info.upper)

    def outside_limits(self, joint: str, value: float) -> Optional[str]:
        """Return why ``value`` is beyond the limits of ``joint`` (None when within)."""
        limits = self.limits_of(joint)
        if limits is None:
            return None
        lower, upper = limits
        if lower - 1e-9 <= value <= upper + 1e-9:
            return None
        return (f'{joint} = {value:.4g} is outside its position limits [{lower:.4g}, '
                f'{upper:.4g}] rad')

    # --- selection -----------------------------------------------------------------------------

    def select(self, rows: Sequence[int]) -> None:
        """Select table rows (0-based); one selected row is published as the marker."""
        count = len(self.waypoints)
        rows = sorted({int(r) for r in rows if 0 <= int(r) < count})
        if rows == self.selection:
            return
        self.selection = rows
        self._notify('selection')
        if len(rows) == 1:
            pose = self._real(self.waypoints.pose(rows[0]))
            self.send(PublishMarker(tuple(pose), tuple(pose.values())))

    @property
    def selected_row(self) -> Optional[int]:
        """Return the last selected row (None without a selection)."""
        return self.selection[-1] if self.selection else None

    def _need_selection(self) -> List[int]:
        if not self.selection:
            raise EditorError('select a row first')
        return list(self.selection)

    @staticmethod
    def _real(pose: Mapping[str, float]) -> Dict[str, float]:
        return {j: v for j, v in pose.items() if not j.startswith(SUPPORT_PREFIX)}

    # --- the trajectory ------------------------------------------------------------------------

    def new_trajectory(self, joints: Optional[Sequence[str]] = None) -> None:
        """
        Start an empty, untitled trajectory (confirm unsaved changes before calling).

        :param joints: its joints; default: the joints of the trajectory before.
        """
        keep = list(self.waypoints.joints) if joints is None else list(joints)
        self.document.replace(WaypointsList(keep), '', clean=True)
        self.selection = []
        self.say('new trajectory' + (f' with {len(keep)} joints' if keep else
                                     ': choose its joints in Setup, then add poses'))

    def set_joints(self, joints: Sequence[str]) -> bool:
        """Use ``joints`` (Setup); new joints get their current position in every row."""
        joints = list(joints)
        positions = dict(self.current_pose)
        return self._edit('change joints', lambda w: w.set_joints(joints, positions),
                          f'the trajectory has {len(joints)} joints')

    def add_pose(self) -> bool:
        """Add the current pose of the trajectory's joints after the selection (or at the end)."""
        if not self.current_pose:
            return self._refused(EditorError('no pose yet: is the motion process running '
                                             '(joint_states)?'))
        if not self.waypoints.joints:
            return self._refused(EditorError("choose the trajectory's joints in Setup first"))
        return self._add_row('add pose', self.current_pose)

    def add_named_pose(self, name: str, pose: Mapping[str, float]) -> bool:
        """Add a named pose (joints it does not name are at 0)."""
        if not self.waypoints.joints:
            return self._refused(EditorError("choose the trajectory's joints in Setup first"))
        full = dict.fromkeys(self.waypoints.real_joints(), 0.0)
        full.update(pose)
        return self._add_row(f'add pose {name}', full, label=name)

    def _add_row(self, what: str, pose: Mapping[str, float], **kwargs: Any) -> bool:
        row = self.selected_row
        index = len(self.waypoints) if row is None else row + 1
        names = list(pose)
        positions = [tidy(pose[j]) for j in names]
        support = {leg: 1.0 if on else 0.0 for leg, on in self.support.items()}

        def change(w: WaypointsList) -> None:
            w.add_from_state(names, positions, index=index, support=support, **kwargs)
        if not self._edit(what, change, f'{what}: row {index + 1}'):
            return False
        self.select([index])
        return True

    def update_pose(self) -> bool:
        """Replace the selected rows' angles by the current pose."""
        try:
            rows = self._need_selection()
        except EditorError as error:
            return self._refused(error)
        pose = dict(self.current_pose)

        def change(w: WaypointsList) -> None:
            for row in rows:
                w.set_pose(row, list(pose), [tidy(v) for v in pose.values()])
        return self._edit(f'update {self._rows_text(rows)}', change)

    @staticmethod
    def _rows_text(rows: Sequence[int]) -> str:
        if len(rows) == 1:
            return f'row {rows[0] + 1}'
        return f'rows {rows[0] + 1}-{rows[-1] + 1}' if list(rows) == list(
            range(rows[0], rows[-1] + 1)) else 'rows ' + ', '.join(str(r + 1) for r in rows)

    def delete_rows(self) -> bool:
        """Delete the selected rows."""
        try:
            rows = self._need_selection()
        except EditorError as error:
            return self._refused(error)

        def change(w: WaypointsList) -> None:
            for row in sorted(rows, reverse=True):
                w.delete(row)
        if not self._edit(f'delete {self._rows_text(rows)}', change):
            return False
        left = len(self.waypoints)
        self.select([min(rows[0], left - 1)] if left else [])
        return True

    def duplicate_row(self) -> bool:
        """Copy the selected row right after it."""
        row = self.selected_row
        if row is None:
            return self._refused(EditorError('select a row first'))
        if not self._edit(f'duplicate row {row + 1}', lambda w: w.duplicate(row)):
            return False
        self.select([row + 1])
        return True

    def set_marker(self, marker: str) -> bool:
        """Put the ``start`` or ``end`` marker on the selected row."""
        row = self.selected_row
        if row is None:
            return self._refused(EditorError('select a row first'))
        setter = WaypointsList.set_start if marker == 'start' else WaypointsList.set_end
        return self._edit(f'set {marker} on row {row + 1}', lambda w: setter(w, row))

    def set_active(self, row: int, active: bool) -> bool:
        """Enable or disable a row."""
        return self._edit(f'{"enable" if active else "disable"} row {row + 1}',
                          lambda w: w.set_active(row, active))

    def set_time(self, row: int, text: Any) -> bool:
        """Set the time of a row from what was typed [s]."""
        try:
            value = parse_number(text, 'time', row)
        except EditorError as error:
            return self._refused(error)
        return self._edit(f'time of row {row + 1}', lambda w: w.move(row, value),
                          f'row {row + 1} at {value:g} s')

    def set_duration(self, row: int, text: Any) -> bool:
        """Set the time from the row before (the rows after keep their spacing) [s]."""
        try:
            value = parse_number(text, 'time from the previous row', row)
        except EditorError as error:
            return self._refused(error)
        return self._edit(f'time from the previous row of row {row + 1}',
                          lambda w: w.set_duration(row, value),
                          f'row {row + 1} {value:g} s after the row before (the rows after '
                          'moved with it)')

    def set_position(self, row: int, joint: str, text: Any) -> bool:
        """Set one angle of a row from what was typed [rad]; refused beyond the limits."""
        try:
            value = parse_number(text, joint, row)
            problem = self.outside_limits(joint, value)
            if problem:
                raise EditorError(f'{problem}: row {row + 1} not changed', row, joint)
        except EditorError as error:
            return self._refused(error)
        return self._edit(f'{joint} in row {row + 1}',
                          lambda w: w.set_position(row, joint, value),
                          f'row {row + 1}: {joint} = {value:g}')

    def set_tolerance(self, kind: str, joint: str, text: Any) -> bool:
        """Set a path or goal tolerance [rad] (0: the controller's default, -1: none)."""
        try:
            value = parse_number(text, f'{kind} tolerance of {joint}')
        except EditorError as error:
            return self._refused(error)
        return self._edit(f'{kind} tolerance of {joint}',
                          lambda w: w.set_tolerance(kind, joint, value))

    def set_tolerance_for_all(self, kind: str, value: float) -> bool:
        """Set the path or goal tolerance of every joint [rad]."""
        return self._edit(f'{kind} tolerance for all',
                          lambda w: w.set_tolerance_for_all(kind, value))

    def set_goal_time_tolerance(self, value: float) -> bool:
        """Set goal_time_tolerance [s] (0: the controller's default)."""
        if math.isclose(value, self.waypoints.goal_time_tolerance):
            return True
        return self._edit('goal time tolerance',
                          lambda w: w.set_goal_time_tolerance(value))

    def shift_times(self, delta: float) -> bool:
        """
        Move the selected rows and every row after them ``delta`` seconds later (or earlier).

        :raises: nothing; a shift that would break the order is refused with the reason.
        """
        try:
            rows = self._need_selection()
            delta = parse_number(delta, 'shift')
        except EditorError as error:
            return self._refused(error)
        first = rows[0]

        def change(w: WaypointsList) -> None:
            for waypoint in w.waypoints[first:]:
                waypoint.time += delta
            if w.waypoints and w.waypoints[first].time < 0:
                raise EditorError(f'row {first + 1} would start at '
                                  f'{w.waypoints[first].time:.3f} s, before 0', first, 'time')
        return self._edit(f'shift rows {first + 1}-{len(self.waypoints)} by {delta:+g} s',
                          change)

    def copy_rows(self) -> bool:
        """Copy the selected rows (for :meth:`paste_rows`)."""
        try:
            rows = self._need_selection()
        except EditorError as error:
            return self._refused(error)
        source = self.waypoints
        self._clip = _Clip(list(source.joints), [Waypoint(
            list(source.waypoints[r].positions), source.waypoints[r].time,
            source.waypoints[r].active, list(source.waypoints[r].actions),
            source.waypoints[r].label) for r in rows])
        self.say(f'copied {self._rows_text(rows)}')
        return True

    def paste_rows(self) -> bool:
        """Insert the copied rows after the selection (or at the end), later rows shifted."""
        clip = self._clip
        if clip is None or not clip.rows:
            return self._refused(EditorError('nothing copied: select rows and copy them first'))
        target = self.waypoints
        missing = [j for j in target.joints if j not in clip.joints]
        if missing:
            return self._refused(EditorError('the copied rows lack joint(s) '
                                             f'{", ".join(missing)} of this trajectory'))
        row = self.selected_row
        index = len(target) if row is None else row + 1
        columns = [clip.joints.index(j) for j in target.joints]
        origin = clip.rows[0].time

        def change(w: WaypointsList) -> None:
            before = w.waypoints[index - 1].time if index > 0 else -DEFAULT_STEP
            start = before + DEFAULT_STEP
            pasted = [Waypoint([c.positions[k] for k in columns], start + c.time - origin,
                               c.active, list(c.actions), c.label) for c in clip.rows]
            span = pasted[-1].time - before
            for waypoint in w.waypoints[index:]:
                waypoint.time += span + (DEFAULT_STEP if index < len(w.waypoints) else 0.0)
            for marker in ('_start', '_end'):
                value = getattr(w, marker)
                if value is not None and value >= index:
                    setattr(w, marker, value + len(pasted))
            w.waypoints[index:index] = pasted
        if not self._edit(f'paste {len(clip.rows)} row(s)', change):
            return False
        self.select(range(index, index + len(clip.rows)))
        return True

    def undo(self) -> None:
        """Undo the last edit."""
        label = self.document.undo_label
        if self.document.undo():
            self.say(f'undone: {label}')

    def redo(self) -> None:
        """Redo the last undone edit."""
        label = self.document.redo_label
        if self.document.redo():
            self.say(f'redone: {label}')

    def reverse(self) -> bool:
        """Reverse the rows (the last keyframe first)."""
        return self._edit('reverse', lambda w: w.reverse())

    def set_speed(self, percent: int) -> None:
        """Set the speed of the execution [%] (the table is unchanged)."""
        low, high = SPEED_RANGE
        self.speed = int(min(max(int(percent), low), high))

    def apply_scale(self) -> bool:
        """Rewrite the times with the speed (and put the speed back to 100 %)."""
        speed = self.speed / 100.0
        if not self._edit(f'apply speed {self.speed} %', lambda w: w.scale_time(1.0 / speed)):
            return False
        self.speed = 100
        return True

    def fit_to_limits(self, keep_pauses: bool = True) -> bool:
        """
        Give the rows (two or more selected: those) the fastest times within the limits.

        One undoable edit; the message shows the durations before and after. With
        ``keep_pauses`` a segment between equal keyframes keeps its duration.
        """
        if self.model is None:
            return self._refused(EditorError('fit to limits needs the robot model (its limits)'))
        rows = self.selection if len(self.selection) >= 2 else None
        try:
            retimed, result = retime_waypoints(self.waypoints, self.model, rows=rows,
                                               interpolation=self.interpolation,
                                               keep_pauses=keep_pauses)
        except SweetieMotionError as error:
            return self._refused(error)
        for waypoint in retimed.waypoints:
            waypoint.time = tidy(waypoint.time)
        where = f' ({self._rows_text(rows)})' if rows else ''
        return self._edit('fit to limits', lambda w: w.__dict__.update(retimed.__dict__),
                          result.describe() + where)

    # --- robot ---------------------------------------------------------------------------------

    def set_robot_pose(self) -> bool:
        """Move the robot to the selected row (FollowJointState)."""
        row = self.selected_row
        if row is None:
            return self._refused(EditorError('select a row first'))
        pose = self._real(self.waypoints.pose(row))
        self.send(SetPose(tuple(pose), tuple(pose.values())))
        self.say(f'robot pose set to row {row + 1}')
        return True

    def move_joint(self, joint: str, value: float) -> bool:
        """
        Move one joint (a slider): through FollowJointState, or by hand when the servos are free.

        With the servos off, the virtual robot's ``move_by_hand`` moves it as a person would;
        the real robot is moved by hand.
        """
        problem = self.outside_limits(joint, value)
        if problem:
            return self._refused(EditorError(problem))
        if self.servos_off and self.joint_is_free(joint):
            if not self.virtual_robot:
                return self._refused(EditorError('the servos are off: move the robot by hand'))
            self.send(MoveByHand((joint,), (float(value),)))
        else:
            self.send(SetPose((joint,), (float(value),)))
        return True

    def joint_is_free(self, joint: str) -> bool:
        """Return whether ``joint``'s servo is one this editor freed (servos off)."""
        if not self.servos_off:
            return False
        if self.free_chains is None or self.model is None:
            return True
        return self.model.get_joint_chain(joint) in self.free_chains

    def set_backward(self, backward: bool) -> None:
        """Play the range backward (end marker to start marker)."""
        self.backward = bool(backward)

    def build_execution_goal(self) -> Tuple[TrajectoryGoal, List[int]]:
        """
        Return the goal Execute sends (range, speed, direction, an approach) and its rows.

        :raises WaypointError: nothing to play.
        """
        waypoints = self.waypoints
        goal = waypoints.build_goal(scale=self.speed / 100.0, backward=self.backward)
        rows = [k for k in waypoints.active_indices() if waypoints.start <= k <= waypoints.end]
        if self.backward:
            rows.reverse()
        limits = {}
        if self.model is not None:
            limits = dict(zip(self.model.list_all_joints(), self.model.velocity_limits()))
        lead = approach_time(goal.first_pose(), self.current_pose, limits)
        return (goal.shifted(lead) if lead > 0 else goal), rows

    def execute(self) -> bool:
        """Play the start..end range on the robot; the outcome comes as a message."""
        if self.execution is not None:
            return self._refused(EditorError('a trajectory is running: Stop it first'))
        if not self.links.get('controller'):
            return self._refused(EditorError('the trajectory controller is not connected'))
        try:
            goal, rows = self.build_execution_goal()
            if self.model is not None:
                validate_goal(goal, self.model)
        except WaypointError as error:
            return self._refused(error)
        except GoalError as error:
            return self._refused(EditorError(f'not executed: {rows_named(str(error), rows)}'))
        self._goal_ids += 1
        self.execution = Execution(self._goal_ids, rows, goal.duration)
        self.send(ExecuteGoal(self._goal_ids, goal, goal.duration * 1.5 + RESULT_MARGIN))
        self.last_outcome = ''
        self.say(f'running {self._rows_text(rows) if rows else ""} ({goal.duration:.1f} s)')
        self._notify('execution')
        return True

    def stop(self) -> bool:
        """Cancel the running goal (the robot decelerates and holds)."""
        if self.execution is None:
            return self._refused(EditorError('nothing is running'))
        self.execution.stopping = True
        self.send(CancelGoal(self.execution.goal_id))
        self.say('stopping...')
        self._notify('execution')
        return True

    def set_servos_off(self, off: bool, chains: Sequence[str] = ()) -> None:
        """
        Free (True) or hold (False) the servos; the indicator follows the answer.

        :param chains: only the servos of these chains (empty: all).
        """
        if not self.links.get('servos'):
            self._refused(EditorError('the torque switch is not connected'))
            self._notify('servos')
            return
        self.send(SetTorqueOff(bool(off), tuple(chains)))
        if not chains:
            self.free_chains = None
        elif off:
            if not (self.servos_off and self.free_chains is None):  # all free stays all free
                self.free_chains = (self.free_chains or frozenset()) | frozenset(chains)
        elif self.free_chains is not None:
            self.free_chains -= frozenset(chains)
        elif self.model is not None:   # all were free: all but these
            self.free_chains = frozenset(self.model.list_chains()) - frozenset(chains)
        which = f' of {", ".join(chains)}' if chains else ''
        self.say(f'freeing the servos{which}...' if off else f'holding the servos{which}...')

    def set_support(self, publish: bool, legs: Optional[Mapping[str, bool]] = None) -> None:
        """Turn the publication of the support legs on or off; choose the supporting legs."""
        self.publish_support = bool(publish)
        if legs is not None:
            self.support.update({leg: bool(on) for leg, on in legs.items()
                                 if leg in self.support})
        if self.publish_support:
            self._publish_support()

    def _publish_support(self) -> None:
        self._last_support = self.clock()
        self.send(PublishSupport(tuple((leg, 1.0 if on else 0.0)
                                       for leg, on in self.support.items())))

    # --- teach by demonstration ----------------------------------------------------------------

    def start_recording(self, joints: Sequence[str], tolerance: float = DEFAULT_TOLERANCE,
                        free_servos: bool = True, smoothing: float = RECORD_SMOOTHING) -> bool:
        """
        Record the pose stream of ``joints`` while a person moves the robot.

        :param tolerance: how far the keyframes' spline may stray from the recording [rad].
        :param free_servos: turn the servos off first (and back on after).
        :param smoothing: half-window of the smoothing of the recording [s] (0: none).
        """
        joints = [j for j in joints if not j.startswith(SUPPORT_PREFIX)]
        try:
            if self.recording is not None and self.recording.fit is None:
                raise EditorError('already recording')
            if not joints:
                raise EditorError('choose the chains to record')
            if not (tolerance > 0 and math.isfinite(tolerance)):
                raise EditorError(f'tolerance {tolerance} must be > 0 [rad]')
            if not (smoothing >= 0 and math.isfinite(smoothing)):
                raise EditorError(f'smoothing {smoothing} must be >= 0 [s]')
            unknown = [j for j in joints if self.current_pose and j not in self.current_pose]
            if unknown:
                raise EditorError(f'joint_states has no {", ".join(unknown)}')
        except EditorError as error:
            return self._refused(error)
        freed = bool(free_servos and not self.servos_off)
        # only the recorded chains go limp: the rest of the robot keeps standing
        chains = self._chains_of(joints) if freed else ()
        if freed:
            self.set_servos_off(True, chains)
        self.recording = Recording(list(joints), float(tolerance), freed, float(smoothing),
                                   freed_chains=chains)
        self.send(StartRecording(tuple(joints)))
        self.say(f'recording {len(joints)} joints: move the robot, then Stop recording')
        self._notify('recording')
        return True

    def _chains_of(self, joints: Sequence[str]) -> Tuple[str, ...]:
        # the chains of the joints, in the model's order (no model: all, as before)
        if self.model is None:
            return ()
        chains = {self.model.get_joint_chain(j) for j in joints} - {''}
        return tuple(c for c in self.model.list_chains() if c in chains)

    def stop_recording(self) -> bool:
        """Stop recording; the keyframes are fitted and shown for accepting."""
        if self.recording is None or self.recording.fit is not None:
            return self._refused(EditorError('not recording'))
        self.send(StopRecording())
        self.say('fitting keyframes...')
        return True

    def _recorded(self, event: RecordingFinished) -> None:
        recording = self.recording
        if recording is None:
            return
        if recording.freed_servos:
            self.set_servos_off(False, recording.freed_chains)
        if event.error or not event.times:
            self.recording = None
            self._refused(EditorError(f'nothing recorded: {event.error or "no samples"}'))
            self._notify('recording')
            return
        times, positions = clean_recording(event.times, event.positions)
        try:
            fit = fit_keyframes(times, positions, recording.tolerance, self.interpolation,
                                recording.smoothing, joints=list(event.names))
            waypoints = fit.to_waypoints(list(event.names))
            slowdown, excess = self._slowdown(fit, list(event.names))
        except SweetieMotionError as error:
            self.recording = None
            self._refused(error)
            self._notify('recording')
            return
        for waypoint in waypoints.waypoints:
            waypoint.time = tidy(waypoint.time)
            waypoint.positions = [tidy(v) for v in waypoint.positions]
        recording.fit, recording.waypoints, recording.samples = fit, waypoints, len(times)
        recording.slowdown = slowdown
        recording.times, recording.positions = times, positions
        text = f'recorded: {fit.describe(list(event.names))}'
        if excess is not None:
            text += (f'; {excess.describe()}: the controller would play it '
                     f'{slowdown:.1f} times slower (Fit to limits after Accept, or more '
                     'smoothing)')
        self.say(text + ': Accept or Discard', 'warning' if excess is not None else 'info')
        self._notify('recording')

    def _slowdown(self, fit: KeyframeFit, joints: List[str]) -> Tuple[float, Any]:
        """Return how much the controller would slow the keyframes down, and the worst excess."""
        if self.model is None or len(fit.times) < 2:
            return 1.0, None
        spline = build_spline(fit.relative_times, fit.positions, interpolation=self.interpolation)
        factor, excess = limit_excess(spline, joints, limits_of(self.model, joints))
        return (float(factor), excess) if factor > 1.0 + 1e-6 else (1.0, None)

    def accept_replaces(self) -> int:
        """Return how many rows Accept would replace (0: the table is empty)."""
        return len(self.waypoints)

    def accept_recording(self, replace: bool = False) -> bool:
        """
        Make the recorded keyframes the table (one undoable edit).

        :param replace: the table's rows may go (ask first: :meth:`accept_replaces`); without
            it a table with rows is kept and Accept is refused.
        """
        recording = self.recording
        if recording is None or recording.waypoints is None:
            return self._refused(EditorError('no recorded keyframes to accept'))
        if self.accept_replaces() and not replace:
            return self._refused(EditorError(
                f'Accept replaces the {rows_count(self.accept_replaces())} of the table: '
                'confirm it, or Discard the recording'))
        new = recording.waypoints
        count = len(new)
        self.recording = None
        self._notify('recording')
        if not self._edit(f'recorded {count} keyframes',
                          lambda w: w.__dict__.update(new.copy().__dict__)):
            return False
        self.select([])
        return True

    def discard_recording(self) -> None:
        """Forget the recorded keyframes."""
        self.recording = None
        self.say('recording discarded')
        self._notify('recording')

    # --- storage and files ---------------------------------------------------------------------

    def refresh_names(self) -> None:
        """Ask the storage for its names."""
        self.send(ListTrajectories())

    def load(self, name: str) -> bool:
        """Load a stored trajectory (confirm unsaved changes before calling)."""
        name = name.strip()
        try:
            check_name(name)
        except TrajectoryFileError as error:
            return self._refused(error)
        if not self.links.get('storage'):
            return self._refused(EditorError('the trajectory storage is not connected'))
        self.send(LoadTrajectory(name))
        self.say(f'loading {name!r}...')
        return True

    def overwrites(self, name: str) -> bool:
        """Return whether saving under ``name`` replaces another stored trajectory."""
        name = name.strip()
        return name in self.names and name != self.document.stored_name

    def save(self, name: str, close_after: bool = False, overwrite: bool = False) -> bool:
        """
        Save the whole table (active rows; speed ignored) under ``name``.

        :param close_after: the window closes once the storage has it.
        :param overwrite: replace another stored trajectory of that name (ask first: a
            built-in one is shadowed by the copy until ``sweetie-motion delete NAME``).
        """
        name = name.strip()
        try:
            check_name(name)
            if self.overwrites(name) and not overwrite:
                raise EditorError(f'{name!r} is stored already: confirm that it is replaced, '
                                  'or choose another name')
            goal = tidy_goal(self.waypoints.build_goal(whole=True))
            if goal.points[-1].time <= 0.0:
                raise EditorError('a motion needs time: the last active row is at 0 s (give '
                                  'it a time, or add a row after it)')
            if not self.links.get('storage'):
                raise EditorError('the trajectory storage is not connected: Dump... to a file')
            if self._saving is not None:
                raise EditorError(f'saving {self._saving[0]!r} is on its way')
        except (TrajectoryFileError, WaypointError, EditorError) as error:
            return self._refused(EditorError(f'cannot save: {error}'))
        self._saving = (name, self.waypoints, close_after)
        self.send(SaveTrajectory(name, goal))
        self.say(f'saving {name!r}...')
        return True

    def dump(self, path: str) -> bool:
        """Write the whole table (disabled rows, markers, labels, actions) to a YAML file."""
        from sweetie_motion.storage.files import write_atomically
        try:
            write_atomically(path, dump_table(self.waypoints, self.document.name))
        except OSError as error:
            return self._refused(EditorError(f'cannot write {path}: {error}'))
        self.say(f'wrote {path}')
        return True

    def load_file(self, path: str) -> bool:
        """Read a table dump, a backup or a trajectory file (it counts as unsaved)."""
        try:
            waypoints, name = read_table(path)
        except WaypointError as error:
            return self._refused(EditorError(f'cannot load {error}'))
        self.document.replace(waypoints, name or _stem(path), clean=False)
        self.select([])
        self.say(f'loaded {path}: {len(waypoints)} rows')
        return True

    # --- backups and closing -------------------------------------------------------------------

    def pending_backup(self) -> Optional[str]:
        """Return the backup left by a session that ended with unsaved changes (or None)."""
        path = self.backups.pending() if self.backups is not None else None
        return str(path) if path is not None else None

    def describe_backup(self, path: str) -> str:
        """Return what a backup holds, for the question whether to restore it."""
        from pathlib import Path
        return self.backups.describe(Path(path)) if self.backups is not None else Path(path).name

    def restore_backup(self, path: str) -> bool:
        """Restore a backup (it counts as unsaved)."""
        try:
            waypoints, name = read_table(path)
        except WaypointError as error:
            return self._refused(EditorError(f'cannot restore {error}'))
        self.document.replace(waypoints, name, clean=False)
        self.say(f'restored the backup {path}')
        return True

    def ignore_backup(self) -> None:
        """Do not offer the pending backup again (it stays in the backup folder)."""
        if self.backups is not None:
            self.backups.ignore()
            self._say_backup_error()

    def backup_now(self) -> Optional[str]:
        """Write a backup of the table now; return its path (None: no workspace or failed)."""
        if self.backups is None:
            return None
        name = self.document.name
        path = self.backups.write(dump_table(self.waypoints, name), name, self.document.revision)
        self._say_backup_error()
        return str(path) if path is not None else None

    def _say_backup_error(self) -> None:
        error = self.backups.unsaid_error() if self.backups is not None else ''
        if error:
            self.say(f'backup failed: {error}', 'warning')

    def closing(self, discard: bool = False) -> None:
        """
        Record that the window closes.

        Nothing unsaved (or ``discard``) is a clean close: the backups are not offered at the
        next start. Unsaved changes kept on purpose (a close forced without asking) get a last
        backup.
        """
        if self.backups is None:
            return
        name = self.document.name
        self.backups.closing(self.document.modified and not discard, self.document.revision,
                             lambda: dump_table(self.waypoints, name), name)
        self._say_backup_error()

    def _safely(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except OSError as error:
            self.say(f'cannot write the editor workspace: {error}', 'warning')

    def tick(self) -> None:
        """Periodic work (the window calls it): backups while unsaved, the support legs."""
        now = self.clock()
        news = self._link_watch.tick(now)
        if news is not None:
            self.say(news.text, news.level)
        if self.publish_support and now - self._last_support >= SUPPORT_PERIOD:
            self._publish_support()
        if self.backups is not None and self.backups.due(self.document.revision,
                                                         self.document.modified):
            self.backup_now()

    # --- events --------------------------------------------------------------------------------

    def handle(self, event: object) -> None:
        """Take an event of the adapters (in the GUI thread)."""
        self._handlers.dispatch(event)

    def _on_pose_received(self, event: PoseReceived) -> None:
        self.current_pose = dict(zip(event.names, event.positions))
        self._notify('pose')

    def _on_links_changed(self, event: LinksChanged) -> None:
        links = dict(event.links)
        before = dict(self.links)
        self.links.update({part: bool(links.get(part, False)) for part in PARTS})
        self.virtual_robot = bool(event.virtual_robot)
        if self.links['servos'] != before.get('servos'):
            self._show_servos()
        if self.execution is not None and not self.links['controller']:
            self._finish(GoalFinished(self.execution.goal_id, LOST, 0,
                                      'the trajectory controller went away'))
        if self.links['storage'] and not before.get('storage'):
            self.refresh_names()
        news = self._link_watch.update(self.links)
        if news is not None:
            if news.back and self.last_outcome.startswith(LOST):
                self.last_outcome = ''  # the red 'lost' of the result line is over
                self._notify('execution')
            self.say(news.text, news.level)
        if self.links != before:
            self._notify('links')

    def _on_goal_accepted(self, event: GoalAccepted) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self.execution.accepted = True
            self._notify('execution')

    def _on_goal_feedback(self, event: GoalFeedback) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self.execution.progress = event.time
            self._notify('execution')

    def _on_goal_finished(self, event: GoalFinished) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self._finish(event)

    def _finish(self, event: GoalFinished) -> None:
        execution = self.execution
        self.execution = None
        message = rows_named(event.message, execution.rows if execution else [])
        if event.outcome == SUCCEEDED:
            text, level = f'succeeded: {message}', 'info'
        elif event.outcome == STOPPED:
            text, level = f'stopped at {execution.progress:.1f} of {execution.duration:.1f} s', \
                'info'
        elif event.outcome == LOST:
            text, level = f'lost: {message}', 'error'
        else:
            text, level = f'FAILED ({event.code}): {message}', 'error'
        self.last_outcome = text
        self.say(text, level)
        self._notify('execution')

    def _on_servo_state(self, event: ServoState) -> None:
        self._servo_report = event
        self._show_servos()

    def _show_servos(self) -> None:
        # the last report counts only while the torque switch answers: not "ON" when it is gone
        if self.links.get('servos'):
            self.servos_off = self._servo_report.torque_off
            self.servo_message = self._servo_report.message
        else:
            self.servos_off = None
            self.servo_message = 'the torque switch is not connected'
        self._notify('servos')

    def _on_trajectories_listed(self, event: TrajectoriesListed) -> None:
        if event.error:
            self.say(f'cannot list the stored trajectories: {event.error}', 'warning')
            return
        self.names = sorted(event.names)
        self._notify('names')

    def _on_trajectory_loaded(self, event: TrajectoryLoaded) -> None:
        if event.goal is None:
            self._refused(EditorError(f'load {event.name!r}: {event.error}'))
            return
        table = self.workspace.table_for(event.name, tidy_goal(event.goal)) \
            if self.workspace is not None else None
        try:
            waypoints = table if table is not None else WaypointsList.from_goal(event.goal)
        except WaypointError as error:
            self._refused(EditorError(f'load {event.name!r}: {error}'))
            return
        self.document.replace(waypoints, event.name)
        self.select([])
        extra = ' (with its labels and disabled rows)' if table is not None else ''
        self.say(f'loaded {event.name!r}: {len(waypoints)} rows{extra}')

    def _on_trajectory_saved(self, event: TrajectorySaved) -> None:
        saving, self._saving = self._saving, None
        if event.error:
            self._refused(EditorError(f'save {event.name!r} refused: {event.error}'))
            return
        saved = saving[1] if saving is not None else self.waypoints
        self.document.mark_saved(event.name, saved)
        if self.workspace is not None:
            self._safely(lambda: self.workspace.save_table(event.name, saved))
        self.say(f'saved {event.name!r}')
        self.refresh_names()
        if saving is not None and saving[2] and not self.document.modified:
            self._notify('close')

    def _on_recording_finished(self, event: RecordingFinished) -> None:
        self._recorded(event)


def _stem(path: str) -> str:
    from pathlib import Path
    return Path(path).stem
