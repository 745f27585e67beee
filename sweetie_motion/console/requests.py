"""
What the console's presenter asks of its adapters and hears back: plain values, no Qt, no ROS.

The presenter (:mod:`sweetie_motion.console.presenter`) hands a **request** (e.g.
:class:`RunSteps`) to ``send``; the bridge (:mod:`sweetie_motion.console.bridge`) and the
offline planner (:mod:`sweetie_motion.console.planning`) answer with **events** (e.g.
:class:`JobFinished`). Every job request is answered by one :class:`JobFinished`. The events
both windows take alike are in :mod:`sweetie_motion.gui.events`.
"""

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from sweetie_motion.cartesian.runner import ProgramStep

#: ways a job ends
SUCCEEDED, FAILED, STOPPED = 'succeeded', 'failed', 'stopped'


# --- requests: presenter -> adapters --------------------------------------------------------


@dataclass(frozen=True)
class StreamJoints:
    """
    Stream a pose to FollowJointState (``joint_states_set``) that moves towards ``targets``.

    A new ``stream_id`` starts at ``start``; the same one moves on from where its stream is.

    :param names: the joints; :param start: where they are [rad or m].
    :param targets: each joint's target [rad or m], None: where it is.
    :param speeds: [rad/s or m/s]; :param accelerations: [rad/s^2 or m/s^2], per joint.
    """

    stream_id: int
    names: Tuple[str, ...]
    start: Tuple[float, ...]
    targets: Tuple[Optional[float], ...]
    speeds: Tuple[float, ...]
    accelerations: Tuple[float, ...]


@dataclass(frozen=True)
class StopStream:
    """Stop the stream where it is (that pose is sent once more) and stop sending."""

    stream_id: int


@dataclass(frozen=True)
class RunSteps:
    """
    Run program steps on the robot from ``first``; one :class:`JobFinished` answers.

    :param single: run only the step ``first`` (step mode: of a path, its next MOVL only).
    :param override: the speed override in force (a SPEED of an earlier step), (0, 1].
    :param first_move: the MOVL of step ``first`` to go on at (step mode ran the ones before).
    """

    job_id: int
    steps: Tuple[ProgramStep, ...]
    first: int
    single: bool
    override: float = 1.0
    first_move: int = 0


@dataclass(frozen=True)
class MoveHome:
    """Move the chain's joints to ``target`` [rad or m] at ``speed`` [rad/s or m/s each]."""

    job_id: int
    target: Tuple[float, ...]
    speed: Tuple[float, ...]


@dataclass(frozen=True)
class JogTool:
    """
    Move the tool by one jog step from where the reference is (see :func:`jog_target`).

    :param amount: the step [m] (x, y, z) or [rad] (rx, ry, rz), signed.
    :param speed: path speed [m/s] (for rotations: the angular speed times :data:`EQRADIUS`).
    """

    job_id: int
    axis: str
    amount: float
    frame: str
    speed: float


@dataclass(frozen=True)
class CommandGripper:
    """Clamp, release or hold."""

    job_id: int
    action: str


@dataclass(frozen=True)
class StopJob:
    """Stop the job ``job_id``: the motion decelerates and holds, no further step runs."""

    job_id: int


@dataclass(frozen=True)
class PlanProgram:
    """Plan ``steps`` offline from ``start`` (the chain's joints [rad or m])."""

    plan_id: int
    steps: Tuple[ProgramStep, ...]
    start: Tuple[float, ...]


# --- events: adapters -> presenter ------------------------------------------------------------


@dataclass(frozen=True)
class GripperState:
    """The gripper's state: 'released', 'clamped', 'holding' ('' unknown)."""

    state: str


@dataclass(frozen=True)
class StreamDone:
    """The stream ``stream_id`` reached its targets (it holds them until stopped)."""

    stream_id: int


@dataclass(frozen=True)
class StepStarted:
    """Step ``index`` of the running program (its ``line``) started."""

    job_id: int
    index: int
    line: int
    description: str


@dataclass(frozen=True)
class LineReached:
    """The running path's motion reached the MOVL of program line ``line``."""

    job_id: int
    line: int


@dataclass(frozen=True)
class StepFinished:
    """Step ``index`` ended well; what the robot said, how long it took [s]."""

    job_id: int
    index: int
    line: int
    message: str
    seconds: float


@dataclass(frozen=True)
class JobFinished:
    """
    How a job ended.

    :param outcome: :data:`SUCCEEDED`, :data:`FAILED` or :data:`STOPPED`.
    :param line: the program line it failed or stopped at (0: none).
    :param next_index: the program step to run next (programs).
    :param override: the speed override in force at the end (programs).
    :param next_move: the MOVL of step ``next_index`` to go on at (after step mode).
    """

    job_id: int
    outcome: str
    message: str
    line: int = 0
    next_index: int = 0
    override: float = 1.0
    next_move: int = 0


@dataclass(frozen=True, eq=False)
class ProgramPlanned:
    """
    The offline plan of a program.

    :param tool: the tool's positions along the plan [m], shape (n, 3).
    :param waypoints: the positions of the planned paths' waypoints [m], shape (k, 3).
    :param positions: the chain's joints along the plan [rad or m], shape (n, joints).
    :param duration: [s]; :param reports: what each step planned.
    :param error: why planning failed ('' when it did not); :param line: the line at fault.
    :param times: each sample's time [s], shape (n,) (None: not known).
    :param lines: each sample's program line (the MOVL whose waypoint the tool heads for
        there), shape (n,) (None: not known).
    :param reconfigurations: the joint reconfigurations before paths (the tool still, the
        joints turning to the path's branch): (the program line of the path, each of the
        chain's joints' turn [rad or m]).
    :param reconfiguring: the samples of each reconfiguration: (first, after the last).
    """

    plan_id: int
    tool: np.ndarray
    waypoints: np.ndarray
    positions: np.ndarray
    duration: float
    reports: Tuple[str, ...] = ()
    error: str = ''
    line: int = 0
    times: Optional[np.ndarray] = None
    lines: Optional[np.ndarray] = None
    reconfigurations: Tuple[Tuple[int, Tuple[float, ...]], ...] = ()
    reconfiguring: Tuple[Tuple[int, int], ...] = ()

    def at(self, index: int) -> Tuple[float, int]:
        """Return the time [s] and the program line (0: unknown) of sample ``index``."""
        if self.times is not None and 0 <= index < len(self.times):
            time = float(self.times[index])
        else:
            time = self.duration * index / max(len(self.positions) - 1, 1)
        line = int(self.lines[index]) if self.lines is not None and \
            0 <= index < len(self.lines) else 0
        return time, line
