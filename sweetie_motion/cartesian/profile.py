# noqa: A005 (the module is sweetie_motion.cartesian.profile, never imported as "profile")
"""
Velocity profiles along a path and the per-cycle Cartesian sampler (R-CART-1).

A :class:`MotionProfile` moves the path parameter ``s`` from 0 to the path's length and is
piecewise polynomial: each phase has a constant jerk (the jerk-limited, "double S" or
7-segment profile) or a constant acceleration (the trapezoidal profile, whose jerk is
unbounded at the phase changes). Both come from one planner over *blocks*: stretches of the
path with a speed cap each, joined at junctions where the speed may be capped too (0 at a
stop):

1. the junction speeds are bounded by the caps on both sides, then by a backward and a forward
   pass: a junction is never faster than what the acceleration (and jerk) limits can brake to
   the next junction's speed over the block between them, nor faster than what they can reach
   from the previous one;
2. each block accelerates from its entry speed to the highest peak speed that fits (at most
   its cap), cruises, and decelerates to its exit speed. A speed change is one constant
   acceleration phase (trapezoid) or, with a jerk limit, the time-optimal jerk-limited change
   between two speeds at zero acceleration (jerk, [constant acceleration], jerk): a short
   block gives a triangle (trapezoid) or a profile whose acceleration never reaches its limit.

A path with no speed caps but ``v_max`` is one block between two stops: the classic
trapezoidal profile (KDL's ``VelocityProfile_Trap``) or the classic double S profile (rest to
rest, time optimal: the same duration as ruckig's). Between blocks with different caps the
jerk-limited profile passes the junction at zero acceleration, which costs a little time and
never a limit.

:func:`path_profile` makes the blocks from a :class:`CartesianPath`: one per segment (merged
when their caps are equal), capped by ``v_max``, by a per-move speed (a program's feed), by
``sqrt(lateral_acceleration * r)`` on an arc of radius r (so that the centripetal
acceleration v^2 / r stays within the limit) and by ``angular_speed / angular_rate`` (by
default ``angular_speed = v_max / eqradius``, the bound KDL's equivalent radius gives); the
path's stops are junctions at rest. ``a_max`` and ``jerk`` bound the path acceleration
s_ddot and its derivative (the tangential components).

**Speed override** (a factor k in (0, 1]): the profile is played k times slower in time,
s_k(t) = s(k t): velocities scale by k, accelerations by k^2 and jerks by k^3, so the motion
keeps its path and its shape and stays within every limit.

:func:`sample_path` samples a path and a profile every cycle into positions, linear
velocities and accelerations, orientations, angular velocities and accelerations (arrays).
"""

from dataclasses import dataclass
import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.path import ARC, CartesianPath, Segment
from sweetie_motion.errors import SweetieMotionError

#: iterations of the bisections (speeds to ~1e-15 relative)
_BISECTIONS = 80


class ProfileError(SweetieMotionError):
    """
    A profile parameter is invalid.

    :param parameter: the parameter's name; :param value: the value given.
    """

    def __init__(self, parameter: str, value: object, reason: str) -> None:
        self.parameter = parameter
        self.value = value
        super().__init__(f'{parameter} = {value!r}: {reason}')


def _positive(name: str, value: Any, allow_inf: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProfileError(name, value, 'must be a number > 0') from None
    if not number > 0 or (math.isinf(number) and not allow_inf) or math.isnan(number):
        raise ProfileError(name, value, 'must be a finite number > 0')
    return number


def _override(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProfileError('override', value, 'must be a number in (0, 1]') from None
    if not 0 < number <= 1:
        raise ProfileError('override', value, 'must be in (0, 1] (a fraction of the speed)')
    return number


# --- speed changes ---------------------------------------------------------------------------


def _change_duration(v0: float, v1: float, acceleration: float, jerk: Optional[float]) -> float:
    """Duration [s] of the fastest change from speed v0 to v1 (zero acceleration at both)."""
    dv = abs(v1 - v0)
    if jerk is None:
        return dv / acceleration
    if dv >= acceleration * acceleration / jerk:
        return dv / acceleration + acceleration / jerk
    return 2.0 * math.sqrt(dv / jerk)


def _change_distance(v0: float, v1: float, acceleration: float, jerk: Optional[float]) -> float:
    # The speed change is symmetric about its middle: its mean speed is (v0 + v1) / 2.
    return 0.5 * (v0 + v1) * _change_duration(v0, v1, acceleration, jerk)


def _change_phases(v0: float, v1: float, acceleration: float, jerk: Optional[float]
                   ) -> List[Tuple[float, float, float]]:
    """Return the phases (duration [s], start acceleration, jerk) of a speed change."""
    dv = v1 - v0
    if dv == 0:
        return []
    sign = 1.0 if dv > 0 else -1.0
    dv = abs(dv)
    if jerk is None:
        return [(dv / acceleration, sign * acceleration, 0.0)]
    if dv >= acceleration * acceleration / jerk:
        ramp = acceleration / jerk
        return [(ramp, 0.0, sign * jerk),
                (dv / acceleration - ramp, sign * acceleration, 0.0),
                (ramp, sign * acceleration, -sign * jerk)]
    ramp = math.sqrt(dv / jerk)
    return [(ramp, 0.0, sign * jerk), (ramp, sign * jerk * ramp, -sign * jerk)]


def _reach(speed: float, length: float, cap: float, acceleration: float,
           jerk: Optional[float]) -> float:
    """Return the highest speed (<= cap) that a change from ``speed`` reaches within length."""
    if cap <= speed:
        return cap
    if jerk is None:
        return min(cap, math.sqrt(speed * speed + 2.0 * acceleration * length))
    if math.isfinite(cap) and _change_distance(speed, cap, acceleration, jerk) <= length:
        return cap
    low, high = speed, speed + 1.0
    while _change_distance(speed, high, acceleration, jerk) <= length:
        low, high = high, 2.0 * high
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        if _change_distance(speed, middle, acceleration, jerk) <= length:
            low = middle
        else:
            high = middle
    return min(low, cap)


def _peak(entry: float, exit_: float, length: float, cap: float, acceleration: float,
          jerk: Optional[float]) -> float:
    """Return the highest speed (<= cap) a block can reach between its entry and exit."""
    floor = max(entry, exit_)

    def needed(v: float) -> float:
        return (_change_distance(entry, v, acceleration, jerk)
                + _change_distance(v, exit_, acceleration, jerk))

    if jerk is None:
        top = math.sqrt(max(0.0, (2.0 * acceleration * length + entry ** 2 + exit_ ** 2) / 2))
        return max(floor, min(cap, top))
    if needed(cap) <= length:
        return cap
    low, high = floor, cap
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        if needed(middle) <= length:
            low = middle
        else:
            high = middle
    return low


# --- profiles --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """
    A stretch of the path planned as one speed change - cruise - speed change.

    :param start: path parameter at its start [m]; :param length: [m];
    :param cap: its speed cap [m/s]; :param entry: speed at its start [m/s];
    :param exit: speed at its end [m/s]; :param peak: its highest speed [m/s].
    """

    start: float
    length: float
    cap: float
    entry: float
    exit: float  # noqa: A003 (a field: the exit speed)
    peak: float


@dataclass(frozen=True, eq=False)
class ProfileSample:
    """
    A profile sampled at n times.

    :param time: [s], shape (n,); :param s: path parameter [m];
    :param velocity: s_dot [m/s]; :param acceleration: s_ddot [m/s^2];
    :param jerk: its derivative [m/s^3] (0 in the constant acceleration phases of a
        trapezoid, whose jerk is unbounded at the phase changes).
    """

    time: np.ndarray
    s: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray


class MotionProfile:
    """
    Piecewise constant jerk motion of the path parameter from 0 to ``length``.

    Made by :func:`plan_blocks` (or :func:`trapezoidal_profile`, :func:`double_s_profile`,
    :func:`path_profile`), not directly.

    :param phases: (duration [s], start acceleration [m/s^2], jerk [m/s^3]) in order.
    :param length: the distance covered [m] (the end state is exactly (length, 0, 0)).
    :param blocks: the blocks planned.
    :param acceleration: the acceleration limit [m/s^2]; :param jerk: the jerk limit or None.
    """

    def __init__(self, phases: Sequence[Tuple[float, float, float]], length: float,
                 blocks: Sequence[Block], acceleration: float,
                 jerk: Optional[float]) -> None:
        phases = [p for p in phases if p[0] > 0]
        durations = np.array([p[0] for p in phases], dtype=float)
        self._a0 = np.array([p[1] for p in phases], dtype=float)
        self._j = np.array([p[2] for p in phases], dtype=float)
        self._t0 = np.concatenate(([0.0], np.cumsum(durations)[:-1])) if phases else np.zeros(0)
        p0, v0 = np.zeros(len(phases)), np.zeros(len(phases))
        p = v = 0.0
        for i, (t, a, j) in enumerate(phases):
            p0[i], v0[i] = p, v
            p += v * t + a * t * t / 2 + j * t ** 3 / 6
            v += a * t + j * t * t / 2
        self._p0, self._v0 = p0, v0
        self._duration = float(durations.sum())
        self._length = float(length)
        self._blocks = tuple(blocks)
        self.acceleration_limit = acceleration
        self.jerk_limit = jerk

    @property
    def duration(self) -> float:
        """Return the duration at full speed [s]."""
        return self._duration

    @property
    def length(self) -> float:
        """Return the distance covered [m]."""
        return self._length

    @property
    def blocks(self) -> Tuple[Block, ...]:
        """Return the blocks planned (speed caps, junction and peak speeds)."""
        return self._blocks

    @property
    def peak_velocity(self) -> float:
        """Return the highest path speed [m/s]."""
        return max((b.peak for b in self._blocks), default=0.0)

    def duration_at(self, override: float = 1.0) -> float:
        """
        Return the duration [s] with a speed override.

        :param override: speed factor in (0, 1].
        """
        return self._duration / _override(override)

    def sample(self, times: ArrayLike, override: float = 1.0) -> ProfileSample:
        """
        Evaluate the profile (vectorised).

        :param times: [s], shape (n,) or scalar; before 0 the start, after the end the end.
        :param override: speed factor in (0, 1] (time scaling, see the module doc).
        :return: s [m], s_dot [m/s], s_ddot [m/s^2] and jerk [m/s^3] at each time.
        """
        k = _override(override)
        times = np.atleast_1d(np.asarray(times, dtype=float))
        t = np.clip(times * k, 0.0, self._duration)
        if len(self._t0) == 0:
            zero = np.zeros_like(t)
            return ProfileSample(times, zero + self._length, zero, zero, zero)
        phase = np.clip(np.searchsorted(self._t0, t, side='right') - 1, 0, len(self._t0) - 1)
        tau = t - self._t0[phase]
        a0, j = self._a0[phase], self._j[phase]
        s = self._p0[phase] + self._v0[phase] * tau + a0 * tau ** 2 / 2 + j * tau ** 3 / 6
        v = self._v0[phase] + a0 * tau + j * tau ** 2 / 2
        a = a0 + j * tau
        jerk = j.copy()
        end = times * k >= self._duration
        s[end], v[end], a[end], jerk[end] = self._length, 0.0, 0.0, 0.0
        before = times < 0
        s[before], v[before], a[before], jerk[before] = 0.0, 0.0, 0.0, 0.0
        np.clip(s, 0.0, self._length, out=s)
        return ProfileSample(times, s, v * k, a * k * k, jerk * k ** 3)

    def sample_period(self, period: float, override: float = 1.0) -> ProfileSample:
        """
        Sample every cycle from t = 0; the last sample is the end, at rest at ``length``.

        :param period: cycle period [s].
        :param override: speed factor in (0, 1].
        :return: n = ceil(duration / override / period) + 1 samples.
        """
        period = _positive('period', period)
        duration = self.duration_at(override)
        count = int(math.ceil(duration / period - 1e-9)) + 1
        sample = self.sample(np.arange(count) * period, override)
        # the tolerance above may put the last time a rounding error before the end: it is
        # the end all the same (at rest at length), so that a motion ends exactly
        sample.s[-1], sample.velocity[-1] = self._length, 0.0
        sample.acceleration[-1] = sample.jerk[-1] = 0.0
        return sample


def plan_blocks(lengths: Sequence[float], caps: Sequence[float], acceleration: float,
                jerk: Optional[float] = None, junction_caps: Optional[Sequence[float]] = None
                ) -> MotionProfile:
    """
    Plan the time-optimal profile over blocks with speed caps (see the module doc).

    :param lengths: length of each block [m], > 0.
    :param caps: speed cap of each block [m/s], > 0 (inf allowed only with other caps).
    :param acceleration: acceleration limit [m/s^2].
    :param jerk: jerk limit [m/s^3], None for a trapezoidal profile.
    :param junction_caps: speed cap at each inner junction [m/s] (len(lengths) - 1 values,
        0 = a stop); the ends are always at rest.
    :raises ProfileError: a limit or a cap is not a positive number.
    """
    acceleration = _positive('a_max', acceleration)
    if jerk is not None:
        jerk = _positive('jerk', jerk)
    lengths = [float(x) for x in lengths]
    caps = [_positive(f'caps[{i}]', c, allow_inf=True) for i, c in enumerate(caps)]
    if len(caps) != len(lengths):
        raise ProfileError('caps', len(caps), f'expected {len(lengths)} caps, one per block')
    for i, length in enumerate(lengths):
        if not (math.isfinite(length) and length > 0):
            raise ProfileError(f'lengths[{i}]', length, 'must be a finite number > 0 [m]')
    n = len(lengths)
    if n == 0:
        return MotionProfile([], 0.0, [], acceleration, jerk)
    if all(math.isinf(c) for c in caps):
        raise ProfileError('v_max', math.inf, 'at least one finite speed limit is needed')
    inner = list(junction_caps) if junction_caps is not None else [math.inf] * (n - 1)
    if len(inner) != n - 1:
        raise ProfileError('junction_caps', len(inner), f'expected {n - 1} values')
    speed = [0.0] + [min(caps[i], caps[i + 1], max(0.0, float(inner[i])))
                     for i in range(n - 1)] + [0.0]
    for i in range(n - 1, -1, -1):
        speed[i] = min(speed[i], _reach(speed[i + 1], lengths[i], caps[i], acceleration, jerk))
    for i in range(n):
        speed[i + 1] = min(speed[i + 1], _reach(speed[i], lengths[i], caps[i], acceleration,
                                                jerk))
    phases: List[Tuple[float, float, float]] = []
    blocks = []
    start = 0.0
    for i in range(n):
        entry, exit_ = speed[i], speed[i + 1]
        peak = _peak(entry, exit_, lengths[i], caps[i], acceleration, jerk)
        needed = (_change_distance(entry, peak, acceleration, jerk)
                  + _change_distance(peak, exit_, acceleration, jerk))
        phases += _change_phases(entry, peak, acceleration, jerk)
        if peak > 0:
            phases.append((max(0.0, lengths[i] - needed) / peak, 0.0, 0.0))
        phases += _change_phases(peak, exit_, acceleration, jerk)
        blocks.append(Block(start, lengths[i], caps[i], entry, exit_, peak))
        start += lengths[i]
    return MotionProfile(phases, start, blocks, acceleration, jerk)


def trapezoidal_profile(length: float, v_max: float, a_max: float) -> MotionProfile:
    """
    Return the rest-to-rest trapezoidal profile (a triangle when too short to reach v_max).

    :param length: distance [m]; :param v_max: speed limit [m/s];
    :param a_max: acceleration limit [m/s^2].
    """
    return plan_blocks([length] if length > 0 else [], [_positive('v_max', v_max)], a_max)


def double_s_profile(length: float, v_max: float, a_max: float, j_max: float
                     ) -> MotionProfile:
    """
    Return the rest-to-rest jerk-limited (double S, 7 segment) profile.

    :param length: distance [m]; :param v_max: speed limit [m/s];
    :param a_max: acceleration limit [m/s^2]; :param j_max: jerk limit [m/s^3].
    """
    return plan_blocks([length] if length > 0 else [], [_positive('v_max', v_max)], a_max,
                       j_max)


def segment_caps(path: CartesianPath, v_max: float,
                 lateral_acceleration: Optional[float] = None,
                 angular_speed: Optional[float] = None,
                 speeds: Optional[Sequence[Optional[float]]] = None) -> List[float]:
    """
    Return the speed cap of each segment of a path [m/s].

    :param v_max: path speed limit [m/s].
    :param lateral_acceleration: centripetal acceleration limit on arcs [m/s^2] (None: none).
    :param angular_speed: orientation speed limit [rad/s]; None: ``v_max`` divided by the
        path's eqradius (the bound KDL's equivalent radius gives), so that a short line with a
        large rotation does not spin the tool.
    :param speeds: per waypoint given, the speed of the move that arrives there [m/s] (None
        entries: ``v_max``); an arc takes the smaller of its two moves'.
    """
    v_max = _positive('v_max', v_max)
    if lateral_acceleration is not None:
        lateral_acceleration = _positive('lateral_acceleration', lateral_acceleration)
    if angular_speed is None:
        angular_speed = v_max / path.eqradius
    angular_speed = _positive('angular_speed', angular_speed)
    kept = path.input_indices
    move_speed = {}
    if speeds is not None:
        for index, value in enumerate(speeds):
            if value is not None:
                move_speed[index] = _positive(f'speeds[{index}]', value)
    following = {kept[i]: kept[i + 1] for i in range(len(kept) - 1)}
    caps = []
    for seg in path.segments:
        cap = min(v_max, move_speed.get(seg.waypoint, math.inf))
        if seg.kind == ARC:
            cap = min(cap, move_speed.get(following[seg.waypoint], math.inf))
            if lateral_acceleration is not None:
                cap = min(cap, math.sqrt(lateral_acceleration * seg.radius))
        if seg.angular_rate > 0:
            cap = min(cap, angular_speed / seg.angular_rate)
        caps.append(cap)
    return caps


def path_profile(path: CartesianPath, v_max: float, a_max: float, jerk: Optional[float] = None,
                 lateral_acceleration: Optional[float] = None,
                 angular_speed: Optional[float] = None,
                 speeds: Optional[Sequence[Optional[float]]] = None) -> MotionProfile:
    """
    Plan the profile of a path: caps per segment (:func:`segment_caps`), rest at its stops.

    :param v_max: path speed limit [m/s]; :param a_max: path acceleration limit [m/s^2].
    :param jerk: path jerk limit [m/s^3] for the jerk-limited profile, None: trapezoidal.
    :param lateral_acceleration: see :func:`segment_caps`; :param angular_speed: idem;
    :param speeds: idem.
    :raises ProfileError: a limit is not a positive number.
    """
    caps = segment_caps(path, v_max, lateral_acceleration, angular_speed, speeds)
    stops = set(path.stops)
    lengths: List[float] = []
    block_caps: List[float] = []
    junctions: List[float] = []
    for seg, cap in zip(path.segments, caps):
        if lengths:
            at_stop = any(abs(seg.start - s) <= 1e-12 for s in stops)
            if not at_stop and cap == block_caps[-1]:
                lengths[-1] += seg.length
                continue
            junctions.append(0.0 if at_stop else math.inf)
        lengths.append(seg.length)
        block_caps.append(cap)
    return plan_blocks(lengths, block_caps, a_max, jerk, junctions)


# --- the Cartesian sampler --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CartesianSamples:
    """
    A path sampled every cycle (world frame = the waypoints' frame).

    :param time: [s], shape (n,); :param s: path parameter [m]; :param s_dot: [m/s];
    :param s_ddot: [m/s^2].
    :param position: [m], shape (n, 3); :param velocity: [m/s], (n, 3);
    :param acceleration: [m/s^2], (n, 3).
    :param rotation: orientation, (n, 3, 3); :param angular_velocity: [rad/s], (n, 3);
    :param angular_acceleration: [rad/s^2], (n, 3).
    :param segment: index of the path segment of each sample, (n,).
    :param segments: the path's segments.
    :param period: the cycle period [s].
    """

    time: np.ndarray
    s: np.ndarray
    s_dot: np.ndarray
    s_ddot: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    rotation: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray
    segment: np.ndarray
    segments: Tuple[Segment, ...]
    period: float

    def __len__(self) -> int:
        return len(self.time)

    def segment_of(self, sample: int) -> Segment:
        """Return the path segment of sample number ``sample``."""
        return self.segments[int(self.segment[sample])]


def sample_path(path: CartesianPath, profile: MotionProfile, period: float,
                override: float = 1.0) -> CartesianSamples:
    """
    Sample a path with a profile every cycle (vectorised).

    :param path: the path; :param profile: a profile of the path's length.
    :param period: cycle period [s].
    :param override: speed factor in (0, 1].
    :raises ProfileError: the profile is not one of this path (another length), a bad period
        or override.
    """
    if abs(profile.length - path.length) > 1e-9 * max(1.0, path.length):
        raise ProfileError('profile', profile.length,
                           f'covers {profile.length} m but the path is {path.length} m long')
    timing = profile.sample_period(period, override)
    return _samples(path, timing, float(period))


def sample_path_at(path: CartesianPath, profile: MotionProfile, times: ArrayLike,
                   override: float = 1.0) -> CartesianSamples:
    """
    Sample a path with a profile at given times (e.g. for finite-difference checks).

    :param times: [s], shape (n,).
    :param override: speed factor in (0, 1].
    """
    timing = profile.sample(times, override)
    step = float(np.median(np.diff(timing.time))) if len(timing.time) > 1 else 0.0
    return _samples(path, timing, step)


def _samples(path: CartesianPath, timing: ProfileSample, period: float) -> CartesianSamples:
    geometry = path.evaluate(timing.s)
    sd = timing.velocity[:, None]
    sdd = timing.acceleration[:, None]
    return CartesianSamples(
        time=timing.time, s=timing.s, s_dot=timing.velocity, s_ddot=timing.acceleration,
        position=geometry.position,
        velocity=geometry.dposition * sd,
        acceleration=geometry.ddposition * sd * sd + geometry.dposition * sdd,
        rotation=geometry.rotation,
        angular_velocity=geometry.drotation * sd,
        angular_acceleration=geometry.ddrotation * sd * sd + geometry.drotation * sdd,
        segment=geometry.segment, segments=path.segments, period=period)


__all__ = ['Block', 'CartesianSamples', 'MotionProfile', 'ProfileError', 'ProfileSample',
           'double_s_profile', 'path_profile', 'plan_blocks', 'sample_path',
           'sample_path_at', 'segment_caps', 'trapezoidal_profile']
