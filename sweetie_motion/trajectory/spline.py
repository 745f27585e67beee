"""
Interpolation of joint trajectories: one piecewise polynomial for all joints, built once.

- positions only, ``akima`` (default): cubic Hermite segments with modified Akima slopes, then
  zero slope at both ends, at keyframes next to equal keyframes and at local extrema, and the
  Fritsch-Carlson limit |slope| <= 3 |secant| elsewhere. The curve is C1, passes through every
  keyframe, never overshoots a keyframe and stays still between equal keyframes: what an
  animator expects (the old robot used a modified Akima spline for the same reasons).
- positions only, ``cubic``: the C2 cubic spline with zero velocity at both ends (may overshoot).
- positions and velocities: cubic Hermite (exact velocities at the keyframes).
- positions, velocities and accelerations: quintic (exact accelerations too).

Non-uniform time steps everywhere. Sampling costs a segment search and a Horner evaluation.
"""

from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

#: interpolation names for position-only keyframes
INTERPOLATIONS = ('akima', 'cubic')


class JointSpline:
    """
    A piecewise polynomial over several joints.

    :param times: knot times, strictly increasing, shape (k,) [s].
    :param coefficients: shape (k-1, 6, n): segment i is sum_j c[i, j] * (t - times[i]) ** j.
    :param end: position after the last knot, shape (n,) (the last knot's position).
    """

    def __init__(self, times: np.ndarray, coefficients: np.ndarray, end: np.ndarray) -> None:
        self.times = np.asarray(times, dtype=float)
        self.coefficients = np.asarray(coefficients, dtype=float)
        self.end = np.asarray(end, dtype=float)

    @property
    def duration(self) -> float:
        """Return the time of the last knot [s]."""
        return float(self.times[-1])

    @property
    def size(self) -> int:
        """Return the number of joints."""
        return len(self.end)

    def sample_many(self, times: ArrayLike) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Return (position, velocity, acceleration) at each of ``times`` [s], vectorised.

        :return: three arrays of shape (len(times), n), as :meth:`sample` per time.
        """
        t = np.asarray(times, dtype=float)
        n = self.size
        if len(self.times) < 2:
            position = np.tile(self.end, (len(t), 1))
            return position, np.zeros_like(position), np.zeros_like(position)
        segment = np.clip(np.searchsorted(self.times, t, side='right') - 1, 0,
                          len(self.coefficients) - 1)
        tau = (np.clip(t, self.times[0], self.times[-1]) - self.times[segment])[:, None]
        c = self.coefficients[segment]                                  # (m, 6, n)
        position = ((((c[:, 5] * tau + c[:, 4]) * tau + c[:, 3]) * tau + c[:, 2]) * tau
                    + c[:, 1]) * tau + c[:, 0]
        velocity = ((((5.0 * c[:, 5] * tau + 4.0 * c[:, 4]) * tau + 3.0 * c[:, 3]) * tau
                     + 2.0 * c[:, 2]) * tau + c[:, 1])
        acceleration = (((20.0 * c[:, 5] * tau + 12.0 * c[:, 4]) * tau + 6.0 * c[:, 3]) * tau
                        + 2.0 * c[:, 2])
        outside = (t < self.times[0]) | (t >= self.times[-1])
        if outside.any():
            position[t >= self.times[-1]] = self.end
            position[t < self.times[0]] = self.coefficients[0, 0]
            velocity[outside] = 0.0
            acceleration[outside] = 0.0
        return position.reshape(len(t), n), velocity, acceleration

    def sample(self, t: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Return (position, velocity, acceleration) at time ``t`` [s].

        Before the first knot the first position holds, after the last the last one, both
        with zero velocity and acceleration.
        """
        times = self.times
        if len(times) < 2 or t >= times[-1]:
            zero = np.zeros(len(self.end))
            return self.end.copy(), zero, zero.copy()
        if t < times[0]:
            zero = np.zeros(len(self.end))
            return self.coefficients[0, 0].copy(), zero, zero.copy()
        segment = int(np.searchsorted(times, t, side='right')) - 1
        tau = t - times[segment]
        c = self.coefficients[segment]
        # derivatives of the one segment sampled: a spline is nothing but its coefficients
        # (no derived arrays to build or to ship to the cycle process)
        position = ((((c[5] * tau + c[4]) * tau + c[3]) * tau + c[2]) * tau + c[1]) * tau + c[0]
        velocity = ((((5.0 * c[5] * tau + 4.0 * c[4]) * tau + 3.0 * c[3]) * tau
                     + 2.0 * c[2]) * tau + c[1])
        acceleration = (((20.0 * c[5] * tau + 12.0 * c[4]) * tau + 6.0 * c[3]) * tau
                        + 2.0 * c[2])
        return position, velocity, acceleration


def _hermite(times: np.ndarray, p: np.ndarray, v: np.ndarray) -> np.ndarray:
    h = np.diff(times)[:, None]
    p0, p1, v0, v1 = p[:-1], p[1:], v[:-1], v[1:]
    c = np.zeros((len(h), 6, p.shape[1]))
    c[:, 0] = p0
    c[:, 1] = v0
    c[:, 2] = (3 * (p1 - p0) / h - 2 * v0 - v1) / h
    c[:, 3] = (2 * (p0 - p1) / h + v0 + v1) / (h * h)
    return c


def _quintic(times: np.ndarray, p: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    h = np.diff(times)[:, None]
    p0, p1, v0, v1, a0, a1 = p[:-1], p[1:], v[:-1], v[1:], a[:-1], a[1:]
    c = np.zeros((len(h), 6, p.shape[1]))
    c[:, 0] = p0
    c[:, 1] = v0
    c[:, 2] = a0 / 2
    c[:, 3] = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h ** 2) / (2 * h ** 3)
    c[:, 4] = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h ** 2) / (
        2 * h ** 4)
    c[:, 5] = (12 * (p1 - p0) - 6 * (v1 + v0) * h - (a0 - a1) * h ** 2) / (2 * h ** 5)
    return c


def modified_akima_slopes(times: np.ndarray, p: np.ndarray) -> np.ndarray:
    """
    Slopes at the knots for keyframe animation (see the module docstring).

    :param times: shape (k,); :param p: shape (k, n).
    :return: shape (k, n), zero at both ends.
    """
    k = len(times)
    slopes = np.zeros_like(p)
    if k < 3:
        return slopes
    delta = np.diff(p, axis=0) / np.diff(times)[:, None]          # (k-1, n)
    # secants extended by two on each side (Akima's extrapolation)
    first = 2 * delta[0] - delta[1] if k > 2 else delta[0]
    last = 2 * delta[-1] - delta[-2] if k > 2 else delta[-1]
    d = np.vstack([2 * first - delta[0], first, delta, last, 2 * last - delta[-1]])
    # knot i (1..k-2) sits between secants d[i+1] (left) and d[i+2] (right)
    left, right = d[2:k], d[3:k + 1]
    left2, right2 = d[1:k - 1], d[4:k + 2]
    w_left = np.abs(right2 - right) + np.abs(right2 + right) / 2
    w_right = np.abs(left - left2) + np.abs(left + left2) / 2
    total = w_left + w_right
    with np.errstate(invalid='ignore', divide='ignore'):
        akima = np.where(total > 0, (w_left * left + w_right * right) / np.where(
            total > 0, total, 1.0), (left + right) / 2)
    inner = akima[:k - 2]
    left, right = left[:k - 2], right[:k - 2]
    # zero at extrema and next to equal keyframes; Fritsch-Carlson limit elsewhere
    same_sign = left * right > 0
    limit = 3 * np.minimum(np.abs(left), np.abs(right))
    slopes[1:-1] = np.where(same_sign, np.sign(inner) * np.minimum(np.abs(inner), limit), 0.0)
    return slopes


def build_spline(times: ArrayLike, positions: ArrayLike,
                 velocities: Optional[np.ndarray] = None,
                 accelerations: Optional[np.ndarray] = None,
                 interpolation: str = 'akima',
                 start_velocity: Optional[np.ndarray] = None) -> JointSpline:
    """
    Build the spline of a trajectory.

    :param times: knot times, strictly increasing [s].
    :param positions: shape (k, n).
    :param velocities: shape (k, n) or None (then slopes come from ``interpolation``).
    :param accelerations: shape (k, n) or None; needs velocities.
    :param interpolation: ``akima`` or ``cubic`` for position-only keyframes.
    :param start_velocity: velocity at the first knot when velocities are not given
        (continuing a motion in progress); default zero.
    :raises ValueError: unknown interpolation, bad shapes.
    """
    times = np.asarray(times, dtype=float)
    p = np.atleast_2d(np.asarray(positions, dtype=float))
    if p.shape[0] != len(times):
        raise ValueError(f'{len(times)} times but {p.shape[0]} position rows')
    if len(times) == 1:
        return JointSpline(times, np.zeros((0, 6, p.shape[1])), p[0])
    if accelerations is not None and velocities is not None:
        coefficients = _quintic(times, p, np.asarray(velocities, float),
                                np.asarray(accelerations, float))
    elif velocities is not None:
        coefficients = _hermite(times, p, np.asarray(velocities, float))
    elif interpolation == 'akima':
        slopes = modified_akima_slopes(times, p)
        if start_velocity is not None:
            slopes[0] = start_velocity
        coefficients = _hermite(times, p, slopes)
    elif interpolation == 'cubic':
        from scipy.interpolate import CubicSpline
        start = np.zeros(p.shape[1]) if start_velocity is None else start_velocity
        spline = CubicSpline(times, p, axis=0,
                             bc_type=((1, start), (1, np.zeros(p.shape[1]))))
        coefficients = np.zeros((len(times) - 1, 6, p.shape[1]))
        coefficients[:, :4] = np.transpose(spline.c[::-1], (1, 0, 2))
    else:
        raise ValueError(f'unknown interpolation {interpolation!r} '
                         f'(known: {", ".join(INTERPOLATIONS)})')
    return JointSpline(times, coefficients, p[-1])
