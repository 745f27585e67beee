"""
Where a free body rests on its feet: the stance a pose stands on, decided from contact.

A legged robot on level ground rests on a face of its feet's lower hull: the plane below which
no point of a foot lies and above whose contact patch its centre of mass stands. As the legs
move the body rocks from one such face to the next (onto a fourth hoof), or finds none: then it
tips over. The feet are their soles' points (a hoof's collision mesh, its lowest rim), so a
sole on its edge supports at the edge.

:func:`rest_stance` finds the face for every pose of a motion at once (numpy): each foot's
lowest point along the current vertical, the planes of :func:`~sweetie_motion.checks.balance.
support_planes` through them, the ones that leave every sole point above and hold the centre
of mass over their contact patch, and of these the one nearest the vertical; twice, the
second time along the face found. :func:`support_depth` measures a point's margin inside a
contact patch. :func:`tip_over` plays the body's rotation about the patch's edge under the
zero-moment point's excursions: a short one rocks the body and it settles, a long one tips
it over. Pure numpy.
"""

from dataclasses import dataclass
from itertools import combinations
from typing import Optional, Tuple

import numpy as np

from sweetie_motion.checks.balance import fit_plane, ground_frame

#: standard gravity [m/s^2]
GRAVITY = 9.81
#: a sole point this close to the floor touches it [m] (the physics sees a foot within 2 mm)
CONTACT = 0.002
#: a sole this little above the face the body rests on catches it when it rocks [m] (about
#: 6 degrees over a hoof's distance from the others): the body tips over only beyond them
ROCK_LIFT = 0.015
#: directions the support function of a contact patch is taken in (every 30 degrees)
DIRECTIONS = np.stack([np.cos(np.arange(12) * np.pi / 6),
                       np.sin(np.arange(12) * np.pi / 6)], axis=1)


@dataclass(frozen=True)
class RestStance:
    """
    The faces a motion's poses rest on, in the body's frame.

    :param origin: (n, 3) a point of the floor; :param normal: (n, 3) the floor's normal
        towards the body (the vertical).
    :param standing: (n,) a face holds the centre of mass over its contact patch.
    :param touching: (n, legs) the feet on the floor; :param contacts: (n, legs, 3) each
        foot's contact point (its touching sole points' mean; the lowest point if off).
    :param patch: (n, legs, m) which sole points touch the floor.
    :param rock: (n, legs, m) the sole points the body can rock onto (touching, or of another
        foot at most :data:`ROCK_LIFT` above the floor): what it must tip beyond to fall.
    """

    origin: np.ndarray
    normal: np.ndarray
    standing: np.ndarray
    touching: np.ndarray
    contacts: np.ndarray
    patch: np.ndarray
    rock: np.ndarray


def rest_stance(soles: np.ndarray, com: np.ndarray, candidates: np.ndarray,
                up: np.ndarray, passes: int = 3) -> RestStance:
    """
    Return the face each pose rests on (or, where none holds it, the one it tips from).

    The faces: through three feet, or through two (two flat soles hold a body whose centre
    of mass stands over them); each through its feet's lowest points along its own normal,
    found by taking them again along the plane they make (``passes`` times: a flat sole
    meets a face at its corners, not at the point lowest along the vertical).

    :param soles: (n, legs, m, 3) the feet's sole points in the body's frame [m].
    :param com: (n, 3) the centre of mass in the same frame [m].
    :param candidates: (n, legs) the feet that may carry the body.
    :param up: (n, 3) the vertical to start from (the plane of the feet: a standing pose).
    """
    n, legs = soles.shape[:2]
    rows = np.arange(n)
    vertical = up / np.linalg.norm(up, axis=1, keepdims=True)
    combos = [list(c) for c in combinations(range(legs), 3)] + \
        [list(c) for c in combinations(range(legs), 2)]
    origins, normals = _faces(soles, com, combos, vertical, passes)
    usable = np.stack([candidates[:, combo].all(axis=1) for combo in combos], axis=1)
    # nothing of any candidate sole below the face
    flat = soles.reshape(n, -1, 3)
    above = (np.matmul(normals, flat.transpose(0, 2, 1)) - np.einsum(
        'nki,nki->nk', origins, normals)[:, :, None]).reshape(n, -1, legs, soles.shape[2])
    usable &= ~((above < -CONTACT) & candidates[:, None, :, None]).any(axis=(2, 3))
    patch = (above <= CONTACT) & candidates[:, None, :, None]
    depth = _face_depths(soles, com, normals, patch, usable)
    holds = usable & (depth >= 1e-4)
    best = _continuous(normals, holds, usable, vertical[0])
    score = np.where(usable, 0.0, -np.inf)
    none = ~np.isfinite(score[rows, best])
    standing = holds[rows, best]
    origin, normal = origins[rows, best], normals[rows, best]
    chosen = patch[rows, best] & ~none[:, None, None]
    normal = np.where(none[:, None], vertical, normal)
    touching = chosen.any(axis=2)
    weights = chosen.astype(float)
    counts = np.maximum(weights.sum(axis=2), 1.0)
    contacts = np.einsum('nlm,nlmi->nli', weights, soles) / counts[:, :, None]
    lowest_points = _lowest(soles, normal).reshape(contacts.shape)
    contacts = np.where(touching[:, :, None], contacts, lowest_points)
    # another hoof a little above the floor catches the body (a sole's own rim does not: it
    # would roll the hoof on its edge)
    rock = chosen | ((above[rows, best] <= ROCK_LIFT) & (candidates & ~touching)[:, :, None]
                     & ~none[:, None, None])
    return RestStance(origin, normal, standing, touching, contacts, chosen, rock)


def _continuous(normals: np.ndarray, holds: np.ndarray, usable: np.ndarray,
                start: np.ndarray) -> np.ndarray:
    """
    Return the face each pose rests on (n,).

    Of those that hold it, the one nearest the face of the pose before (a body stays on the
    face it stands on while that holds it); where none holds it, the usable face nearest (the
    one it tips from).
    """
    best = np.empty(len(normals), dtype=int)
    previous = start
    for row in range(len(normals)):
        facing = normals[row] @ previous
        score = np.where(holds[row], 10.0 + facing, np.where(usable[row], facing, -np.inf))
        best[row] = int(np.argmax(score))
        if np.isfinite(score[best[row]]):
            previous = normals[row, best[row]]
    return best


def _lowest(soles: np.ndarray, normal: np.ndarray, count: int = 1) -> np.ndarray:
    """Return each foot's ``count`` points lowest along ``normal`` (n, legs * count, 3)."""
    heights = np.einsum('nlmi,ni->nlm', soles, normal)
    order = np.argsort(heights, axis=2)[:, :, :count]
    low = np.take_along_axis(soles, order[..., None], axis=2)
    return low.reshape(len(soles), -1, 3)


def _faces(soles: np.ndarray, com: np.ndarray, combos: list, vertical: np.ndarray,
           passes: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return the faces through the feet of each combo (origins, normals (n, faces, 3)).

    The plane of each foot's two lowest points: a flat sole lies on it with its edge, two
    flat soles make a face of their own (a pony on a diagonal pair of flat hooves stands).
    The combos of one size at once (numpy): each pass takes every combo's feet's lowest
    points along its own normal, and fits their planes.
    """
    n = len(com)
    origins = np.zeros((n, len(combos), 3))
    normals = np.zeros((n, len(combos), 3))
    for size in sorted({len(c) for c in combos}):
        which = [k for k, c in enumerate(combos) if len(c) == size]
        feet = np.array([combos[k] for k in which])                    # (C, size)
        group = soles[:, feet]                                         # (n, C, size, m, 3)
        count = len(which)
        above = np.repeat(com, count, axis=0)                          # (n * C, 3)
        normal = np.repeat(vertical, count, axis=0)
        for _ in range(passes):
            up = normal.reshape(n, count, 1, 1, 3)
            heights = group[..., 0] * up[..., 0] + group[..., 1] * up[..., 1] + \
                group[..., 2] * up[..., 2]
            order = np.argsort(heights, axis=3)[..., :2]
            low = np.take_along_axis(group, order[..., None], axis=3)
            origin, normal = fit_plane(low.reshape(n * count, 2 * size, 3), above)
        origins[:, which] = origin.reshape(n, count, 3)
        normals[:, which] = normal.reshape(n, count, 3)
    return origins, normals


def _face_depths(soles: np.ndarray, com: np.ndarray, normals: np.ndarray,
                 patch: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """
    Return the centre of mass's margin inside each face's contact patch (n, faces) [m].

    Only where the face is usable (elsewhere -inf): a face below which a sole lies holds
    nothing, and its patch need not be measured.
    """
    out = np.full(patch.shape[:2], -np.inf)
    for face in range(patch.shape[1]):
        rows = np.flatnonzero(usable[:, face])
        if len(rows):
            out[rows, face] = support_depth(soles[rows], com[rows], normals[rows, face],
                                            patch[rows, face])
    return out


def support_depth(soles: np.ndarray, point: np.ndarray, normal: np.ndarray,
                  patch: np.ndarray) -> np.ndarray:
    """
    Return how deep a point lies inside the contact patch seen along the normal [m].

    The patch is the convex hull of the touching sole points; its depth at a point is the
    least of its support function less the point over the directions of the plane
    (negative outside: minus the distance to the patch), taken every 30 degrees (the figure
    is within 4 % of the exact one: 1 / cos 15 deg).

    :param soles: (n, legs, m, 3); :param point: (n, 3); :param normal: (n, 3);
    :param patch: (n, legs, m) the touching points. A pose without any gives -inf.
    """
    n = len(point)
    axes = ground_frame(normal)[:, :2]                              # (n, 2, 3)
    # only the touching points (a few of each sole): the others cannot be the patch's edge
    rows, columns = np.nonzero(patch.reshape(n, -1))
    out = np.full(n, -np.inf)
    if not len(rows):
        return out
    # each point in the plane, then along each direction
    offset = soles.reshape(n, -1, 3)[rows, columns] - point[rows]   # (P, 3)
    flat = np.einsum('pi,pai->pa', offset, axes[rows])              # (P, 2)
    reach = flat @ DIRECTIONS.T                                     # (P, D)
    # the rows come in order: the farthest of each pose's points, in each direction
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    out[rows[starts]] = np.maximum.reduceat(reach, starts, axis=0).min(axis=1)
    return out


def tip_over(margin: np.ndarray, height: np.ndarray, times: np.ndarray, tilt: float,
             after: float = 1.5) -> Tuple[np.ndarray, Optional[Tuple[int, float]]]:
    """
    Return the body's rotation about its support's edge (n,) [rad], and where it tips over.

    The body turns about the edge the zero-moment point left, as an inverted pendulum of its
    centre of mass's height h: theta'' = g (e + h theta) / h^2, with e how far the point is
    beyond the edge (-margin); at rest (theta 0) it stays while the point is inside, and it
    settles back when the edge's moment turns. A rock onto a fourth hoof is a new face, not
    an excursion; a short excursion turns the body a little and it lands again. The last pose
    is held ``after`` seconds more (the robot holds it after the motion).

    :param margin: (n,) the zero-moment point's margin inside the stance [m].
    :param height: (n,) the centre of mass above the floor [m].
    :param times: (n,) uniformly sampled [s].
    :param tilt: the rotation that is a fall [rad].
    :return: the rotation, and (first row of the excursion that ends in a fall, the time the
        rotation passes ``tilt`` [s]), None if the body stays up.
    """
    n = len(times)
    step = float(times[1] - times[0]) if n > 1 else 0.01
    extra = int(np.ceil(after / step))
    theta = np.zeros(n)
    angle = rate = 0.0
    began = -1
    for row in range(n + extra):
        k = min(row, n - 1)
        h = max(float(height[k]), 1e-3)
        push = -float(margin[k]) + h * angle
        if angle <= 0.0 and push <= 0.0:
            angle = rate = 0.0
            began = -1
        else:
            if began < 0:
                began = k
            rate += GRAVITY * push / (h * h) * step
            angle = max(angle + rate * step, 0.0)
            if angle == 0.0:
                rate = 0.0
        if row < n:
            theta[row] = angle
        if angle > tilt:
            return theta, (began, float(times[0]) + row * step)
    return theta, None


@dataclass(frozen=True)
class Standing:
    """
    How a motion's poses stand, pose by pose (body frame, times uniformly sampled).

    :param rest: the face each pose rests on (:func:`rest_stance`).
    :param com: (n, 3) the centre of mass; :param centres: (n, links, 3) the links' ones.
    :param com_margin: (n,) its margin inside the contact patch [m] (static balance).
    :param zmp: (n, 3) the zero-moment point on the floor; :param zmp_margin: (n,) its margin
        (dynamic balance: the motion's accelerations).
    :param rocking: (n,) the zero-moment point's margin inside the feet the body can rock
        onto: what it must tip beyond to fall [m].
    :param height: (n,) the centre of mass above the floor [m].
    :param theta: (n,) the body's rotation about the edge it tips over [rad] (0: at rest).
    :param fall: (row the tip began, when it passed the fall's tilt [s]), None: it stays up.
    :param lifted: (n, legs) feet on the floor that the motion's flags lift.
    :param planned: (n,) the angle between the face it rests on and the one its flags plan
        [rad] (0 without flags).
    :param held: no leg supports by the flags: the body is held (on a stand).
    :param anchors: (n, legs, 3) each foot's contact link origin (where a hoof stands).
    """

    times: np.ndarray
    rest: RestStance
    com: np.ndarray
    centres: np.ndarray
    com_margin: np.ndarray
    zmp: np.ndarray
    zmp_margin: np.ndarray
    rocking: np.ndarray
    height: np.ndarray
    theta: np.ndarray
    fall: Optional[Tuple[int, float]]
    lifted: np.ndarray
    planned: np.ndarray
    held: bool
    anchors: np.ndarray

    @property
    def stands(self) -> np.ndarray:
        """Return the poses that stand: at rest on a face that holds them, not tipping."""
        return self.rest.standing & (self.theta <= 0.0) & (not self.held)


class Footing:
    """
    The soles of a legged robot's feet and where its poses stand on them.

    :param balance: the robot's masses and feet (contact points).
    :param soles: leg -> its sole's points (m, 3) in the frame of the pinocchio joint its
        contact link moves with [m] (the lowest rim of the foot's collision mesh, or a disc).
    :param tilt: the rotation about a support's edge that is a fall [rad].
    """

    def __init__(self, balance, soles: dict, tilt: float, margin: float = 0.0) -> None:
        self.balance = balance
        self.legs = list(balance.legs)
        self.tilt = float(tilt)
        self.margin = float(margin)
        count = max(len(points) for points in soles.values())
        # every foot the same number of points (a shorter one repeats its first)
        self._points = np.stack([np.concatenate((p, np.repeat(p[:1], count - len(p), axis=0)))
                                 for p in (np.asarray(soles[leg], dtype=float)
                                           for leg in self.legs)])
        self._joints = balance._feet.joints

    def soles(self, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
        """Return the sole points (n, legs, m, 3) in the body's frame for joint placements."""
        turn = rotation[:, self._joints]                                  # (n, legs, 3, 3)
        return np.einsum('nlij,lmj->nlmi', turn, self._points) + \
            translation[:, self._joints][:, :, None, :]

    def judge(self, positions: np.ndarray, times: np.ndarray,
              flags: Optional[np.ndarray] = None) -> Standing:
        """
        Return how the poses stand: the face, the margins, the tip-over, the flags' plan.

        :param flags: (n, legs) the support the motion's flags give (None: no flags); a leg
            without a flag of its own is True there.
        """
        balance = self.balance
        rotation, translation = balance.robot.placements(positions)
        soles = self.soles(rotation, translation)
        centres = balance._masses.centres.place(rotation, translation)
        com = balance._masses.centre_of_mass(centres)
        n, legs = soles.shape[:2]
        everyone = np.ones((n, legs), dtype=bool)
        feet = balance._feet.place(rotation, translation)
        up = np.tile([0.0, 0.0, 1.0], (n, 1))
        rest = rest_stance(soles, com, everyone, up)
        held = flags is not None and not flags.any()
        com_margin = support_depth(soles, com, rest.normal, rest.patch)
        zmp = self._zero_moment_point(centres, com, rest, times)
        zmp_margin = support_depth(soles, zmp, rest.normal, rest.patch)
        # what the body must tip beyond to fall: the feet it can rock onto too
        rocking = support_depth(soles, zmp, rest.normal, rest.rock)
        height = np.einsum('ni,ni->n', com - rest.origin, rest.normal)
        # a stance holds the body with the margin to spare (the servos give under the load)
        theta, fall = tip_over(rocking - self.margin, height, times, self.tilt) \
            if not held else (np.zeros(n), None)
        lifted = np.zeros((n, legs), dtype=bool)
        planned = np.zeros(n)
        if flags is not None and not held:
            plan = rest_stance(soles, com, flags, rest.normal)
            # the body needs a foot the flags lift where the flagged ones do not hold it
            needed = ~plan.standing & (flags.sum(axis=1) >= 3)
            lifted = rest.touching & ~flags & needed[:, None]
            angle = np.arccos(np.clip(np.einsum('ni,ni->n', plan.normal, rest.normal), -1, 1))
            planned = np.where(needed, angle, 0.0)
        return Standing(times, rest, com, centres, com_margin, zmp, zmp_margin, rocking, height,
                        theta,
                        fall, lifted, planned, held, feet)

    def _zero_moment_point(self, centres: np.ndarray, com: np.ndarray, rest: RestStance,
                           times: np.ndarray) -> np.ndarray:
        """Return the zero-moment point (n, 3) on each pose's floor, in the body's frame."""
        axes = ground_frame(rest.normal)                                 # rows: x, y, z
        acceleration = np.zeros_like(centres)
        if len(times) >= 3:
            step = float(times[1] - times[0])
            acceleration = np.gradient(np.gradient(centres, step, axis=0), step, axis=0)
        local = np.einsum('nij,nkj->nki', axes, centres - rest.origin[:, None, :])
        com_local = np.einsum('nij,nj->ni', axes, com - rest.origin)
        flat = self.balance.zero_moment_point(local, com_local,
                                              np.einsum('nij,nkj->nki', axes, acceleration))
        return rest.origin + np.einsum('nia,na->ni', axes[:, :2].transpose(0, 2, 1), flat)


def sole_points(robot, legs: dict, meshes: dict, radius: float,
                rim: float = 0.01) -> dict:
    """
    Return leg -> its sole's points (m, 3) in the frame of its contact link's joint [m].

    The points of the foot's collision meshes (the links on the contact link's joint) no
    higher than ``rim`` above their lowest along the contact link's down (-z): the sole and
    its rim; a foot without a mesh is a disc of ``radius`` around its contact point (eight
    points in the contact link's x-y plane).
    """
    import pinocchio
    model = robot.model
    soles = {}
    for leg, contact in legs.items():
        frame = model.frames[robot.frame(contact)]
        down = -np.asarray(frame.placement.rotation)[:, 2]
        points = [np.asarray(f.placement.act(v)) for f in model.frames
                  if f.parentJoint == frame.parentJoint and f.name in meshes
                  and f.type == pinocchio.FrameType.BODY for v in meshes[f.name].vertices]
        if points:
            cloud = np.unique(np.array(points), axis=0)
            depth = cloud @ down
            soles[leg] = cloud[depth >= depth.max() - rim]
        else:
            turns = np.arange(8) * np.pi / 4
            disc = np.stack((radius * np.cos(turns), radius * np.sin(turns),
                             np.zeros(8)), axis=1)
            soles[leg] = disc @ np.asarray(frame.placement.rotation).T + \
                np.asarray(frame.placement.translation)
    return soles
