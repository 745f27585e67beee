"""
Fit to limits: the fastest keyframe times within the joint limits (issue #12 item 6).

The keyframe positions stay; only their times change, so that the spline the controller will
build from them (:func:`~sweetie_motion.trajectory.spline.build_spline`, with the same
interpolation) keeps every joint within its velocity and acceleration limits
(:func:`~sweetie_motion.trajectory.timing.planning_limits`, the 0.95 margin every plan of the
package uses) and is as short as possible. Each segment may get its own factor: a motion with
one fast move and slow ones elsewhere keeps the fast move and speeds up the rest, where the
package's uniform retiming (one factor for the whole motion, what the controller does to a goal
beyond the limits) slows everything down by the fast move's factor.

How:

1. **Time-optimal path parametrisation (toppra).** The geometric path is the spline through
   the keyframes at their current times, parametrised by that time. TOPP-RA gives the fastest
   traversal of that path within the limits; the time at which it passes each keyframe is the
   first guess of the new keyframe times (its duration is reported as ``toppra_duration``: the
   optimum for that path).
2. **Repair on the package's own spline, to a fixed point.** The controller does not follow
   toppra's profile: it re-interpolates the keyframes with modified Akima (or C2 cubic) slopes
   computed from the *new* spacing. So the new times are checked on that spline, segment by
   segment, exactly: the segments are cubic, the largest velocity is at an end or at the vertex
   of the velocity parabola, the largest acceleration at an end. Segment i needs the factor
   r_i = max over joints of max(|v| / v_max, sqrt(|a| / a_max)) (slowing a segment down by k
   divides its velocities by k and its accelerations by k^2), and its duration is multiplied
   by r_i (damped): segments over a limit slow down, segments under every limit speed up. The
   slopes at a keyframe depend on the neighbouring segments, hence the iteration; it stops when
   every free segment is within :data:`TIGHTNESS` of its binding limit.
3. **Guarantee.** A last uniform factor (the largest r_i left, when above 1) brings every
   segment within the limits: scaling all times by k scales every r_i by 1/k, exactly. The
   result is then checked with :func:`~sweetie_motion.trajectory.timing.limit_excess` against
   the planning limits, and compared with the uniform retiming: when one factor is as short
   (and no segment is to keep its duration: a kept pause, a segment without limits), or when
   the non-uniform timing would take a C2 cubic spline further beyond a position limit
   than the keyframes' own spline goes (uniform scaling keeps the curve's shape, non-uniform
   spacing changes a cubic spline's overshoot), the uniform timing is returned. A timing beyond
   the limits is never returned.

Rules:

- The first keyframe keeps its time (a lead-in before it stays); durations are reported from
  the first to the last keyframe.
- A segment between identical keyframes (within :data:`PAUSE_TOLERANCE`: a pause) gets
  :data:`MIN_SEGMENT`, the shortest segment kept (two cycles of the 100 Hz controller: shorter
  keyframe spacing is not played anyway, and the times stay strictly increasing), or keeps its
  duration with ``keep_pauses``.
- Joints without a finite, positive velocity (or acceleration) limit do not constrain the
  timing; a segment in which only such joints move keeps its duration (there is nothing to fit
  it to).
- Selected rows: only the segments between the first and the last selected keyframe change;
  the others keep their durations, later keyframes shift. The whole motion is checked (the
  slopes at the boundary depend on the selection): when a segment outside the selection
  exceeds a limit, a :class:`RetimeError` names it (select it too, or fit the whole motion).
- Position-only keyframes (``akima`` or ``cubic``): keyframe velocities or accelerations of a
  goal do not survive a non-uniform retiming and are refused.

Adapters: :func:`retime_goal` (a stored goal, for the CLI) and :func:`retime_waypoints` (the
editor's :class:`~sweetie_motion.trajectory.waypoints.WaypointsList`: the active rows are the
motion, a disabled row keeps its relative place within its segment).
"""

from dataclasses import dataclass, replace
import math
from typing import Any, Callable, Optional, Sequence, Tuple, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import JointLimits, RobotModel, RobotModelView
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.spline import build_spline, INTERPOLATIONS, JointSpline
from sweetie_motion.trajectory.timing import limit_excess, planning_limits, scale_times

if TYPE_CHECKING:
    from sweetie_motion.trajectory.waypoints import WaypointsList

#: what the limits are read from: a configured robot model or its view
Limited = Union[RobotModel, RobotModelView]

#: the shortest segment of a retimed trajectory [s] (two cycles of the 100 Hz controller)
MIN_SEGMENT = 0.02
#: the repair stops when every free segment uses at least this share of its binding limit
TIGHTNESS = 0.995
#: iterations of the repair at most (each one builds the spline once)
MAX_ITERATIONS = 200
#: exponent of the repair's step: r ** DAMPING, below 1 so that neighbours coupled through the
#: spline slopes do not make the iteration oscillate
DAMPING = 0.7
#: the repair also stops when an iteration changes the duration by less than this share
STALL = 1e-6
#: segments away from the selection that the slopes at its ends reach (modified Akima: 2)
REACH = 2
#: toppra grid points per keyframe segment
GRID_PER_SEGMENT = 16
#: toppra's path leaves out moves smaller than this [rad]: its solver fails on a segment that
#: barely moves (float noise of equal keyframes: up to 2e-6 rad in the original robot's files)
SNAP = 1e-4
#: toppra's path speed at most, relative to the old timing
PATH_SPEED_CAP = 1e3
#: keyframes closer than this in every joint [rad or m] are one pose: a pause between them
#: (0.29 deg, under one 0.325 deg step of a HerkuleX DRS-0101; the virtual robot posed twice
#: by the editor's sliders settled 0.2 deg apart)
PAUSE_TOLERANCE = 5e-3
#: a joint moves in a segment when its speed or acceleration somewhere exceeds this
MOTION_EPSILON = 1e-9
#: what a segment's duration is bound by, besides 'velocity' and 'acceleration'
MINIMUM, PAUSE, NO_LIMIT, KEPT = 'minimum segment time', 'pause', 'no limit', 'kept'


class RetimeError(SweetieMotionError):
    """
    A trajectory cannot be fitted to the limits as asked.

    :param message: what is wrong, for the user.
    :param row: the keyframe (0-based) concerned, None when none in particular.
    :param joint: the joint concerned, '' when none in particular.
    :param value: the offending value, None when none.
    """

    def __init__(self, message: str, row: Optional[int] = None, joint: str = '',
                 value: Optional[float] = None) -> None:
        self.row = row
        self.joint = joint
        self.value = value
        super().__init__(message)


@dataclass(frozen=True)
class SegmentTiming:
    """
    The timing of one segment, for a UI to show.

    :param start_row: the keyframe (or table row) the segment starts at.
    :param end_row: the keyframe (or table row) it ends at.
    :param before: its duration before [s].
    :param after: its duration after [s].
    :param joint: the joint whose limit binds it (with one factor for the whole motion: the
        limit closest to binding), '' when none does.
    :param bound_by: 'velocity', 'acceleration', :data:`MINIMUM` (a pause, or a segment that
        barely moves, at the minimum segment time), :data:`PAUSE` (a pause kept with
        ``keep_pauses``), :data:`NO_LIMIT` (only joints without limits move: duration kept)
        or :data:`KEPT` (outside the selection).
    :param usage: the largest share of a limit used in the segment after retiming (<= 1;
        the share of the acceleration limit counts as sqrt(|a| / a_max), the factor it needs).
    """

    start_row: int
    end_row: int
    before: float
    after: float
    joint: str
    bound_by: str
    usage: float


@dataclass(frozen=True)
class RetimeResult:
    """
    New keyframe times and how they came about.

    :param times: the new keyframe times, shape (k,) [s]; the first one is unchanged.
    :param duration_before: first to last keyframe before [s].
    :param duration_after: first to last keyframe after [s].
    :param uniform_duration: the same with the best single factor for the whole motion [s]
        (nan for a selection, where one factor for the whole motion does not apply).
    :param toppra_duration: toppra's time-optimal traversal of the keyframes' path at their old
        timing [s] (nan when toppra could not parametrise it).
    :param segments: one per segment.
    :param method: 'segments' (per-segment timing), 'uniform' (one factor was as short, or
        kept a cubic spline within the position limits) or 'unchanged' (one keyframe).
    :param iterations: iterations of the repair.
    """

    times: np.ndarray
    duration_before: float
    duration_after: float
    uniform_duration: float
    toppra_duration: float
    segments: Tuple[SegmentTiming, ...]
    method: str
    iterations: int

    def describe(self) -> str:
        """Return e.g. 'fit to limits: 4.10 s -> 2.31 s (one factor for all: 2.95 s)'."""
        text = f'fit to limits: {self.duration_before:.2f} s -> {self.duration_after:.2f} s'
        if math.isfinite(self.uniform_duration):
            text += f' (one factor for all: {self.uniform_duration:.2f} s)'
        return text


# --- the analysis of a spline, segment by segment ---------------------------------------------


@dataclass
class _Usage:
    ratio: np.ndarray        # (k-1,) factor each segment needs (limited joints only)
    joint: np.ndarray        # (k-1,) column of the binding joint
    acceleration: np.ndarray  # (k-1,) bool: bound by acceleration (else velocity)
    moves: np.ndarray        # (k-1,) bool: some joint moves
    limited: np.ndarray      # (k-1,) bool: some joint with a finite limit moves


def _inverse(limit: np.ndarray) -> np.ndarray:
    usable = np.isfinite(limit) & (limit > 0)
    return np.where(usable, 1.0 / np.where(usable, limit, 1.0), 0.0)


def _usage(spline: JointSpline, inverse_v: np.ndarray, inverse_a: np.ndarray) -> _Usage:
    """Return what each (cubic) segment of ``spline`` needs, exactly."""
    c = spline.coefficients
    h = np.diff(spline.times)[:, None]
    c1, c2, c3 = c[:, 1], c[:, 2], c[:, 3]
    v_end = c1 + (2.0 * c2 + 3.0 * c3 * h) * h
    with np.errstate(divide='ignore', invalid='ignore'):
        vertex = np.where(c3 != 0, -c2 / (3.0 * np.where(c3 != 0, c3, 1.0)), -1.0)
        inside = (vertex > 0) & (vertex < h)
        v_vertex = np.where(inside, np.abs(c1 + (2.0 * c2 + 3.0 * c3 * vertex) * vertex), 0.0)
    speed = np.maximum(np.maximum(np.abs(c1), np.abs(v_end)), v_vertex)
    accel = np.maximum(np.abs(2.0 * c2), np.abs(2.0 * c2 + 6.0 * c3 * h))
    moving = (speed > MOTION_EPSILON) | (accel > MOTION_EPSILON)
    limited = (inverse_v > 0) | (inverse_a > 0)
    r_v = speed * inverse_v
    r_a = np.sqrt(accel * inverse_a)
    need = np.maximum(r_v, r_a)
    joint = np.argmax(need, axis=1)
    rows = np.arange(len(joint))
    return _Usage(need[rows, joint], joint, r_a[rows, joint] > r_v[rows, joint],
                  moving.any(axis=1), (moving & limited[None, :]).any(axis=1))


# --- toppra's first guess --------------------------------------------------------------------


def _toppra_times(spline: JointSpline, limits: JointLimits) -> Optional[np.ndarray]:
    """Return the keyframe times of toppra's fastest traversal of ``spline``'s path, or None."""
    import toppra
    import toppra.algorithm
    import toppra.constraint

    velocity = np.where(np.isfinite(limits.velocity) & (limits.velocity > 0), limits.velocity,
                        np.inf)
    acceleration = np.where(np.isfinite(limits.acceleration) & (limits.acceleration > 0),
                            limits.acceleration, np.inf)
    columns = np.flatnonzero(np.isfinite(velocity) | np.isfinite(acceleration))
    if not len(columns):
        return None
    # a joint limited in one quantity only gets a bound far beyond anything reachable in the
    # other (toppra needs one number per joint); one more coordinate, s itself, caps the path
    # speed at PATH_SPEED_CAP times the old timing: where nothing moves (a pause) the path
    # speed is otherwise unbounded and toppra's solver fails on it
    big_v = 1e3 * (np.max(velocity[np.isfinite(velocity)]) if np.isfinite(velocity).any()
                   else 1.0)
    big_a = 1e3 * (np.max(acceleration[np.isfinite(acceleration)])
                   if np.isfinite(acceleration).any() else 1.0)
    velocity = np.append(np.where(np.isfinite(velocity[columns]), velocity[columns], big_v),
                         PATH_SPEED_CAP)
    acceleration = np.append(np.where(np.isfinite(acceleration[columns]), acceleration[columns],
                                      big_a), big_a * PATH_SPEED_CAP)
    constraints = [toppra.constraint.JointVelocityConstraint(velocity),
                   toppra.constraint.JointAccelerationConstraint(acceleration)]
    knots = spline.times
    grid = np.concatenate([np.linspace(a, b, GRID_PER_SEGMENT, endpoint=False)
                           for a, b in zip(knots[:-1], knots[1:])] + [knots[-1:]])
    try:
        algorithm = toppra.algorithm.TOPPRA(constraints, _SplinePath(spline, columns), grid,
                                            solver_wrapper='seidel')
        algorithm.compute_parameterization(0.0, 0.0)
    except Exception:   # noqa: B902 - toppra raises bare errors; the repair starts without it
        return None
    data = algorithm.problem_data
    speed = data.sd_vec
    if speed is None or not np.all(np.isfinite(speed)):
        return None
    # constant path acceleration between grid points (toppra's own ParametrizeConstAccel)
    total = speed[:-1] + speed[1:]
    step = np.where(total > 0, 2.0 * np.diff(grid) / np.where(total > 0, total, 1.0), 0.0)
    times = np.concatenate([[0.0], np.cumsum(step)])
    return knots[0] + times[::GRID_PER_SEGMENT]


class _SplinePath:
    """The geometric path of a spline for toppra: s, the spline's own time, is its last axis."""

    def __init__(self, spline: JointSpline, columns: np.ndarray) -> None:
        self.spline = spline
        self.columns = columns
        # at its last knot JointSpline reports the resting state; the path's own derivatives
        # are those of the last segment
        self.last = np.nextafter(spline.times[-1], -np.inf)

    def __call__(self, path_positions: ArrayLike, order: int = 0) -> np.ndarray:
        s = np.clip(np.atleast_1d(np.asarray(path_positions, dtype=float)),
                    self.spline.times[0], self.last)
        value = self.spline.sample_many(s)[order][:, self.columns]
        own = s if order == 0 else np.full(len(s), 1.0 if order == 1 else 0.0)
        value = np.column_stack([value, own])
        return value if np.ndim(path_positions) else value[0]

    @property
    def dof(self) -> int:
        return len(self.columns) + 1

    @property
    def path_interval(self) -> np.ndarray:
        return np.array([self.spline.times[0], self.spline.times[-1]])

    @property
    def waypoints(self) -> None:
        return None


# --- the retiming ----------------------------------------------------------------------------


def _check_input(times: ArrayLike, positions: ArrayLike, joints: Sequence[str],
                 limits: JointLimits, interpolation: str) -> Tuple[np.ndarray, np.ndarray]:
    try:
        t = np.asarray(times, dtype=float)
        p = np.asarray(positions, dtype=float)
    except (TypeError, ValueError) as error:
        raise RetimeError(f'keyframes are not numbers: {error}') from None
    if t.ndim != 1 or not len(t):
        raise RetimeError(f'times must be a non-empty list, got shape {t.shape}')
    if p.ndim != 2 or p.shape[0] != len(t):
        raise RetimeError(f'{len(t)} times but positions of shape {p.shape} '
                          '(one row per keyframe, one column per joint)')
    if len(joints) != p.shape[1]:
        raise RetimeError(f'{p.shape[1]} position columns but {len(joints)} joint names')
    if not p.shape[1]:
        raise RetimeError('the trajectory has no joints to fit to their limits')
    for name in ('velocity', 'acceleration'):
        if len(getattr(limits, name)) != p.shape[1]:
            raise RetimeError(f'{len(getattr(limits, name))} {name} limits for '
                              f'{p.shape[1]} joints')
    bad = np.flatnonzero(~np.isfinite(t))
    if len(bad):
        raise RetimeError(f'keyframe {bad[0] + 1}: time {t[bad[0]]} is not a number',
                          int(bad[0]), '', float(t[bad[0]]))
    bad_rows, bad_columns = np.nonzero(~np.isfinite(p))
    if len(bad_rows):
        row, column = int(bad_rows[0]), int(bad_columns[0])
        raise RetimeError(f'keyframe {row + 1}: position {p[row, column]} of {joints[column]} '
                          'is not a number', row, joints[column], float(p[row, column]))
    order = np.flatnonzero(np.diff(t) <= 0)
    if len(order):
        row = int(order[0]) + 1
        raise RetimeError(f'times must increase: keyframe {row + 1} ({t[row]:.3f} s) is not '
                          f'after keyframe {row} ({t[row - 1]:.3f} s)', row, '', float(t[row]))
    if interpolation not in INTERPOLATIONS:
        raise RetimeError(f'unknown interpolation {interpolation!r} (fit to limits works on '
                          f'position-only keyframes: {", ".join(INTERPOLATIONS)})')
    return t, p


def fit_to_limits(times: ArrayLike, positions: ArrayLike, joints: Sequence[str],
                  limits: JointLimits, interpolation: str = 'akima',
                  rows: Optional[Tuple[int, int]] = None, min_segment: float = MIN_SEGMENT,
                  keep_pauses: bool = False) -> RetimeResult:
    """
    Return the fastest keyframe times within the joint limits (see the module docstring).

    :param times: keyframe times, strictly increasing, shape (k,) [s].
    :param positions: keyframe positions, shape (k, n) [rad].
    :param joints: the n joint names (for the report).
    :param limits: the real limits of the n joints (the planning margin is applied here).
    :param interpolation: the controller's interpolation: ``akima`` or ``cubic``.
    :param rows: (first, last) keyframe indices of the range to retime (inclusive), None for
        the whole motion.
    :param min_segment: the shortest segment [s] (pauses and segments that barely move).
    :param keep_pauses: a segment between identical keyframes keeps its duration.
    :return: the new times and the report.
    :raises RetimeError: bad input (naming the keyframe, joint and value), or a segment outside
        the selection beyond the limits.
    """
    t, p = _check_input(times, positions, joints, limits, interpolation)
    if not (min_segment > 0 and math.isfinite(min_segment)):
        raise RetimeError(f'minimum segment time {min_segment} must be > 0 [s]')
    k = len(t)
    duration = float(t[-1] - t[0])
    if k == 1:
        return RetimeResult(t.copy(), 0.0, 0.0, 0.0, 0.0, (), 'unchanged', 0)
    first, last = (0, k - 1) if rows is None else (int(rows[0]), int(rows[1]))
    if not 0 <= first < last < k:
        raise RetimeError(f'the selection (keyframes {first + 1} to {last + 1}) must span at '
                          f'least two of the {k} keyframes')
    whole = first == 0 and last == k - 1
    planning = planning_limits(limits)
    inverse_v, inverse_a = _inverse(planning.velocity), _inverse(planning.acceleration)

    def usage(h: np.ndarray) -> _Usage:
        return _usage(build_spline(_times(t[0], h), p, interpolation=interpolation),
                      inverse_v, inverse_a)

    h_before = np.diff(t)
    original = usage(h_before)
    selected, pause, free, shortened, fixed = _segment_roles(p, original, first, last,
                                                             keep_pauses)
    guess = _toppra_times(build_spline(t, _snap(p), interpolation=interpolation), planning)
    toppra_duration = float(guess[-1] - guess[0]) if guess is not None else math.nan
    h = h_before.copy()
    if guess is not None:
        h[free] = np.maximum(np.diff(guess)[free], min_segment)
    h[shortened] = min_segment
    h, iterations = _repair(h, free, fixed, min_segment, usage)

    new_times, h, method, final, uniform_duration = _settle(
        t, p, h, fixed, original if whole else None, limits, interpolation, usage)
    _verify(new_times, p, joints, limits, planning, interpolation, final, selected, first, last)
    segments = _report(h_before, h, final, selected, original, pause, keep_pauses, min_segment,
                       joints)
    return RetimeResult(new_times, duration, float(new_times[-1] - new_times[0]),
                        uniform_duration, toppra_duration, segments, method, iterations)


def _settle(t: np.ndarray, p: np.ndarray, h: np.ndarray, fixed: np.ndarray,
            original: Optional['_Usage'], limits: JointLimits, interpolation: str,
            usage: Callable[[np.ndarray], '_Usage']
            ) -> Tuple[np.ndarray, np.ndarray, str, '_Usage', float]:
    """
    Choose between the retimed segments and one uniform factor for the whole motion.

    :param h: the retimed segment durations [s]; :param fixed: the segments that keep theirs;
    :param original: the original spacing's use of the limits when the whole motion is
        retimed (None: a range only, which keeps the segments).
    :return: (new times, segment durations, method ``segments`` or ``uniform``, their use of
        the limits, the uniform factor's duration (nan when there is none)).
    """
    uniform_times = None
    uniform_duration = math.nan
    duration = float(t[-1] - t[0])
    if original is not None:
        factor = float(np.max(original.ratio))
        if factor > 0:
            uniform_times = scale_times(t, factor, float(t[0]))
            uniform_duration = duration * factor
    final = usage(h)
    worst = float(np.max(final.ratio))
    if original is not None and worst > 1.0:
        # one last uniform factor: exact, every segment's need scales by 1 / factor
        h = h * worst
        final = usage(h)
    new_times = _times(t[0], h)
    method = 'segments'
    # one factor changes every segment: it is a candidate when no segment is to keep its
    # duration (a kept pause, a segment without limits), and the safe choice when the new
    # spacing takes a cubic spline further beyond a position limit
    if uniform_times is not None and (
            (uniform_duration <= float(new_times[-1] - new_times[0]) and not fixed.any())
            or _position_excess(new_times, p, limits, interpolation)
            > _position_excess(t, p, limits, interpolation) + 1e-9):
        new_times, h, method = uniform_times, np.diff(uniform_times), 'uniform'
        final = usage(h)
    return new_times, h, method, final, uniform_duration


def _segment_roles(p: np.ndarray, original: '_Usage', first: int, last: int,
                   keep_pauses: bool) -> Tuple[np.ndarray, ...]:
    """
    Return what may change of every segment (boolean masks, one entry per segment).

    :return: (selected: in the range to retime; pause: still; free: retimed to the limits;
        shortened: a pause brought to the shortest segment; fixed: keeps its duration).
    """
    selected = np.zeros(len(p) - 1, bool)
    selected[first:last] = True
    # a pause is judged on the keyframes: two poses an author took of a robot at rest differ
    # by what its servos settle to, which is still a pause
    still = np.all(np.abs(np.diff(p, axis=0)) <= PAUSE_TOLERANCE, axis=1)
    pause = selected & (still | ~original.moves)
    free = selected & original.limited & ~pause
    shortened = pause & (not keep_pauses)
    fixed = ~free & ~shortened
    return selected, pause, free, shortened, fixed


def _snap(p: np.ndarray) -> np.ndarray:
    """Return the keyframes with moves below SNAP made none (toppra fails on such moves)."""
    snapped = p.copy()
    for row in range(1, len(p)):
        still = np.abs(p[row] - snapped[row - 1]) < SNAP
        snapped[row] = np.where(still, snapped[row - 1], p[row])
    return snapped


def _times(origin: float, h: np.ndarray) -> np.ndarray:
    return origin + np.concatenate([[0.0], np.cumsum(h)])


def _repair(h: np.ndarray, free: np.ndarray, fixed: np.ndarray, floor: float, usage
            ) -> Tuple[np.ndarray, int]:
    """Iterate the segment durations to the fixed point where every free segment is tight."""
    if not free.any():
        return h, 0
    free_index = np.flatnonzero(free)
    previous = math.inf
    for iteration in range(1, MAX_ITERATIONS + 1):
        need = usage(h).ratio
        over = np.flatnonzero(fixed & (need > 1.0 + 1e-9))
        tight = (need <= 1.0 + 1e-6) & ((need >= TIGHTNESS) | (h <= floor * (1 + 1e-9)))
        total = float(np.sum(h))
        if not len(over) and (np.all(tight[free]) or (
                abs(total - previous) < STALL * total and np.all(need[free] <= 1.0 + 1e-3))):
            break
        previous = total
        step = np.where(need > 0, need, 0.0) ** DAMPING
        h = np.where(free, np.maximum(floor, h * step), h)
        # a segment outside the selection pushed beyond a limit by the new slopes at the
        # boundary: slow the nearest selected segment down (farther ones it cannot reach)
        for j in over:
            nearest = free_index[np.argmin(np.abs(free_index - j))]
            if abs(nearest - j) <= REACH:
                h[nearest] *= need[j] ** DAMPING
    else:
        iteration = MAX_ITERATIONS
    # the last per mille: the free segments together by the factor the worst one needs
    for _ in range(10):
        worst = float(np.max(usage(h).ratio[free]))
        if worst <= 1.0:
            break
        h = np.where(free, h * worst, h)
    return h, iteration


def _position_excess(times: np.ndarray, p: np.ndarray, limits: JointLimits,
                     interpolation: str) -> float:
    """Return how far [rad] the spline goes beyond a position limit at most (0: never)."""
    if interpolation == 'akima':
        return 0.0   # it never leaves the range of the keyframes
    spline = build_spline(times, p, interpolation=interpolation)
    grid = np.linspace(times[0], times[-1], min(200_000, 40 * len(times) + 200))
    position = spline.sample_many(grid)[0]
    beyond = np.maximum(position - limits.upper, limits.lower - position)
    return float(max(0.0, np.max(beyond)))


def _verify(times: np.ndarray, p: np.ndarray, joints: Sequence[str], limits: JointLimits,
            planning: JointLimits, interpolation: str, final: _Usage, selected: np.ndarray,
            first: int, last: int) -> None:
    """Check the result with the package's own check; raise naming what is left beyond."""
    over = np.flatnonzero(final.ratio > 1.0 + 1e-6)
    if len(over):
        j = int(over[0])
        column = int(final.joint[j])
        quantity = 'acceleration' if final.acceleration[j] else 'velocity'
        where = ('outside the selection' if not selected[j] else 'inside the selection')
        raise RetimeError(
            f'keyframes {j + 1}-{j + 2} ({where}: keyframes {first + 1} to {last + 1} were '
            f'retimed) need {final.ratio[j]:.2f}x the {quantity} limit of {joints[column]}: '
            'select these keyframes too, or fit the whole trajectory', j, joints[column],
            float(final.ratio[j]))
    spline = build_spline(times, p, interpolation=interpolation)
    _, excess = limit_excess(spline, list(joints), planning, start=float(times[0]))
    if excess is not None:   # the exact analysis and the sampled check disagree: a bug
        raise RetimeError(f'fit to limits failed its own check: {excess.describe()}', None,
                          excess.joint, excess.needed)


def _report(h_before: np.ndarray, h: np.ndarray, final: _Usage, selected: np.ndarray,
            original: _Usage, pause: np.ndarray, keep_pauses: bool, min_segment: float,
            joints: Sequence[str]) -> Tuple[SegmentTiming, ...]:
    segments = []
    for j in range(len(h)):
        joint = joints[int(final.joint[j])] if final.limited[j] else ''
        if not selected[j]:
            bound = KEPT
        elif pause[j]:
            bound, joint = (PAUSE if keep_pauses else MINIMUM), ''
        elif not original.limited[j]:
            bound, joint = NO_LIMIT, ''
        elif final.ratio[j] < TIGHTNESS and h[j] <= min_segment * (1 + 1e-6):
            bound, joint = MINIMUM, ''   # barely moves: under every limit at the shortest
        else:
            bound = 'acceleration' if final.acceleration[j] else 'velocity'
        segments.append(SegmentTiming(j, j + 1, float(h_before[j]), float(h[j]), joint, bound,
                                      float(final.ratio[j])))
    return tuple(segments)


# --- adapters --------------------------------------------------------------------------------


def limits_of(model: Limited, joints: Sequence[str]) -> JointLimits:
    """
    Return the limits of ``joints`` from a configured RobotModel (or its view).

    :raises UnknownJointError: a joint the model does not have.
    """
    return model.joint_limits().take(model.get_joint_indices(list(joints)))


def retime_goal(goal: TrajectoryGoal, model: Limited, interpolation: str = 'akima',
                **options: Any) -> Tuple[TrajectoryGoal, RetimeResult]:
    """
    Fit a stored goal to the limits (what ``sweetie-motion retime NAME`` does).

    :param goal: position-only keyframes; ``support/<chain>`` columns keep their values.
    :param model: a configured RobotModel or RobotModelView (the limits).
    :param interpolation: the controller's interpolation (``akima`` or ``cubic``).
    :param options: ``rows``, ``min_segment``, ``keep_pauses`` of :func:`fit_to_limits`.
    :return: the goal with new times (everything else kept) and the report.
    :raises RetimeError: no points, keyframe velocities or accelerations, bad values.
    :raises UnknownJointError: a joint the model does not have.
    """
    if not goal.points:
        raise RetimeError('the trajectory has no points')
    if any(point.velocities or point.accelerations for point in goal.points):
        raise RetimeError('the trajectory gives keyframe velocities or accelerations, which a '
                          'new timing would make wrong: fit to limits works on position-only '
                          'keyframes')
    joints = goal.joints()
    columns = [goal.joint_names.index(j) for j in joints]
    for row, point in enumerate(goal.points):
        if len(point.positions) != len(goal.joint_names):
            raise RetimeError(f'point {row + 1} has {len(point.positions)} positions for '
                              f'{len(goal.joint_names)} joints', row)
    positions = np.array([[point.positions[c] for c in columns] for point in goal.points],
                         dtype=float).reshape(len(goal.points), len(joints))
    times = [point.time for point in goal.points]
    result = fit_to_limits(times, positions, joints, limits_of(model, joints), interpolation,
                           **options)
    points = [TrajectoryPoint(float(time), list(point.positions), [], [], list(point.effort))
              for time, point in zip(result.times, goal.points)]
    return replace(goal, points=points), result


def retime_waypoints(waypoints: 'WaypointsList', model: Limited,
                     rows: Optional[Sequence[int]] = None, interpolation: str = 'akima',
                     **options: Any) -> Tuple['WaypointsList', RetimeResult]:
    """
    Fit the editor's waypoint list (or its selected rows) to the limits.

    The active rows are the motion; a disabled row keeps its relative place within the
    segment of active rows around it (before the first active row: its time; after the last:
    shifted with it).

    :param waypoints: a :class:`~sweetie_motion.trajectory.waypoints.WaypointsList`.
    :param model: a configured RobotModel or RobotModelView (the limits).
    :param rows: table rows (0-based) selected; the segments between the first and the last
        active row among them are retimed. None: the whole list.
    :param interpolation: the controller's interpolation (``akima`` or ``cubic``).
    :param options: ``min_segment`` and ``keep_pauses`` of :func:`fit_to_limits`.
    :return: a retimed copy (the list itself is unchanged) and the report, whose segments
        name table rows.
    :raises RetimeError: fewer than two active rows selected, bad values.
    :raises UnknownJointError: a joint the model does not have.
    """
    active = waypoints.active_indices()
    if not active:
        raise RetimeError('the trajectory has no active rows')
    joints = waypoints.real_joints()
    columns = [waypoints.joints.index(j) for j in joints]
    positions = np.array([[waypoints.waypoints[r].positions[c] for c in columns]
                          for r in active], dtype=float).reshape(len(active), len(joints))
    times = np.array([waypoints.waypoints[r].time for r in active])
    selection = None
    if rows is not None:
        wanted = {int(x) for x in rows}
        chosen = [k for k, r in enumerate(active) if r in wanted]
        if len(chosen) < 2:
            raise RetimeError('select at least two active rows to fit them to the limits')
        selection = (chosen[0], chosen[-1])
    result = fit_to_limits(times, positions, joints, limits_of(model, joints), interpolation,
                           rows=selection, **options)
    retimed = waypoints.copy()
    new = result.times
    for waypoint in retimed.waypoints:
        waypoint.time = float(_row_time(waypoint.time, times, new))
    retimed.check()
    segments = tuple(replace(s, start_row=active[s.start_row], end_row=active[s.end_row])
                     for s in result.segments)
    return retimed, replace(result, segments=segments)


def _row_time(time: float, old: np.ndarray, new: np.ndarray) -> float:
    """Map a row's time through the retiming of the active rows (piecewise linear)."""
    if len(old) == 1 or time <= old[0]:
        return time
    if time >= old[-1]:
        return time + (new[-1] - old[-1])
    return float(np.interp(time, old, new))
