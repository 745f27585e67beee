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

from dataclasses import dataclass
import math
import threading
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.controllers.goals import ExecutingGoal, GoalPlan
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.component import ComponentCommand, CycleResources
from sweetie_motion.core.cycle import StageRole, Tick
from sweetie_motion.core.events import Feedback, GoalEnded, GoalProgress, SendEvent
from sweetie_motion.core.ports import JointVector, LatestValue
from sweetie_motion.core.safety import Brake
from sweetie_motion.core.smoothing import FilterSpec, SmoothingFilter
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.trajectory.validation import ResultCode

#: a goal's motion counts as settled below this speed [rad/s]
SETTLED_VELOCITY = 1e-3
#: resources are given back at the latest this long after a goal ended [s]
SETTLE_TIMEOUT = 2.0


@dataclass(frozen=True)
class JointTrajectorySpec:
    """
    What a FollowJointTrajectory controller is made from (R-FJT).

    :param chains: controlled chains; :param smoothing: the filter.
    :param order: place among the controllers.
    :param feedback_rate: how often a running goal's feedback is sent [Hz].
    """

    chains: Tuple[str, ...]
    smoothing: FilterSpec
    order: int = 0
    feedback_rate: float = 20.0


class JointTrajectoryCore(ControllerCore):
    """
    The trajectory controller core (a cycle stage of role StageRole.CONTROLLER).

    It plans nothing: goals arrive planned by its node's
    :class:`~sweetie_motion.controllers.goals.GoalPlanner` (where the goal arrives), as plans
    named by the caller's ids (:meth:`start_goal`), and what becomes of them is pushed, not
    asked for: a :class:`GoalReporter` sends
    :class:`~sweetie_motion.core.events.GoalProgress` at the feedback rate while a goal runs
    and :class:`~sweetie_motion.core.events.GoalEnded` the tick it ends.

    :param make_filter: creates the smoothing filter for a list of joint names.
    """

    SPEC = JointTrajectorySpec

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: JointTrajectorySpec) -> 'JointTrajectoryCore':
        """Make the controller from its spec, for the cycle of ``shared``."""
        period = shared.period
        core = cls(name, shared.view, shared.arbiter, spec.chains,
                   lambda joints: spec.smoothing.create(joints, period))
        core.order = spec.order
        core.attach(shared, name, send_event)
        core.reporter = GoalReporter(core, 1.0 / spec.feedback_rate)
        return core

    def __init__(self, name: str, model: RobotModelView, arbiter: Arbiter,
                 chains: Sequence[str], make_filter: Callable[[Sequence[str]], SmoothingFilter],
                 stay_operational: bool = True) -> None:
        super().__init__(name, model, arbiter, chains, stay_operational)
        self.filter = make_filter(self.joints)
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
        #: chain -> support weight of the running goal (``support/<chain>`` keyframes)
        self.support: LatestValue[Dict[str, float]] = LatestValue()
        self.on_ownership = self._ownership_changed
        #: sends what becomes of the goals (made by :meth:`create`)
        self.reporter: Optional[GoalReporter] = None

    # --- in the cycle (the component) ----------------------------------------------------------

    def activate(self) -> None:
        """Hold the current pose; resources are requested per goal."""
        self.reset(self.shared.cycle.reference)
        self.shared.cycle.add_stage(StageRole.CONTROLLER, self, self.order)
        if self.reporter is not None:
            self.shared.cycle.add_stage(StageRole.OBSERVER, self.reporter)
        self.operational = True

    def deactivate(self) -> None:
        """Abort every goal (each one's end is sent), then leave the cycle."""
        reporter = self.reporter
        if reporter is not None:
            for executing in reporter.goals():
                executing.end('aborted', ResultCode.INVALID_GOAL,
                              f'controller {self.name} was deactivated')
            self.shared.cycle.remove_stage(reporter)
            reporter.update(None)
        super().deactivate()

    def start_goal(self, goal_id: bytes, plan: GoalPlan) -> None:
        """Execute ``plan`` from the next tick on (preempting the running goal)."""
        executing = ExecutingGoal(plan)
        if self.reporter is not None:
            self.reporter.follow(goal_id, executing)
        self.start(executing)

    def cancel_goal(self, goal_id: bytes) -> None:
        """Stop a goal: the motion decelerates and holds (no-op for unknown or ended ids)."""
        executing = self.reporter.goal(goal_id) if self.reporter is not None else None
        if executing is not None:
            self.cancel(executing)

    def running(self) -> bool:
        """Return whether a goal is being executed (or about to be)."""
        return self.running_goal() is not None

    # --- action side ---------------------------------------------------------------------------

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


class GoalReporter:
    """
    Sends what becomes of a trajectory controller's goals (an observer stage of the cycle).

    :param core: the controller (its name, event sender and support state).
    :param feedback_period: the shortest time between two feedbacks of a goal [s].
    """

    def __init__(self, core: JointTrajectoryCore, feedback_period: float) -> None:
        self.name = f'{core.name} goals'
        self.core = core
        self.feedback_period = feedback_period
        # goal id -> the goal, and when its last feedback went; the ROS side's thread adds,
        # the cycle's removes (single dict operations: no lock needed)
        self._goals: Dict[bytes, ExecutingGoal] = {}
        self._sent: Dict[bytes, float] = {}

    def follow(self, goal_id: bytes, executing: ExecutingGoal) -> None:
        """Report on ``executing`` under ``goal_id`` until it ends."""
        self._goals[goal_id] = executing

    def goal(self, goal_id: bytes) -> Optional[ExecutingGoal]:
        """Return the goal of ``goal_id`` (None: unknown or ended)."""
        return self._goals.get(goal_id)

    def goals(self) -> List[ExecutingGoal]:
        """Return the goals not ended yet."""
        return list(self._goals.values())

    def update(self, tick: Optional[Tick]) -> None:
        """Send the goals' ends and, at the feedback rate, their newest feedback."""
        core = self.core
        support = core.support.value
        for goal_id, executing in list(self._goals.items()):
            outcome = executing.outcome
            if outcome is not None:
                if self._goals.pop(goal_id, None) is not None:
                    self._sent.pop(goal_id, None)
                    core.send_event(GoalEnded(core.name, goal_id, outcome))
                continue
            feedback = executing.feedback.value
            if feedback is not None and tick is not None and \
                    tick.now - self._sent.get(goal_id, -math.inf) >= self.feedback_period:
                self._sent[goal_id] = tick.now
                core.send_event(GoalProgress(core.name, goal_id, feedback, support))


@dataclass(frozen=True)
class StartGoal(ComponentCommand[JointTrajectoryCore, None]):
    """Execute a planned goal from the next tick on (:meth:`JointTrajectoryCore.start_goal`)."""

    KIND = JointTrajectoryCore

    goal_id: bytes
    plan: GoalPlan

    def run(self, component: JointTrajectoryCore) -> None:
        """Call :meth:`JointTrajectoryCore.start_goal`."""
        component.start_goal(self.goal_id, self.plan)


@dataclass(frozen=True)
class CancelGoal(ComponentCommand[JointTrajectoryCore, None]):
    """Stop a goal: it decelerates and holds (:meth:`JointTrajectoryCore.cancel_goal`)."""

    KIND = JointTrajectoryCore

    goal_id: bytes

    def run(self, component: JointTrajectoryCore) -> None:
        """Call :meth:`JointTrajectoryCore.cancel_goal`."""
        component.cancel_goal(self.goal_id)
