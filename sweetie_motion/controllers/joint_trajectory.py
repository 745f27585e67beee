"""
The FollowJointTrajectory controller (R-FJT-1..5; AnimationJointTrajectory of the old robot).

The action side (another thread) validates a goal, builds its spline once and swaps it in; the
cycle samples it each tick, checks the path tolerance against the measured pose, passes the
reference through the smoothing filter and emits it; at the end it checks the goal tolerance
within goal_time_tolerance. A new goal preempts the running one without a jump (the filter
blends from where the motion is). Cancel and abort brake: the motion decelerates within the
acceleration and jerk limits along its direction and holds where it came to rest (no overshoot,
no reversal).
When a goal has ended and the motion has settled, the controller gives its resources back, so
that a background controller (FollowJointState) takes over from the held pose.
"""

from dataclasses import dataclass, field
import threading
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.controllers.base import ControlledJoints, ControllerCore
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import JointVector, LatestValue
from sweetie_motion.core.safety import Brake
from sweetie_motion.core.smoothing import SmoothingFilter
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.trajectory.analysis import goal_motion
from sweetie_motion.trajectory.arrays import TrajectoryArrays
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX, TrajectoryGoal
from sweetie_motion.trajectory.spline import build_spline, JointSpline
from sweetie_motion.trajectory.timing import (
    describe_retiming, join_splines, limit_excess, plan_approach, planning_limits, policy_problem,
)
from sweetie_motion.trajectory.tolerances import ToleranceDefaults, Tolerances
from sweetie_motion.trajectory.validation import GoalError, GoalLike, ResultCode, validate_goal

#: a goal's motion counts as settled below this speed [rad/s]
SETTLED_VELOCITY = 1e-3
#: resources are given back at the latest this long after a goal ended [s]
SETTLE_TIMEOUT = 2.0


@dataclass
class Outcome:
    """How a goal ended: 'succeeded', 'aborted' or 'canceled', with code and message."""

    status: str
    code: int
    message: str


@dataclass
class Feedback:
    """One feedback sample of a running goal (arrays in the goal's joint order)."""

    time_from_start: float
    desired_position: np.ndarray
    desired_velocity: np.ndarray
    desired_acceleration: np.ndarray
    actual_position: np.ndarray
    actual_velocity: np.ndarray


@dataclass(eq=False)
class GoalPlan:
    """
    A validated goal, ready for the cycle: its spline and what the checks need (pure data).

    Built by :class:`GoalPlanner` where the goal arrives (the ROS side) and handed to the
    controller core in the cycle process; it holds arrays, never the goal's points.
    """

    joints: List[str]
    indices: np.ndarray
    local: np.ndarray
    spline: JointSpline
    tolerances: Tolerances
    resources: FrozenSet[str]
    support: List[Tuple[str, np.ndarray, np.ndarray]]
    #: what the planning changed in the goal's timing (retimed, a longer approach): the
    #: result message carries it
    timing: List[str] = field(default_factory=list)

    @property
    def duration(self) -> float:
        """Return the duration of the motion, approach included [s]."""
        return self.spline.duration


class GoalPlanner:
    """
    Validates goals for one trajectory controller and builds their splines.

    :param name: the controller's name (for messages).
    :param model: the robot model view.
    :param chains: the chains the controller drives.
    :param defaults: default tolerances.
    :param interpolation: 'akima' or 'cubic' for position-only keyframes.
    :param policy: what a goal beyond the velocity or acceleration limits gets: 'retime'
        (slowed down to fit) or 'refuse' (INVALID_GOAL), see :mod:`trajectory.timing`.
    """

    def __init__(self, name: str, model: RobotModelView, chains: Sequence[str],
                 defaults: ToleranceDefaults, interpolation: str = 'akima',
                 policy: str = 'retime') -> None:
        problem = policy_problem(policy)
        if problem:
            raise ValueError(f'limits policy {policy!r}: {problem}')
        self.name = name
        self.model = model
        self.controlled = ControlledJoints.of(model, chains)
        self.defaults = defaults
        self.interpolation = interpolation
        self.policy = policy
        self.limits = model.joint_limits()
        self._local_index = {int(c): k for k, c in enumerate(self.controlled.indices)}

    def validate(self, goal: GoalLike) -> TrajectoryArrays:
        """
        Check ``goal`` for this controller (joints, structure, limits, support flags).

        :return: the goal's arrays.
        :raises GoalError: with the result code and message for the client.
        """
        controlled = self.controlled
        arrays = validate_goal(goal, self.model, controlled.joints)
        foreign = [c for c in arrays.support_chains() if c not in controlled.chains]
        if foreign:
            raise GoalError(ResultCode.INVALID_JOINTS,
                            f'support flags of chain(s) {", ".join(foreign)} that this '
                            'controller does not drive')
        return arrays

    def plan(self, goal: GoalLike,
             poses: Callable[[], Tuple[JointVector, JointVector]]) -> GoalPlan:
        """
        Validate ``goal`` and build its spline from the current pose.

        :param goal: a goal or its arrays (as converted from a message).
        :param poses: returns the current full (reference, measured) poses: where the motion
            starts and what the start tolerance is checked against; called after validation.
        :raises GoalError: with the result code and message for the client.
        """
        arrays = self.validate(goal)
        reference, measured = poses()
        # the goal's own motion, from its first keyframe on, within the limits
        motion = goal_motion(arrays, self.interpolation)
        joints = motion.joints
        indices = self.model.get_joint_indices(joints)
        limits = self.limits.take(indices)
        planning = planning_limits(limits)
        tolerances = Tolerances(joints, arrays, self.defaults)
        timing: List[str] = []
        _, excess = limit_excess(motion.spline, joints, limits, start=motion.start)
        if excess is not None:
            if self.policy == 'refuse':
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'the trajectory exceeds the joint limits: {excess.describe()}'
                                f' (controller {self.name} refuses such goals: '
                                'limits.policy is refuse)')
            factor, _ = limit_excess(motion.spline, joints, planning, start=motion.start)
            motion = motion.retimed(factor)
            timing.append(describe_retiming(factor, excess))
        times = motion.times
        start_position = reference.position[indices]
        start_velocity = reference.velocity[indices]
        shift = 0.0
        if motion.start > 0:
            # the motion starts where the robot is: an approach within the limits, in the
            # requested time if possible, else as fast as the limits allow
            first = motion.spline.sample(motion.start)   # the state at the first keyframe
            try:
                duration, knots, p, v, a = plan_approach(
                    start_position, start_velocity, first[0], first[1], first[2], planning,
                    motion.start)
            except ValueError as error:
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'cannot plan the approach to the first point: {error}') from None
            approach = build_spline(knots, p, v, a)
            spline = join_splines(approach, motion.spline)
            shift = duration - motion.start
            if shift > 1e-3:
                timing.append(f'the approach to the first point takes {duration:.2f} s '
                              f'instead of {motion.start:.2f} s (joint limits)')
        else:
            violation = tolerances.start_violation(motion.positions[0],
                                                   measured.position[indices])
            if violation is not None:
                raise GoalError(ResultCode.PATH_TOLERANCE_VIOLATED,
                                f'the trajectory starts away from the current pose: '
                                f'{violation}')
            spline = motion.spline
        support = [(chain, times + shift, arrays.positions[:, column])
                   for chain, column in zip(arrays.support_chains(), arrays.columns(
                       [SUPPORT_PREFIX + c for c in arrays.support_chains()]))]
        resources = frozenset(self.model.get_joints_groups(joints))
        local = np.array([self._local_index[int(i)] for i in indices], dtype=np.intp)
        return GoalPlan(joints, indices, local, spline, tolerances, resources, support, timing)


@dataclass(eq=False)
class ExecutingGoal:
    """
    A goal plan being executed by the cycle.

    The action side reads :attr:`outcome` and :attr:`feedback`; only the cycle writes them.
    """

    plan: GoalPlan
    started_at: Optional[float] = None
    outcome: Optional[Outcome] = None
    feedback: LatestValue = field(default_factory=LatestValue)
    finished: threading.Event = field(default_factory=threading.Event)
    cancel_requested: bool = False

    @property
    def duration(self) -> float:
        """Return the duration of the motion, approach included [s]."""
        return self.plan.spline.duration

    @property
    def joints(self) -> List[str]:
        """Return the goal's joints, in the order of its feedback arrays."""
        return self.plan.joints

    def end(self, status: str, code: int, message: str) -> None:
        """
        Record the outcome (the first one wins) and wake whoever waits for it.

        The message tells what planning changed in the timing, if anything.
        """
        if self.outcome is None:
            if self.plan.timing:
                message = f'{message}; {"; ".join(self.plan.timing)}'
            self.outcome = Outcome(status, int(code), message)
            self.finished.set()


class JointTrajectoryCore(ControllerCore):
    """
    The trajectory controller core (a cycle stage of role 'controller').

    :param make_filter: creates the smoothing filter for a list of joint names.
    :param defaults: default tolerances.
    :param interpolation: 'akima' or 'cubic' for position-only keyframes.
    """

    def __init__(self, name: str, model: RobotModelView, arbiter: Arbiter,
                 chains: Sequence[str], make_filter: Callable[[Sequence[str]], SmoothingFilter],
                 defaults: ToleranceDefaults, interpolation: str = 'akima',
                 stay_operational: bool = True) -> None:
        super().__init__(name, model, arbiter, chains, stay_operational)
        self.filter = make_filter(self.joints)
        self.planner = GoalPlanner(name, model, self.chains, defaults, interpolation)
        self._lock = threading.Lock()
        self._pending: Optional[ExecutingGoal] = None
        self._cancel: Optional[ExecutingGoal] = None
        self._active: Optional[ExecutingGoal] = None
        self._settling: Optional[Tuple[ExecutingGoal, float]] = None
        self._hold = np.zeros(len(self.indices))
        self._started = False
        self._period: Optional[float] = None
        self._brake: Optional[Brake] = None
        self._braking = False
        # the output velocities of the last two ticks (the filters return new arrays each
        # tick): a brake starts from the acceleration they imply
        self._last_velocity = self._previous_velocity = np.zeros(len(self.indices))
        self._last_output: Optional[Tuple[np.ndarray, np.ndarray]] = None
        #: the latest full poses the cycle saw (reference, measured), for the action side
        self.poses: LatestValue[Tuple[JointVector, JointVector]] = LatestValue()
        #: chain -> support weight of the running goal (``support/<chain>`` keyframes)
        self.support: LatestValue[Dict[str, float]] = LatestValue()
        self.on_ownership = self._ownership_changed

    # --- action side ---------------------------------------------------------------------------

    def prepare(self, goal: TrajectoryGoal) -> ExecutingGoal:
        """
        Validate ``goal`` and build its spline from the pose the cycle saw last.

        :raises GoalError: with the result code and message for the client.
        """
        poses = self.poses.value
        if poses is None:
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'controller {self.name} is not running (no pose yet)')
        return ExecutingGoal(self.planner.plan(goal, lambda: poses))

    def start(self, executing: ExecutingGoal) -> None:
        """Make ``executing`` the next goal (the running one is preempted at the next tick)."""
        with self._lock:
            previous, self._pending = self._pending, executing
        if previous is not None:
            previous.end('aborted', ResultCode.INVALID_GOAL,
                         'preempted by a newer goal before it started')
        self.acquire(executing.plan.resources)

    def cancel(self, executing: ExecutingGoal) -> None:
        """Stop ``executing``: the robot decelerates and holds; the goal ends as canceled."""
        executing.cancel_requested = True
        with self._lock:
            if self._pending is executing:
                self._pending = None
                executing.end('canceled', ResultCode.SUCCESSFUL, 'canceled before it started')
                return
            self._cancel = executing

    def running_goal(self) -> Optional[ExecutingGoal]:
        """Return the goal being executed (or about to be), None when idle."""
        with self._lock:
            return self._pending or self._active

    def _ownership_changed(self, lost: FrozenSet[str], gained: FrozenSet[str]) -> None:
        if not lost:
            return
        owners = self.arbiter.owners()
        with self._lock:
            goals = [g for g in (self._active, self._pending) if g is not None]
        for executing in goals:
            taken = sorted(executing.plan.resources & lost)
            if taken:
                by = ', '.join(f'{r} to {owners.get(r) or "nobody"}' for r in taken)
                executing.end('aborted', ResultCode.INVALID_GOAL,
                              f'lost resource(s) {by} during the motion')

    # --- cycle side ----------------------------------------------------------------------------

    def reset(self, reference: JointVector) -> None:
        """Start holding the current pose (on activation)."""
        self._hold = reference.position[self.indices].copy()
        self.filter.reset(self._hold, reference.velocity[self.indices])
        self._braking = False
        self._started = True

    def update(self, tick: Tick) -> None:
        """Sample the running goal, check tolerances, smooth, emit; manage goal ends."""
        self.poses.write((tick.reference, tick.measured))
        self._period = tick.period
        if not self._started:
            self.reset(tick.reference)
        if self._braking and self.take_gained_pending():
            self._end_braking()  # gained joints start from the reference: leave the brake
        local = self.adopt_gained(tick, self.filter)
        if local is not None:
            self._hold[local] = tick.reference.position[self.indices[local]]
        with self._lock:
            pending, self._pending = self._pending, None
            cancel, self._cancel = self._cancel, None
        active = self._active
        if pending is not None:
            if active is not None:
                active.end('aborted', ResultCode.INVALID_GOAL,
                           'preempted by a newer goal (the motion switched to it)')
            active = self._active = pending
            if self._braking:
                self._end_braking()
            # the spline's t = 0 is the reference the previous tick sent: this tick sends the
            # motion one period in (a goal changes the reference at the first tick it is seen)
            active.started_at = tick.now - tick.period
            self._settling = None
            self._blend()
        if cancel is not None and cancel is active:
            cancel.end('canceled', ResultCode.SUCCESSFUL, 'canceled: holding the pose')
        target = self._hold.copy()
        target_velocity = np.zeros(len(target))
        if active is not None and active.outcome is None:
            self._follow(tick, active, target, target_velocity)
        if active is not None and active.outcome is not None:
            self._finish(tick, active)  # ended now or before: hold from here on
            target = self._hold.copy()
            target_velocity[:] = 0.0
        idx = self.indices
        if self._braking:
            assert self._brake is not None  # _start_braking made it
            position, velocity = self._brake.step()
            self._last_output = (position, velocity)
            if not self._brake.active:
                self._hold = position.copy()
                self._end_braking()
        else:
            position, velocity = self.filter.update(tick.measured.position[idx],
                                                    tick.measured.velocity[idx], target,
                                                    target_velocity)
        self._previous_velocity, self._last_velocity = self._last_velocity, velocity
        out_position = tick.reference.position.copy()
        out_velocity = np.zeros(len(out_position))
        out_position[idx] = position
        out_velocity[idx] = velocity
        self.emit(tick, out_position, out_velocity)
        self._release_when_settled(tick, velocity)

    def take_gained_pending(self) -> bool:
        """Return whether resources were gained since the last tick (without taking them)."""
        return bool(self._gained)

    def _end_braking(self) -> None:
        # the filter continues from where the brake is
        if self._last_output is not None:
            self.filter.reset(*self._last_output)
        self._braking = False
        self._last_output = None

    def _start_braking(self) -> None:
        position, velocity = self.filter.state
        if self._brake is None:
            self._brake = Brake(self.model.joint_limits().take(self.indices),
                                self._period or 0.01)
        acceleration = (self._last_velocity - self._previous_velocity) / self._brake.period
        self._brake.start(position, velocity, acceleration)
        self._last_output = (position, velocity)
        self._braking = True

    def _blend(self) -> None:
        # a new motion starts from where the filter is: no jump, the offset fades out
        position, velocity = self.filter.state
        self.filter.reset(position, velocity)

    def _follow(self, tick: Tick, active: ExecutingGoal, target: np.ndarray,
                target_velocity: np.ndarray) -> None:
        assert active.started_at is not None  # set when the goal became the active one
        t = tick.now - active.started_at
        plan = active.plan
        desired, desired_velocity, desired_acceleration = plan.spline.sample(t)
        target[plan.local] = desired
        target_velocity[plan.local] = desired_velocity
        actual = tick.measured.position[plan.indices]
        actual_velocity = tick.measured.velocity[plan.indices]
        active.feedback.write(Feedback(t, desired, desired_velocity, desired_acceleration,
                                       actual, actual_velocity))
        if plan.support:
            self.support.write({chain: float(values[max(0, int(np.searchsorted(
                times, t, side='right')) - 1)]) for chain, times, values in plan.support})
        if t <= active.duration:
            violation = plan.tolerances.path_violation(desired, actual, desired_velocity,
                                                       actual_velocity)
            if violation is not None:
                active.end('aborted', ResultCode.PATH_TOLERANCE_VIOLATED,
                           f'path tolerance violated at t = {t:.2f} s: {violation}')
            return
        violation = plan.tolerances.goal_violation(desired, actual, actual_velocity)
        if violation is None:
            active.end('succeeded', ResultCode.SUCCESSFUL,
                       f'reached the goal at t = {t:.2f} s (duration {active.duration:.2f} s)')
        elif t > active.duration + plan.tolerances.goal_time:
            active.end('aborted', ResultCode.GOAL_TOLERANCE_VIOLATED,
                       f'goal not reached {plan.tolerances.goal_time:.2f} s after the end: '
                       f'{violation}')

    def _finish(self, tick: Tick, active: ExecutingGoal) -> None:
        position, velocity = self.filter.state
        assert active.outcome is not None  # a goal is finished once it has ended
        if active.outcome.status == 'succeeded':
            self._hold[active.plan.local] = active.plan.spline.end  # exactly the last keyframe
        else:
            # stopped on the way: brake within the limits, hold where the motion comes to rest
            self._hold = position.copy()
            if self._braking:
                pass  # already braking (a second stop of the same motion)
            elif np.abs(velocity).max(initial=0.0) > 0.0:
                self._start_braking()
            else:
                self.filter.reset(position, velocity)
        self._active = None
        self._settling = (active, tick.now)

    def _release_when_settled(self, tick: Tick, velocity: np.ndarray) -> None:
        if self._settling is None:
            return
        executing, since = self._settling
        if np.abs(velocity).max(initial=0.0) < SETTLED_VELOCITY or \
                tick.now - since > SETTLE_TIMEOUT:
            self._settling = None
            with self._lock:
                busy = self._pending is not None
            if not busy:
                self.release_resources(executing.plan.resources)

    def release_resources(self, resources: FrozenSet[str]) -> None:
        """Give resources back after a goal, keeping the controller operational."""
        self.arbiter.release(self, resources)
