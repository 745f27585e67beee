"""
The checks over stored motions: one motion as the robot plays it, a table for a library.

A stored motion is checked from its first keyframe on, as the trajectory controller plays it
(its own interpolation, its support flags); the joints it does not move hold their value in the
zero pose (Proto2 stands in it). Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from sweetie_motion.checks.motion import CheckReport, MotionChecker, PoseSamples
from sweetie_motion.model.report import table
from sweetie_motion.trajectory.analysis import goal_motion
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.validation import as_arrays, GoalLike


@dataclass
class CheckedMotion:
    """A stored motion, the samples the checks ran on, and what they found."""

    name: str
    samples: PoseSamples
    report: CheckReport

    @property
    def verdict(self) -> str:
        """Return 'REFUSE', 'warn' or 'ok'."""
        if self.report.refused:
            return 'REFUSE'
        return 'warn' if self.report.findings else 'ok'


def motion_samples(checker: MotionChecker, goal: GoalLike, interpolation: str = 'akima',
                   hold: Optional[np.ndarray] = None) -> PoseSamples:
    """Return a stored motion sampled as the controller plays it (from its first keyframe)."""
    arrays = as_arrays(goal)
    if len(arrays.times) == 0 or not arrays.joints():
        raise ValueError('the motion has no points (or no joints)')
    motion = goal_motion(arrays, interpolation)
    joints = checker.robot.joints
    unknown = [j for j in motion.joints if j not in joints]
    if unknown:
        raise ValueError(f'joints not in the robot: {", ".join(unknown)}')
    columns = [joints.index(j) for j in motion.joints]
    times = np.asarray(arrays.times, dtype=float)
    flags = {chain: (times - motion.start, arrays.positions[:, arrays.columns(
        [SUPPORT_PREFIX + chain])[0]]) for chain in arrays.support_chains()}
    rest = np.zeros(len(joints)) if hold is None else np.asarray(hold, dtype=float)
    samples = PoseSamples.from_spline(_from_first_keyframe(motion.spline, motion.start),
                                      columns, rest, checker.settings.sample_rate, flags)
    return samples


class _Shifted:
    """A spline seen from ``start`` on (the motion before its first keyframe is the approach)."""

    def __init__(self, spline, start: float) -> None:
        self.spline, self.start = spline, start
        self.duration = spline.duration - start

    def sample_many(self, times):
        return self.spline.sample_many(np.asarray(times) + self.start)


def _from_first_keyframe(spline, start: float):
    return spline if start <= 0 else _Shifted(spline, start)


def check_motion(checker: MotionChecker, name: str, goal: GoalLike,
                 interpolation: str = 'akima') -> CheckedMotion:
    """Check one stored motion."""
    samples = motion_samples(checker, goal, interpolation)
    return CheckedMotion(name, samples, checker.check(samples))


def library_table(checked: Sequence[CheckedMotion]) -> str:
    """Return the table of a library: the worst figure of each check per motion."""
    def mm(value: Optional[float]) -> str:
        return '-' if value is None else f'{value * 1e3:.1f}'
    rows: List[List[str]] = []
    for motion in checked:
        summary = motion.report.summary()
        load = summary['load']
        heaviest = motion.report.load[0].joint if motion.report.load else ''
        rows.append([motion.name, f'{motion.samples.times[-1]:.2f}', mm(summary['distance']),
                     mm(summary['com_margin']), mm(summary['zmp_margin']),
                     '-' if load is None else f'{load:.0f} ({heaviest})', motion.verdict])
    return table(rows, ['motion', 'seconds', 'closest links [mm]', 'CoM margin [mm]',
                        'ZMP margin [mm]', 'load [% rated]', 'verdict'])
