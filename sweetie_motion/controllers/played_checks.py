"""
A stored motion checked as the trajectory controller plays it.

A stored motion is checked as the trajectory controller plays it
(:func:`~sweetie_motion.controllers.goals.plan_played`: the approach from the standing pose,
the retiming to the joint limits, the speed, its interpolation and its support flags); the
joints it does not move hold their value in the standing pose (the zero pose: Proto2 stands
in it). A motion the controller would refuse is not checked: its refusal is the answer.
Here, above the checks and the controllers, because it needs both. Pure: no rclpy.
"""

from typing import Optional, Tuple

import numpy as np

from sweetie_motion.checks.library import CheckedMotion
from sweetie_motion.checks.motion import CheckReport, MotionChecker, PoseSamples
from sweetie_motion.controllers.goals import GoalPlan, GoalPlanner, plan_played
from sweetie_motion.core.ports import JointVector
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import TrajectoryGoal
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import GoalError


def motion_planner(model: RobotModel, interpolation: str = 'akima',
                   policy: str = 'retime') -> GoalPlanner:
    """
    Return a trajectory controller's planner of ``model`` (every chain, no checks of its own).

    What :func:`played_samples` plans with, as the controller plans a goal.
    """
    view = model.view()
    return GoalPlanner('check', view, view.list_groups(), ToleranceDefaults(), interpolation,
                       policy)


def played_samples(checker: MotionChecker, planner: GoalPlanner, goal: TrajectoryGoal,
                   pose: Optional[np.ndarray] = None, speed: float = 1.0,
                   backward: bool = False) -> Tuple[PoseSamples, GoalPlan]:
    """
    Return a stored motion sampled as the controller plays it, and the controller's plan.

    :param planner: the controller's planner (:func:`motion_planner`).
    :param pose: the full pose it starts from [rad] (default: the standing pose, all zero).
    :param speed: time scale (2: twice as fast); :param backward: played backward.
    :raises GoalError: the controller refuses it (its code and message).
    """
    joints = checker.robot.joints
    start = np.zeros(len(joints)) if pose is None else np.asarray(pose, dtype=float)
    plan = plan_played(planner, goal, JointVector(start, np.zeros_like(start),
                                                  np.zeros_like(start)), speed, backward)
    flags = {chain: (times, values) for chain, times, values in plan.support}
    samples = PoseSamples.from_spline(plan.spline, plan.indices, start,
                                      checker.settings.sample_rate, flags)
    return samples, plan


def check_motion(checker: MotionChecker, name: str, goal: TrajectoryGoal, planner: GoalPlanner,
                 speed: float = 1.0) -> CheckedMotion:
    """Check one stored motion as the controller plays it (from the standing pose)."""
    try:
        samples, plan = played_samples(checker, planner, goal, speed=speed)
    except GoalError as error:
        return CheckedMotion(name, None, CheckReport(), str(error))
    return CheckedMotion(name, samples, checker.check(samples), notes=tuple(plan.notes))
