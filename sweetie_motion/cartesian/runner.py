"""
Running motion programs (R-CART-3): program steps, a runner, and an offline backend.

A program (:mod:`.program`) becomes a list of :class:`ProgramStep`: consecutive ``MOVL``
commands form one step (one path with blends between them, as the paper plans it); every other
command is a step of its own. :class:`ProgramRunner` executes steps in order through a
:class:`MotionBackend`: the robot over ROS (``sweetie_motion.ros.program_client``, for ``program
run`` and the operator console) or :class:`OfflineBackend`, which plans every step without a
robot (``program check`` and ``program plot``): the same planner, zones and limits as the
motion process, so a program that checks offline plans the same way on the robot. Errors carry
the program's line number. Pure: no rclpy.
"""

from dataclasses import dataclass, field
import math
import threading
from typing import Callable, cast, Iterable, List, Optional, Protocol, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.limiter import LimitViolation
from sweetie_motion.cartesian.path import PathError
from sweetie_motion.cartesian.plan_checks import PathChecks
from sweetie_motion.cartesian.planner import (CartesianPlanner, CartesianRequest,
                                              START_ORIENTATION_TOLERANCE,
                                              START_POSITION_TOLERANCE)
from sweetie_motion.cartesian.program import (Command, Gripper, Home, JointMove, linear_run,
                                              LinearMove, SpeedOverride, Wait)
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import JointLimits, RobotModel
from sweetie_motion.trajectory.timing import plan_approach, planning_limits


class ProgramRunError(SweetieMotionError):
    """A program step cannot be executed; ``line`` is its line in the program (1-based)."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = int(line)
        self.reason = reason
        super().__init__(f'line {line}: {reason}' if line else reason)


class WaypointFailure(SweetieMotionError):
    """
    A path move failed at one of its waypoints, as a backend over ROS reports it.

    :param index: the waypoint's index in the waypoints given to ``move_linear``.
    :param message: the reason.
    """

    def __init__(self, index: int, message: str) -> None:
        self.index = int(index)
        super().__init__(message)


def failed_waypoint(error: SweetieMotionError) -> Optional[int]:
    """Return the index of the waypoint (in the path's waypoints) ``error`` is at, or None."""
    if isinstance(error, LimitViolation):
        return error.waypoint
    if isinstance(error, (PathError, WaypointFailure)):
        return error.index
    return None


class ProgramStopped(SweetieMotionError):
    """The program was stopped before its end."""


@dataclass(frozen=True)
class ProgramStep:
    """
    One step of a program: a run of MOVL, or one other command.

    :param kind: 'linear', 'joint', 'home', 'wait', 'gripper' or 'speed'.
    :param commands: the step's commands.
    """

    kind: str
    commands: Tuple[Command, ...]

    @property
    def line(self) -> int:
        """Return the program line the step starts at (0 if unknown)."""
        return getattr(self.commands[0], 'line', 0)

    def describe(self) -> str:
        """Say what the step does, in a few words."""
        # program_steps gives each kind its command type: the isinstance checks follow kind
        first = self.commands[0]
        # a command typed at the console's command line has no program line
        where = f'line {self.line}' if self.line else 'command'
        if self.kind == 'linear':
            return f'{where}: {len(self.commands)} linear move(s)'
        if isinstance(first, Wait):
            return f'{where}: wait {first.seconds:g} s'
        if isinstance(first, Gripper):
            return f'{where}: gripper {first.action.lower()}'
        if isinstance(first, SpeedOverride):
            return f'{where}: speed {first.percent:g} %'
        return f'{where}: {"home" if self.kind == "home" else "joint move"}'


def program_steps(commands: Sequence[Command]) -> List[ProgramStep]:
    """Group a program's commands into steps (consecutive MOVL form one step)."""
    kinds = {JointMove: 'joint', Home: 'home', Wait: 'wait', Gripper: 'gripper',
             SpeedOverride: 'speed'}
    steps: List[ProgramStep] = []
    run: List[LinearMove] = []
    for command in commands:
        if isinstance(command, LinearMove):
            run.append(command)
            continue
        if run:
            steps.append(ProgramStep('linear', tuple(run)))
            run = []
        steps.append(ProgramStep(kinds[type(command)], (command,)))
    if run:
        steps.append(ProgramStep('linear', tuple(run)))
    return steps


class MotionBackend(Protocol):
    """What a program runs on: the robot (over ROS) or the offline planner."""

    def joint_positions(self) -> np.ndarray:
        """Return the chain's joint positions now [rad or m], chain order."""

    def tool_pose(self) -> Pose:
        """Return the chain tip's pose now, in the chain's base frame."""

    def move_joints(self, target: np.ndarray, speed: Optional[np.ndarray],
                    override: float) -> str:
        """Move the joints to ``target`` (joint space; ``speed`` [rad/s] per joint or None)."""

    def move_linear(self, waypoints: List[Pose], radii: List[float],
                    speeds: List[Optional[float]], override: float,
                    heading: Optional[Callable[[int], None]] = None,
                    stop_after: int = 0) -> str:
        """
        Move the tool along the path from the current pose (waypoints[0]) through the rest.

        An error at one waypoint says which (:func:`failed_waypoint`), so that the program
        line of that MOVL is reported. ``heading`` is called, from any thread, with the index
        of the waypoint the tool heads for as the motion goes on (a backend that does not move
        the robot need not call it). ``stop_after`` > 0: plan the whole path, run only its
        part up to the stop at ``waypoints[stop_after]`` (step mode).
        """

    def gripper(self, action: str) -> str:
        """Clamp, release or hold."""

    def wait(self, seconds: float) -> str:
        """Wait ``seconds``."""

    def stop(self) -> None:
        """Stop the motion in progress (the runner stops before its next step)."""


def joint_target(command: Command, joints: Sequence[str], current: np.ndarray,
                 home: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """
    Return the joint target and speeds [rad/s] (None: the joints' own) of a MOVJ or HOME.

    :raises ProgramRunError: a value count that does not match the chain, an unknown joint.
    :raises TypeError: a command that is neither MOVJ nor HOME.
    """
    if isinstance(command, Home):
        return np.array(home, dtype=float), None
    if not isinstance(command, JointMove):
        raise TypeError(f'joint_target takes MOVJ or HOME, got {command!r}')
    target = np.array(current, dtype=float)
    if command.positions:
        values = command.position_radians()
        if len(values) != len(joints):
            raise ProgramRunError(command.line, f'MOVJ gives {len(values)} values for the '
                                                f'{len(joints)} joints {", ".join(joints)}')
        target[:] = values
    else:
        for name, value in command.joint_radians():
            if name not in joints:
                raise ProgramRunError(command.line, f'MOVJ: unknown joint {name!r} (joints: '
                                                    f'{", ".join(joints)})')
            target[list(joints).index(name)] = value
    speed = command.speed_radians()
    return target, (None if speed is None else np.full(len(joints), speed))


@dataclass
class StepReport:
    """What a step did: the step, what the backend said, how long it took [s]."""

    step: ProgramStep
    message: str
    seconds: float = 0.0


def chain_home(model: RobotModel, chain: str) -> np.ndarray:
    """
    Return the chain's home pose (the chain property ``home``, else zeros) [rad or m].

    :raises SweetieMotionError: a ``home`` of the wrong length.
    """
    home = model.get_chain_property(chain, 'home')
    joints = model.list_joints(chain)
    if home is None:
        return np.zeros(len(joints))
    if len(home) != len(joints):
        raise SweetieMotionError(f'chain {chain}: home has {len(home)} values for '
                                 f'{len(joints)} joints')
    return np.array(home, dtype=float)


class ProgramRunner:
    """
    Executes program steps in order through a backend.

    :param steps: the program's steps (:func:`program_steps`).
    :param backend: where they run.
    :param joints: the chain's joints (for MOVJ).
    :param home: the chain's home pose [rad or m] (for HOME).
    """

    def __init__(self, steps: Sequence[ProgramStep], backend: MotionBackend,
                 joints: Sequence[str], home: ArrayLike) -> None:
        self.steps = list(steps)
        self.backend = backend
        self.joints = list(joints)
        self.home = np.asarray(home, dtype=float)
        self.override = 1.0
        self.next = 0
        #: the next MOVL of the linear step :attr:`next` (step mode runs one MOVL at a time)
        self.next_move = 0
        #: called with each program line a linear step's motion reaches (from any thread)
        self.on_line: Optional[Callable[[int], None]] = None
        self._stop = threading.Event()

    @property
    def finished(self) -> bool:
        """Return whether every step has run."""
        return self.next >= len(self.steps)

    def stop(self) -> None:
        """Stop: the motion in progress is stopped, no further step runs."""
        self._stop.set()
        self.backend.stop()

    def run(self, before: Optional[Callable[[ProgramStep], bool]] = None,
            after: Optional[Callable[[StepReport], None]] = None,
            single_move: bool = False) -> List[StepReport]:
        """
        Run the remaining steps.

        :param before: called with each step before it runs; False stops there (step mode).
        :param after: called with each step's report.
        :param single_move: run a linear step one MOVL at a time (each a step of its own for
            ``before`` and ``after``, the tool stopping at every waypoint).
        :raises ProgramRunError: a step failed (its line and why); the program stops there.
        :raises ProgramStopped: :meth:`stop` was called.
        """
        reports = []
        while not self.finished:
            step = self.steps[self.next]
            if before is not None and not before(step):
                break
            report = self.run_step(single_move)
            reports.append(report)
            if after is not None:
                after(report)
        return reports

    @property
    def next_line(self) -> int:
        """Return the program line the runner goes on at (0 when finished or unknown)."""
        if self.finished:
            return 0
        step = self.steps[self.next]
        if step.kind == 'linear' and self.next_move < len(step.commands):
            return getattr(step.commands[self.next_move], 'line', 0)
        return step.line

    def describe_next(self, single_move: bool = False) -> str:
        """Say what the next step (``single_move``: its next MOVL only) does."""
        step = self.steps[self.next]
        remaining = len(step.commands) - self.next_move
        if step.kind != 'linear' or (self.next_move == 0 and not single_move):
            return step.describe()
        where = f'line {self.next_line}' if self.next_line else 'command'
        count = 1 if single_move else remaining
        return f'{where}: {count} linear move(s)'

    def run_step(self, single_move: bool = False) -> StepReport:
        """
        Run the next step; see :meth:`run` for the errors.

        :param single_move: of a linear step, run only its next MOVL (to its waypoint, where
            the tool stops: step mode); the step is done after its last MOVL.
        """
        import time
        if self._stop.is_set():
            raise ProgramStopped('the program was stopped')
        step = self.steps[self.next]
        started = time.monotonic()
        line = self.next_line
        moves = len(step.commands) - self.next_move if step.kind == 'linear' else 0
        try:
            message = self._execute(step, 1 if single_move else moves)
        except ProgramRunError:
            raise
        except SweetieMotionError as error:
            if self._stop.is_set():
                raise ProgramStopped(f'the program was stopped ({step.describe()})') from None
            raise ProgramRunError(line, str(error)) from None
        if single_move and moves > 1:
            self.next_move += 1
        else:
            self.next, self.next_move = self.next + 1, 0
        return StepReport(step, message, time.monotonic() - started)

    def _execute(self, step: ProgramStep, moves: int = 0) -> str:
        # program_steps gives each kind its command type: the isinstance checks follow kind
        first = step.commands[0]
        backend = self.backend
        if isinstance(first, SpeedOverride):
            self.override = first.factor
            return f'speed override {first.percent:g} %'
        if isinstance(first, Wait):
            return backend.wait(first.seconds)
        if isinstance(first, Gripper):
            return backend.gripper(first.action.lower())
        if step.kind in ('joint', 'home'):
            target, speed = joint_target(first, self.joints, backend.joint_positions(),
                                         self.home)
            return backend.move_joints(target, speed, self.override)
        # a linear step holds only MOVL (program_steps); linear_run checks each command; the
        # ones before next_move have run (step mode), ``moves`` of the rest run now
        linear = cast(List[LinearMove], list(step.commands))[self.next_move:]
        waypoints, radii, speeds = linear_run(linear, backend.tool_pose())
        stop_after = 0
        if moves < len(linear):
            # step mode: the rest of the path planned whole with a stop at every waypoint (the
            # joint branch is the whole path's), run to its first waypoint
            radii = [0.0] * len(radii)
            stop_after = moves
        # the program line of each waypoint: the path starts at the tool (the first MOVL's)
        lines = [linear[0].line] + [move.line for move in linear]
        # a first move to where the tool already is (the program's numbers rounded) adds no
        # segment: the path starts at the tool (in step mode that move is the step)

        def first_at_tool() -> bool:
            return len(waypoints) > 1 and waypoints[1].is_close(
                waypoints[0], START_POSITION_TOLERANCE, START_ORIENTATION_TOLERANCE)

        if stop_after and first_at_tool():
            return 'the tool is there already'
        while first_at_tool():
            del waypoints[1], radii[1], speeds[1], lines[1]
        if len(waypoints) < 2:
            return 'the tool is there already'
        try:
            return backend.move_linear(waypoints, radii, speeds, self.override,
                                       _report_lines(self.on_line, lines), stop_after)
        except SweetieMotionError as error:
            # a path error names the waypoint (segment) it is at: report that MOVL's line,
            # not the line the run of MOVL starts at
            index = failed_waypoint(error)
            if index is None or not 0 <= index < len(lines) or self._stop.is_set():
                raise
            raise ProgramRunError(lines[index], str(error)) from None


def _report_lines(on_line: Optional[Callable[[int], None]], lines: Sequence[int]
                  ) -> Optional[Callable[[int], None]]:
    """Return a ``heading`` callback that reports each new line of ``lines`` to ``on_line``."""
    if on_line is None:
        return None
    last = [0]

    def heading(index: int) -> None:
        if 0 <= index < len(lines) and lines[index] and lines[index] != last[0]:
            last[0] = lines[index]
            on_line(lines[index])
    return heading


@dataclass
class OfflineRecord:
    """
    The motion an offline run planned.

    :param times: [s]; :param positions: joint positions [rad or m], (n, joints);
    :param tool: tool positions [m], (n, 3); :param steps: (step, first sample, message).
    :param waypoints: the positions [m] of the waypoints of every planned path.
    :param lines: per sample, the program line the motion is on there (0: unknown).
    :param reconfigurations: the joint reconfigurations before paths (tool still): (its first
        sample, each joint's turn [rad or m], its number of samples).
    """

    times: List[float] = field(default_factory=list)
    positions: List[np.ndarray] = field(default_factory=list)
    tool: List[np.ndarray] = field(default_factory=list)
    steps: List[Tuple[str, int, str]] = field(default_factory=list)
    waypoints: List[np.ndarray] = field(default_factory=list)
    lines: List[int] = field(default_factory=list)
    reconfigurations: List[Tuple[int, np.ndarray, int]] = field(default_factory=list)


class OfflineBackend:
    """
    Plans every step as the motion process would, without a robot (check and plot).

    :param model: the configured robot model; :param chain: the chain programs move.
    :param start: the joint positions the program starts from.
    :param period: sample period [s].
    :param defaults: path speed [m/s], acceleration [m/s^2] and centripetal limit [m/s^2]
        of moves without a feed (the motion process's ``cartesian`` parameters).
    :param checks: the motion checks of every planned move (links, zones); None: none.
    """

    def __init__(self, model: RobotModel, chain: str, start: ArrayLike,
                 period: float = 0.01, max_velocity: float = 0.25,
                 max_acceleration: float = 0.1, lateral_acceleration: Optional[float] = 0.5,
                 workspace=None, checks: Optional[PathChecks] = None) -> None:
        self.model = model
        self.chain = chain
        self.period = float(period)
        self.checks = checks
        self.planner = CartesianPlanner(model, chain, period, workspace, checks=checks)
        self.limits = planning_limits(model.joint_limits()).take(
            model.get_chain_indices(chain))
        self.max_velocity = max_velocity
        self.max_acceleration = max_acceleration
        self.lateral_acceleration = lateral_acceleration
        self.record = OfflineRecord()
        #: the program line the next samples are of (:meth:`note_line`)
        self.line = 0
        self._q = np.asarray(start, dtype=float)
        self._t = 0.0
        self._append([0.0], [self._q])

    def note_line(self, line: int) -> None:
        """Take ``line`` as the program line of the samples planned next (a runner's on_line)."""
        self.line = int(line)

    def _append(self, times: Iterable[float], positions: Iterable[np.ndarray],
                lines: Optional[Sequence[int]] = None) -> None:
        for k, (t, q) in enumerate(zip(times, positions)):
            if self.record.times and float(t) <= 0.0:
                continue  # a move of no time (already there) adds no sample
            self.record.lines.append(self.line if lines is None else lines[k])
            self.record.times.append(self._t + float(t))
            self.record.positions.append(np.asarray(q, dtype=float))
            self.record.tool.append(self.planner.tip_pose(q).position)
        self._t = self.record.times[-1]
        self._q = self.record.positions[-1]

    def joint_positions(self) -> np.ndarray:
        """Return where the planned motion stands now."""
        return self._q.copy()

    def tool_pose(self) -> Pose:
        """Return the tool's pose where the planned motion stands now."""
        return self.planner.tip_pose(self._q)

    def move_joints(self, target: np.ndarray, speed: Optional[np.ndarray],
                    override: float) -> str:
        """Plan a joint move within the joints' limits (and ``speed``), slowed by override."""
        limits = self.limits
        velocity = limits.velocity * override if speed is None else \
            np.minimum(limits.velocity, speed) * override
        limits = JointLimits(limits.lower, limits.upper, velocity,
                             limits.acceleration * override * override, limits.jerk)
        outside = (target < self.limits.lower) | (target > self.limits.upper)
        if outside.any():
            j = int(np.flatnonzero(outside)[0])
            raise SweetieMotionError(
                f'{self.planner.joints[j]} target {math.degrees(target[j]):.2f} deg is outside '
                f'its limits {math.degrees(self.limits.lower[j]):.1f}..'
                f'{math.degrees(self.limits.upper[j]):.1f} deg')
        zeros = np.zeros(len(target))
        duration, times, positions, _, _ = plan_approach(self._q, zeros, target, zeros, zeros,
                                                         limits, 0.0)
        warnings = self.checks.check(times, positions) if self.checks is not None else []
        self._append(times[1:], positions[1:])
        self.record.steps.append(('joint', len(self.record.times) - 1, f'{duration:.2f} s'))
        return '; '.join([f'joint move of {duration:.2f} s'] + warnings)

    def move_linear(self, waypoints: List[Pose], radii: List[float],
                    speeds: List[Optional[float]], override: float,
                    heading: Optional[Callable[[int], None]] = None,
                    stop_after: int = 0) -> str:
        """Plan the path as the motion process's Cartesian node would (nothing moves)."""
        try:
            plan = self.planner.plan(CartesianRequest(
                waypoints, radii, self.max_velocity, self.max_acceleration, None,
                self.lateral_acceleration, None,
                speeds if any(v is not None for v in speeds) else None, override), self._q)
            if stop_after:
                plan = plan.until_waypoint(stop_after)
        except SweetieMotionError:
            # the waypoints stay in the picture of a path that failed, beside its error
            self.record.waypoints += [pose.position for pose in waypoints]
            raise
        assert plan.times is not None  # CartesianPlanner.plan times every sample
        if plan.prelude:
            self.record.reconfigurations.append(
                (len(self.record.times), plan.positions[plan.prelude] - plan.positions[0],
                 plan.prelude))
        lines = None
        if heading is not None:
            # the line of each sample: the MOVL whose waypoint the tool heads for there, as
            # the Cartesian node's feedback says it on the robot (heading calls note_line)
            lines = []
            for t in plan.times[1:]:
                heading(plan.heading(float(t)))
                lines.append(self.line)
        self._append(plan.times[1:], plan.positions[1:], lines)
        self.record.steps.append(('linear', len(self.record.times) - 1, plan.describe()))
        self.record.waypoints += [pose.position for pose in plan.path.waypoints]
        return plan.describe()

    def gripper(self, action: str) -> str:
        """Note the gripper action (it takes no time offline)."""
        self.record.steps.append(('gripper', len(self.record.times) - 1, action))
        return f'gripper {action}'

    def wait(self, seconds: float) -> str:
        """Stand still for ``seconds``."""
        count = max(1, int(round(seconds / self.period)))
        self._append([(k + 1) * seconds / count for k in range(count)], [self._q] * count)
        return f'waited {seconds:g} s'

    def stop(self) -> None:
        """Nothing moves offline."""
