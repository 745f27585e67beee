"""
The FollowJointTrajectory controller (R-FJT-1..5; AnimationJointTrajectory of the old robot).

The action side (another thread) validates a goal, builds its spline once and swaps it in; the
cycle samples it each tick, checks the path tolerance against the measured pose, passes the
reference through the smoothing filter and emits it; at the end it checks the goal tolerance
within goal_time_tolerance. A new goal preempts the running one without a jump (the filter
blends from where the motion is); cancel holds the pose, decelerating through the filter.
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
from sweetie_motion.core.smoothing import SmoothingFilter
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.trajectory.arrays import TrajectoryArrays
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX, TrajectoryGoal
from sweetie_motion.trajectory.spline import build_spline, JointSpline
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
    #: what the action side should tell the user (e.g. velocity limits exceeded)
    warnings: List[str] = field(default_factory=list)

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
    """

    def __init__(self, name: str, model: RobotModelView, chains: Sequence[str],
                 defaults: ToleranceDefaults, interpolation: str = 'akima') -> None:
        self.name = name
        self.model = model
        self.controlled = ControlledJoints.of(model, chains)
        self.defaults = defaults
        self.interpolation = interpolation
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
        joints = arrays.joints()
        columns = arrays.columns(joints)
        indices = self.model.get_joint_indices(joints)
        tolerances = Tolerances(joints, arrays, self.defaults)
        given_times = arrays.times
        times = given_times
        positions = arrays.positions[:, columns]
        velocities = accelerations = None
        if arrays.velocities is not None:
            velocities = arrays.velocities[:, columns]
            if arrays.accelerations is not None:
                accelerations = arrays.accelerations[:, columns]
        start_position = reference.position[indices]
        start_velocity = reference.velocity[indices]
        if times[0] > 0:
            # the motion starts where the robot is: the current pose is the knot at t = 0
            times = np.concatenate([[0.0], times])
            positions = np.vstack([start_position, positions])
            if velocities is not None:
                velocities = np.vstack([start_velocity, velocities])
            if accelerations is not None:
                accelerations = np.vstack([np.zeros(len(joints)), accelerations])
        else:
            violation = tolerances.start_violation(positions[0], measured.position[indices])
            if violation is not None:
                raise GoalError(ResultCode.PATH_TOLERANCE_VIOLATED,
                                f'the trajectory starts away from the current pose: '
                                f'{violation}')
        spline = build_spline(times, positions, velocities, accelerations, self.interpolation,
                              start_velocity=start_velocity if given_times[0] > 0 else None)
        support = [(chain, given_times, arrays.positions[:, column])
                   for chain, column in zip(arrays.support_chains(), arrays.columns(
                       [SUPPORT_PREFIX + c for c in arrays.support_chains()]))]
        resources = frozenset(self.model.get_joints_groups(joints))
        local = np.array([self._local_index[int(i)] for i in indices], dtype=np.intp)
        return GoalPlan(joints, indices, local, spline, tolerances, resources, support,
                        self._speed_warnings(spline, joints, indices))

    def _speed_warnings(self, spline: JointSpline, joints: List[str],
                        indices: np.ndarray) -> List[str]:
        """Name the joints the trajectory drives faster than their URDF velocity limit."""
        limits = self.model.velocity_limits()[indices]
        grid = np.linspace(0.0, spline.duration, 200)
        peak = np.abs(spline.sample_many(grid)[1]).max(axis=0)
        return [f'{j} needs {p:.2f} rad/s (URDF limit {lim:.2f})'
                for j, p, lim in zip(joints, peak, limits) if p > 1.05 * lim]


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

    @property
    def warnings(self) -> List[str]:
        """Return what the action side should tell the user."""
        return self.plan.warnings

    def end(self, status: str, code: int, message: str) -> None:
        """Record the outcome (the first one wins) and wake whoever waits for it."""
        if self.outcome is None:
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
        self._started = True

    def update(self, tick: Tick) -> None:
        """Sample the running goal, check tolerances, smooth, emit; manage goal ends."""
        self.poses.write((tick.reference, tick.measured))
        if not self._started:
            self.reset(tick.reference)
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
        position, velocity = self.filter.update(tick.measured.position[idx],
                                                tick.measured.velocity[idx], target,
                                                target_velocity)
        out_position = tick.reference.position.copy()
        out_velocity = np.zeros(len(out_position))
        out_position[idx] = position
        out_velocity[idx] = velocity
        self.emit(tick, out_position, out_velocity)
        self._release_when_settled(tick, velocity)

    def _blend(self) -> None:
        # a new motion starts from where the filter is: no jump, the offset fades out
        position, velocity = self.filter.state
        self.filter.reset(position, velocity)

    def _follow(self, tick: Tick, active: ExecutingGoal, target: np.ndarray,
                target_velocity: np.ndarray) -> None:
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
        if active.outcome.status == 'succeeded':
            self._hold[active.plan.local] = active.plan.spline.end  # exactly the last keyframe
        else:
            # stopped on the way: hold where the motion is, decelerating through the filter
            self._hold = position.copy()
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
