"""
What the editor's presenter asks of its bridge (requests) and what the bridge tells it (events).

Plain values, no Qt, no rclpy: the presenter hands a request to its ``send`` callable, the
bridge (:mod:`sweetie_motion.editor.bridge`) answers each with an event, handed to
:meth:`sweetie_motion.editor.presenter.EditorPresenter.handle` in the GUI thread. The events
both windows take alike are in :mod:`sweetie_motion.gui.events`.
"""

from dataclasses import dataclass
from typing import Optional, Tuple

from sweetie_motion.trajectory.goal import TrajectoryGoal

#: ways a goal ends
SUCCEEDED, FAILED, STOPPED, LOST = 'succeeded', 'failed', 'stopped', 'lost'


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
class HoldPose:
    """
    Stop FollowJointState where a brake within the limits ends (its ``~/hold``).

    The answer comes as :class:`PoseHeld`.
    """


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
class BasePoseReceived:
    """
    Where the physics robot's base is (its ``base_pose``): the 3D view draws the robot there.

    :param rotation: the base's orientation, a 3x3 matrix row by row.
    :param position: [m], the floor at z = 0.
    """

    rotation: Tuple[Tuple[float, float, float], ...]
    position: Tuple[float, float, float]


@dataclass(frozen=True)
class PoseHeld:
    """FollowJointState's answer to :class:`HoldPose` (``error`` '' when it holds)."""

    error: str = ''


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
