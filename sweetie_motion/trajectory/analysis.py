"""
What a trajectory does between its keyframes: the one view the controller, plots and editor share.

A goal's keyframes become a :class:`GoalMotion` (its real joints, keyframes and the spline the
controller interpolates them with); sampled on a grid it gives positions and velocities to
plot (:class:`SampledMotion`), checked against the joint limits it gives what breaks them
(:class:`LimitFlags`). The controller's timing check (:func:`~.timing.limit_excess`) and
retiming (:meth:`GoalMotion.retimed`) work on the same object, so what the editor draws in red
is what the controller would retime or refuse.
"""

from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from sweetie_motion.model.robot_model import JointLimits
from sweetie_motion.trajectory.spline import build_spline, JointSpline
from sweetie_motion.trajectory.timing import scale_times
from sweetie_motion.trajectory.validation import as_arrays, GoalLike

#: slack of the plotted limit flags: a sample exactly at a limit is not flagged
POSITION_SLACK = 1e-6
VELOCITY_SLACK = 1.0 + 1e-4


@dataclass(frozen=True)
class GoalMotion:
    """
    The real joints of a goal, its keyframes and their spline.

    :param joints: the real joints (support pseudo-joints left out), in column order.
    :param times: keyframe times, shape (k,) [s].
    :param positions: keyframe positions, shape (k, n).
    :param velocities: shape (k, n) or None (then the interpolation gives the slopes).
    :param accelerations: shape (k, n) or None.
    :param interpolation: for position-only keyframes (``akima`` or ``cubic``).
    :param spline: the interpolated motion over ``times``.
    """

    joints: List[str]
    times: np.ndarray
    positions: np.ndarray
    velocities: Optional[np.ndarray]
    accelerations: Optional[np.ndarray]
    interpolation: str
    spline: JointSpline

    @property
    def start(self) -> float:
        """Return the time of the first keyframe [s]."""
        return float(self.times[0])

    @property
    def end(self) -> float:
        """Return the time of the last keyframe [s]."""
        return float(self.times[-1])

    def retimed(self, factor: float) -> 'GoalMotion':
        """
        Return the motion slowed down by ``factor`` around its first keyframe.

        The shape stays: velocities scale by 1/factor, accelerations by 1/factor^2.
        """
        times = scale_times(self.times, factor, self.start)
        velocities = None if self.velocities is None else self.velocities / factor
        accelerations = None if self.accelerations is None else \
            self.accelerations / factor ** 2
        return _motion(self.joints, times, self.positions, velocities, accelerations,
                       self.interpolation)

    def sample(self, count: int = 300) -> 'SampledMotion':
        """Sample ``count`` evenly spaced times from the first to the last keyframe."""
        if len(self.times) < 2:
            zero = np.zeros_like(self.positions)
            return SampledMotion(self.times.copy(), self.positions.copy(), zero, zero.copy())
        grid = np.linspace(self.start, self.end, max(int(count), 2))
        position, velocity, acceleration = self.spline.sample_many(grid)
        return SampledMotion(grid, position, velocity, acceleration)


@dataclass(frozen=True)
class SampledMotion:
    """
    A motion on a time grid: each array has shape (m, n), times (m,).

    :param times: [s]; :param position: [rad]; :param velocity: [rad/s];
    :param acceleration: [rad/s^2].
    """

    times: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True)
class LimitFlags:
    """
    Which samples break a limit: boolean arrays of shape (m, n).

    :param outside: beyond the position limits; :param fast: beyond the velocity limit.
    """

    outside: np.ndarray
    fast: np.ndarray

    def broken(self) -> np.ndarray:
        """Return, per joint, whether any sample breaks a limit (shape (n,))."""
        return np.logical_or(self.outside.any(axis=0), self.fast.any(axis=0))

    def describe(self, joints: List[str], limits: JointLimits) -> List[str]:
        """Return one line per broken limit, e.g. 'joint12: faster than 1.57 rad/s'."""
        lines = []
        for k, joint in enumerate(joints):
            if self.outside[:, k].any():
                lines.append(f'{joint}: outside its position limits')
            if self.fast[:, k].any():
                lines.append(f'{joint}: faster than {float(limits.velocity[k]):.2f} rad/s')
        return lines


def goal_motion(goal: GoalLike, interpolation: str = 'akima') -> GoalMotion:
    """
    Return the motion of a goal's real joints as the controller interpolates it.

    :param goal: a goal or its arrays.
    :raises GoalError: a point has the wrong number of values.
    :raises ValueError: the times do not increase, an unknown interpolation.
    """
    arrays = as_arrays(goal)
    joints = arrays.joints()
    columns = arrays.columns(joints)
    velocities = accelerations = None
    if arrays.velocities is not None:
        velocities = arrays.velocities[:, columns]
        if arrays.accelerations is not None:
            accelerations = arrays.accelerations[:, columns]
    return _motion(joints, np.asarray(arrays.times, float), arrays.positions[:, columns],
                   velocities, accelerations, interpolation)


def limit_flags(sampled: SampledMotion, limits: JointLimits) -> LimitFlags:
    """Flag the samples beyond the position or velocity limits (``limits`` per column)."""
    outside = (sampled.position < limits.lower - POSITION_SLACK) | \
        (sampled.position > limits.upper + POSITION_SLACK)
    velocity_limit = np.where(np.isfinite(limits.velocity) & (limits.velocity > 0),
                              limits.velocity, np.inf)
    fast = np.abs(sampled.velocity) > velocity_limit * VELOCITY_SLACK
    return LimitFlags(outside, fast)


def _motion(joints: List[str], times: np.ndarray, positions: np.ndarray,
            velocities: Optional[np.ndarray], accelerations: Optional[np.ndarray],
            interpolation: str) -> GoalMotion:
    spline = build_spline(times, positions, velocities, accelerations, interpolation)
    return GoalMotion(list(joints), times, positions, velocities, accelerations, interpolation,
                      spline)
