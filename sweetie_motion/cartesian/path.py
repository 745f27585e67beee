"""
Cartesian paths: waypoints joined by straight lines with circular blends (R-CART-1).

A :class:`CartesianPath` is planned once from waypoints (position + orientation) and blend
radii, and then evaluated (vectorised) at values of its path parameter ``s`` in [0, length]:
position, orientation and their first and second derivatives with respect to ``s``.

Geometry (what KDL's ``Path_RoundedComposite`` does, and where we do differently):

- ``s`` is the arc length of the tool point [m]. A span whose two waypoints share their
  position but not their orientation (an orientation-only move) has the length
  ``angle * eqradius`` (KDL's equivalent radius); its position stays put (what is left of
  it below 1 um moves along, so that the end is exact).
- A corner (an inner waypoint) with a blend radius r > 0 is cut by a circular arc tangent to
  both lines; the arc starts ``d = r * tan(beta / 2)`` before the waypoint and ends d after
  it (beta: the angle between the two directions). The arc never passes through the waypoint.
- **Too short segments.** A line between two waypoints of length D gives each of its two
  corners the tangent length it asks for when both fit (d_a + d_b <= D); when they do not, it
  is shared in proportion to what they ask (d_a * D / (d_a + d_b)), and a corner gets the
  smaller of the shares its two lines give it; its radius becomes ``d / tan(beta / 2)``. (KDL
  refuses such paths, errors 145/146, and gives the first corner all it asks so that the next
  one may fail.) With ``reduce_radius=False`` the path is refused like KDL's, naming the
  waypoint and the largest radius that fits. A radius reduced below ``min_radius`` becomes a
  stop.
- **Coincident waypoints** (same position within 1 um and same orientation within 1e-6 rad
  as the previous kept waypoint) are dropped and listed in :attr:`CartesianPath.dropped`
  (KDL refuses them, errors 142/143). Same position with another orientation is an
  orientation-only span.
- **Collinear waypoints** (turning angle below 1e-6 rad) need no arc: the line goes straight on.
- **Stops.** A corner with radius 0, a reversal (turning angle pi, KDL error 144) and both ends
  of an orientation-only span are sharp corners; the path's tangent is not continuous there,
  so a velocity profile must come to rest at them (:attr:`CartesianPath.stops`).

Orientation (our choice, continuous in its first derivative, unlike KDL's per-segment
interpolation whose angular velocity jumps at every line/arc junction): between the nominal
points c_j and c_j+1 of two waypoints (the arc's middle for a blended corner, else the
waypoint itself) the orientation turns about the single axis of R_j^T R_j+1 at a constant
rate (rotation angle proportional to ``s``, KDL's ``RotationalInterpolation_SingleAxis``).
Around a corner k that is not a stop, over +-h_k of ``s`` (h_k: the corner's requested blend
radius, shared like the tangent lengths above), the rate changes linearly from the incoming to
the outgoing one: R(s) = R_k exp(u_in a(s)) exp(u_out b(s)) with quadratic a and b, so the
angular velocity is continuous through the corner. The waypoint's own orientation is
approached, not reached, in a blend, as its position is.

The angular rate |d(orientation)/ds| [rad/m] of each segment is given
(:attr:`Segment.angular_rate`) so that a velocity profile can bound the angular speed.
"""

from dataclasses import dataclass
import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.frames import exp_so3, is_rotation, log_so3, Pose
from sweetie_motion.errors import SweetieMotionError

#: waypoints closer than this [m] share their position
POSITION_EPSILON = 1e-6
#: orientations closer than this [rad] are the same
ANGLE_EPSILON = 1e-6
#: turning angle [rad] below which a corner is straight (and above pi minus which a reversal)
COLLINEAR_ANGLE = 1e-6
#: segments shorter than this [m] are left out
LENGTH_EPSILON = 1e-12

LINE = 'line'
ARC = 'arc'
ROTATION = 'rotation'
_KIND_CODES = {LINE: 0, ARC: 1, ROTATION: 2}


class PathError(SweetieMotionError):
    """
    A path cannot be planned; names the waypoint.

    :param reason: what is wrong.
    :param index: 0-based index of the waypoint in the list given (None: not one waypoint).
    """

    def __init__(self, reason: str, index: Optional[int] = None) -> None:
        self.reason = reason
        self.index = index
        #: 1-based number of the waypoint, as the paper counts them (None: not one waypoint)
        self.number = None if index is None else index + 1
        where = '' if index is None else f'waypoint {index + 1} (index {index}): '
        super().__init__(f'{where}{reason}')


@dataclass(frozen=True, eq=False)
class Segment:
    """
    One piece of a path.

    :param index: position in :attr:`CartesianPath.segments`.
    :param kind: 'line', 'arc' or 'rotation' (an orientation-only move).
    :param start: path parameter at its start [m].
    :param length: its length in the path parameter [m].
    :param waypoint: index (in the waypoints given) of the waypoint a line or rotation leads
        to, or of the corner an arc rounds.
    :param radius: the arc's radius [m] (0 for lines and rotations).
    :param angular_rate: largest orientation rate |d(orientation)/ds| along it [rad/m].
    :param start_point: position at its start [m], shape (3,).
    :param end_point: position at its end [m], shape (3,).
    """

    index: int
    kind: str
    start: float
    length: float
    waypoint: int
    radius: float
    angular_rate: float
    start_point: np.ndarray
    end_point: np.ndarray

    @property
    def end(self) -> float:
        """Return the path parameter at its end [m]."""
        return self.start + self.length

    def describe(self) -> str:
        """Return e.g. 'segment 3 (arc r = 5.0 mm at waypoint 3)'."""
        detail = f' r = {self.radius * 1e3:.1f} mm at' if self.kind == ARC else ' to'
        return f'segment {self.index} ({self.kind}{detail} waypoint {self.waypoint + 1})'


@dataclass(frozen=True, eq=False)
class Corner:
    """
    What the path does at one kept waypoint.

    :param waypoint: index of the waypoint in the list given.
    :param kind: 'start', 'end', 'arc' (blended), 'straight' (collinear, passed without a
        stop) or 'stop' (sharp corner: the motion comes to rest).
    :param s: path parameter of its nominal point (an arc's middle, else the waypoint) [m].
    :param requested_radius: the blend radius asked for [m].
    :param radius: the radius of the arc (0 if none) [m].
    :param turn: angle between the incoming and the outgoing directions [rad].
    :param orientation_blend: half-width of the zone where the orientation rate changes [m].
    """

    waypoint: int
    kind: str
    s: float
    requested_radius: float
    radius: float
    turn: float
    orientation_blend: float


@dataclass(frozen=True, eq=False)
class PathSample:
    """
    A path evaluated at n values of its parameter (world frame = the waypoints' frame).

    :param s: path parameter [m], shape (n,).
    :param position: [m], shape (n, 3).
    :param dposition: d position / ds [1], shape (n, 3) (unit length on lines and arcs).
    :param ddposition: d^2 position / ds^2 [1/m], shape (n, 3).
    :param rotation: orientation, shape (n, 3, 3).
    :param drotation: angular rate d(orientation)/ds in the world frame [rad/m], shape (n, 3):
        the angular velocity is ``drotation * s_dot``.
    :param ddrotation: its derivative [rad/m^2], shape (n, 3): the angular acceleration is
        ``ddrotation * s_dot**2 + drotation * s_ddot``.
    :param segment: index of the segment of each sample, shape (n,).
    """

    s: np.ndarray
    position: np.ndarray
    dposition: np.ndarray
    ddposition: np.ndarray
    rotation: np.ndarray
    drotation: np.ndarray
    ddrotation: np.ndarray
    segment: np.ndarray


WaypointLike = Union[Pose, np.ndarray, Sequence[ArrayLike]]


def _as_pose(waypoint: WaypointLike, index: int) -> Pose:
    if isinstance(waypoint, Pose):
        position, rotation = waypoint.position, waypoint.rotation
    else:
        try:
            array = np.asarray(waypoint, dtype=float)
        except (TypeError, ValueError):
            array = None
        if array is not None and array.shape == (4, 4):
            position, rotation = array[:3, 3], array[:3, :3]
        elif isinstance(waypoint, (tuple, list)) and len(waypoint) == 2:
            try:
                position = np.asarray(waypoint[0], dtype=float)
                rotation = np.asarray(waypoint[1], dtype=float)
            except (TypeError, ValueError):
                raise PathError('position or rotation is not numeric', index) from None
        else:
            raise PathError('expected a Pose, a 4x4 transform or (position, rotation), got '
                            f'{type(waypoint).__name__}', index)
    position = np.asarray(position, dtype=float)
    if position.shape != (3,) or not np.all(np.isfinite(position)):
        raise PathError(f'position must be 3 finite numbers [m], got {position.tolist()}', index)
    if not is_rotation(rotation):
        raise PathError('orientation is not a rotation matrix (orthonormal, determinant 1)',
                        index)
    return Pose(position, rotation)


def _radii(radius: Union[float, Sequence[float]], count: int) -> np.ndarray:
    if not isinstance(radius, Sequence) and np.ndim(radius) == 0:
        values = np.full(count, float(radius))
        if not math.isfinite(values[0]) or values[0] < 0:
            raise PathError(f'blend radius must be a finite number >= 0 [m], got {radius}')
        return values
    values = np.asarray(radius, dtype=float)
    if values.shape != (count,):
        raise PathError(f'expected one blend radius per waypoint ({count}), got {values.size}')
    for index, value in enumerate(values):
        if not math.isfinite(value) or value < 0:
            raise PathError(f'blend radius must be a finite number >= 0 [m], got {value}', index)
    return values


def _share(demands: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """
    Share each span's length between its two end corners in proportion to their demands.

    :param demands: what each of the m corners asks for on both sides, shape (m,).
    :param lengths: length of each of the m - 1 spans, shape (m - 1,).
    :return: what each corner gets: the smaller of the shares its two spans give it.
    """
    left, right = demands[:-1], demands[1:]
    total = left + right
    scale = np.where(total > lengths, lengths / np.where(total > 0, total, 1.0), 1.0)
    granted = demands.copy()
    granted[:-1] = np.minimum(granted[:-1], left * scale)  # span j as corner j's outgoing side
    granted[1:] = np.minimum(granted[1:], right * scale)   # span j as corner j+1's incoming side
    return granted


#: the default equivalent radius of orientation-only spans [m] (KDL's default too)
EQRADIUS = 0.1


class CartesianPath:
    """
    Waypoints joined by lines with circular blends; orientation interpolated (module doc).

    :param waypoints: poses in one frame (the chain's first link, e.g. the arm's world):
        :class:`Pose`, 4x4 transforms [m] or (position [m], 3x3 rotation) pairs.
    :param radius: blend radius [m], one for every corner or one per waypoint (the first and
        the last are not corners and are ignored); 0 means a sharp corner with a stop.
    :param eqradius: equivalent radius [m]: an orientation-only span of angle a is a*eqradius
        long in the path parameter, so that it runs at angle speed v / eqradius.
    :param reduce_radius: shrink radii that do not fit (else refuse the path).
    :param min_radius: a radius reduced below this [m] becomes a stop.
    :raises PathError: a waypoint or a radius is invalid, fewer than two distinct waypoints, a
        radius does not fit (only with ``reduce_radius=False``).
    """

    def __init__(self, waypoints: Sequence[WaypointLike],
                 radius: Union[float, Sequence[float]] = 0.0, eqradius: float = EQRADIUS,
                 reduce_radius: bool = True, min_radius: float = 1e-4) -> None:
        poses = [_as_pose(w, i) for i, w in enumerate(waypoints)]
        if len(poses) < 2:
            raise PathError(f'a path needs at least 2 waypoints, got {len(poses)}')
        if not (math.isfinite(eqradius) and eqradius > 0):
            raise PathError(f'eqradius must be a finite number > 0 [m], got {eqradius}')
        requested = _radii(radius, len(poses))
        kept, dropped = [0], []
        for index in range(1, len(poses)):
            if poses[index].is_close(poses[kept[-1]], POSITION_EPSILON, ANGLE_EPSILON):
                dropped.append(index)
            else:
                kept.append(index)
        if len(kept) < 2:
            raise PathError('every waypoint coincides with waypoint 1: the path has no length',
                            1)
        self._eqradius = float(eqradius)
        self._input_indices = tuple(kept)
        self._dropped = tuple(dropped)
        self._waypoints = tuple(poses[i] for i in kept)
        self._requested = requested[kept]
        self._plan(reduce_radius, min_radius)

    # --- planning ------------------------------------------------------------------------------

    def _plan(self, reduce_radius: bool, min_radius: float) -> None:
        spans = _Spans(self._waypoints)
        kinds, turn, demand = self._corner_kinds(spans)
        tangent, radii = self._corner_radii(spans, kinds, turn, demand, reduce_radius,
                                            min_radius)
        builder, knots = self._lay_segments(spans, kinds, turn, tangent, radii)
        m = len(self._waypoints)
        # Orientation: a constant rate per span (between nominal points), blended at corners.
        span_s = np.diff(knots)
        rates = spans.angles / span_s
        axes = spans.axes
        blend_demand = np.zeros(m)
        for k in range(1, m - 1):
            changes = np.linalg.norm(axes[k - 1] * rates[k - 1] - axes[k] * rates[k]) > 1e-12
            if kinds[k] != 'stop' and changes:
                blend_demand[k] = self._requested[k]
        half_width = _share(blend_demand, span_s)

        self._length = float(builder.s)
        self._knots = knots
        self._half_width = half_width
        self._rotations = spans.rotations
        self._axes = axes
        self._rates = rates
        self._body_rate = axes * rates[:, None]
        self._corners = tuple(
            Corner(self._input_indices[k], kinds[k], float(knots[k]), float(self._requested[k]),
                   float(radii[k]), float(turn[k]), float(half_width[k])) for k in range(m))
        self._stops = tuple(float(knots[k]) for k in range(m)
                            if kinds[k] in ('start', 'end', 'stop'))
        self._segments = builder.finish(self._segment_rates)
        self._seg_start = np.array([seg.start for seg in self._segments])
        self._seg_kind = np.array([_KIND_CODES[seg.kind] for seg in self._segments])
        self._seg_p0 = np.array([seg.start_point for seg in self._segments])
        self._seg_u, self._seg_center, self._seg_e1, self._seg_e2, self._seg_r = builder.arrays()

    def _corner_kinds(self, spans: '_Spans') -> Tuple[List[str], np.ndarray, np.ndarray]:
        """
        Return what every waypoint is, its turn angle and the line its blend asks for.

        :return: (kinds: start, end, stop, straight or ARC; turn angles [rad]; the length [m]
            of each line a requested arc would take on both sides).
        """
        m = len(self._waypoints)
        kinds = ['start'] + [''] * (m - 2) + ['end']
        turn = np.zeros(m)
        demand = np.zeros(m)
        directions = spans.directions
        for k in range(1, m - 1):
            if spans.rotation_only[k - 1] or spans.rotation_only[k] or self._requested[k] <= 0:
                kinds[k] = 'stop'
                continue
            cos_turn = float(np.clip(directions[k - 1] @ directions[k], -1.0, 1.0))
            turn[k] = math.acos(cos_turn)
            if math.pi - turn[k] < COLLINEAR_ANGLE:
                kinds[k] = 'stop'  # a reversal: no arc is tangent to both lines
            elif turn[k] < COLLINEAR_ANGLE:
                kinds[k] = 'straight'
            else:
                kinds[k] = ARC
                demand[k] = self._requested[k] * math.tan(turn[k] / 2)
        return kinds, turn, demand

    def _corner_radii(self, spans: '_Spans', kinds: List[str], turn: np.ndarray,
                      demand: np.ndarray, reduce_radius: bool,
                      min_radius: float) -> Tuple[np.ndarray, np.ndarray]:
        """
        Fit the arcs into the lines they share; an arc that fits too small becomes a stop.

        :return: (the line every corner takes on each side [m], the arcs' radii [m]); ``kinds``
            is updated.
        :raises PathError: an arc does not fit and ``reduce_radius`` is off.
        """
        m = len(self._waypoints)
        distance = spans.distance
        tangent = _share(demand, np.where(spans.rotation_only, 0.0, distance))
        radii = np.zeros(m)
        for k in range(1, m - 1):
            if kinds[k] != ARC:
                continue
            fits = tangent[k] / math.tan(turn[k] / 2)
            if tangent[k] < demand[k] * (1 - 1e-12) and not reduce_radius:
                raise PathError(
                    f'blend radius {self._requested[k] * 1e3:.3f} mm does not fit: it needs '
                    f'{demand[k] * 1e3:.3f} mm of the lines on both sides (segments '
                    f'{distance[k - 1] * 1e3:.3f} mm and {distance[k] * 1e3:.3f} mm long, '
                    'shared with the neighbouring corners); at most '
                    f'{fits * 1e3:.3f} mm fits', self._input_indices[k])
            if fits < min_radius:
                kinds[k], tangent[k] = 'stop', 0.0
            else:
                radii[k] = fits
        tangent[[k for k in range(m) if kinds[k] != ARC]] = 0.0
        return tangent, radii

    def _lay_segments(self, spans: '_Spans', kinds: List[str], turn: np.ndarray,
                      tangent: np.ndarray,
                      radii: np.ndarray) -> Tuple['_SegmentBuilder', np.ndarray]:
        """Return the segments (lines, arcs, rotations) and every waypoint's ``s`` [m]."""
        m = len(self._waypoints)
        points, directions = spans.points, spans.directions
        builder = _SegmentBuilder()
        knots = np.zeros(m)
        for j in range(m - 1):
            target = self._input_indices[j + 1]
            if spans.rotation_only[j]:
                # what is left of the position (under 1 um) moves along, so that the end is
                # exact
                length = spans.angles[j] * self._eqradius
                builder.add(ROTATION, length, target, points[j], points[j + 1],
                            direction=spans.deltas[j] / length)
            else:
                start = points[j] + directions[j] * tangent[j]
                end = points[j + 1] - directions[j] * tangent[j + 1]
                length = spans.distance[j] - tangent[j] - tangent[j + 1]
                if length > LENGTH_EPSILON:
                    builder.add(LINE, length, target, start, end, direction=directions[j])
            k = j + 1
            if kinds[k] == ARC:
                arc_length = radii[k] * turn[k]
                knots[k] = builder.s + arc_length / 2
                builder.add_arc(points[k], directions[k - 1], directions[k], radii[k],
                                turn[k], tangent[k], target)
            else:
                knots[k] = builder.s
        knots[m - 1] = builder.s
        return builder, knots

    def _segment_rates(self, start: float, end: float) -> float:
        """Return the largest orientation rate [rad/m] over [start, end] of ``s``."""
        knots, half = self._knots, self._half_width
        worst = 0.0
        for j, rate in enumerate(self._rates):
            if knots[j] < end and knots[j + 1] > start:
                worst = max(worst, rate)
        for k in range(1, len(knots) - 1):
            if half[k] > 0 and knots[k] - half[k] < end and knots[k] + half[k] > start:
                worst = max(worst, self._rates[k - 1], self._rates[k])
        return float(worst)

    # --- what was planned ----------------------------------------------------------------------

    @property
    def length(self) -> float:
        """Return the length of the path parameter [m]."""
        return self._length

    @property
    def segments(self) -> Tuple[Segment, ...]:
        """Return the lines, arcs and rotations, in order."""
        return self._segments

    @property
    def corners(self) -> Tuple[Corner, ...]:
        """Return what the path does at each kept waypoint (start, arcs, stops, end)."""
        return self._corners

    @property
    def stops(self) -> Tuple[float, ...]:
        """Return the values of ``s`` [m] where the motion is at rest (0, sharp corners, end)."""
        return self._stops

    @property
    def waypoints(self) -> Tuple[Pose, ...]:
        """Return the waypoints kept (coincident ones dropped)."""
        return self._waypoints

    @property
    def input_indices(self) -> Tuple[int, ...]:
        """Return the index in the list given of each kept waypoint."""
        return self._input_indices

    @property
    def dropped(self) -> Tuple[int, ...]:
        """Return the indices of the waypoints dropped as coincident with the previous one."""
        return self._dropped

    @property
    def requested_radii(self) -> np.ndarray:
        """Return the blend radius asked for at each kept waypoint [m]."""
        return self._requested.copy()

    @property
    def eqradius(self) -> float:
        """Return the equivalent radius of orientation-only spans [m]."""
        return self._eqradius

    def describe(self) -> str:
        """Return a human-readable summary: segments, radii, stops, length."""
        lines = [f'{len(self._segments)} segments, length {self._length * 1e3:.1f} mm, '
                 f'{len(self._stops) - 2} stop(s) between start and end']
        for seg in self._segments:
            lines.append(f'  {seg.describe()}: s = {seg.start * 1e3:.1f} mm, '
                         f'length {seg.length * 1e3:.1f} mm')
        if self._dropped:
            lines.append('  dropped (coincident): waypoints '
                         + ', '.join(str(i + 1) for i in self._dropped))
        return '\n'.join(lines)

    # --- evaluation ----------------------------------------------------------------------------

    def segment_index(self, s: ArrayLike) -> np.ndarray:
        """Return the index of the segment of each ``s`` [m] (clipped to the path)."""
        s = np.clip(np.asarray(s, dtype=float), 0.0, self._length)
        index = np.searchsorted(self._seg_start, s, side='right') - 1
        return np.clip(index, 0, len(self._segments) - 1)

    def evaluate(self, s: Any) -> PathSample:
        """
        Evaluate the path at values of its parameter (vectorised).

        :param s: path parameter [m], shape (n,) or scalar; clipped to [0, length].
        :return: positions, orientations and their derivatives with respect to s.
        """
        s = np.clip(np.atleast_1d(np.asarray(s, dtype=float)), 0.0, self._length)
        index = self.segment_index(s)
        tau = s - self._seg_start[index]
        position = self._seg_p0[index] + self._seg_u[index] * tau[:, None]
        dposition = self._seg_u[index].copy()
        ddposition = np.zeros_like(position)
        arc = self._seg_kind[index] == _KIND_CODES[ARC]
        if np.any(arc):
            i = index[arc]
            r = self._seg_r[i][:, None]
            phi = (tau[arc] / self._seg_r[i])[:, None]
            cos, sin = np.cos(phi), np.sin(phi)
            e1, e2 = self._seg_e1[i], self._seg_e2[i]
            radial = cos * e1 + sin * e2
            position[arc] = self._seg_center[i] + r * radial
            dposition[arc] = cos * e2 - sin * e1
            ddposition[arc] = -radial / r
        rotation, drotation, ddrotation = self._orientation(s)
        return PathSample(s, position, dposition, ddposition, rotation, drotation, ddrotation,
                          index)

    def pose(self, s: float) -> Pose:
        """Return the pose at one value of the path parameter ``s`` [m]."""
        sample = self.evaluate(s)
        return Pose(sample.position[0], sample.rotation[0])

    def _orientation(self, s: np.ndarray):
        knots, half = self._knots, self._half_width
        span = np.clip(np.searchsorted(knots, s, side='right') - 1, 0, len(knots) - 2)
        body = self._body_rate[span]
        rotation = self._rotations[span] @ exp_so3(body * (s - knots[span])[:, None])
        body_rate = body
        body_acc = np.zeros_like(body)
        in_first = (s - knots[span]) < half[span]
        in_second = (knots[span + 1] - s) < half[span + 1]
        blend = in_first | in_second
        if np.any(blend):
            k = np.where(in_first, span, span + 1)[blend]
            h = half[k]
            tau = s[blend] - (knots[k] - h)
            w_in, w_out = self._rates[k - 1], self._rates[k]
            u_in, u_out = self._axes[k - 1], self._axes[k]
            a = w_in * (tau - h - tau * tau / (4 * h))
            da = w_in * (1 - tau / (2 * h))
            dda = -w_in / (2 * h)
            b = w_out * tau * tau / (4 * h)
            db = w_out * tau / (2 * h)
            ddb = w_out / (2 * h)
            first = exp_so3(u_in * a[:, None])
            second = exp_so3(u_out * b[:, None])
            rotation[blend] = self._rotations[k] @ first @ second
            # Body angular rate of R_k A B: B^T (u_in a') + u_out b'.
            incoming = np.einsum('nji,nj->ni', second, u_in * da[:, None])
            outgoing = u_out * db[:, None]
            body_rate = body_rate.copy()
            body_rate[blend] = incoming + outgoing
            body_acc[blend] = (np.einsum('nji,nj->ni', second, u_in * dda[:, None])
                               - np.cross(outgoing, incoming) + u_out * ddb[:, None])
        # World frame: w = R w_b, and dw/ds = R dw_b/ds (the R' w_b term is w x w = 0).
        drotation = np.einsum('nij,nj->ni', rotation, body_rate)
        ddrotation = np.einsum('nij,nj->ni', rotation, body_acc)
        return rotation, drotation, ddrotation


class _Spans:
    """The spans between consecutive waypoints: their lines and their rotations."""

    def __init__(self, waypoints: Sequence[Pose]) -> None:
        m = len(waypoints)
        self.points = np.array([w.position for w in waypoints])
        self.rotations = np.array([w.rotation for w in waypoints])
        self.deltas = np.diff(self.points, axis=0)
        self.distance = np.linalg.norm(self.deltas, axis=1)
        self.rotation_only = self.distance <= POSITION_EPSILON
        self.directions = self.deltas / np.where(self.rotation_only, 1.0,
                                                 self.distance)[:, None]
        relative = [log_so3(self.rotations[j].T @ self.rotations[j + 1])
                    for j in range(m - 1)]
        self.angles = np.array([np.linalg.norm(v) for v in relative])
        self.axes = np.array([v / a if a > 0 else np.zeros(3)
                              for v, a in zip(relative, self.angles)])


class _SegmentBuilder:
    """Collects segments in order with their geometry."""

    def __init__(self) -> None:
        self.s = 0.0
        self._rows: List[dict] = []

    def add(self, kind: str, length: float, waypoint: int, start: np.ndarray, end: np.ndarray,
            direction: Optional[np.ndarray] = None) -> None:
        self._rows.append({
            'kind': kind, 'start': self.s, 'length': float(length), 'waypoint': waypoint,
            'radius': 0.0, 'p0': np.array(start), 'p1': np.array(end),
            'u': np.zeros(3) if direction is None else np.array(direction),
            'center': np.zeros(3), 'e1': np.zeros(3), 'e2': np.zeros(3)})
        self.s += float(length)

    def add_arc(self, corner: np.ndarray, incoming: np.ndarray, outgoing: np.ndarray,
                radius: float, turn: float, tangent: float, waypoint: int) -> None:
        start = corner - incoming * tangent
        inward = outgoing - (outgoing @ incoming) * incoming
        inward /= np.linalg.norm(inward)
        center = start + inward * radius
        length = radius * turn
        self._rows.append({
            'kind': ARC, 'start': self.s, 'length': float(length), 'waypoint': waypoint,
            'radius': float(radius), 'p0': start, 'p1': corner + outgoing * tangent,
            'u': np.zeros(3), 'center': center, 'e1': -inward, 'e2': incoming.copy()})
        self.s += float(length)

    def finish(self, rate_of) -> Tuple[Segment, ...]:
        return tuple(Segment(i, row['kind'], row['start'], row['length'], row['waypoint'],
                             row['radius'], rate_of(row['start'], row['start'] + row['length']),
                             _frozen(row['p0']), _frozen(row['p1']))
                     for i, row in enumerate(self._rows))

    def arrays(self):
        def stack(key):
            return np.array([row[key] for row in self._rows])
        radius = np.array([row['radius'] if row['kind'] == ARC else 1.0 for row in self._rows])
        return stack('u'), stack('center'), stack('e1'), stack('e2'), radius


def _frozen(array: np.ndarray) -> np.ndarray:
    out = np.array(array, dtype=float)
    out.setflags(write=False)
    return out


__all__ = ['ARC', 'CartesianPath', 'Corner', 'LINE', 'PathError', 'PathSample', 'ROTATION',
           'Segment']
