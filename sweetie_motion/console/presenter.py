"""
The operator console's presenter (R-CART-5): its state, actions and rules, without Qt or ROS.

The console has three layers, as the trajectory editor has:

- this presenter: the robot's joints and tool pose, the links to the motion process, the
  manual moves (joint sliders, Cartesian jog), the program (its text, parse errors, the step
  it is at, the offline plan), the running job and the messages, with every action a person
  can take and the rules that refuse bad ones (and say why);
- the views (:mod:`sweetie_motion.console.window`, :mod:`sweetie_motion.console.views`):
  layout, and forwarding of what a person does to the presenter;
- the adapters: :mod:`sweetie_motion.console.bridge` (the motion process over ROS, through
  :class:`~sweetie_motion.ros.program_client.ArmClient`) and
  :mod:`sweetie_motion.console.planning` (the offline planner).

The presenter hands **requests** (the dataclasses below, e.g. :class:`RunSteps`) to ``send``
and takes **events** (e.g. :class:`JobFinished`) in :meth:`ConsolePresenter.handle`, in the GUI
thread. Nothing here waits: every job request is answered by one :class:`JobFinished`.

Manual joint moves go through FollowJointState (``joint_states_set``), not through short
FollowJointTrajectory goals: a person dragging a slider expects the arm to follow the slider
while it moves and to stop where it is let go. The sliders' targets go to the bridge
(:class:`StreamJoints`), which streams a pose moving towards them at the chosen speed
(:class:`~sweetie_motion.console.stream.JointStream`, 50 times a second from a ROS timer, so
that a GUI busy drawing does not make the stream stutter); FollowJointState's jerk-limited
smoothing keeps the motion within the joints' limits. A stream of trajectory goals would make
every slider step a goal that preempts the last one (an action round trip, a new plan, a stop
at its end), and the speed would be that of goals, not of the slider.

Listeners (:meth:`ConsolePresenter.subscribe`) are called with what changed: one of
:data:`TOPICS`.
"""

from dataclasses import dataclass, field
import math
import os
import time as _time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.cartesian.frames import exp_so3, Pose
from sweetie_motion.cartesian.path import EQRADIUS
from sweetie_motion.cartesian.program import parse_line, parse_program, ProgramError
from sweetie_motion.cartesian.runner import (chain_home, joint_target, program_steps,
                                             ProgramRunError, ProgramStep)
from sweetie_motion.console.target import parse_target, TargetError, TargetSolution, TargetSolver
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.backups import UnsavedBackups
from sweetie_motion.gui.dispatch import EventHandlers
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.gui.messages import ActionRefused, Message, MessageBoard
from sweetie_motion.model.robot_model import RobotModel

#: what listeners are told changed
TOPICS = ('state', 'links', 'sliders', 'jog', 'program', 'job', 'plan', 'message', 'target')
#: the parts of the motion process the console uses
PARTS = ('joint_states', 'controller', 'cartesian', 'follow_joint_state', 'gripper')
#: readable names of :data:`PARTS`
PART_NAMES = {'joint_states': 'joint states', 'controller': 'trajectory controller',
              'cartesian': 'Cartesian motion', 'follow_joint_state': 'FollowJointState',
              'gripper': 'gripper'}
#: jog axes: translations along and rotations about x, y, z
#: a jog step that turns a joint further than this asks first [deg] (the console's default)
JOG_TURN_LIMIT_DEG = 20.0
#: how a message about the offline plan starts
PLAN_PREFIX = 'offline plan: '
#: the jog axes: along x, y, z and about x, y, z (rx, ry, rz: not the ZYZ angles A B C)
AXES = ('x', 'y', 'z', 'rx', 'ry', 'rz')
#: the frames a jog is expressed in: the chain's base frame or the tool's own
FRAMES = ('base', 'tool')
#: the step sizes offered: translation [mm], rotation [deg]
TRANSLATION_STEPS = (0.1, 1.0, 5.0, 10.0, 50.0, 100.0)
ROTATION_STEPS = (0.5, 1.0, 5.0, 10.0, 30.0)
#: the joint speed setting's range [% of each joint's velocity limit]
JOINT_SPEED_RANGE = (1, 100)
#: jog speed ranges: translation [mm/s], rotation [deg/s]
TRANSLATION_SPEED_RANGE = (1.0, 250.0)
ROTATION_SPEED_RANGE = (1.0, 90.0)
#: a slider move is over when every joint is this close to its target [rad or m] ...
REACHED = 2e-3
#: ... or this long after the streamed pose reached the targets [s] (the robot may not follow
#: exactly: a joint held by another controller for a moment)
SETTLE = 3.0
#: a slider stream reaches its speed in this time [s] (or within the joint's acceleration limit)
RAMP_TIME = 0.2
#: the offline plan is made this long after the last edit [s]
PLAN_DELAY = 0.8
#: messages kept in the log
MESSAGES_KEPT = 200
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
    """

    plan_id: int
    tool: np.ndarray
    waypoints: np.ndarray
    positions: np.ndarray
    duration: float
    reports: Tuple[str, ...] = ()
    error: str = ''
    line: int = 0


# --- state ------------------------------------------------------------------------------------


@dataclass
class Job:
    """The job running on the robot: what it is, the program line it is at."""

    job_id: int
    kind: str
    description: str
    line: int = 0
    stopping: bool = False


@dataclass
class ManualMove:
    """
    A slider move in progress.

    :param start: where the slider chain's joints were [rad or m], chain order.
    :param targets: where the sliders are (local index -> target).
    :param arrived: when the stream reached the targets (None: not yet).
    """

    stream_id: int
    start: Tuple[float, ...]
    targets: Dict[int, float] = field(default_factory=dict)
    arrived: Optional[float] = None


def describe_turns(model: RobotModel, turns: Sequence[Tuple[str, float]]) -> str:
    """Return e.g. 'joint4 by 80 deg, joint6 by 80 deg' (metres for prismatic joints)."""
    parts = []
    for joint, turn in turns:
        unit, factor = display_unit(model, joint)
        parts.append(f'{joint} by {turn * factor:.0f} {unit}')
    return ', '.join(parts)


def jog_target(pose: Pose, axis: str, amount: float, frame: str) -> Pose:
    """
    Return the pose one jog step from ``pose``.

    Translations move the tool along an axis of the frame; rotations turn it about an axis of
    the frame through the tool's origin (the tool point stays put).

    :param pose: the tool's pose in the chain's base frame [m].
    :param axis: one of :data:`AXES`.
    :param amount: [m] for x, y, z; [rad] for rx, ry, rz (about x, y, z).
    :param frame: 'base' (the chain's base axes) or 'tool' (the tool's own axes).
    :raises ValueError: an unknown axis or frame.
    """
    if axis not in AXES:
        raise ValueError(f'unknown jog axis {axis!r} (axes: {", ".join(AXES)})')
    if frame not in FRAMES:
        raise ValueError(f'unknown jog frame {frame!r} (frames: {", ".join(FRAMES)})')
    unit = np.zeros(3)
    unit[AXES.index(axis) % 3] = 1.0
    if AXES.index(axis) < 3:
        direction = unit if frame == 'base' else pose.rotation @ unit
        return Pose(pose.position + direction * amount, pose.rotation)
    turn = exp_so3(unit * amount)
    rotation = turn @ pose.rotation if frame == 'base' else pose.rotation @ turn
    return Pose(pose.position, rotation)


def display_unit(model: RobotModel, joint: str) -> Tuple[str, float]:
    """Return the unit a person reads a joint in ('deg' or 'mm') and its factor from SI."""
    if model.get_joint_info(joint).joint_type == 'prismatic':
        return 'mm', 1e3
    return 'deg', 180.0 / math.pi


def slider_range(model: RobotModel, joint: str) -> Tuple[float, float]:
    """Return a joint's slider range [rad or m]: its limits (a continuous joint: one turn)."""
    info = model.get_joint_info(joint)
    lower = info.lower if math.isfinite(info.lower) else -math.pi
    upper = info.upper if math.isfinite(info.upper) else math.pi
    return float(lower), float(upper)


class ConsolePresenter:
    """
    The console without its widgets.

    :param send: hands a request to the adapters.
    :param model: the configured RobotModel.
    :param chain: the chain programs and jogs move (the Cartesian motion node's).
    :param slider_chain: the chain the sliders show first (default: ``chain``).
    :param clock: monotonic clock [s].
    :param backups: the program's backups while it has unsaved edits (None: none).
    :param joint_travel: how far each joint turns on a jog: (start, target tool pose, path
        speed [m/s]) -> per joint [rad or m] (the offline planner's); None: not checked.
    :param jog_turn_limit: a jog that turns a joint further than this [rad] asks first.
    """

    def __init__(self, send: Callable[[object], None], model: RobotModel, chain: str,
                 slider_chain: Optional[str] = None,
                 clock: Callable[[], float] = _time.monotonic,
                 backups: Optional[UnsavedBackups] = None,
                 joint_travel: Optional[Callable[[Sequence[float], Pose, float],
                                                 np.ndarray]] = None,
                 jog_turn_limit: float = math.radians(JOG_TURN_LIMIT_DEG)) -> None:
        if chain not in model.list_chains():
            raise ActionRefused(f'unknown chain {chain!r} (chains: '
                                f'{", ".join(model.list_chains())})')
        self.send = send
        self.model = model
        self.chain = chain
        self.joints = model.list_joints(chain)
        self.home = chain_home(model, chain)
        self.clock = clock
        self.backups = backups
        self.joint_travel = joint_travel
        self.jog_turn_limit = float(jog_turn_limit)
        limits = model.joint_limits()
        self._velocity = {j: float(limits.velocity[model.get_joint_index(j)])
                          for j in model.list_all_joints()}
        self._acceleration = {j: float(limits.acceleration[model.get_joint_index(j)])
                              for j in model.list_all_joints()}
        self.pose: Dict[str, float] = {}
        self.links: Dict[str, bool] = dict.fromkeys(PARTS, False)
        self.gripper_state = ''
        # sliders and jog
        self.slider_chain = ''
        self.slider_joints: List[str] = []
        self.joint_speed = 25
        self.manual: Optional[ManualMove] = None
        self._stream_ids = 0
        self.jog_frame = 'base'
        self.translation_step = 10.0
        self.rotation_step = 5.0
        self.translation_speed = 50.0
        self.rotation_speed = 15.0
        #: a typed Cartesian target solved by IK, shown until Move or another target
        self.target: Optional[TargetSolution] = None
        self._target_solver: Optional[TargetSolver] = None
        # the program
        self.text = ''
        self.source = ''
        #: the text as last read from or written to ``source``: what Save would not change
        self.saved_text = ''
        self.steps: List[ProgramStep] = []
        self.parse_error: Optional[ProgramError] = None
        self.next_step = 0
        #: the MOVL of step next_step to go on at (Step runs a path one MOVL at a time)
        self.next_move = 0
        self.override = 1.0
        self.error_line = 0
        self.plan: Optional[ProgramPlanned] = None
        self._plan_id = 0
        self._plan_due: Optional[float] = None
        self._checking = False
        # the job and the messages
        self.job: Optional[Job] = None
        self._job_ids = 0
        #: the message area, its log and the listeners
        self.board = MessageBoard(kept=MESSAGES_KEPT)
        #: the bridge's events and who takes each
        self._handlers = EventHandlers('the console presenter')
        self._handlers.register(PoseReceived, self._on_state_received)
        self._handlers.register(StreamDone, self._on_stream_done)
        self._handlers.register(GripperState, self._on_gripper_state)
        self._handlers.register(LinksChanged, self._on_links_changed)
        self._handlers.register(StepStarted, self._on_step_started)
        self._handlers.register(StepFinished, self._on_step_finished)
        self._handlers.register(LineReached, self._on_line_reached)
        self._handlers.register(JobFinished, self._on_job_finished)
        self._handlers.register(ProgramPlanned, self._on_program_planned)
        self.set_slider_chain(slider_chain or chain)

    # --- listeners and messages ----------------------------------------------------------------

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of :data:`TOPICS` changes."""
        self.board.subscribe(listener)

    def _notify(self, *topics: str) -> None:
        for topic in topics:
            self.board.notify(topic)

    @property
    def message(self) -> Message:
        """Return what the message area shows."""
        return self.board.message

    @property
    def log(self) -> List[Message]:
        """Return the newest messages said, oldest first."""
        return self.board.log

    def say(self, text: str, level: str = 'info', line: int = 0) -> None:
        """Show a message (and keep it in the log)."""
        self.board.say(text, level, line=line)

    def _refuse(self, error: SweetieMotionError) -> bool:
        return self.board.refused(error)

    # --- reading -------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Return whether the motion process is there (its joint_states come)."""
        return self.links['joint_states']

    @property
    def busy(self) -> bool:
        """Return whether a job runs on the robot."""
        return self.job is not None

    @property
    def moving(self) -> bool:
        """Return whether something the console started moves (a job, until its end; sliders)."""
        return self.job is not None or self.manual is not None

    def positions(self, joints: Sequence[str]) -> Optional[np.ndarray]:
        """Return the newest positions of ``joints`` [rad or m] (None: not all known)."""
        if not all(j in self.pose for j in joints):
            return None
        return np.array([self.pose[j] for j in joints], dtype=float)

    def tool_pose(self) -> Optional[Pose]:
        """Return the tool's pose in the chain's base frame now (None before joint_states)."""
        q = self.positions(self.joints)
        if q is None:
            return None
        return Pose.from_matrix(self.model.forward_kinematics(self.chain, q))

    @property
    def running_line(self) -> int:
        """Return the program line the running job is at (0: none)."""
        return self.job.line if self.job is not None and self.job.kind == 'program' else 0

    @property
    def next_line(self) -> int:
        """Return the line a paused program goes on at (0: it starts from the top)."""
        if self.job is None and (self.next_step or self.next_move) and \
                self.next_step < len(self.steps):
            step = self.steps[self.next_step]
            if step.kind == 'linear' and self.next_move < len(step.commands):
                return getattr(step.commands[self.next_move], 'line', 0)
            return step.line
        return 0

    def can(self, action: str) -> bool:
        """Return whether ``action`` (run, step, home, jog, gripper, sliders) may be taken."""
        program = action in ('run', 'step')
        if program and not self.steps:
            return False
        try:
            self._check(action, self.steps if program else ())
        except ActionRefused:
            return False
        return True

    def _check(self, action: str, steps: Sequence[ProgramStep] = ()) -> None:
        """Raise :class:`ActionRefused` saying why ``action`` cannot be taken now, if it cannot."""
        if not self.connected:
            raise ActionRefused('the motion process is disconnected (no joint_states): start '
                                'it, the console reconnects by itself')
        if self.job is not None:
            raise ActionRefused(f'{self.job.description} is running: wait for it or stop it')
        needs = {'sliders': ['follow_joint_state'], 'jog': ['cartesian'],
                 'gripper': ['gripper'], 'home': ['controller']}.get(action, [])
        if action in ('run', 'step', 'line'):
            if self.parse_error is not None and action != 'line':
                raise ActionRefused(f'the program has an error: {self.parse_error}',
                                    line=self.parse_error.line)
            kinds = {s.kind for s in steps}
            needs = ['controller'] if kinds & {'joint', 'home', 'linear'} else []
            needs += ['cartesian'] if 'linear' in kinds else []
            needs += ['gripper'] if 'gripper' in kinds else []
        missing = [PART_NAMES[p] for p in needs if not self.links[p]]
        if missing:
            raise ActionRefused(f'{" and ".join(missing)} of the motion process '
                                f'{"does" if len(missing) == 1 else "do"} not answer')
        for step in steps:  # joint moves that name joints the chain lacks: before anything moves
            if step.kind == 'joint':
                try:
                    joint_target(step.commands[0], self.joints, self.home, self.home)
                except ProgramRunError as error:
                    raise ActionRefused(str(error), line=error.line) from None

    # --- sliders -------------------------------------------------------------------------------

    def set_slider_chain(self, chain: str) -> bool:
        """Show the joints of ``chain`` on the sliders."""
        if chain not in self.model.list_chains():
            return self._refuse(ActionRefused(f'unknown chain {chain!r} (chains: '
                                              f'{", ".join(self.model.list_chains())})'))
        if self.manual is not None:
            self._end_manual('')
        self.slider_chain = chain
        self.slider_joints = [j for j in self.model.list_joints(chain)
                              if not self.model.is_virtual(j)]
        self._notify('sliders')
        return True

    def set_joint_speed(self, percent: float) -> None:
        """Set the sliders' (and Home's) speed [% of each joint's velocity limit]."""
        low, high = JOINT_SPEED_RANGE
        self.joint_speed = int(round(min(max(float(percent), low), high)))
        if self.manual is not None:
            self._send_stream()
        self._notify('sliders')

    def move_slider(self, joint: str, value: float) -> bool:
        """
        Move ``joint`` towards ``value`` [rad or m] at the joint speed (a person's slider).

        :return: False when refused (the message says why; the slider should show the robot).
        """
        try:
            self._check('sliders')
            if joint not in self.slider_joints:
                raise ActionRefused(f'{joint} is not a joint of the chain {self.slider_chain}')
            lower, upper = slider_range(self.model, joint)
            if not (math.isfinite(value) and lower - 1e-9 <= value <= upper + 1e-9):
                unit, factor = display_unit(self.model, joint)
                raise ActionRefused(f'{joint}: {value * factor:.2f} {unit} is outside its '
                                    f'limits [{lower * factor:.1f}, {upper * factor:.1f}] {unit}')
            if self.manual is None:
                start = self.positions(self.slider_joints)
                if start is None:
                    raise ActionRefused(f'joint_states do not give every joint of '
                                        f'{self.slider_chain}')
                self._stream_ids += 1
                self.manual = ManualMove(self._stream_ids, tuple(float(v) for v in start))
                self.say(f'moving {self.slider_chain} with the sliders at {self.joint_speed} % '
                         'of the joint speed limits')
        except ActionRefused as error:
            return self._refuse(error)
        manual = self.manual
        manual.targets[self.slider_joints.index(joint)] = float(value)
        manual.arrived = None
        self._send_stream()
        self._notify('sliders')
        return True

    def stream_limits(self, joints: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """
        Return the speeds [rad/s or m/s] and accelerations [rad/s^2 or m/s^2] of a slider move.

        The joint speed setting of each joint's velocity limit, reached in :data:`RAMP_TIME`
        (or within the joint's acceleration limit).
        """
        speeds = np.array([self._velocity[j] for j in joints]) * self.joint_speed / 100.0
        accelerations = np.minimum(speeds / RAMP_TIME,
                                   [self._acceleration[j] for j in joints])
        return speeds, accelerations

    def _send_stream(self) -> None:
        manual = self.manual
        speeds, accelerations = self.stream_limits(self.slider_joints)
        self.send(StreamJoints(
            manual.stream_id, tuple(self.slider_joints), manual.start,
            tuple(manual.targets.get(k) for k in range(len(self.slider_joints))),
            tuple(float(v) for v in speeds), tuple(float(v) for v in accelerations)))

    def slider_target(self, joint: str) -> Optional[float]:
        """Return where a person put ``joint``'s slider while it moves (None: no move)."""
        if self.manual is None or joint not in self.slider_joints:
            return None
        return self.manual.targets.get(self.slider_joints.index(joint))

    def _watch_manual(self, now: float) -> None:
        manual = self.manual
        if manual.arrived is None:
            return
        measured = self.positions(self.slider_joints)
        if measured is not None and all(abs(measured[k] - t) < REACHED
                                        for k, t in manual.targets.items()):
            self._end_manual('the joints are at the sliders')
        elif now - manual.arrived > SETTLE:
            self._end_manual('the sliders are sent; the robot did not quite follow (another '
                             'controller holds the chain?)', 'warning')

    def _end_manual(self, text: str, level: str = 'info') -> None:
        if self.manual is not None:
            self.send(StopStream(self.manual.stream_id))
            self.manual = None
        if text:
            self.say(text, level)
        self._notify('sliders')

    # --- jog -----------------------------------------------------------------------------------

    def set_jog(self, frame: Optional[str] = None, translation_step: Optional[float] = None,
                rotation_step: Optional[float] = None, translation_speed: Optional[float] = None,
                rotation_speed: Optional[float] = None) -> bool:
        """
        Change the jog settings (those given).

        :param frame: one of :data:`FRAMES`; :param translation_step: [mm], > 0;
        :param rotation_step: [deg], > 0; :param translation_speed: [mm/s];
        :param rotation_speed: [deg/s] (both clamped into their ranges).
        """
        if frame is not None and frame not in FRAMES:
            return self._refuse(ActionRefused(f'unknown jog frame {frame!r} (frames: '
                                              f'{", ".join(FRAMES)})'))
        for name, value in (('translation step', translation_step),
                            ('rotation step', rotation_step)):
            if value is not None and not (math.isfinite(value) and value > 0):
                return self._refuse(ActionRefused(f'the {name} must be > 0, got {value}'))
        self.jog_frame = frame or self.jog_frame
        self.translation_step = float(translation_step or self.translation_step)
        self.rotation_step = float(rotation_step or self.rotation_step)
        if translation_speed is not None:
            self.translation_speed = float(min(max(translation_speed,
                                                   TRANSLATION_SPEED_RANGE[0]),
                                               TRANSLATION_SPEED_RANGE[1]))
        if rotation_speed is not None:
            self.rotation_speed = float(min(max(rotation_speed, ROTATION_SPEED_RANGE[0]),
                                            ROTATION_SPEED_RANGE[1]))
        self._notify('jog')
        return True

    def _jog_step(self, axis: str) -> Tuple[float, float, str]:
        """Return a jog step's amount [m or rad], path speed [m/s] and text."""
        if AXES.index(axis) < 3:
            return (self.translation_step * 1e-3, self.translation_speed * 1e-3,
                    f'{self.translation_step:g} mm')
        return (math.radians(self.rotation_step),
                math.radians(self.rotation_speed) * EQRADIUS, f'{self.rotation_step:g} deg')

    def jog_turns(self, axis: str, direction: int) -> List[Tuple[str, float]]:
        """
        Return the joints a jog step would turn further than :attr:`jog_turn_limit`.

        (joint, turn [rad or m]), largest first: a small step of the tool near a singularity
        swings the wrist (10 mm along y with the arm almost straight turns joint4 and joint6
        by 88 deg).
        Empty when the step turns nothing that far, or cannot be planned (the jog says why).
        """
        pose = self.tool_pose()
        if self.joint_travel is None or pose is None or axis not in AXES or \
                any(j not in self.pose for j in self.joints):
            return []
        amount, speed, _ = self._jog_step(axis)
        target = jog_target(pose, axis, direction * amount, self.jog_frame)
        try:
            travel = self.joint_travel([self.pose[j] for j in self.joints], target, speed)
        except SweetieMotionError:
            return []
        turns = [(j, float(t)) for j, t in zip(self.joints, travel) if t > self.jog_turn_limit]
        return sorted(turns, key=lambda item: -item[1])

    def jog(self, axis: str, direction: int, confirmed: bool = False) -> bool:
        """
        Move the tool one step along (x, y, z) or about (rx, ry, rz) an axis, ±1.

        :param confirmed: a person agreed to the large joint turns of :meth:`jog_turns`;
            without it such a jog is refused, naming them.
        """
        if axis not in AXES or direction not in (-1, 1):
            return self._refuse(ActionRefused(f'jog: unknown axis or direction {axis!r} '
                                              f'{direction!r}'))
        try:
            self._check('jog')
        except ActionRefused as error:
            return self._refuse(error)
        turns = [] if confirmed else self.jog_turns(axis, direction)
        if turns:
            return self._refuse(ActionRefused(
                f'jog: this step turns {describe_turns(self.model, turns)}: confirm it, or '
                'jog from elsewhere (Home first)'))
        self._end_manual('')
        amount, speed, text = self._jog_step(axis)
        sign = '+' if direction > 0 else '-'
        job = self._start('jog', f'jog {sign}{axis} {text} ({self.jog_frame} frame)')
        self.send(JogTool(job.job_id, axis, direction * amount, self.jog_frame, speed))
        return True

    # --- a typed Cartesian target --------------------------------------------------------------

    def preview_target(self, text: str) -> bool:
        """
        Solve a typed tool pose (x y z [mm] A B C [deg]) by IK from where the robot is.

        Nothing moves: the joint result is said and shown (:attr:`target`); :meth:`move_to_
        target` goes there.
        """
        self.target = None
        self._notify('target')
        try:
            pose = parse_target(text)
        except TargetError as error:
            return self._refuse(ActionRefused(f'target: {error}'))
        start = self.positions(self.joints)
        if start is None:
            return self._refuse(ActionRefused('target: no joint_states yet: is the motion '
                                              'process running?'))
        if self._target_solver is None:
            self._target_solver = TargetSolver(self.model, self.chain)
        solution = self._target_solver.solve(pose, start)
        if not solution.success:
            return self._refuse(ActionRefused(f'target: {solution.describe(self.model)}'))
        self.target = solution
        self.say(f'target solved: {solution.describe(self.model)}; Move goes there (a joint '
                 f'move at {self.joint_speed} % of the joint speed)')
        self._notify('target')
        return True

    def move_to_target(self) -> bool:
        """Move the joints to the solved target (a joint move at the joint speed)."""
        if self.target is None:
            return self._refuse(ActionRefused('target: solve a target first'))
        if not self._joint_move('target', 'move to the target', self.target.positions):
            return False   # refused, saying why: the target stays for a later Move
        self.target = None
        self._notify('target')
        return True

    # --- gripper and home ----------------------------------------------------------------------

    def gripper(self, action: str) -> bool:
        """Clamp, release or hold."""
        if action not in ('clamp', 'release', 'hold'):
            return self._refuse(ActionRefused(f'unknown gripper action {action!r}'))
        try:
            self._check('gripper')
        except ActionRefused as error:
            return self._refuse(error)
        job = self._start('gripper', f'gripper {action}')
        self.send(CommandGripper(job.job_id, action))
        return True

    def go_home(self) -> bool:
        """Move the chain to its home pose at the joint speed."""
        return self._joint_move('home', f'home at {self.joint_speed} % of the joint speed',
                                self.home)

    def _joint_move(self, kind: str, description: str, target: Sequence[float]) -> bool:
        """Move the chain's joints to ``target`` [rad or m] at the joint speed (a job)."""
        try:
            self._check('home')
        except ActionRefused as error:
            return self._refuse(error)
        self._end_manual('')
        speed = tuple(self._velocity[j] * self.joint_speed / 100.0 for j in self.joints)
        job = self._start(kind, description)
        self.send(MoveHome(job.job_id, tuple(float(v) for v in target), speed))
        return True

    # --- the program ---------------------------------------------------------------------------

    def set_text(self, text: str) -> bool:
        """
        Take the program's text as edited: parse it, and plan it offline a moment later.

        :return: False when refused (a program runs: its text stays as it is).
        """
        if text == self.text:
            return True
        if self.job is not None and self.job.kind == 'program':
            return self._refuse(ActionRefused('the program runs: stop it before editing'))
        self.text = text
        self.next_step = self.next_move = 0
        self.override = 1.0
        self.error_line = 0
        try:
            self.steps = program_steps(parse_program(text))
            self.parse_error = None
            self._plan_due = self.clock() + PLAN_DELAY
        except ProgramError as error:
            self.steps = []
            self.parse_error = error
            self.error_line = error.line
            self._plan_due = None
        if self.message.text.startswith(PLAN_PREFIX):
            # the plan it reports is of the text before this edit: it would stand beside the
            # new parse error or the new plan; the log keeps it
            self.board.clear()
        self._notify('program')
        return True

    def load_file(self, path: str) -> bool:
        """Read a program file into the editor (it is parsed and planned as if typed)."""
        text = self._read_text(path, 'read')
        if text is None or not self.set_text(text):
            return False
        self.source = str(path)
        self.saved_text = text
        self.say(f'{path}: {len(self.steps)} steps' if self.parse_error is None else
                 f'{path}: {self.parse_error}', 'info' if self.parse_error is None else 'error',
                 self.error_line)
        self._notify('program')
        return True

    def _read_text(self, path: str, verb: str) -> Optional[str]:
        """Return a file's text, or None when it cannot be read (said: 'cannot <verb> ...')."""
        try:
            with open(path, encoding='utf-8') as stream:
                return stream.read()
        except (OSError, UnicodeDecodeError) as error:
            self._refuse(ActionRefused(f'cannot {verb} {path}: {error}'))
            return None

    @property
    def modified(self) -> bool:
        """Return whether the program has edits that are in no file."""
        return self.text != self.saved_text

    @property
    def program_name(self) -> str:
        """Return the program's name: its file's, without the folder and the suffix."""
        return os.path.splitext(os.path.basename(self.source))[0] if self.source else ''

    def pending_backup(self) -> Optional[str]:
        """Return the backup a console left with unsaved edits (None: nothing lost)."""
        path = self.backups.pending() if self.backups is not None else None
        return str(path) if path is not None else None

    def describe_backup(self, path: str) -> str:
        """Return what a backup holds, for the question whether to restore it."""
        from pathlib import Path
        return self.backups.describe(Path(path)) if self.backups is not None else path

    def restore_backup(self, path: str) -> bool:
        """Take a backup's text as the program (unsaved: no file holds it)."""
        text = self._read_text(path, 'restore')
        if text is None or not self.set_text(text):
            return False
        self.source = ''
        self.saved_text = ''
        self.say(f'restored the backup {path}: Save as... to keep it')
        self._notify('program')
        return True

    def ignore_backup(self) -> None:
        """Do not offer the pending backup again (it stays in the backup folder)."""
        if self.backups is not None:
            self.backups.ignore()

    def closing(self) -> None:
        """Record that the window closes (a clean exit, or a last backup of kept edits)."""
        if self.backups is not None:
            text = self.text
            self.backups.closing(self.modified, text, lambda: text, self.program_name)

    def discard_changes(self) -> None:
        """Give the edits up: closing asks nothing (the text stays until it is replaced)."""
        self.saved_text = self.text
        self._notify('program')

    def save_file(self, path: str) -> bool:
        """Write the program's text to ``path`` (whole or not at all)."""
        from sweetie_motion.storage.files import write_atomically
        try:
            write_atomically(str(path), self.text)
        except OSError as error:
            return self._refuse(ActionRefused(f'cannot write {path}: {error}'))
        self.source = str(path)
        self.saved_text = self.text
        self.say(f'saved {path}')
        self._notify('program')
        return True

    def check(self) -> bool:
        """Plan the program offline now and say whether it plans within the limits."""
        if self.parse_error is not None:
            return self._refuse(ActionRefused(f'the program has an error: {self.parse_error}',
                                              line=self.parse_error.line))
        if not self.steps:
            return self._refuse(ActionRefused('the program is empty'))
        self._checking = True
        self._request_plan()
        self.say('checking the program offline ...')
        return True

    def _request_plan(self) -> None:
        self._plan_due = None
        start = self.positions(self.joints) if self.connected else None
        self._plan_id += 1
        self.send(PlanProgram(self._plan_id, tuple(self.steps),
                              tuple(float(v) for v in (start if start is not None
                                                       else self.home))))

    def run(self) -> bool:
        """Run the program (from the step it was paused at, else from the top)."""
        return self._run(single=False)

    def step(self) -> bool:
        """Run the program's next step only."""
        return self._run(single=True)

    def _run(self, single: bool) -> bool:
        try:
            if self.parse_error is None and not self.steps:
                raise ActionRefused('the program is empty')
            self._check('step' if single else 'run', self.steps)
        except ActionRefused as error:
            if error.line:
                self.error_line = error.line
                self._notify('program')
            return self._refuse(error)
        self._end_manual('')
        first = self.next_step if self.next_step < len(self.steps) else 0
        first_move = self.next_move if first == self.next_step else 0
        if first == 0 and first_move == 0:
            self.override = 1.0
            self._request_plan()   # the path drawn is the one that runs, from where it starts
        self.error_line = 0
        what = 'program step' if single else 'program'
        job = self._start('program', what, self.next_line or self.steps[first].line)
        self.send(RunSteps(job.job_id, tuple(self.steps), first, single, self.override,
                           first_move))
        self._notify('program')
        return True

    def run_line(self, text: str) -> bool:
        """Parse one typed command and run it now (the console's command line)."""
        try:
            command = parse_line(text, line=0)
        except ProgramError as error:
            return self._refuse(ActionRefused(f'command: {error.reason} (column {error.column})'))
        if command is None:
            return self._refuse(ActionRefused('command: nothing to run (blank or a comment)'))
        steps = program_steps([command])
        try:
            self._check('line', steps)
        except ActionRefused as error:
            return self._refuse(error)
        self._end_manual('')
        job = self._start('line', f'command {text.strip()}')
        self.send(RunSteps(job.job_id, tuple(steps), 0, True, self.override))
        return True

    def stop(self) -> None:
        """Stop whatever moves: the job (it decelerates and holds) and the sliders."""
        moving = self.manual is not None
        if moving:
            self._end_manual('stopped: the joints stay where the sliders had taken them')
        if self.job is not None:
            self.job.stopping = True
            self.send(StopJob(self.job.job_id))
            self.say(f'stopping {self.job.description} ...', 'warning')
            self._notify('job')
        elif not moving:
            self.say('nothing moves')

    def _start(self, kind: str, description: str, line: int = 0) -> Job:
        self._job_ids += 1
        self.job = Job(self._job_ids, kind, description, line)
        self.say(f'{description} ...')
        self._notify('job')
        return self.job

    # --- time and events -----------------------------------------------------------------------

    def tick(self) -> None:
        """Stream the sliders' pose and plan after edits (the window's timer calls this)."""
        now = self.clock()
        if self.manual is not None:
            if self.connected and self.job is None:
                self._watch_manual(now)
            else:
                self._end_manual('the slider move ended: ' + (
                    'the motion process went away' if not self.connected else
                    f'{self.job.description} runs'), 'warning')
        if self._plan_due is not None and now >= self._plan_due:
            self._request_plan()
        backups = self.backups
        if backups is not None and backups.due(self.text, self.modified):
            backups.write(self.text, self.program_name, self.text)
            error = backups.unsaid_error()
            if error:
                self.say(f'backup failed: {error}', 'warning')

    def handle(self, event: object) -> None:
        """Take an event of the adapters (in the GUI thread)."""
        self._handlers.dispatch(event)

    def _on_state_received(self, event: PoseReceived) -> None:
        self.pose.update(zip(event.names, (float(p) for p in event.positions)))
        self._notify('state')

    def _on_stream_done(self, event: StreamDone) -> None:
        if self.manual is not None and self.manual.stream_id == event.stream_id and \
                self.manual.arrived is None:
            self.manual.arrived = self.clock()

    def _on_gripper_state(self, event: GripperState) -> None:
        self.gripper_state = event.state
        self._notify('state')

    def _on_links_changed(self, event: LinksChanged) -> None:
        before = self.connected
        self.links.update(dict(event.links))
        if before and not self.connected:
            self.say('the motion process is disconnected: no joint_states (it died or was '
                     'stopped); the console reconnects when it is back', 'error')
        elif self.connected and not before:
            self.say('the motion process is connected')
        self._notify('links')

    def _on_step_started(self, event: StepStarted) -> None:
        if self.job is None or self.job.job_id != event.job_id:
            return
        self.job.line = event.line
        self.say(f'{event.description} ...')
        self._notify('job', 'program')

    def _on_line_reached(self, event: LineReached) -> None:
        if self.job is None or self.job.job_id != event.job_id or event.line == self.job.line:
            return
        self.job.line = event.line
        self._notify('job', 'program')

    def _on_step_finished(self, event: StepFinished) -> None:
        if self.job is None or self.job.job_id != event.job_id:
            return
        where = f'line {event.line}' if event.line else 'command'
        self.say(f'{where}: done in {event.seconds:.2f} s: {event.message}')

    def _on_job_finished(self, event: JobFinished) -> None:
        job = self.job
        if job is None or job.job_id != event.job_id:
            return
        self.job = None
        if job.kind == 'program':
            self._program_finished(event)
        elif event.outcome == SUCCEEDED:
            self.say(f'{job.description}: {event.message}' if event.message else
                     f'{job.description}: done')
        elif event.outcome == STOPPED:
            self.say(f'{job.description} stopped: the motion decelerated and holds', 'warning')
        else:
            self.say(f'{job.description} failed: {event.message}', 'error')
        self._notify('job', 'program')

    def _program_finished(self, event: JobFinished) -> None:
        self.override = event.override
        if event.outcome == SUCCEEDED:
            self.next_step, self.next_move = event.next_index, event.next_move
            if self.next_step >= len(self.steps):
                self.next_step = self.next_move = 0
                self.override = 1.0
                self.say(f'the program is done: {len(self.steps)} steps')
            else:
                self.say(f'step done; next: line {self.next_line} (Step or Run goes on from '
                         'there)')
            return
        self.next_step = self.next_move = 0
        self.override = 1.0
        if event.outcome == STOPPED:
            where = f' at line {event.line}' if event.line else ''
            self.say(f'the program was stopped{where}: the motion decelerated and holds; Run '
                     'starts it from the top', 'warning', event.line)
        else:
            self.error_line = event.line
            self.say(f'the program failed: {event.message}', 'error', event.line)

    def _on_program_planned(self, event: ProgramPlanned) -> None:
        if event.plan_id != self._plan_id:
            return  # an older plan: the text or the start changed since
        self.plan = event
        checking, self._checking = self._checking, False
        if event.error:
            if self.job is None:
                self.error_line = event.line
            self.say(f'{PLAN_PREFIX}{event.error}', 'error', event.line)
        elif checking:
            self.say(f'check: {len(self.steps)} steps plan within the limits, '
                     f'{event.duration:.2f} s, {len(event.tool)} samples')
        self._notify('plan', 'program')

    def program_status(self) -> Tuple[str, str]:
        """
        Return what the program's status line says, and its level ('info' or 'error').

        The parse error (with its line, column and a caret under the token) while there is
        one, else the offline plan's outcome.
        """
        if self.parse_error is not None:
            return str(self.parse_error), 'error'
        plan = self.plan
        if plan is None:
            return ('', 'info') if self.steps or not self.text.strip() else \
                ('no commands: only comments and blank lines', 'info')
        if plan.error:
            return f'{PLAN_PREFIX}{plan.error}', 'error'
        return (f'offline plan: {len(self.steps)} steps, {plan.duration:.2f} s, '
                f'{len(plan.tool)} samples; ' + '; '.join(plan.reports[-2:]), 'info')

    def joint_rows(self) -> List[Tuple[str, str]]:
        """Return (joint, position as read by a person) of the program's chain."""
        rows = []
        for joint in self.joints:
            unit, factor = display_unit(self.model, joint)
            value = self.pose.get(joint)
            rows.append((joint, '-' if value is None else
                         f'{round(value * factor, 2) + 0.0:+.2f} {unit}'))
        return rows

    def tool_text(self) -> str:
        """Return the tool pose as a person reads it: mm and ZYZ degrees."""
        pose = self.tool_pose()
        if pose is None:
            return 'no joint_states yet'
        x, y, z, a, b, c = (round(v, 1) + 0.0 for v in pose.mm_zyz(degrees=True))  # no -0.0
        return (f'X {x:.1f}  Y {y:.1f}  Z {z:.1f} mm   A {a:.1f}  B {b:.1f}  C {c:.1f} deg '
                '(ZYZ)')

    def link_rows(self) -> List[Tuple[str, bool]]:
        """Return (readable part name, up) of :data:`PARTS`."""
        return [(PART_NAMES[p], self.links[p]) for p in PARTS]
