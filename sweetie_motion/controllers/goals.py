"""
A FollowJointTrajectory goal from its arrival to its end: planned, then executed by the cycle.

:class:`GoalPlanner` validates a goal and builds its spline where the goal arrives (the ROS
side); the :class:`GoalPlan` crosses to the cycle, where an :class:`ExecutingGoal` records its
feedback and its outcome. Pure: no rclpy.
"""

from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.checks.motion import MotionChecker, PoseSamples
from sweetie_motion.controllers.base import ControlledJoints
from sweetie_motion.core.events import Outcome
from sweetie_motion.core.ports import JointVector, LatestValue
from sweetie_motion.model.robot_model import JointLimits, RobotModelView
from sweetie_motion.trajectory.analysis import goal_motion, GoalMotion
from sweetie_motion.trajectory.arrays import TrajectoryArrays
from sweetie_motion.trajectory.goal import (
    approached, MAX_SPEED, MIN_SPEED, SUPPORT_PREFIX, TrajectoryGoal,
)
from sweetie_motion.trajectory.spline import build_spline, JointSpline
from sweetie_motion.trajectory.timing import (
    describe_retiming, join_splines, limit_excess, plan_approach, planning_limits, policy_problem,
)
from sweetie_motion.trajectory.tolerances import ToleranceDefaults, Tolerances
from sweetie_motion.trajectory.validation import GoalError, GoalLike, ResultCode, validate_goal


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
    #: what the planning changed in the goal's timing (retimed, a longer approach) and what
    #: the motion checks warn of: the result message carries it
    notes: List[str] = field(default_factory=list)
    #: when each of the goal's points is played (retimed, after the approach) [s]
    keyframes: np.ndarray = field(default_factory=lambda: np.zeros(0))

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
    :param checker: the motion checks (collision, balance, load) every planned goal passes
        (None: none); a refusal is INVALID_GOAL, a warning goes into the result's message.
    """

    def __init__(self, name: str, model: RobotModelView, chains: Sequence[str],
                 defaults: ToleranceDefaults, interpolation: str = 'akima',
                 policy: str = 'retime', checker: Optional[MotionChecker] = None) -> None:
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
        self.checker = checker
        self._local_index = {int(c): k for k, c in enumerate(self.controlled.indices)}

    def validate(self, goal: GoalLike) -> TrajectoryArrays:
        """
        Check ``goal`` for this controller (joints, structure, limits, support flags).

        :return: the goal's arrays.
        :raises GoalError: with the result code and message for the client.
        """
        controlled = self.controlled
        arrays = validate_goal(goal, self.model, controlled.joints)
        # a support flag says a leg carries the robot: any leg of the robot may be flagged
        # (a head goal may say the pony stands on three legs)
        legs = set(self.checker.legs) if self.checker is not None else set()
        foreign = [c for c in arrays.support_chains()
                   if c not in controlled.chains and c not in legs]
        if foreign:
            raise GoalError(ResultCode.INVALID_JOINTS,
                            f'support flags of chain(s) {", ".join(foreign)} that this '
                            'controller does not drive and that are not legs of the robot')
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
        notes: List[str] = []
        _, excess = limit_excess(motion.spline, joints, limits, start=motion.start)
        if excess is not None:
            if self.policy == 'refuse':
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'the trajectory exceeds the joint limits: {excess.describe()}'
                                f' (controller {self.name} refuses such goals: '
                                'limits.policy is refuse)')
            factor, _ = limit_excess(motion.spline, joints, planning, start=motion.start)
            motion = motion.retimed(factor)
            notes.append(describe_retiming(factor, excess))
        times = motion.times
        spline, shift = self._from_here(motion, tolerances, reference, measured, indices,
                                        planning, notes)
        support = [(chain, times + shift, arrays.positions[:, column])
                   for chain, column in zip(arrays.support_chains(), arrays.columns(
                       [SUPPORT_PREFIX + c for c in arrays.support_chains()]))]
        if self.checker is not None:
            warnings, defaults = self.check(spline, indices, reference.position, support)
            notes += warnings
            support += defaults
        resources = frozenset(self.model.get_joints_groups(joints))
        local = np.array([self._local_index[int(i)] for i in indices], dtype=np.intp)
        return GoalPlan(joints, indices, local, spline, tolerances, resources, support, notes,
                        times + shift)

    def _from_here(self, motion: GoalMotion, tolerances: Tolerances, reference: JointVector,
                   measured: JointVector, indices: np.ndarray, planning: JointLimits,
                   notes: List[str]) -> Tuple[JointSpline, float]:
        """
        Return the goal's spline from where the robot is, and how much later it starts [s].

        A goal whose first point is later than 0 is approached within the limits (``notes``
        says when slower than asked); one that starts at 0 must start at the measured pose.

        :raises GoalError: the approach cannot be planned, or the start is too far away.
        """
        shift = 0.0
        if motion.start > 0:
            # the motion starts where the robot is: an approach within the limits, in the
            # requested time if possible, else as fast as the limits allow
            first = motion.spline.sample(motion.start)   # the state at the first keyframe
            try:
                duration, knots, p, v, a = plan_approach(
                    reference.position[indices], reference.velocity[indices], first[0],
                    first[1], first[2], planning, motion.start)
            except ValueError as error:
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'cannot plan the approach to the first point: {error}') from None
            approach = build_spline(knots, p, v, a)
            spline = join_splines(approach, motion.spline)
            shift = duration - motion.start
            if shift > 1e-3:
                notes.append(f'the approach to the first point takes {duration:.2f} s '
                             f'instead of {motion.start:.2f} s (joint limits)')
        else:
            violation = tolerances.start_violation(motion.positions[0],
                                                   measured.position[indices])
            if violation is not None:
                raise GoalError(ResultCode.PATH_TOLERANCE_VIOLATED,
                                f'the trajectory starts away from the current pose: '
                                f'{violation}')
            spline = motion.spline
        return spline, shift

    def check(self, spline: JointSpline, indices: np.ndarray, hold: np.ndarray,
              support: List[Tuple[str, np.ndarray, np.ndarray]]
              ) -> Tuple[List[str], List[Tuple[str, np.ndarray, np.ndarray]]]:
        """
        Run the motion checks on a planned motion (the other joints hold ``hold``).

        :return: the warnings (for the result's message) and the support of the legs the goal
            has no flags for, as the checks took it (published while the goal runs).
        :raises GoalError: INVALID_GOAL naming what, where and when, if a check refuses.
        """
        checker = self.checker
        assert checker is not None
        samples = PoseSamples.from_spline(
            spline, indices, hold, checker.settings.sample_rate,
            {chain: (times, values) for chain, times, values in support})
        report = checker.check(samples)
        defaults = []
        if report.support is not None:
            flagged = {chain for chain, _, _ in support}
            change = np.flatnonzero(np.any(np.diff(report.support, axis=0), axis=1)) + 1
            keys = np.concatenate(([0], change))
            defaults = [(leg, samples.times[keys], report.support[keys, column].astype(float))
                        for column, leg in enumerate(checker.legs) if leg not in flagged]
        refused = report.refused
        if refused:
            raise GoalError(ResultCode.INVALID_GOAL,
                            'the motion would hurt the robot: ' + '; '.join(
                                f'{f.check}: {f.message}' for f in refused)
                            + f' (controller {self.name}; checks: in the robot description)')
        return [f'{f.check} warning: {f.message}' for f in report.findings], defaults


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
        Record the outcome (the first one wins); the cycle's GoalReporter sends it.

        The message tells what planning changed in the timing, if anything.
        """
        if self.outcome is None:
            if self.plan.notes:
                message = f'{message}; {"; ".join(self.plan.notes)}'
            self.outcome = Outcome(status, int(code), message)


def plan_played(planner: GoalPlanner, goal: TrajectoryGoal, pose: JointVector,
                speed: float = 1.0, backward: bool = False) -> GoalPlan:
    """
    Return the plan a trajectory controller plays for a stored motion started at ``pose``.

    What ``play_trajectory`` does (:mod:`sweetie_motion.nodes.stored_motions`), without ROS:
    the goal backward if asked, ``speed`` times as fast, shifted for the approach from the
    pose (:func:`~sweetie_motion.trajectory.goal.approached`), then validated, retimed to the
    limits and given its approach by ``planner`` (:meth:`GoalPlanner.plan`) with ``pose`` as
    the reference and the measured pose. The simulation plays this plan; so can any check
    that must judge what is played.

    :param pose: the full pose the robot is in (canonical order) [rad, rad/s].
    :param speed: time scale (2: twice as fast), within ``MIN_SPEED`` .. ``MAX_SPEED``.
    :raises GoalError: as the controller refuses the goal (its code and message).
    """
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise GoalError(ResultCode.INVALID_GOAL, f'speed_scale {speed} is outside {MIN_SPEED}..'
                                                 f'{MAX_SPEED}')
    played = (goal.backward() if backward else goal).scaled(speed)
    view = planner.model
    names = view.list_all_joints()
    goal = approached(played, dict(zip(names, pose.position)),
                      dict(zip(names, view.velocity_limits())))
    return planner.plan(goal, lambda: (pose, pose))
