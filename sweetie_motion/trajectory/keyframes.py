"""
Teach by demonstration: the fewest keyframes that reproduce a recorded motion (issue #12 item 5).

A person moves the robot with its servos off; the pose stream (times, positions) is recorded.
:func:`fit_keyframes` picks recorded samples as keyframes (their times and positions are
those of the recording) so that the package's own spline through them
(:func:`~sweetie_motion.trajectory.spline.build_spline`, the interpolation the controller will
use) stays within a tolerance of the recording at every sample, per joint.

Why greedy and not dynamic programming: the fewest keyframes would be a shortest path over
"segment [a, b] is good enough" if a segment's curve depended on a and b alone (as with straight
lines). The modified Akima spline's slope at a keyframe depends on two keyframes on either side
(and a C2 cubic's on all of them), so a segment's validity depends on the choice of its
neighbours and an exact dynamic programme would have to carry several keyframes in its state
(O(m^3) and more for m samples). Instead, four steps, each linear or O(K log L) in the samples:

1. **Turns.** A modified Akima segment is monotone in every joint (zero slope where a joint
   turns, the Fritsch-Carlson limit elsewhere), so wherever a joint turns back by more than
   :data:`TURN` tolerances a keyframe must sit near the extremum. The fewest samples that put
   one near every turn of every joint are found exactly (interval stabbing, see
   :func:`_turns`); they are required keyframes. On a noisy recording the turns are found on a
   lightly smoothed copy, so that noise is not taken for turns.
2. **Greedy forward with a look-ahead.** From the last keyframe a, first the next required
   keyframe is tried, else the furthest sample b before it is searched (exponential then
   binary search, starting from the previous segment's length) such that the spline through
   the two keyframes before a, a, b and two look-ahead samples after b (at b + (b - a) and
   b + 2 (b - a): where the next keyframes would be if the motion went on alike) stays within
   the tolerance on the samples from a to b: exactly the window the Akima slopes at a and b
   depend on. When two segments are needed to reach a required keyframe either way, they are
   split evenly if both halves fit: the furthest sample may sit one sample before the turn,
   and a segment that short bends the spline far beyond the recorded acceleration.
   Greedy "as far as possible" is optimal for covering a line with intervals when a
   shorter interval of a good one is good; that holds here nearly, not exactly, hence steps 3
   and 4. It costs O(K log L) small spline builds (K keyframes, L samples per segment).
3. **Global check and repair.** The spline through all the keyframes is evaluated at every
   sample; in each segment that leaves the tolerance, its worst sample becomes a keyframe;
   repeat until none does. This always ends (with every sample a keyframe the spline passes
   through every sample), so the tolerance is guaranteed at every sample.
4. **Pruning.** Left to right, a keyframe without which the spline (checked on the segments
   its removal changes) stays within the tolerance is removed; then step 3 again. Two passes.
   It is skipped when more than :data:`PRUNE_SHARE` of the samples are keyframes: the noise
   then exceeds the tolerance (see ``noise`` in the result) and pruning would cost more than
   it saves.

A spline recorded from a few keyframes on the sample grid gives those keyframes back; a 60 s
recording at 100 Hz takes a tenth to a third of a second (``bench/retime.py``).

Noise: a real servo measures with about 0.005 rad of noise, and over a minute of samples the
noise reaches four times that somewhere; a spline through recorded samples that must stay within
less than that of every sample ends up following the noise. Hence the default tolerance
:data:`DEFAULT_TOLERANCE` of six times the servo's noise. The result estimates the noise of
each joint (from the median of the second differences, robust to the motion itself), and
:meth:`KeyframeFit.describe` suggests smoothing or a larger tolerance when it is too close to
the tolerance. Optional light smoothing (``smoothing``, a half-window [s], off by default)
replaces each sample by the mean of the linearly interpolated recording over t +- w (exact for
irregular sampling, no phase shift; the window shrinks towards both ends so the first and last
poses stay as recorded); keyframes then take the smoothed positions and the deviation is
measured against the smoothed recording. It flattens peaks by about w^2 / 6 times the
curvature: keep w to a few samples.

Pauses (the person holds still) need no special case: a still stretch is one long segment, its
two keyframes at its ends, and the spline stays within the tolerance between them (with modified
Akima slopes it does not overshoot).
"""

from dataclasses import dataclass
import math
from typing import Optional, Sequence, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.spline import build_spline, INTERPOLATIONS, JointSpline

if TYPE_CHECKING:
    from sweetie_motion.trajectory.waypoints import WaypointsList

#: the default largest deviation of the keyframes' spline from the recording [rad]: six times a
#: servo's measurement noise
DEFAULT_TOLERANCE = 0.03
#: keyframes before a and look-ahead samples after b of the greedy step's local spline
BEHIND, AHEAD = 2, 2
#: a tolerance below this many noise standard deviations makes keyframes follow the noise
NOISE_RATIO = 3.0
#: a joint turning back by more than this many tolerances gets a keyframe near its extremum
TURN = 2.0
#: turns are found on a copy smoothed over +- DETECT_SAMPLES sample periods when a joint's
#: noise exceeds 1 / DETECT_NOISE of its tolerance
DETECT_NOISE = 20.0
DETECT_SAMPLES = 3.0
#: passes of the removal of keyframes that are not needed
PRUNE_PASSES = 2
#: no removal when more than this share of the samples are keyframes: then the noise exceeds
#: the tolerance, the keyframes follow it and removing costs more than it saves
PRUNE_SHARE = 0.25
#: keyframes on either side of a removed one whose segments it changes (modified Akima: the
#: slopes at two keyframes on each side depend on it)
REACH = 3


class KeyframeError(SweetieMotionError):
    """
    A recording cannot be turned into keyframes.

    :param message: what is wrong, for the user.
    :param sample: the sample (0-based) concerned, None when none in particular.
    :param joint: the joint concerned, '' when none in particular.
    :param value: the offending value, None when none.
    """

    def __init__(self, message: str, sample: Optional[int] = None, joint: str = '',
                 value: Optional[float] = None) -> None:
        self.sample = sample
        self.joint = joint
        self.value = value
        super().__init__(message)


@dataclass(frozen=True)
class KeyframeFit:
    """
    The keyframes of a recording and how close their spline stays to it.

    :param indices: the samples chosen as keyframes, shape (K,), first and last included.
    :param times: their times, shape (K,) [s, the recording's clock].
    :param positions: their positions, shape (K, n) [rad] (smoothed when smoothing was on).
    :param max_deviation: per joint, the largest |spline - recording| over the samples, (n,)
        [rad].
    :param worst_time: per joint, when that deviation happens, (n,) [s, the recording's clock].
    :param tolerance: per joint, the tolerance asked for, (n,) [rad].
    :param samples: the number of samples of the recording.
    :param noise: per joint, the estimated standard deviation of the recording's noise, (n,)
        [rad] (of the raw recording, before any smoothing).
    """

    indices: np.ndarray
    times: np.ndarray
    positions: np.ndarray
    max_deviation: np.ndarray
    worst_time: np.ndarray
    tolerance: np.ndarray
    samples: int
    noise: np.ndarray

    @property
    def relative_times(self) -> np.ndarray:
        """Return the keyframe times from the first keyframe [s] (what a trajectory stores)."""
        return self.times - self.times[0]

    def describe(self, joints: Optional[Sequence[str]] = None) -> str:
        """Return e.g. '14 keyframes of 6000 samples, max deviation 0.018 rad (joint12 ...)'."""
        worst = int(np.argmax(self.max_deviation / self.tolerance))
        name = joints[worst] if joints is not None else f'joint {worst + 1}'
        text = (f'{len(self.indices)} keyframes of {self.samples} samples, max deviation '
                f'{self.max_deviation[worst]:.3f} rad ({name} at t = '
                f'{self.worst_time[worst] - self.times[0]:.2f} s, tolerance '
                f'{self.tolerance[worst]:.3f} rad)')
        noisy = int(np.argmax(self.noise / self.tolerance))
        if self.noise[noisy] * NOISE_RATIO > self.tolerance[noisy]:
            name = joints[noisy] if joints is not None else f'joint {noisy + 1}'
            text += (f'; the recording of {name} is noisy ({self.noise[noisy]:.3f} rad): '
                     'smoothing or a larger tolerance gives fewer keyframes')
        return text

    def to_waypoints(self, joints: Sequence[str]) -> 'WaypointsList':
        """
        Return the keyframes as the editor's waypoint list (first keyframe at t = 0).

        :param joints: the n joint names, in column order.
        :raises KeyframeError: not one name per column.
        """
        from sweetie_motion.trajectory.waypoints import Waypoint, WaypointsList
        if len(joints) != self.positions.shape[1]:
            raise KeyframeError(f'{len(joints)} joint names for {self.positions.shape[1]} '
                                'recorded columns')
        waypoints = WaypointsList(joints)
        waypoints.waypoints = [Waypoint([float(v) for v in row], float(t))
                               for t, row in zip(self.relative_times, self.positions)]
        waypoints.check()
        return waypoints


def _check(times: ArrayLike, positions: ArrayLike, tolerance: Union[float, Sequence[float]],
           joints: Optional[Sequence[str]], interpolation: str):
    try:
        t = np.asarray(times, dtype=float)
        y = np.asarray(positions, dtype=float)
        tol = np.asarray(tolerance, dtype=float)
    except (TypeError, ValueError) as error:
        raise KeyframeError(f'the recording is not numbers: {error}') from None
    if t.ndim != 1 or not len(t):
        raise KeyframeError(f'times must be a non-empty list, got shape {t.shape}')
    if y.ndim == 1 and y.shape[0] == len(t):
        y = y[:, None]   # one joint
    if y.ndim != 2 or y.shape[0] != len(t) or y.shape[1] == 0:
        raise KeyframeError(f'{len(t)} times but positions of shape {y.shape} (one row per '
                            'sample, one column per joint)')
    n = y.shape[1]
    names = list(joints) if joints is not None else [f'joint {k + 1}' for k in range(n)]
    if len(names) != n:
        raise KeyframeError(f'{len(names)} joint names for {n} recorded columns')
    bad = np.flatnonzero(~np.isfinite(t))
    if len(bad):
        raise KeyframeError(f'sample {bad[0] + 1}: time {t[bad[0]]} is not a number',
                            int(bad[0]), '', float(t[bad[0]]))
    rows, columns = np.nonzero(~np.isfinite(y))
    if len(rows):
        row, column = int(rows[0]), int(columns[0])
        raise KeyframeError(f'sample {row + 1} (t = {t[row]:.3f} s): position {y[row, column]} '
                            f'of {names[column]} is not a number', row, names[column],
                            float(y[row, column]))
    order = np.flatnonzero(np.diff(t) <= 0)
    if len(order):
        row = int(order[0]) + 1
        raise KeyframeError(f'sample times must increase: sample {row + 1} ({t[row]:.6f} s) '
                            f'is not after sample {row} ({t[row - 1]:.6f} s)', row, '',
                            float(t[row]))
    tol = np.broadcast_to(tol, (n,)).astype(float) if tol.ndim == 0 else tol
    if tol.shape != (n,):
        raise KeyframeError(f'{tol.size} tolerances for {n} joints (one, or one per joint)')
    bad = np.flatnonzero(~(np.isfinite(tol) & (tol > 0)))
    if len(bad):
        raise KeyframeError(f'tolerance {tol[bad[0]]} of {names[bad[0]]} must be > 0 [rad]',
                            None, names[bad[0]], float(tol[bad[0]]))
    if interpolation not in INTERPOLATIONS:
        raise KeyframeError(f'unknown interpolation {interpolation!r} (known: '
                            f'{", ".join(INTERPOLATIONS)})')
    return t, y, tol


def smooth_recording(times: np.ndarray, positions: np.ndarray, half_window: float) -> np.ndarray:
    """
    Return the recording averaged over t +- ``half_window`` (see the module docstring).

    :param times: sample times, strictly increasing, shape (m,) [s].
    :param positions: shape (m, n) [rad].
    :param half_window: w [s]; 0 returns a copy; shrinks towards both ends.
    :return: shape (m, n).
    """
    t = np.asarray(times, dtype=float)
    y = np.asarray(positions, dtype=float)
    if half_window <= 0 or len(t) < 3:
        return y.copy()
    # integral of the piecewise linear recording at each sample (trapezoids)
    area = np.concatenate([np.zeros((1, y.shape[1])),
                           np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(t)[:, None], axis=0)])
    w = np.minimum(half_window, np.minimum(t - t[0], t[-1] - t))

    def integral(x: np.ndarray) -> np.ndarray:
        j = np.clip(np.searchsorted(t, x, side='right') - 1, 0, len(t) - 2)
        dt = (x - t[j])[:, None]
        slope = (y[j + 1] - y[j]) / (t[j + 1] - t[j])[:, None]
        return area[j] + dt * (y[j] + 0.5 * slope * dt)

    inside = w > 0
    smoothed = y.copy()
    lo, hi = t[inside] - w[inside], t[inside] + w[inside]
    smoothed[inside] = (integral(hi) - integral(lo)) / (2.0 * w[inside])[:, None]
    return smoothed


def estimate_noise(positions: np.ndarray) -> np.ndarray:
    """
    Return the standard deviation of the measurement noise of each joint [rad].

    White noise of deviation s gives second differences y[i+1] - 2 y[i] + y[i-1] of deviation
    s * sqrt(6); a smooth motion sampled fast adds little to them, and the median ignores the
    samples where it adds more (a sudden start or stop).

    :param positions: the recording, shape (m, n) [rad].
    :return: shape (n,) [rad]; zeros with fewer than three samples.
    """
    y = np.asarray(positions, dtype=float)
    if len(y) < 3:
        return np.zeros(y.shape[1])
    second = y[2:] - 2.0 * y[1:-1] + y[:-2]
    return np.median(np.abs(second), axis=0) / (0.6745 * math.sqrt(6.0))


def fit_keyframes(times: ArrayLike, positions: ArrayLike,
                  tolerance: Union[float, Sequence[float]] = DEFAULT_TOLERANCE,
                  interpolation: str = 'akima', smoothing: float = 0.0,
                  joints: Optional[Sequence[str]] = None) -> KeyframeFit:
    """
    Return the fewest recorded samples whose spline stays within ``tolerance`` of the recording.

    :param times: sample times, strictly increasing (irregular is fine), shape (m,) [s].
    :param positions: recorded positions, shape (m, n) [rad].
    :param tolerance: the largest deviation allowed, one for all joints or one per joint [rad].
    :param interpolation: the controller's interpolation, ``akima`` or ``cubic``.
    :param smoothing: half-window of the optional smoothing [s]; 0 (default): off.
    :param joints: the n joint names (for messages).
    :return: the keyframes and the deviation they achieve.
    :raises KeyframeError: empty or malformed recording, NaN, times not increasing, bad
        tolerance (naming the sample, joint and value).
    """
    t, y, tol = _check(times, positions, tolerance, joints, interpolation)
    if not (math.isfinite(smoothing) and smoothing >= 0):
        raise KeyframeError(f'smoothing {smoothing} must be >= 0 [s]')
    signal = smooth_recording(t, y, smoothing)
    m = len(t)
    noise = estimate_noise(y)
    if m == 1:
        return KeyframeFit(np.array([0]), t.copy(), signal.copy(), np.zeros(y.shape[1]),
                           t[[0] * y.shape[1]], tol, 1, noise)
    inverse = 1.0 / tol
    detect = signal
    if np.any(noise * DETECT_NOISE > tol):
        detect = smooth_recording(t, signal, DETECT_SAMPLES * float(np.median(np.diff(t))))
    required = _turns(detect, tol)
    chosen = _greedy(t, signal, inverse, interpolation, required)
    chosen = _repair(t, signal, inverse, interpolation, chosen)
    for _ in range(PRUNE_PASSES):
        if len(chosen) > PRUNE_SHARE * m:
            break
        pruned = _prune(t, signal, inverse, interpolation, chosen)
        if len(pruned) == len(chosen):
            break
        chosen = _repair(t, signal, inverse, interpolation, pruned)
    spline = build_spline(t[chosen], signal[chosen], interpolation=interpolation)
    deviation = np.abs(spline.sample_many(t)[0] - signal)
    worst = np.argmax(deviation, axis=0)
    return KeyframeFit(chosen, t[chosen], signal[chosen].copy(),
                       deviation[worst, np.arange(y.shape[1])], t[worst], tol, m, noise)


def _positions(spline: JointSpline, times: np.ndarray) -> np.ndarray:
    """Return the (cubic) spline's positions at ``times`` inside its span, (len, n)."""
    segment = np.clip(np.searchsorted(spline.times, times, side='right') - 1, 0,
                      len(spline.coefficients) - 1)
    tau = (times - spline.times[segment])[:, None]
    c = spline.coefficients[segment]
    return ((c[:, 3] * tau + c[:, 2]) * tau + c[:, 1]) * tau + c[:, 0]


def _fits(t: np.ndarray, y: np.ndarray, inverse: np.ndarray, interpolation: str,
          window: np.ndarray, a: int, b: int) -> bool:
    """Return whether the spline through ``window`` stays within tolerance from a to b."""
    spline = build_spline(t[window], y[window], interpolation=interpolation)
    segment = int(np.searchsorted(window, a))
    tau = (t[a + 1:b] - t[a])[:, None]
    c = spline.coefficients[segment]
    value = ((c[3] * tau + c[2]) * tau + c[1]) * tau + c[0]
    return bool(np.all(np.abs(value - y[a + 1:b]) * inverse <= 1.0))


def _turns(y: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """
    Return the fewest samples that put a keyframe near every turn of every joint.

    A modified Akima segment is monotone in every joint (zero slope at a keyframe where a joint
    turns, Fritsch-Carlson limit elsewhere), so a joint that turns back by more than
    :data:`TURN` tolerances needs a keyframe where it is within half its tolerance of the
    extremum: the turn's band. The fewest samples that hit every band: take the bands by their
    right ends, a new sample at a band's right end whenever the band misses the last one
    (interval stabbing, exact); each sample then moves to where it is closest to the extrema
    of the bands it hits.
    """
    bands = []   # (right, left, column, turn)
    for column in range(y.shape[1]):
        signal = y[:, column]
        half = 0.5 * tolerance[column]
        turns = _turning_points(signal, TURN * tolerance[column])
        edges = [0] + turns + [len(signal) - 1]
        for k, turn in enumerate(turns):
            low, high = edges[k], edges[k + 2]   # the band ends before the neighbouring turns
            near = np.abs(signal[low:high + 1] - signal[turn]) <= half
            at = turn - low
            bands.append((turn + _run(near[at:]), turn - _run(near[at::-1]), column, turn))
    bands.sort()
    chosen: list = []
    group: list = []

    def place() -> None:
        left = max(band[1] for band in group)
        span = np.arange(left, group[0][0] + 1)
        distance = np.max([np.abs(y[span, c] - y[turn, c]) / tolerance[c]
                           for _, _, c, turn in group], axis=0)
        chosen.append(int(span[np.argmin(distance)]))

    for band in bands:
        if group and band[1] <= group[0][0]:
            group.append(band)   # hit by the sample at the group's first right end
            continue
        if group:
            place()
        group = [band]
    if group:
        place()
    return np.unique(np.array(chosen, dtype=int))


def _turning_points(signal: np.ndarray, threshold: float) -> list:
    """Return the extrema of ``signal`` that it retreats from by more than ``threshold``."""
    slope = np.sign(np.diff(signal))
    # local extrema only (where the slope changes sign, flat stretches included)
    candidates = np.flatnonzero(slope[1:] != slope[:-1]) + 1
    turns = []
    high = low = 0
    direction = 0   # +1: rising (looking for a maximum), -1: falling, 0: not known yet
    for index in candidates.tolist() + [len(signal) - 1]:
        value = signal[index]
        if value > signal[high]:
            high = index
        if value < signal[low]:
            low = index
        if direction >= 0 and signal[high] - value > threshold:
            if high > 0:
                turns.append(high)
            direction, low = -1, index
        elif direction <= 0 and value - signal[low] > threshold:
            if low > 0:
                turns.append(low)
            direction, high = 1, index
    return [turn for turn in turns if 0 < turn < len(signal) - 1]


def _run(flags: np.ndarray) -> int:
    """Return how many samples after the first of ``flags`` are True before a False one."""
    stop = np.flatnonzero(~flags[1:])
    return int(stop[0]) if len(stop) else len(flags) - 1


def _greedy(t: np.ndarray, y: np.ndarray, inverse: np.ndarray, interpolation: str,
            required: np.ndarray) -> np.ndarray:
    m = len(t)
    chosen = [0]
    step = 1
    stops = list(required[(required > 0) & (required < m - 1)]) + [m - 1]
    following = 0

    def good(behind: list, a: int, b: int) -> bool:
        span = b - a
        ahead = sorted({min(b + k * span, m - 1) for k in range(1, AHEAD + 1)} - {b})
        window = np.array(behind + [a, b] + ahead)
        return _fits(t, y, inverse, interpolation, window, a, b)

    while chosen[-1] < m - 1:
        a = chosen[-1]
        behind = chosen[-1 - BEHIND:-1]
        while stops[following] <= a:
            following += 1
        stop = stops[following]   # a segment ends at a required keyframe at the latest
        if stop > a + 1 and good(behind, a, stop):
            # straight to the next turn: a shorter segment can be worse than the whole one
            # (the segment's curve is fixed by its ends' slopes, not by how long it is)
            chosen.append(stop)
            step = stop - a
            continue
        lo, hi = a + 1, None   # lo: good (two neighbouring samples always are)
        probe = min(a + max(2, step), stop)
        while probe > lo:
            if not good(behind, a, probe):
                hi = probe
                break
            lo = probe
            probe = min(a + 2 * (probe - a), stop)
        if hi is not None:
            while hi - lo > 1:
                middle = (lo + hi) // 2
                if good(behind, a, middle):
                    lo = middle
                else:
                    hi = middle
        middle = (a + stop) // 2
        if a < middle < lo and good(chosen[-BEHIND:], lo, stop) and \
                good(behind, a, middle) and good(chosen[-BEHIND:], middle, stop):
            # two segments reach the turn either way: split them evenly, since the furthest
            # sample can sit a sample before the turn, and a segment that short bends the
            # spline hard (a smooth nod recorded by hand then "needed" twice the acceleration
            # limit at the turn)
            lo = middle
        chosen.append(lo)
        step = max(1, lo - a)
    return np.array(chosen)


def _repair(t: np.ndarray, y: np.ndarray, inverse: np.ndarray, interpolation: str,
            chosen: np.ndarray) -> np.ndarray:
    """Add the worst sample of every segment beyond the tolerance, until none is."""
    while True:
        spline = build_spline(t[chosen], y[chosen], interpolation=interpolation)
        excess = np.max(np.abs(_positions(spline, t) - y) * inverse, axis=1)
        beyond = excess > 1.0
        if not beyond.any():
            return chosen
        segment = np.searchsorted(chosen, np.arange(len(t)), side='right') - 1
        added = []
        for s in np.unique(segment[beyond]):
            inside = np.flatnonzero(segment == s)
            added.append(int(inside[np.argmax(excess[inside])]))
        chosen = np.union1d(chosen, added)


def _prune(t: np.ndarray, y: np.ndarray, inverse: np.ndarray, interpolation: str,
           chosen: np.ndarray) -> np.ndarray:
    """Remove, left to right, every keyframe without which the spline stays within tolerance."""
    keep = list(chosen)
    i = 1
    while i < len(keep) - 1:
        trial = keep[:i] + keep[i + 1:]
        lo, hi = max(0, i - REACH), min(len(trial) - 1, i + REACH - 1)
        window = np.array(trial[max(0, lo - 2):hi + 3])
        spline = build_spline(t[window], y[window], interpolation=interpolation)
        samples = slice(trial[lo], trial[hi] + 1)
        if np.all(np.abs(_positions(spline, t[samples]) - y[samples]) * inverse <= 1.0):
            keep = trial
        else:
            i += 1
    return np.array(keep)
