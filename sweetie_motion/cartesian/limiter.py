"""
Limiters of sampled motions (R-CART-2): forbidden workspace zones before IK, joint limits after.

As in the paper's pipeline, the Cartesian set-points of a motion are checked against the
forbidden zones of the workspace before inverse kinematics, and the joint set-points that IK
makes of them against the joints' position, velocity and acceleration limits; a joint-space
motion skips the first stage. Every check runs on the whole sampled motion before anything
moves, vectorised, and reports the first violation in time as a :class:`LimitViolation`
naming the zone or the joint, the path segment (index and kind) and the time.

Zones, in the frame of the waypoints (the chain's first link: ``world`` for the arm), metres,
as the robot YAML gives them::

    robot:
      workspace:
        margin: 0.02               # [m] every zone grows by this much (e.g. the tool's size)
        forbidden:
          - box: {min: [0.3, -0.2, 0.0], max: [0.6, 0.2, 0.4]}
            name: fixture          # optional; default forbidden[0] (box)
          - sphere: {center: [0, 0, 1.2], radius: 0.15}
          - half_space: {point: [0, 0, 0.05], normal: [0, 0, -1]}   # below z = 0.05

Zones are closed: a point on a zone's surface (touching it) is a violation. A half-space's
forbidden side is the side its normal points to. Only the samples are checked: a zone thinner
than the distance between two samples (speed * period) can be crossed unseen; the margin
covers that.

Branch flips and singularities (:func:`find_branch_flips`): a joint step between two samples
that is much larger than the Cartesian step explains is flagged: ``|dq| > max_ratio *
(|dp| + length_scale * |dtheta|) + min_step``.
"""

from dataclasses import dataclass
import math
from typing import List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.frames import rotation_angle
from sweetie_motion.cartesian.path import Segment
from sweetie_motion.cartesian.profile import CartesianSamples
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import JointLimits, RobotModel

#: where zones are declared in the robot YAML (for error messages)
CONFIG_PATH = 'robot.workspace'


# --- errors ----------------------------------------------------------------------------------


class LimitViolation(SweetieMotionError):
    """
    A sampled motion violates a limit; the motion must be refused as a whole.

    :param what: what is violated, e.g. "joint2 velocity 3.1 rad/s > limit 2.6 rad/s".
    :param time: when [s, from the start of the motion].
    :param sample: index of the sample.
    :param segment: the path segment of the sample (None for a joint-space motion).
    """

    def __init__(self, what: str, time: float, sample: int,
                 segment: Optional[Segment] = None) -> None:
        self.time = float(time)
        self.sample = int(sample)
        self.segment_index = None if segment is None else segment.index
        self.segment_kind = None if segment is None else segment.kind
        #: index (in the waypoints given) of the waypoint the segment leads to or rounds
        self.waypoint = None if segment is None else segment.waypoint
        where = '' if segment is None else f', {segment.describe()}'
        super().__init__(f'{what} at t = {self.time:.3f} s (sample {self.sample}{where})')


class ZoneViolation(LimitViolation):
    """
    A Cartesian sample is inside a forbidden zone.

    :param zone: the zone's name; :param zone_index: its index in the limiter;
    :param position: the sample's position [m].
    """

    def __init__(self, zone: str, zone_index: int, position: np.ndarray, depth: float,
                 time: float, sample: int, segment: Optional[Segment] = None) -> None:
        self.zone = zone
        self.zone_index = zone_index
        self.position = np.array(position, dtype=float)
        self.depth = float(depth)
        x, y, z = (1e3 * v for v in self.position)
        super().__init__(f'forbidden zone {zone!r} entered at ({x:.1f}, {y:.1f}, {z:.1f}) mm '
                         f'({self.depth * 1e3:.1f} mm deep)', time, sample, segment)


class JointLimitViolation(LimitViolation):
    """
    A joint sample exceeds a limit.

    :param joint: the joint; :param quantity: 'position', 'velocity' or 'acceleration';
    :param value: the value [rad, rad/s, rad/s^2]; :param limit: the limit exceeded.
    """

    def __init__(self, joint: str, quantity: str, value: float, limit: float, time: float,
                 sample: int, segment: Optional[Segment] = None) -> None:
        self.joint = joint
        self.quantity = quantity
        self.value = float(value)
        self.limit = float(limit)
        unit = {'position': 'rad', 'velocity': 'rad/s', 'acceleration': 'rad/s^2'}[quantity]
        if quantity == 'position':
            relation = '<' if value < limit else '>'
            what = (f'{joint} position {self.value:.4f} {unit} {relation} limit '
                    f'{self.limit:.4f} {unit}')
        else:
            what = (f'{joint} {quantity} {abs(self.value):.3f} {unit} > limit '
                    f'{self.limit:.3f} {unit}')
        super().__init__(what, time, sample, segment)


class BranchFlipViolation(LimitViolation):
    """
    A joint jumps between two samples far more than the Cartesian motion explains.

    :param joint: the joint; :param step: its step [rad]; :param expected: the most the
        Cartesian step explains [rad].
    """

    def __init__(self, joint: str, step: float, expected: float, time: float, sample: int,
                 segment: Optional[Segment] = None) -> None:
        self.joint = joint
        self.step = float(step)
        self.expected = float(expected)
        super().__init__(f'{joint} jumps {self.step:.3f} rad in one sample (the Cartesian '
                         f'motion explains {self.expected:.3f} rad): a branch flip or a '
                         'singularity', time, sample, segment)


class ZoneConfigError(SweetieMotionError):
    """
    A forbidden zone entry of the configuration is invalid.

    :param entry: the entry's path, e.g. "robot.workspace.forbidden[2] (sphere)".
    :param key: the offending key (None: the entry as a whole).
    """

    def __init__(self, entry: str, reason: str, key: Optional[str] = None) -> None:
        self.entry = entry
        self.key = key
        where = entry if key is None else f'{entry}.{key}'
        super().__init__(f'{where}: {reason}')


# --- zones ------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Box:
    """
    An axis-aligned box.

    :param minimum: lower corner [m], shape (3,); :param maximum: upper corner [m].
    :param name: how errors name it.
    """

    minimum: np.ndarray
    maximum: np.ndarray
    name: str = 'box'
    kind = 'box'

    def depth(self, points: np.ndarray) -> np.ndarray:
        """Return how deep points [m] (n, 3) are inside: >= 0 inside or on the surface [m]."""
        return np.min(np.minimum(points - self.minimum, self.maximum - points), axis=-1)


@dataclass(frozen=True, eq=False)
class Sphere:
    """
    A ball.

    :param center: [m], shape (3,); :param radius: [m], > 0; :param name: how errors name it.
    """

    center: np.ndarray
    radius: float
    name: str = 'sphere'
    kind = 'sphere'

    def depth(self, points: np.ndarray) -> np.ndarray:
        """Return how deep points [m] (n, 3) are inside: >= 0 inside or on the surface [m]."""
        return self.radius - np.linalg.norm(points - self.center, axis=-1)


@dataclass(frozen=True, eq=False)
class HalfSpace:
    """
    The side of a plane that its normal points to.

    :param point: a point of the plane [m], shape (3,); :param normal: unit normal pointing
        into the forbidden side; :param name: how errors name it.
    """

    point: np.ndarray
    normal: np.ndarray
    name: str = 'half_space'
    kind = 'half_space'

    def depth(self, points: np.ndarray) -> np.ndarray:
        """Return how deep points [m] (n, 3) are inside: >= 0 inside or on the plane [m]."""
        return (points - self.point) @ self.normal


Zone = Union[Box, Sphere, HalfSpace]
_ZONE_KEYS = {'box': ('min', 'max'), 'sphere': ('center', 'radius'),
              'half_space': ('point', 'normal')}


def _vector(entry: str, key: str, value: object) -> np.ndarray:
    try:
        vector = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ZoneConfigError(entry, f'expected 3 numbers [m], got {value!r}', key) from None
    if vector.shape != (3,) or not np.all(np.isfinite(vector)):
        raise ZoneConfigError(entry, f'expected 3 finite numbers [m], got {value!r}', key)
    return vector


def zone_from_config(item: object, index: int, where: str = f'{CONFIG_PATH}.forbidden') -> Zone:
    """
    Return the zone of one configuration entry (format: the module doc).

    :param item: e.g. ``{'sphere': {'center': [0, 0, 1], 'radius': 0.1}, 'name': 'lamp'}``.
    :param index: the entry's index (for error messages).
    :param where: the list's path in the configuration (for error messages).
    :raises ZoneConfigError: naming the entry and the key.
    """
    entry = f'{where}[{index}]'
    if not isinstance(item, Mapping):
        raise ZoneConfigError(entry, 'expected a mapping with one of box, sphere, half_space, '
                              f'got {item!r}')
    kinds = [k for k in item if k in _ZONE_KEYS]
    unknown = [k for k in item if k not in _ZONE_KEYS and k != 'name']
    if unknown:
        raise ZoneConfigError(entry, 'unknown key (expected box, sphere or half_space, and '
                              'an optional name)', str(unknown[0]))
    if len(kinds) != 1:
        raise ZoneConfigError(entry, 'expected exactly one of box, sphere, half_space, got '
                              f'{len(kinds)}')
    kind = kinds[0]
    entry = f'{entry} ({kind})'
    name = item.get('name', f'{where.rsplit(".", 1)[-1]}[{index}] ({kind})')
    if not isinstance(name, str) or not name:
        raise ZoneConfigError(entry, f'expected a non-empty string, got {name!r}', 'name')
    spec = item[kind]
    if not isinstance(spec, Mapping):
        raise ZoneConfigError(entry, f'expected a mapping with {" and ".join(_ZONE_KEYS[kind])}'
                              f', got {spec!r}')
    for key in spec:
        if key not in _ZONE_KEYS[kind]:
            raise ZoneConfigError(entry, f'unknown key (a {kind} has '
                                  f'{" and ".join(_ZONE_KEYS[kind])})', str(key))
    for key in _ZONE_KEYS[kind]:
        if key not in spec:
            raise ZoneConfigError(entry, 'missing', key)
    if kind == 'box':
        low, high = _vector(entry, 'min', spec['min']), _vector(entry, 'max', spec['max'])
        if np.any(low > high):
            axis = 'xyz'[int(np.argmax(low > high))]
            raise ZoneConfigError(entry, f'min is above max on {axis}', 'min')
        return Box(low, high, name)
    if kind == 'sphere':
        center = _vector(entry, 'center', spec['center'])
        radius = spec['radius']
        if (isinstance(radius, bool) or not isinstance(radius, (int, float))
                or not math.isfinite(radius) or radius <= 0):
            raise ZoneConfigError(entry, f'expected a number > 0 [m], got {radius!r}', 'radius')
        return Sphere(center, float(radius), name)
    point = _vector(entry, 'point', spec['point'])
    normal = _vector(entry, 'normal', spec['normal'])
    norm = float(np.linalg.norm(normal))
    if norm < 1e-9:
        raise ZoneConfigError(entry, 'must not be zero', 'normal')
    return HalfSpace(point, normal / norm, name)


def zones_from_config(entries: object, where: str = f'{CONFIG_PATH}.forbidden') -> List[Zone]:
    """
    Return the zones of a ``forbidden`` list (None or empty: no zones).

    :raises ZoneConfigError: the list or an entry is invalid (naming it).
    """
    if entries is None:
        return []
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise ZoneConfigError(where, f'expected a list of zones, got {entries!r}')
    return [zone_from_config(item, i, where) for i, item in enumerate(entries)]


def _check_times(times: ArrayLike, count: int) -> np.ndarray:
    times = np.asarray(times, dtype=float)
    if times.shape != (count,):
        raise ValueError(f'expected {count} times, got shape {times.shape}')
    return times


def _segment(segment: Optional[np.ndarray], segments: Sequence[Segment],
             sample: int) -> Optional[Segment]:
    if segment is None or not segments:
        return None
    return segments[int(segment[sample])]


class WorkspaceLimiter:
    """
    Forbidden zones checked on sampled Cartesian positions (before IK).

    :param zones: the zones.
    :param margin: every zone grows by this much [m], >= 0.
    """

    def __init__(self, zones: Sequence[Zone] = (), margin: float = 0.0) -> None:
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f'margin must be a finite number >= 0 [m], got {margin}')
        self.zones: Tuple[Zone, ...] = tuple(zones)
        self.margin = float(margin)

    @classmethod
    def from_config(cls, workspace: object, where: str = CONFIG_PATH) -> 'WorkspaceLimiter':
        """
        Return the limiter of a ``workspace`` mapping: ``{forbidden: [...], margin: m}``.

        :param workspace: the mapping (None: no zones).
        :param where: its path in the configuration (for error messages).
        :raises ZoneConfigError: naming the entry and the key.
        """
        if workspace is None:
            return cls()
        if not isinstance(workspace, Mapping):
            raise ZoneConfigError(where, 'expected a mapping with forbidden, margin, got '
                                  f'{workspace!r}')
        for key in workspace:
            if key not in ('forbidden', 'margin'):
                raise ZoneConfigError(where, 'unknown key (expected forbidden, margin)', key)
        margin = workspace.get('margin', 0.0)
        if (isinstance(margin, bool) or not isinstance(margin, (int, float))
                or not math.isfinite(margin) or margin < 0):
            raise ZoneConfigError(where, f'expected a number >= 0 [m], got {margin!r}', 'margin')
        return cls(zones_from_config(workspace.get('forbidden'), f'{where}.forbidden'), margin)

    def depths(self, positions: ArrayLike) -> np.ndarray:
        """Return how deep each position is in each zone [m], shape (n, zones); >= 0: inside."""
        points = np.atleast_2d(np.asarray(positions, dtype=float))
        if not self.zones:
            return np.zeros((len(points), 0))
        return np.stack([zone.depth(points) for zone in self.zones], axis=1) + self.margin

    def check_positions(self, positions: ArrayLike, times: ArrayLike,
                        segment: Optional[np.ndarray] = None,
                        segments: Sequence[Segment] = ()) -> None:
        """
        Raise for the first position inside a zone.

        :param positions: [m], shape (n, 3); :param times: [s], shape (n,).
        :param segment: path segment index of each sample, shape (n,); :param segments: the
            path's segments.
        :raises ZoneViolation: naming the zone, the time and the segment.
        """
        points = np.atleast_2d(np.asarray(positions, dtype=float))
        times = _check_times(times, len(points))
        if not self.zones:
            return
        depths = self.depths(points)
        inside = depths >= 0
        hits = np.flatnonzero(inside.any(axis=1))
        if len(hits) == 0:
            return
        sample = int(hits[0])
        zone = int(np.argmax(np.where(inside[sample], depths[sample], -np.inf)))
        raise ZoneViolation(self.zones[zone].name, zone, points[sample], depths[sample, zone],
                            times[sample], sample, _segment(segment, segments, sample))

    def check(self, samples: CartesianSamples) -> None:
        """
        Raise for the first sample of a sampled path inside a zone.

        :raises ZoneViolation: naming the zone, the time and the segment.
        """
        self.check_positions(samples.position, samples.time, samples.segment, samples.segments)


class JointLimiter:
    """
    Joint position, velocity and acceleration limits checked on sampled joint positions.

    Velocities and accelerations are the finite differences of the samples (what a controller
    interpolating the set-points sees): velocity (q[i+1] - q[i]) / dt and acceleration from
    the samples i, i+1, i+2, each reported at the last sample it needs (the first set-point
    that makes it); at one sample, position comes before velocity before acceleration.

    :param joints: the joint names, in the order of the positions' columns.
    :param limits: their limits (e.g. ``RobotModel.joint_limits().take(indices)``).
    :param tolerance: relative slack on velocity and acceleration (a value at the limit passes).
    :param position_tolerance: absolute slack on positions [rad or m].
    """

    def __init__(self, joints: Sequence[str], limits: JointLimits, tolerance: float = 1e-6,
                 position_tolerance: float = 1e-9) -> None:
        self.joints = tuple(joints)
        n = len(self.joints)
        for field in ('lower', 'upper', 'velocity', 'acceleration'):
            if np.shape(getattr(limits, field)) != (n,):
                raise ValueError(f'limits.{field} must have {n} values (one per joint)')
        self.limits = limits
        self.tolerance = float(tolerance)
        self.position_tolerance = float(position_tolerance)

    @classmethod
    def from_model(cls, model: RobotModel, chain: str, **options: float) -> 'JointLimiter':
        """Return the limiter of a chain of a configured RobotModel (its joints and limits)."""
        limits = model.joint_limits().take(model.get_chain_indices(chain))
        return cls(model.list_joints(chain), limits, **options)

    def check(self, positions: ArrayLike, times: ArrayLike, segment: Optional[np.ndarray] = None,
              segments: Sequence[Segment] = ()) -> None:
        """
        Raise for the first sample (in time) beyond a limit.

        :param positions: joint positions [rad or m], shape (n, joints).
        :param times: [s], shape (n,), increasing.
        :param segment: path segment index of each sample (None: a joint-space motion).
        :param segments: the path's segments.
        :raises JointLimitViolation: naming the joint, the quantity, the time and the segment.
        """
        q = np.asarray(positions, dtype=float)
        if q.ndim != 2 or q.shape[1] != len(self.joints):
            raise ValueError(f'expected positions of shape (n, {len(self.joints)}), got '
                             f'{q.shape}')
        times = _check_times(times, len(q))
        limits = self.limits
        found = []  # (sample, order, joint, quantity, value, limit)
        below = q < limits.lower - self.position_tolerance
        above = q > limits.upper + self.position_tolerance
        outside = below | above
        if outside.any():
            sample = int(np.flatnonzero(outside.any(axis=1))[0])
            excess = np.where(below[sample], limits.lower - q[sample],
                              np.where(above[sample], q[sample] - limits.upper, -np.inf))
            joint = int(np.argmax(excess))
            limit = limits.lower[joint] if below[sample, joint] else limits.upper[joint]
            found.append((sample, 0, joint, 'position', q[sample, joint], limit))
        if len(q) >= 2:
            dt = np.diff(times)
            if np.any(dt <= 0):
                raise ValueError('times must be increasing')
            velocity = np.diff(q, axis=0) / dt[:, None]
            found += self._first(velocity, limits.velocity, 1, 1, 'velocity')
            if len(q) >= 3:
                middle = (times[2:] - times[:-2]) / 2
                acceleration = np.diff(velocity, axis=0) / middle[:, None]
                found += self._first(acceleration, limits.acceleration, 2, 2, 'acceleration')
        if found:
            sample, _, joint, quantity, value, limit = min(found, key=lambda f: (f[0], f[1]))
            raise JointLimitViolation(self.joints[joint], quantity, value, limit, times[sample],
                                      sample, _segment(segment, segments, sample))

    def _first(self, values: np.ndarray, limit: np.ndarray, offset: int, order: int,
               quantity: str) -> list:
        ratio = np.abs(values) / np.where(limit > 0, limit, np.nan)
        over = np.abs(values) > limit * (1 + self.tolerance) + 1e-12
        if not over.any():
            return []
        row = int(np.flatnonzero(over.any(axis=1))[0])
        joint = int(np.nanargmax(np.where(over[row], ratio[row], -np.inf)))
        return [(row + offset, order, joint, quantity, values[row, joint], limit[joint])]

    def check_samples(self, samples: CartesianSamples, positions: ArrayLike) -> None:
        """
        Check the joint positions IK made of a sampled path (one row per sample).

        :raises JointLimitViolation: naming the joint, the quantity, the time and the segment.
        """
        self.check(positions, samples.time, samples.segment, samples.segments)


@dataclass(frozen=True)
class BranchFlip:
    """
    A joint step the Cartesian motion does not explain.

    :param sample: the sample after the step; :param time: its time [s];
    :param joint: the joint; :param step: |dq| [rad]; :param expected: the most the
        Cartesian step explains [rad]; :param segment: the path segment (None if unknown).
    """

    sample: int
    time: float
    joint: str
    step: float
    expected: float
    segment: Optional[Segment]


def find_branch_flips(samples: CartesianSamples, positions: ArrayLike, joints: Sequence[str],
                      max_ratio: float = 50.0, length_scale: float = 0.1,
                      min_step: float = 0.02) -> List[BranchFlip]:
    """
    Find joint steps far above what the Cartesian motion between two samples explains.

    A step of joint j between samples i and i+1 is flagged when ``|dq_j| > max_ratio *
    (|dp| + length_scale * |dtheta|) + min_step``, dp and dtheta being the Cartesian
    position and orientation steps: IK switching to another branch (elbow, wrist flip) or
    crossing a singularity makes joints swing while the tool barely moves.

    :param samples: the sampled Cartesian path.
    :param positions: the joint positions IK made of it [rad], shape (n, joints).
    :param joints: the joint names, one per column.
    :param max_ratio: joint step per unit of Cartesian step [rad/m] still explained.
    :param length_scale: how many metres one radian of tool rotation counts for [m].
    :param min_step: joint step always allowed [rad] (noise, motions at rest).
    :return: every flagged step, in time order.
    """
    q = np.asarray(positions, dtype=float)
    if q.shape != (len(samples), len(joints)):
        raise ValueError(f'expected positions of shape ({len(samples)}, {len(joints)}), got '
                         f'{q.shape}')
    if len(q) < 2:
        return []
    dp = np.linalg.norm(np.diff(samples.position, axis=0), axis=1)
    dtheta = rotation_angle(samples.rotation[:-1], samples.rotation[1:])
    expected = max_ratio * (dp + length_scale * dtheta) + min_step
    steps = np.abs(np.diff(q, axis=0))
    rows, cols = np.nonzero(steps > expected[:, None])
    return [BranchFlip(int(r + 1), float(samples.time[r + 1]), joints[int(c)], float(steps[r, c]),
                       float(expected[r]), samples.segment_of(int(r + 1)))
            for r, c in zip(rows, cols)]


def check_branch_flips(samples: CartesianSamples, positions: ArrayLike, joints: Sequence[str],
                       **options: float) -> None:
    """
    Raise for the first branch flip (see :func:`find_branch_flips` for the options).

    :raises BranchFlipViolation: naming the joint, the time and the segment.
    """
    flips = find_branch_flips(samples, positions, joints, **options)
    if flips:
        f = flips[0]
        raise BranchFlipViolation(f.joint, f.step, f.expected, f.time, f.sample, f.segment)


__all__ = ['BranchFlip', 'BranchFlipViolation', 'Box', 'HalfSpace', 'JointLimitViolation',
           'JointLimiter', 'LimitViolation', 'Sphere', 'WorkspaceLimiter', 'Zone',
           'ZoneConfigError', 'ZoneViolation', 'check_branch_flips', 'find_branch_flips',
           'zone_from_config', 'zones_from_config']
