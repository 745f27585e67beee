"""
Timing within the joint limits: what a trajectory needs, retiming, the approach (R-SYS-8).

A goal's own keyframes may ask for more velocity or acceleration than the joints have. The
controller's ``limits.policy`` decides: ``refuse`` (INVALID_GOAL naming the joint, the time, the
needed and the allowed value) or ``retime`` (the default): the whole motion is slowed down by one
factor, the smallest that brings every joint within its velocity and acceleration limits, so
the motion keeps its shape and its rhythm (velocities scale by 1/k, accelerations by 1/k^2).

The approach from the robot's current state to a goal's first keyframe (time_from_start > 0)
is planned with ruckig, synchronised over the joints, within the velocity, acceleration and jerk
limits: in exactly the requested time when that is possible, else in the shortest time the
limits allow, and the rest of the goal is shifted by the difference.
"""

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.model.robot_model import JointLimits
from sweetie_motion.trajectory.spline import JointSpline

#: what a goal beyond the limits gets
POLICIES = ('retime', 'refuse')
#: sampling step of the limit check [s] (at most; shorter for short motions)
CHECK_STEP = 0.005
#: samples checked at once (bounds the memory a long goal's check takes)
CHECK_CHUNK = 20000
#: knot spacing of a planned approach [s]
APPROACH_STEP = 0.01
#: slack of the limit check: a motion exactly at a limit passes
SLACK = 1.0 + 1e-3
#: plans (retiming, approaches) use this share of the velocity and acceleration limits, so
#: that interpolation between knots and a smoothing filter's blend stay within them
PLANNING_MARGIN = 0.95


def planning_limits(limits: JointLimits) -> JointLimits:
    """Return the limits plans are made with (velocity and acceleration with a margin)."""
    return JointLimits(limits.lower, limits.upper, limits.velocity * PLANNING_MARGIN,
                       limits.acceleration * PLANNING_MARGIN, limits.jerk)


@dataclass(frozen=True)
class LimitExcess:
    """
    The worst excess of a limit by a trajectory.

    :param joint: the joint; :param quantity: 'velocity' or 'acceleration';
    :param time: when [s, from the start of the goal]; :param needed: the value needed;
    :param allowed: the limit; :param ratio: needed / allowed.
    """

    joint: str
    quantity: str
    time: float
    needed: float
    allowed: float
    ratio: float

    def describe(self) -> str:
        """Return e.g. 'joint12 needs 3.60 rad/s at t = 1.20 s (limit 1.57 rad/s)'."""
        unit = 'rad/s' if self.quantity == 'velocity' else 'rad/s^2'
        return (f'{self.joint} needs {self.needed:.2f} {unit} at t = {self.time:.2f} s '
                f'({self.quantity} limit {self.allowed:.2f} {unit})')


def limit_excess(spline: JointSpline, joints: Sequence[str], limits: JointLimits,
                 start: float = 0.0, end: Optional[float] = None,
                 offset: float = 0.0) -> Tuple[float, Optional[LimitExcess]]:
    """
    Return the retiming factor a spline needs on [start, end] and its worst excess.

    :param offset: added to the reported time (to report in the goal's own time).
    :return: (k >= 1: slowing down by k brings every joint within its velocity and
        acceleration limits; the excess that needs the largest k, None if k == 1).
    """
    end = spline.duration if end is None else end
    if end <= start or len(spline.times) < 2:
        return 1.0, None
    count = int(np.ceil((end - start) / CHECK_STEP)) + 1
    grid = np.linspace(start, end, min(max(count, 50), 2_000_000))
    inverse_v, inverse_a = _inverse(limits.velocity), _inverse(limits.acceleration)
    best_v = best_a = (-1.0, 0.0, 0, 0.0)   # (ratio, time, joint, value)
    # in chunks: a long goal's samples would otherwise take hundreds of megabytes at once
    for first in range(0, len(grid), CHECK_CHUNK):
        times = grid[first:first + CHECK_CHUNK]
        _, velocity, acceleration = spline.sample_many(times)
        v_ratio = np.abs(velocity) * inverse_v
        a_ratio = np.sqrt(np.abs(acceleration) * inverse_a)
        row, col = np.unravel_index(np.argmax(v_ratio), v_ratio.shape)
        if v_ratio[row, col] > best_v[0]:
            best_v = (float(v_ratio[row, col]), float(times[row]), int(col),
                      float(abs(velocity[row, col])))
        row, col = np.unravel_index(np.argmax(a_ratio), a_ratio.shape)
        if a_ratio[row, col] > best_a[0]:
            best_a = (float(a_ratio[row, col]), float(times[row]), int(col),
                      float(abs(acceleration[row, col])))
    k_v, k_a = best_v[0], best_a[0]
    k = max(k_v, k_a)
    if k <= SLACK:
        return 1.0, None
    if k_v >= k_a:
        _, time, joint, value = best_v
        excess = LimitExcess(joints[joint], 'velocity', time + offset, value,
                             float(limits.velocity[joint]), k_v)
    else:
        _, time, joint, value = best_a
        excess = LimitExcess(joints[joint], 'acceleration', time + offset, value,
                             float(limits.acceleration[joint]), k_a ** 2)
    return k * SLACK, excess


def _inverse(limit: np.ndarray) -> np.ndarray:
    # a joint without a (finite, positive) limit needs no retiming
    usable = np.isfinite(limit) & (limit > 0)
    return np.where(usable, 1.0 / np.where(usable, limit, 1.0), 0.0)


def _usable(limit: np.ndarray, fallback: float) -> np.ndarray:
    return np.where(np.isfinite(limit) & (limit > 0), limit, fallback)


def plan_approach(start_position: np.ndarray, start_velocity: np.ndarray,
                  target_position: np.ndarray, target_velocity: np.ndarray,
                  target_acceleration: np.ndarray, limits: JointLimits,
                  requested: float) -> Tuple[float, np.ndarray, np.ndarray, np.ndarray,
                                             np.ndarray]:
    """
    Plan the motion from the current state to a goal's first keyframe within the limits.

    :param requested: the time the goal gives its first keyframe [s].
    :return: (duration, knot times, positions, velocities, accelerations): duration is
        ``requested`` when that is possible, else the shortest possible; knots every
        :data:`APPROACH_STEP` (for a quintic spline that reproduces the plan).
    :raises ValueError: ruckig cannot plan it (a target beyond the velocity or acceleration
        limits).
    """
    import ruckig
    n = len(start_position)
    data = ruckig.InputParameter(n)
    data.synchronization = ruckig.Synchronization.Time  # every joint arrives at once
    velocity = _usable(limits.velocity, 1e3)
    acceleration = _usable(limits.acceleration, 1e4)
    data.max_velocity = velocity.tolist()
    data.max_acceleration = acceleration.tolist()
    data.max_jerk = np.where(limits.jerk > 0, limits.jerk, np.inf).tolist()
    data.current_position = np.asarray(start_position, float).tolist()
    data.current_velocity = np.clip(start_velocity, -velocity, velocity).tolist()
    data.current_acceleration = [0.0] * n
    data.target_position = np.asarray(target_position, float).tolist()
    data.target_velocity = np.clip(target_velocity, -velocity, velocity).tolist()
    data.target_acceleration = np.clip(target_acceleration, -acceleration,
                                       acceleration).tolist()
    data.minimum_duration = float(requested)
    trajectory = ruckig.Trajectory(n)
    result = ruckig.Ruckig(n).calculate(data, trajectory)
    if result not in (ruckig.Result.Working, ruckig.Result.Finished):
        raise ValueError(f'no approach within the limits ({result})')
    duration = float(trajectory.duration)
    count = max(2, int(np.ceil(duration / APPROACH_STEP)) + 1)
    times = np.linspace(0.0, duration, count)
    samples = [trajectory.at_time(float(t)) for t in times]
    positions = np.array([s[0] for s in samples])
    velocities = np.array([s[1] for s in samples])
    accelerations = np.array([s[2] for s in samples])
    return duration, times, positions, velocities, accelerations


def join_splines(first: JointSpline, second: JointSpline) -> JointSpline:
    """Return ``first`` followed by ``second`` (whose own time starts at first's end)."""
    shift = first.duration - second.times[0]
    times = np.concatenate([first.times, second.times[1:] + shift])
    coefficients = np.concatenate([first.coefficients, second.coefficients])
    return JointSpline(times, coefficients, second.end)


def scale_times(times: np.ndarray, factor: float, origin: float) -> np.ndarray:
    """Return ``times`` stretched by ``factor`` around ``origin``."""
    return origin + (np.asarray(times, float) - origin) * factor


def describe_retiming(factor: float, excess: Optional[LimitExcess]) -> str:
    """Return the note a retimed goal's result carries."""
    text = f'retimed {factor:.2f}x slower to stay within the joint limits'
    return text + (f' ({excess.describe()})' if excess is not None else '')


def policy_problem(policy: str) -> Optional[str]:
    """Return why ``policy`` is not a valid limits policy, None when it is."""
    return None if policy in POLICIES else f'must be one of {", ".join(POLICIES)}'
