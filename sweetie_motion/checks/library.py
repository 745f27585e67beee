"""
The checks over stored motions: one motion as the robot plays it, a table for a library.

A stored motion is checked as the trajectory controller plays it
(:func:`~sweetie_motion.controllers.goals.plan_played`: the approach from the standing pose,
the retiming to the joint limits, the speed, its interpolation and its support flags); the
joints it does not move hold their value in the standing pose (the zero pose: Proto2 stands
in it). A motion the controller would refuse is not checked: its refusal is the answer.
Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.checks.motion import CheckReport, MotionChecker, PoseSamples
from sweetie_motion.model.report import table
from sweetie_motion.trajectory.goal import TrajectoryGoal


@dataclass
class CheckedMotion:
    """
    A stored motion, the samples the checks ran on, and what they found.

    :param refused: why the controller refuses to play it ('' : it plays; then the samples
        and report are the checks' of what it plays).
    :param notes: what the controller's planning changed (a retiming, a longer approach).
    """

    name: str
    samples: Optional[PoseSamples]
    report: CheckReport
    refused: str = ''
    notes: Tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """Return 'REFUSED' (by the controller), 'REFUSE' (by the checks), 'warn' or 'ok'."""
        if self.refused:
            return 'REFUSED'
        if self.report.refused:
            return 'REFUSE'
        return 'warn' if self.report.findings else 'ok'


def motion_planner(model: Any, interpolation: str = 'akima', policy: str = 'retime') -> Any:
    """
    Return a trajectory controller's planner of ``model`` (every chain, no checks of its own).

    What :func:`played_samples` plans with, as the controller plans a goal.
    """
    from sweetie_motion.controllers.goals import GoalPlanner
    from sweetie_motion.trajectory.tolerances import ToleranceDefaults
    view = model.view()
    return GoalPlanner('check', view, view.list_groups(), ToleranceDefaults(), interpolation,
                       policy)


def played_samples(checker: MotionChecker, planner: Any, goal: TrajectoryGoal,
                   pose: Optional[np.ndarray] = None, speed: float = 1.0,
                   backward: bool = False) -> Tuple[PoseSamples, Any]:
    """
    Return a stored motion sampled as the controller plays it, and the controller's plan.

    :param planner: the controller's planner (:func:`motion_planner`).
    :param pose: the full pose it starts from [rad] (default: the standing pose, all zero).
    :param speed: time scale (2: twice as fast); :param backward: played backward.
    :raises GoalError: the controller refuses it (its code and message).
    """
    from sweetie_motion.controllers.goals import plan_played
    from sweetie_motion.core.ports import JointVector
    joints = checker.robot.joints
    start = np.zeros(len(joints)) if pose is None else np.asarray(pose, dtype=float)
    plan = plan_played(planner, goal, JointVector(start, np.zeros_like(start),
                                                  np.zeros_like(start)), speed, backward)
    flags = {chain: (times, values) for chain, times, values in plan.support}
    samples = PoseSamples.from_spline(plan.spline, plan.indices, start,
                                      checker.settings.sample_rate, flags)
    return samples, plan


def check_motion(checker: MotionChecker, name: str, goal: TrajectoryGoal, planner: Any,
                 speed: float = 1.0) -> CheckedMotion:
    """Check one stored motion as the controller plays it (from the standing pose)."""
    from sweetie_motion.trajectory.validation import GoalError
    try:
        samples, plan = played_samples(checker, planner, goal, speed=speed)
    except GoalError as error:
        return CheckedMotion(name, None, CheckReport(), str(error))
    return CheckedMotion(name, samples, checker.check(samples), notes=tuple(plan.notes))


def library_table(checked: Sequence[CheckedMotion]) -> str:
    """Return the table of a library: the worst figure of each check per motion."""
    def mm(value: Optional[float]) -> str:
        return '-' if value is None else f'{value * 1e3:.1f}'
    rows: List[List[str]] = []
    for motion in checked:
        if motion.samples is None:
            rows.append([motion.name, '-', '-', '-', '-', '-', '-', motion.verdict])
            continue
        summary = motion.report.summary()
        heaviest = motion.report.load[0] if motion.report.load else None
        held = '-' if heaviest is None else (
            'to the end' if heaviest.to_end else f'{heaviest.held:.2f}')
        rows.append([motion.name, f'{motion.samples.times[-1]:.2f}', mm(summary['distance']),
                     mm(summary['com_margin']), mm(summary['zmp_margin']),
                     '-' if heaviest is None else
                     f'{100 * heaviest.of_stall:.0f} ({heaviest.joint})', held, motion.verdict])
    return table(rows, ['motion', 'seconds played', 'closest links [mm]', 'CoM margin [mm]',
                        'ZMP margin [mm]', 'peak load [% stall]', 'held at stall [s]',
                        'verdict'])
