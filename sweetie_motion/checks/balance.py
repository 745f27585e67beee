"""
Balance of a sampled motion on its supporting feet.

The centre of mass (static) and the zero-moment point (dynamic) against the support polygon.

Assumptions, as the checks use them: the ground is level and the supporting feet stand on it,
so gravity is normal to the plane of the supporting feet (a bow tilts the body, not the
ground); the body's own motion follows from the legs' and is left out (the body is taken as
still while the legs move), and each link is a point mass at its centre of mass (its own
rotational inertia is left out of the angular momentum: the unit tests measure the zero-moment
point against pinocchio's full centroidal dynamics, within 3 mm on a quick swing). A
foot is a disc of ``foot_radius`` around its contact point, so the support polygon is the
convex hull of the supporting contact points grown by that radius.
"""

from dataclasses import dataclass
from itertools import combinations
from typing import Dict, List, Optional, Sequence

import numpy as np

from sweetie_motion.checks.robot import CheckRobot

#: standard gravity [m/s^2]
GRAVITY = 9.81


@dataclass(frozen=True)
class BalanceMargin:
    """Where a point came closest to (or furthest beyond) the edge of the support polygon."""

    which: str          #: 'centre of mass' or 'zero-moment point'
    margin: float       #: [m] inside the polygon's edge; negative: outside
    time: float         #: [s]
    support: tuple      #: the supporting legs at that moment

    def describe(self) -> str:
        """Say it in words for a log or a goal's result."""
        where = 'inside' if self.margin >= 0 else 'outside'
        legs = ', '.join(self.support) or 'none'
        return (f'the {self.which} is {abs(self.margin) * 1e3:.1f} mm {where} the support '
                f'polygon at t = {self.time:.2f} s (supporting: {legs})')


def polygon_depth(point: np.ndarray, feet: np.ndarray) -> np.ndarray:
    """
    Return how deep each point lies inside the convex hull of its feet [m] (negative: outside).

    :param point: (n, 2) points; :param feet: (n, k, 2) the contact points of each pose.
    One foot: minus the distance to it; two: minus the distance to their segment.
    """
    n, k = feet.shape[:2]
    if k == 0:
        return np.full(n, -np.inf)
    if k == 1:
        return -np.linalg.norm(point - feet[:, 0], axis=1)
    outside = np.full(n, np.inf)   # distance to the nearest hull edge, when outside
    inside = np.full(n, np.inf)    # distance to the nearest hull edge line, when inside
    is_outside = np.zeros(n, dtype=bool)
    for a, b in combinations(range(k), 2):
        start, end = feet[:, a], feet[:, b]
        edge = end - start
        length = np.linalg.norm(edge, axis=1)
        normal = np.stack((-edge[:, 1], edge[:, 0]), axis=1) / np.maximum(length, 1e-12)[:, None]
        others = [c for c in range(k) if c not in (a, b)]
        if others:
            sides = np.stack([np.einsum('ni,ni->n', feet[:, c] - start, normal) for c in others],
                             axis=1)
            hull_edge = (sides >= -1e-12).all(axis=1) | (sides <= 1e-12).all(axis=1)
            inward = np.where((sides <= 1e-12).all(axis=1), -1.0, 1.0)
        else:
            hull_edge = np.ones(n, dtype=bool)
            inward = np.ones(n)
        signed = np.einsum('ni,ni->n', point - start, normal) * inward
        along = np.clip(np.einsum('ni,ni->n', point - start, edge)
                        / np.maximum(length ** 2, 1e-24), 0.0, 1.0)
        segment = np.linalg.norm(point - (start + along[:, None] * edge), axis=1)
        outside = np.where(hull_edge, np.minimum(outside, segment), outside)
        if others:
            is_outside |= hull_edge & (signed < 0)
            inside = np.where(hull_edge, np.minimum(inside, signed), inside)
    if k == 2:
        return -outside
    return np.where(is_outside, -outside, inside)


@dataclass(frozen=True)
class Stance:
    """Where a motion's feet, masses and ground are, pose by pose, in the base frame [m]."""

    feet: np.ndarray        #: (n, legs, 3) the contact points
    centres: np.ndarray     #: (n, links, 3) the links' centres of mass
    com: np.ndarray         #: (n, 3) the robot's centre of mass
    origin: np.ndarray      #: (n, 3) a point of the ground
    normal: np.ndarray      #: (n, 3) the ground's normal, towards the body: the vertical
    support: np.ndarray     #: (n, legs) booleans: which legs support


class BalanceModel:
    """
    The masses and feet of a legged robot, for the balance of sampled motions.

    :param robot: the robot's models.
    :param legs: leg name -> its contact link (the chain property ``contact``).
    :param foot_radius: radius of a foot's contact disc [m].
    """

    def __init__(self, robot: CheckRobot, legs: dict, foot_radius: float) -> None:
        self.robot = robot
        self.legs = list(legs)
        self.foot_radius = float(foot_radius)
        self._feet = robot.contacts(list(legs.values()))
        self._masses = robot.masses
        self.mass = robot.masses.total

    def feet(self, positions: np.ndarray) -> np.ndarray:
        """Return the contact points (poses, legs, 3) in the base frame [m]."""
        return self._feet.place(*self.robot.placements(positions))

    def stance(self, positions: np.ndarray, support: np.ndarray) -> Stance:
        """Return where the feet, the masses and the ground are at each pose."""
        rotation, translation = self.robot.placements(positions)
        feet = self._feet.place(rotation, translation)
        centres = self._masses.centres.place(rotation, translation)
        com = self._masses.centre_of_mass(centres)
        origin, normal = self.ground(feet, com, support)
        return Stance(feet, centres, com, origin, normal, support)

    def default_support(self, feet: np.ndarray, height: float) -> np.ndarray:
        """
        Return which legs support (poses, legs), for a motion that does not say it.

        A leg supports unless its foot is more than ``height`` above the plane of the other
        feet (towards the body): a leg lifted off the ground; one leg at most (two lifted legs
        leave no plane to tell them by: such a motion says its support). A bow lowers the
        front feet in the body's frame, but all four stay on one plane: the body tilts, every
        leg supports.
        """
        n, count = feet.shape[:2]
        support = np.ones((n, count), dtype=bool)
        if count < 4:
            return support
        heights = np.empty((n, count))
        for leg in range(count):
            others = np.delete(feet, leg, axis=1)
            origin, normal = fit_plane(others, feet.mean(axis=1) + np.array([0.0, 0.0, 1.0]))
            heights[:, leg] = np.einsum('ni,ni->n', feet[:, leg] - origin, normal)
        # the foot highest in the body's frame is the one that may be lifted (one at most: the
        # other three then make the ground); by the plane alone, one foot up and the opposite
        # one down look alike
        highest = np.argmax(feet[:, :, 2], axis=1)
        lifted = heights[np.arange(n), highest] > height
        support[np.nonzero(lifted)[0], highest[lifted]] = False
        return support

    def margins(self, stance: Stance, times: np.ndarray) -> List[BalanceMargin]:
        """
        Return the smallest margin of the centre of mass and of the zero-moment point.

        :param stance: the motion's poses (:meth:`stance`), uniformly sampled in ``times``
            (the accelerations are the positions' second differences).
        """
        results = []
        times = np.asarray(times, dtype=float)
        support = stance.support
        for which, depth in self.series(stance, times).items():
            row = int(np.argmin(depth))
            legs = tuple(leg for leg, on in zip(self.legs, support[row]) if on)
            results.append(BalanceMargin(which, float(depth[row]), float(times[row]), legs))
        return results

    def series(self, stance: Stance, times: np.ndarray) -> Dict[str, np.ndarray]:
        """Return the margin [m] at each pose of the centre of mass and the zero-moment point."""
        times = np.asarray(times, dtype=float)
        feet, bodies, com, origin = stance.feet, stance.centres, stance.com, stance.origin
        support = stance.support
        axes = ground_frame(stance.normal)
        ground = lambda points: np.einsum('nij,n...j->n...i', axes,   # noqa: E731
                                          points - origin.reshape(len(origin), *(
                                              [1] * (points.ndim - 2)), 3))
        com_g, bodies_g, feet_g = ground(com), ground(bodies), ground(feet)
        # accelerations in the body's frame (the ground frame jumps where the support changes)
        acceleration = np.zeros_like(bodies)
        if len(times) >= 3:
            step = float(times[1] - times[0])
            acceleration = np.gradient(np.gradient(bodies, step, axis=0), step, axis=0)
        zmp = self.zero_moment_point(bodies_g, com_g,
                                     np.einsum('nij,nkj->nki', axes, acceleration))
        return {which: self._depths(point, feet_g[:, :, :2], support)
                for which, point in (('centre of mass', com_g[:, :2]),
                                     ('zero-moment point', zmp))}

    def ground(self, feet: np.ndarray, com: np.ndarray,
               support: np.ndarray) -> 'tuple[np.ndarray, np.ndarray]':
        """
        Return the ground plane of each pose (origin, unit normal towards the body).

        The plane of the supporting feet (of all feet, with fewer than three supporting); it is
        level: the normal is the vertical, gravity points against it.
        """
        planar = support.sum(axis=1) >= 3
        weights = np.where(planar[:, None], support, True).astype(float)
        return fit_plane(feet, com, weights)

    def zero_moment_point(self, bodies: np.ndarray, com: np.ndarray,
                          acceleration: np.ndarray) -> np.ndarray:
        """
        Return the zero-moment point (poses, 2) on the ground plane z = 0.

        :param bodies: the links' centres of mass (poses, links, 3) in the ground frame.
        :param com: the robot's centre of mass (poses, 3) in the ground frame.
        :param acceleration: the links' accelerations (poses, links, 3) in the ground frame.
        """
        masses = self._masses.masses
        com_acceleration = np.einsum('nki,k->ni', acceleration, masses) / self.mass
        # the rate of the angular momentum about the centre of mass, of point masses
        lever = bodies - com[:, None, :]
        momentum_rate = np.einsum('k,nki->ni', masses, np.cross(lever, acceleration))
        vertical = np.maximum(com_acceleration[:, 2] + GRAVITY, 1e-6)
        force = self.mass * vertical
        height = com[:, 2]
        x = com[:, 0] - height * com_acceleration[:, 0] / vertical - momentum_rate[:, 1] / force
        y = com[:, 1] - height * com_acceleration[:, 1] / vertical + momentum_rate[:, 0] / force
        return np.stack((x, y), axis=1)

    def _depths(self, point: np.ndarray, feet: np.ndarray, support: np.ndarray) -> np.ndarray:
        depth = np.full(len(point), -np.inf)
        patterns = {tuple(row) for row in support.tolist()}
        for pattern in patterns:
            rows = (support == np.array(pattern)).all(axis=1)
            legs = np.nonzero(pattern)[0]
            depth[rows] = polygon_depth(point[rows], feet[rows][:, legs]) + self.foot_radius
        return depth


def fit_plane(points: np.ndarray, above: np.ndarray,
              weights: Optional[np.ndarray] = None) -> 'tuple[np.ndarray, np.ndarray]':
    """
    Return a plane (origin (n, 3), unit normal (n, 3)) through points (n, k, 3).

    The normal is the sum of the normals of every triangle of three of the points, each
    turned to the side of ``above`` (n, 3): the plane through three points, an average plane
    through four (no least squares: a closed form for a thousand poses at once). ``weights``
    (n, k) of 0 leave a point out. Fewer than three points (or in a line): the base frame's z.
    """
    n, k = points.shape[:2]
    if weights is None:
        weights = np.ones((n, k))
    total = np.maximum(weights.sum(axis=1), 1e-12)
    origin = np.einsum('nk,nki->ni', weights, points) / total[:, None]
    normal = np.zeros((n, 3))
    if k >= 3:
        # every triangle at once (numpy), added in turn
        a, b, c = np.array(list(combinations(range(k), 3))).T
        u, v = points[:, b] - points[:, a], points[:, c] - points[:, a]       # (n, T, 3)
        triangle = np.stack((u[..., 1] * v[..., 2] - u[..., 2] * v[..., 1],
                             u[..., 2] * v[..., 0] - u[..., 0] * v[..., 2],
                             u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]), axis=2)
        lever = above[:, None, :] - points[:, a]
        side = triangle[..., 0] * lever[..., 0] + triangle[..., 1] * lever[..., 1] + \
            triangle[..., 2] * lever[..., 2]
        used = weights[:, a] * weights[:, b] * weights[:, c]
        signed = triangle * (np.where(side < 0, -1.0, 1.0) * used)[..., None]
        for t in range(len(a)):
            normal += signed[:, t]
    length = np.linalg.norm(normal, axis=1)
    flat = length < 1e-9
    normal = np.where(flat[:, None], np.array([0.0, 0.0, 1.0]),
                      normal / np.maximum(length, 1e-12)[:, None])
    return origin, normal


def ground_frame(normal: np.ndarray) -> np.ndarray:
    """Return rotations (n, 3, 3) whose rows are x, y, z axes with z = ``normal`` (n, 3)."""
    x = np.cross(np.array([0.0, 1.0, 0.0]), normal)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(normal, x)
    return np.stack((x, y, normal), axis=1)


def support_columns(legs: Sequence[str], flags: dict, times: np.ndarray,
                    default: np.ndarray) -> np.ndarray:
    """
    Return the support (poses, legs) of a motion: its flags where it has them, else ``default``.

    :param flags: leg -> (keyframe times, values): a flag holds from its keyframe to the next
        (values > 0.5: supporting), as the trajectory controller publishes it.
    """
    support = default.copy()
    for column, leg in enumerate(legs):
        if leg not in flags:
            continue
        keys, values = (np.asarray(v, dtype=float) for v in flags[leg])
        index = np.clip(np.searchsorted(keys, times, side='right') - 1, 0, len(keys) - 1)
        support[:, column] = values[index] > 0.5
    return support


def support_planes(feet: np.ndarray, com: np.ndarray, candidates: np.ndarray,
                   tolerance: float = 1e-3) -> 'tuple[np.ndarray, np.ndarray, np.ndarray]':
    """
    Return the planes a free body can stand on in each pose: where its feet meet the floor.

    A plane through three candidate feet that leaves none of them below it (a face of the
    feet's hull the floor can touch: the body rests or rocks on it), or a plane through two
    candidate feet, turned so that the centre of mass is straight above their line, that
    leaves none below and has the centre of mass between the two feet (the body balances on
    them: a trot on a diagonal pair). A pose can stand on any of them; one with fewer than
    two candidates has none.

    :param feet: (n, k, 3) contact points in the body's frame [m].
    :param com: (n, 3) the centre of mass in the same frame [m].
    :param candidates: (n, k) the feet that may carry the body (the supporting ones).
    :param tolerance: a foot this far below a plane still leaves it standable [m].
    :return: origins (n, m, 3), unit normals towards the body (n, m, 3), and which of the m
        planes each pose can stand on (n, m).
    """
    n, k = feet.shape[:2]
    origins, normals, usable = [], [], []
    for trio in combinations(range(k), 3):
        o, nrm = fit_plane(feet[:, list(trio)], com)
        origins.append(o)
        normals.append(nrm)
        usable.append(candidates[:, list(trio)].all(axis=1) & _nothing_below(
            feet, o, nrm, candidates, tolerance))
    for a, b in combinations(range(k), 2):
        line = feet[:, b] - feet[:, a]
        length = np.maximum(np.linalg.norm(line, axis=1), 1e-12)
        unit = line / length[:, None]
        along = np.einsum('ni,ni->n', com - feet[:, a], unit)
        across = com - feet[:, a] - along[:, None] * unit
        nrm = across / np.maximum(np.linalg.norm(across, axis=1), 1e-12)[:, None]
        origins.append(feet[:, a])
        normals.append(nrm)
        usable.append(candidates[:, a] & candidates[:, b] & (along >= 0) & (along <= length)
                      & _nothing_below(feet, feet[:, a], nrm, candidates, tolerance))
    return np.stack(origins, axis=1), np.stack(normals, axis=1), np.stack(usable, axis=1)


def _nothing_below(feet: np.ndarray, origin: np.ndarray, normal: np.ndarray,
                   candidates: np.ndarray, tolerance: float) -> np.ndarray:
    heights = np.einsum('nki,ni->nk', feet - origin[:, None, :], normal)
    return ~((heights < -tolerance) & candidates).any(axis=1)
