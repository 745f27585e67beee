"""
Teach by demonstration in the editor: record the robot's pose while a person moves it.

Start frees the chains recorded (the rest of the robot keeps standing) and asks the bridge for
the pose stream; Stop asks for the samples, which are fitted with keyframes whose spline stays
within a tolerance of the recording (:func:`~sweetie_motion.trajectory.keyframes.
fit_keyframes`), and says how much slower the controller would play them where they exceed
the limits; Accept makes them the table (one undoable edit, asked first when it replaces
rows), Discard forgets them. No Qt, no rclpy.
"""

from dataclasses import dataclass
import math
from typing import Callable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.editor.requests import RecordingFinished, StartRecording, StopRecording
from sweetie_motion.editor.table_commands import TableCommands
from sweetie_motion.editor.workspace import tidy
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.messages import ActionRefused, MessageBoard, rows_count
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.keyframes import DEFAULT_TOLERANCE, fit_keyframes, KeyframeFit
from sweetie_motion.trajectory.retime import limits_of
from sweetie_motion.trajectory.spline import build_spline
from sweetie_motion.trajectory.timing import limit_excess, LimitExcess
from sweetie_motion.trajectory.waypoints import WaypointsList

#: half-window of the smoothing of a recording [s]: a few samples, enough to take the steps of
#: a slider (or of a servo's resolution) out of the keyframes
RECORD_SMOOTHING = 0.05


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
    times: Optional[np.ndarray] = None
    positions: Optional[np.ndarray] = None
    #: Stop was asked for; the samples are on their way
    stopping: bool = False


def clean_recording(times: Sequence[float], positions: ArrayLike) -> Tuple[np.ndarray, np.ndarray]:
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


class Teaching:
    """
    A recording and its keyframes (see the module docstring).

    :param board: where it says what it did, or why not.
    :param send: hands a request to the bridge.
    :param table: the table Accept replaces.
    :param model: the configured RobotModel (the chains, the limits); None: none.
    :param interpolation: the controller's interpolation (the fit's spline).
    :param pose: returns the robot's newest pose (joint -> position).
    :param servos_off: returns whether the servos are off (None: unknown).
    :param free_servos: frees (True) or holds (False) the servos of the chains given.
    """

    def __init__(self, board: MessageBoard, send: Callable[[object], None],
                 table: TableCommands, model: Optional[RobotModel], interpolation: str,
                 pose: Callable[[], Mapping[str, float]], servos_off: Callable[[], Optional[bool]],
                 free_servos: Callable[[bool, Sequence[str]], None]) -> None:
        self.board = board
        self.send = send
        self.table = table
        self.model = model
        self.interpolation = interpolation
        self.pose = pose
        self.servos_off = servos_off
        self.free_servos = free_servos
        #: the recording in progress, or its keyframes waiting for Accept (None: neither)
        self.recording: Optional[Recording] = None

    def start(self, joints: Sequence[str], tolerance: float = DEFAULT_TOLERANCE,
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
                raise ActionRefused('already recording')
            if not joints:
                raise ActionRefused('choose the chains to record')
            if not (tolerance > 0 and math.isfinite(tolerance)):
                raise ActionRefused(f'tolerance {tolerance} must be > 0 [rad]')
            if not (smoothing >= 0 and math.isfinite(smoothing)):
                raise ActionRefused(f'smoothing {smoothing} must be >= 0 [s]')
            unknown = [j for j in joints if self.pose() and j not in self.pose()]
            if unknown:
                raise ActionRefused(f'joint_states has no {", ".join(unknown)}')
        except ActionRefused as error:
            return self.board.refused(error)
        freed = bool(free_servos and not self.servos_off())
        # only the recorded chains go limp: the rest of the robot keeps standing
        chains = self._chains_of(joints) if freed else ()
        if freed:
            self.free_servos(True, chains)
        self.recording = Recording(list(joints), float(tolerance), freed, float(smoothing),
                                   freed_chains=chains)
        self.send(StartRecording(tuple(joints)))
        self.board.say(f'recording {len(joints)} joints: move the robot, then Stop recording')
        self.board.notify('recording')
        return True

    def _chains_of(self, joints: Sequence[str]) -> Tuple[str, ...]:
        # the chains of the joints, in the model's order (no model: all, as before)
        if self.model is None:
            return ()
        chains = {self.model.get_joint_chain(j) for j in joints} - {''}
        return tuple(c for c in self.model.list_chains() if c in chains)

    @property
    def active(self) -> bool:
        """Return whether a recording runs (until its samples came back)."""
        return self.recording is not None and self.recording.fit is None

    def stop(self) -> bool:
        """Stop recording; the keyframes are fitted and shown for accepting."""
        if self.recording is None or self.recording.fit is not None:
            return self.board.refused(ActionRefused('not recording'))
        if self.recording.stopping:
            return True   # the samples are on their way: asking twice would lose them
        self.recording.stopping = True
        self.send(StopRecording())
        self.board.say('fitting keyframes...')
        return True

    def finished(self, event: RecordingFinished) -> None:
        recording = self.recording
        if recording is None:
            return
        if recording.freed_servos:
            self.free_servos(False, recording.freed_chains)
        if event.error or not event.times:
            self.recording = None
            self.board.refused(ActionRefused(f'nothing recorded: {event.error or "no samples"}'))
            self.board.notify('recording')
            return
        times, positions = clean_recording(event.times, event.positions)
        try:
            fit = fit_keyframes(times, positions, recording.tolerance, self.interpolation,
                                recording.smoothing, joints=list(event.names))
            waypoints = fit.to_waypoints(list(event.names))
            slowdown, excess = self._slowdown(fit, list(event.names))
        except SweetieMotionError as error:
            self.recording = None
            self.board.refused(error)
            self.board.notify('recording')
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
        self.board.say(text + ': Accept or Discard', 'warning' if excess is not None else 'info')
        self.board.notify('recording')

    def _slowdown(self, fit: KeyframeFit, joints: List[str]
                  ) -> Tuple[float, Optional[LimitExcess]]:
        """Return how much the controller would slow the keyframes down, and the worst excess."""
        if self.model is None or len(fit.times) < 2:
            return 1.0, None
        spline = build_spline(fit.relative_times, fit.positions, interpolation=self.interpolation)
        factor, excess = limit_excess(spline, joints, limits_of(self.model, joints))
        return (float(factor), excess) if factor > 1.0 + 1e-6 else (1.0, None)

    def replaces(self) -> int:
        """Return how many rows Accept would replace (0: the table is empty)."""
        return len(self.table.waypoints)

    def accept(self, replace: bool = False) -> bool:
        """
        Make the recorded keyframes the table (one undoable edit).

        :param replace: the table's rows may go (ask first: :meth:`replaces`); without
            it a table with rows is kept and Accept is refused.
        """
        recording = self.recording
        if recording is None or recording.waypoints is None:
            return self.board.refused(ActionRefused('no recorded keyframes to accept'))
        if self.replaces() and not replace:
            return self.board.refused(ActionRefused(
                f'Accept replaces the {rows_count(self.replaces())} of the table: '
                'confirm it, or Discard the recording'))
        new = recording.waypoints
        count = len(new)
        self.recording = None
        self.board.notify('recording')
        if not self.table.edit(f'recorded {count} keyframes',
                               lambda w: w.__dict__.update(new.copy().__dict__)):
            return False
        self.table.select([])
        return True

    def discard(self) -> None:
        """Forget the recorded keyframes."""
        self.recording = None
        self.board.say('recording discarded')
        self.board.notify('recording')
