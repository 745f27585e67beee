"""
Self-collision of a sampled motion.

The closest approach of every pair of links that must not touch, with coal's exact distances
where it matters.

The geometry is the URDF's ``<collision>`` elements (pinocchio builds them as coal shapes).
The pairs that may touch are left out, as MoveIt does: links on the same pinocchio joint (fixed
joints merge them), a link and its parent, and the pairs an SRDF's ``disable_collisions`` names
(MoveIt's convention, so a MoveIt config's SRDF works as it is).

Speed: each shape has a bounding sphere; for all poses at once (numpy) the spheres give a lower
bound of every pair's distance, and coal computes the exact distance only where that bound is
below the margin — elsewhere the pair is clear whatever the exact figure.
"""

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple
from xml.etree import ElementTree

import coal
import numpy as np
import pinocchio

from sweetie_motion.checks.meshes import capsule_of, LinkMesh
from sweetie_motion.checks.robot import BatchKinematics, CheckRobot
from sweetie_motion.errors import UrdfError

#: a coal collision geometry (coal ships no type stubs)
CoalShape = Any
#: a pinocchio.GeometryObject (pinocchio ships no type stubs)
GeometryObject = Any


@dataclass(frozen=True)
class PairApproach:
    """The closest approach of two links during a motion (negative: they overlap)."""

    link_a: str
    link_b: str
    distance: float   #: [m]
    time: float       #: [s] from the motion's start
    #: coal's distance (False: a lower bound, for a pair farther than the closest ones)
    exact: bool = True

    def describe(self) -> str:
        """Say it in words for a log or a goal's result."""
        if self.distance <= 0:
            # meshes that cut each other have no distance, boxes an overlap depth
            what = 'touch' if self.distance == 0 else \
                f'overlap by {abs(self.distance) * 1e3:.1f} mm'
            return f'{self.link_a} and {self.link_b} {what} at t = {self.time:.2f} s'
        return (f'{self.link_a} and {self.link_b} come within {self.distance * 1e3:.1f} mm '
                f'at t = {self.time:.2f} s')


@dataclass(frozen=True)
class Obstacle:
    """
    A shape fixed to a link (the base, by default) that the robot's links must keep clear of.

    A forbidden zone of the workspace made a collision object (:func:`zone_obstacles`): the
    checks then keep every link, not only the tool, out of it.

    :param name: how the findings name it; :param shape: a coal geometry; :param position:
        its centre in the link's frame [m] (3,); :param link: the link it is fixed to ('' : the
        URDF's root); :param plane: a half-space's (point, normal into it) in the link's frame.
    """

    name: str
    shape: CoalShape
    position: Tuple[float, float, float] = (0.0, 0.0, 0.0)
    link: str = ''
    plane: Optional[Tuple[Tuple[float, ...], Tuple[float, ...]]] = None


def zone_obstacles(zones: Sequence[Any], link: str = '') -> List[Obstacle]:
    """
    Return forbidden zones (boxes, spheres, half-spaces of a workspace limiter) as obstacles.

    :param link: the frame the zones are given in (a chain's first link; '' : the root).
    """
    obstacles = []
    for zone in zones:
        if zone.kind == 'box':
            low, high = np.asarray(zone.minimum, float), np.asarray(zone.maximum, float)
            obstacles.append(Obstacle(zone.name, coal.Box(*(high - low)),
                                      tuple((low + high) / 2), link))
        elif zone.kind == 'sphere':
            obstacles.append(Obstacle(zone.name, coal.Sphere(float(zone.radius)),
                                      tuple(np.asarray(zone.center, float)), link))
        elif zone.kind == 'half_space':
            point, normal = np.asarray(zone.point, float), np.asarray(zone.normal, float)
            normal = normal / np.linalg.norm(normal)
            # coal's half-space is the solid n.x <= d: the forbidden side is against the normal
            obstacles.append(Obstacle(zone.name, coal.Halfspace(-normal, -float(normal @ point)),
                                      link=link, plane=(tuple(point), tuple(normal))))
        else:
            raise ValueError(f'zone {zone.name!r}: unknown kind {zone.kind!r}')
    return obstacles


def disabled_pairs(srdf_xml: str) -> Set[Tuple[str, str]]:
    """Return the link pairs an SRDF's ``disable_collisions`` elements name (both orders)."""
    try:
        root = ElementTree.fromstring(srdf_xml)
    except ElementTree.ParseError as error:
        raise UrdfError(f'the SRDF is not valid XML: {error}') from None
    pairs: Set[Tuple[str, str]] = set()
    for element in root.iter('disable_collisions'):
        a, b = element.get('link1'), element.get('link2')
        if not a or not b:
            raise UrdfError('an SRDF disable_collisions element lacks link1 or link2')
        pairs |= {(a, b), (b, a)}
    return pairs


class _ExactDistances:
    """
    Coal's distance of a pair at a pose of a motion, each measured once.

    A pose whose joints between the pair's shapes are those of a pose already measured puts
    the shapes in the same place against each other: the same distance.
    """

    def __init__(self, collision: 'CollisionModel', positions: np.ndarray) -> None:
        self._collision = collision
        self._positions = positions
        self._configurations = collision.robot.configurations(positions)
        #: pair -> {the joints between its shapes (bytes): coal's distance there}
        self._known: Dict[int, Dict[bytes, float]] = {}

    def __call__(self, row: int, pair: int) -> float:
        """Return the distance of ``pair`` at pose ``row`` [m]."""
        seen = self._known.setdefault(pair, {})
        key = self._positions[row, self._collision._between[pair]].tobytes()
        if key not in seen:
            seen[key] = self._collision.exact_configuration(self._configurations[row], pair)
        return seen[key]


class CollisionModel:
    """
    The collision shapes of a robot and the pairs of them that are checked.

    :param robot: the robot's models.
    :param srdf_xml: an SRDF whose ``disable_collisions`` pairs may touch ('' : none).
    :param allowed: more link pairs that may touch (an obstacle goes by its name).
    :param obstacles: fixed shapes every link on another joint must keep clear of.
    :param meshes: link -> its collision mesh, in place of its URDF ``<collision>`` shapes.
    :param adjacent: check a link and its parent too (the tool that computes which pairs can
        meet, ``scripts/collision_pairs.py``, asks; the checks leave them out).
    """

    def __init__(self, robot: CheckRobot, srdf_xml: str = '',
                 allowed: Iterable[Tuple[str, str]] = (),
                 obstacles: Sequence[Obstacle] = (),
                 meshes: Optional[Mapping[str, LinkMesh]] = None,
                 adjacent: bool = False) -> None:
        self.robot = robot
        model = robot.model
        try:
            urdf = pinocchio.buildGeomFromUrdfString(
                model, robot.urdf_xml, pinocchio.GeometryType.COLLISION)
        except (RuntimeError, ValueError) as error:
            raise UrdfError(f'pinocchio cannot build the collision geometry: {error}') from None
        self.geometry = self._with_meshes(urdf, dict(meshes or {}))
        robot_shapes = len(self.geometry.geometryObjects)
        #: pair-free half-spaces: obstacle shape index -> (joint, point, normal into it)
        self._planes: Dict[int, Tuple[int, np.ndarray, np.ndarray]] = {}
        for obstacle in obstacles:
            self._add_obstacle(obstacle)
        objects = list(self.geometry.geometryObjects)
        #: the link of each shape (an obstacle's name for an obstacle)
        self.links = [model.frames[o.parentFrame].name for o in objects[:robot_shapes]] + \
            [o.name for o in objects[robot_shapes:]]
        skip = disabled_pairs(srdf_xml) if srdf_xml else set()
        skip |= {(a, b) for a, b in allowed} | {(b, a) for a, b in allowed}
        pairs = self._checked_pairs(objects, robot_shapes, skip, adjacent)
        self.pairs = np.array(pairs, dtype=int).reshape(-1, 2)
        self.geometry_data = pinocchio.GeometryData(self.geometry)
        self._joints = np.array([o.parentJoint for o in objects], dtype=int)
        self._centres, self._radii = self._bounding_spheres(objects)
        #: each shape's capsule (ends in its joint's frame (2, 3), radius): a sphere is one
        #: whose ends meet
        self._capsules = [self._meshes[index].placed(o.placement) if index in self._meshes
                          else (np.tile(self._centres[index], (2, 1)), self._radii[index])
                          for index, o in enumerate(objects)]
        #: how far each shape may lie from its link's surface (a thinned mesh) [m]
        self._slack = np.array([self._deviation.get(link, 0.0) for link in self.links])
        self._plane_pairs = [(pair, int(k if i in self._planes else i), self._planes[
            int(i if i in self._planes else k)]) for pair, (i, k) in enumerate(pairs)
            if i in self._planes or k in self._planes]
        #: each pair's motion columns that move one of its shapes against the other (the
        #: joints between them): where those are equal, so is the pair's distance
        self._between = [self._joints_between(int(self._joints[i]), int(self._joints[k]))
                         for i, k in self.pairs]

    def _checked_pairs(self, objects: List[GeometryObject], robot_shapes: int,
                       skip: Set[Tuple[str, str]], adjacent: bool) -> List[Tuple[int, int]]:
        """
        Return the pairs of shapes checked, and make them the geometry's collision pairs.

        Not checked: two obstacles, two shapes on one joint, a link and its parent (unless
        ``adjacent``), the pairs in ``skip`` (link names).
        """
        model = self.robot.model
        self.geometry.removeAllCollisionPairs()
        pairs: List[Tuple[int, int]] = []
        for i in range(len(objects)):
            for k in range(i + 1, len(objects)):
                if k >= robot_shapes and i >= robot_shapes:
                    continue   # two obstacles
                ji, jk = objects[i].parentJoint, objects[k].parentJoint
                if ji == jk or (k < robot_shapes and not adjacent and (
                        model.parents[ji] == jk or model.parents[jk] == ji)):
                    continue
                if (self.links[i], self.links[k]) in skip:
                    continue
                pairs.append((i, k))
                self.geometry.addCollisionPair(pinocchio.CollisionPair(i, k))
        return pairs

    def _bounding_spheres(self, objects: List[GeometryObject]) -> Tuple[np.ndarray, np.ndarray]:
        """Return each shape's bounding sphere: centres in its joint's frame (n, 3), radii."""
        centres, radii = [], []
        for index, o in enumerate(objects):
            if index in self._planes:   # unbounded: its pairs' bounds come from the plane
                centres.append(np.zeros(3))
                radii.append(0.0)
                continue
            shape = o.geometry
            shape.computeLocalAABB()
            centres.append(np.asarray(o.placement.act(np.asarray(shape.aabb_center))))
            radii.append(float(shape.aabb_radius))
        return np.array(centres).reshape(-1, 3), np.array(radii)

    def _joints_between(self, a: int, b: int) -> np.ndarray:
        """Return the motion columns of the joints on the chain from joint a to joint b."""
        parents = self.robot.model.parents

        def ancestors(joint: int) -> Set[int]:
            out = set()
            while joint > 0:
                out.add(joint)
                joint = int(parents[joint])
            return out
        column = self.robot.kinematics.column
        return np.array(sorted(int(column[j]) for j in ancestors(a) ^ ancestors(b)
                               if column[j] >= 0), dtype=int)

    def _with_meshes(self, urdf: 'pinocchio.GeometryModel',
                     meshes: Dict[str, LinkMesh]) -> 'pinocchio.GeometryModel':
        """Return the URDF's shapes with each meshed link's shapes replaced by its mesh."""
        model = self.robot.model
        self._deviation: Dict[str, float] = {}
        #: shape index -> its mesh, for the meshed links
        self._meshes: Dict[int, _Capsule] = {}
        if not meshes:
            return urdf
        geometry = pinocchio.GeometryModel()
        for obj in urdf.geometryObjects:
            if model.frames[obj.parentFrame].name not in meshes:
                geometry.addGeometryObject(obj)
        for link, mesh in meshes.items():
            if not model.existFrame(link, pinocchio.FrameType.BODY):
                raise UrdfError(f'collision mesh of {link!r}: no such link in the URDF')
            frame_id = model.getFrameId(link, pinocchio.FrameType.BODY)
            frame = model.frames[frame_id]
            index = geometry.addGeometryObject(pinocchio.GeometryObject(
                f'{link}_mesh', frame.parentJoint, frame_id, frame.placement, mesh.bvh()))
            self._meshes[index] = _Capsule(*capsule_of(mesh.vertices))
            self._deviation[link] = mesh.deviation
        return geometry

    def _add_obstacle(self, obstacle: Obstacle) -> None:
        model = self.robot.model
        frame_id = self.robot.frame(obstacle.link) if obstacle.link else 0
        frame = model.frames[frame_id]
        placement = frame.placement * pinocchio.SE3(np.eye(3), np.asarray(obstacle.position,
                                                                          dtype=float))
        index = self.geometry.addGeometryObject(pinocchio.GeometryObject(
            obstacle.name, frame.parentJoint, frame_id, placement, obstacle.shape))
        if obstacle.plane is not None:
            point, normal = (np.asarray(v, dtype=float) for v in obstacle.plane)
            self._planes[index] = (frame.parentJoint, frame.placement.act(point),
                                   frame.placement.rotation @ normal)

    def pair_names(self) -> List[Tuple[str, str]]:
        """Return the checked pairs as link names."""
        return [(self.links[i], self.links[k]) for i, k in self.pairs]

    def lower_bounds(self, positions: np.ndarray) -> np.ndarray:
        """Return a lower bound of each pair's distance (poses, pairs) [m], from the spheres."""
        return self._bounds(positions)[0]

    def _bounds(self, positions: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """
        Return the pairs' lower bounds (poses, pairs) and each pair's largest step (poses).

        A pair's step from the pose before is how far any point of its two shapes can have
        moved since: the centre's way plus the radius times the angle turned.
        """
        rotation, translation = self.robot.placements(positions)
        centres = BatchKinematics.points(rotation, translation, self._joints, self._centres)
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        gap = np.linalg.norm(centres[:, a] - centres[:, b], axis=2)
        bounds = gap - self._radii[a] - self._radii[b] - self._slack[a] - self._slack[b]
        turns = rotation[:, self._joints]
        cosine = (np.einsum('nkij,nkij->nk', turns[1:], turns[:-1]) - 1.0) / 2.0
        angle = np.arccos(np.clip(cosine, -1.0, 1.0))
        moved = np.linalg.norm(np.diff(centres, axis=0), axis=2) + self._radii * angle
        steps = np.vstack((np.zeros((1, len(self.pairs))), moved[:, a] + moved[:, b]))
        for pair, shape, (joint, point, normal) in self._plane_pairs:
            # the shape's sphere against the half-space: how far its centre is outside
            turn, shift = rotation[:, joint], translation[:, joint]
            inward = turn @ normal
            surface = turn @ point + shift
            bounds[:, pair] = -np.einsum('ni,ni->n', centres[:, shape] - surface, inward) \
                - self._radii[shape] - self._slack[shape]
        return bounds, steps

    def exact(self, positions: np.ndarray, pair: int) -> float:
        """Return coal's distance [m] of pair number ``pair`` at one pose (negative: overlap)."""
        return self.exact_configuration(self.robot.configurations(positions)[0], pair)

    def touching_pairs(self, pose: np.ndarray) -> Set[Tuple[str, str]]:
        """Return the pairs (link names) that touch or overlap in one pose."""
        pose = np.atleast_2d(np.asarray(pose, dtype=float))
        bounds = self.lower_bounds(pose)[0]
        return {(self.links[self.pairs[p, 0]], self.links[self.pairs[p, 1]])
                for p in np.flatnonzero(bounds <= 0.0).tolist() if self.exact(pose, p) <= 0.0}

    def exact_configuration(self, q: np.ndarray, pair: int) -> float:
        """Return coal's distance [m] of pair number ``pair`` at a pinocchio configuration."""
        # only the pair's two shapes are placed: a pose's other shapes are not needed
        model, data = self.robot.model, self.robot.data
        pinocchio.forwardKinematics(model, data, q)
        geometry, geometry_data = self.geometry, self.geometry_data
        for index in self.pairs[pair]:
            obj = geometry.geometryObjects[int(index)]
            geometry_data.oMg[int(index)] = data.oMi[obj.parentJoint] * obj.placement
        distance = float(pinocchio.computeDistance(geometry, geometry_data, pair).min_distance)
        a, b = self.pairs[pair]
        return max(distance - self._slack[a] - self._slack[b], 0.0) if distance > 0 else distance

    def all_exact(self, positions: np.ndarray) -> np.ndarray:
        """Return coal's distance of every pair at every pose (poses, pairs): brute force."""
        out = np.empty((len(positions), len(self.pairs)))
        for row, q in enumerate(self.robot.configurations(positions)):
            pinocchio.computeDistances(self.robot.model, self.robot.data, self.geometry,
                                       self.geometry_data, q)
            out[row] = [r.min_distance for r in self.geometry_data.distanceResults]
        slack = self._slack[self.pairs[:, 0]] + self._slack[self.pairs[:, 1]]
        return np.where(out > 0, np.maximum(out - slack, 0.0), out)

    def below(self, positions: np.ndarray, pair: int, margin: float) -> np.ndarray:
        """
        Return at which poses pair number ``pair`` is closer than ``margin`` (booleans).

        Exact (coal) where the bounding spheres say it may be; elsewhere it certainly is not.
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        rows = np.flatnonzero(self.lower_bounds(positions)[:, pair] < margin)
        out = np.zeros(len(positions), dtype=bool)
        configurations = self.robot.configurations(positions[rows])
        for row, q in zip(rows.tolist(), configurations):
            out[row] = self.exact_configuration(q, pair) < margin
        return out

    def closest(self, positions: np.ndarray, times: np.ndarray,
                margin: float, figures: int = 3) -> List[PairApproach]:
        """
        Return the closest approach of every checked pair during a motion, closest first.

        Exact (coal) wherever a pair may cross the margin: the verdict of every pair is exact.
        The figure of a pair that comes within the margin is the least of the distances coal
        computed (a pose whose distance is certainly below the margin from the one before is
        skipped). Of the pairs that never can, the ``figures`` closest get coal's distance at
        the pose where their bounding spheres come closest; the others (farther for certain)
        their spheres' bound, marked not exact.

        :param positions: joint positions (poses, joints) in the robot's joint order.
        :param times: the time of each pose [s].
        :param margin: distance below which the exact figure matters [m], >= 0.
        :param figures: how many of the pairs that keep the margin get an exact figure.
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        if not len(self.pairs) or not len(positions):
            return []
        bounds, steps = self._bounds(positions)
        exact = _ExactDistances(self, positions)
        best = self._near_approaches(positions, bounds, steps, margin, exact)
        measured = set(best)
        nearest = np.argmin(bounds, axis=0)
        lowest = bounds[nearest, np.arange(len(self.pairs))]
        kept = sorted(best.values())[:figures]
        for pair in np.argsort(lowest, kind='stable').tolist():
            if pair in best:
                continue
            row = int(nearest[pair])
            if len(kept) >= figures and lowest[pair] >= kept[figures - 1][0]:
                best[pair] = (float(lowest[pair]), row)   # farther than the figures for sure
                continue
            best[pair] = (exact(row, pair), row)
            measured.add(pair)
            kept = sorted(kept + [best[pair]])[:figures]
        approaches = [PairApproach(self.links[self.pairs[p, 0]], self.links[self.pairs[p, 1]],
                                   distance, float(times[row]), p in measured)
                      for p, (distance, row) in best.items()]
        return sorted(approaches, key=lambda a: a.distance)

    def _near_approaches(self, positions: np.ndarray, bounds: np.ndarray, steps: np.ndarray,
                         margin: float,
                         exact: '_ExactDistances') -> Dict[int, Tuple[float, int]]:
        """
        Return the closest exact approach of every pair that may come within ``margin``.

        :param bounds: each pose's lower bound of each pair's distance [m] (tightened here
            where the spheres of the pair's parts give more).
        :param steps: how far each pair's shapes can move from one pose to the next [m].
        :return: pair -> (distance [m], pose row).
        """
        rotation, translation = self.robot.placements(positions)
        # walk each pair's candidate poses in time; skip a pose whose side of the margin is
        # certain: the last exact distance, less (or plus) how far the pair's shapes can have
        # moved since, is still above (or below) it
        travelled = np.cumsum(steps, axis=0)
        best: Dict[int, Tuple[float, int]] = {}
        near = np.flatnonzero((bounds < margin).any(axis=0))
        refined_all = self._refined_many(rotation, translation, bounds, near, margin)
        for pair in near.tolist():
            rows, refined = refined_all[pair]
            # the spheres of the pair's parts: a tighter bound where the whole shapes' is not
            bounds[rows, pair] = np.maximum(bounds[rows, pair], refined)
            candidates = rows[refined < margin]
            way = travelled[:, pair]
            index = 0
            while index < len(candidates):
                row = int(candidates[index])
                last = exact(row, pair)
                if pair not in best or last < best[pair][0]:
                    best[pair] = (last, row)
                # the first pose after which the shapes may have moved across the margin
                certain = int(np.searchsorted(way, way[row] + abs(last - margin), side='right'))
                index = max(index + 1, int(np.searchsorted(candidates, certain)))
        return best

    def _refined_many(self, rotation: np.ndarray, translation: np.ndarray,
                      bounds: np.ndarray, pairs: np.ndarray, margin: float
                      ) -> Dict[int, Tuple[np.ndarray, np.ndarray]]:
        """
        Return pair -> (its rows whose bound is below ``margin``, its capsules' bound there).

        All the pairs at once: each shape's capsule placed once for every pose, the segments'
        distances of every (pose, pair) in one call.
        """
        out: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}
        flat_rows, flat_pairs = [], []
        for pair in pairs.tolist():
            a, b = (int(k) for k in self.pairs[pair])
            rows = np.flatnonzero(bounds[:, pair] < margin)
            if a in self._planes or b in self._planes:
                out[pair] = (rows, np.full(len(rows), -np.inf))
                continue
            out[pair] = (rows, np.empty(0))
            flat_rows.append(rows)
            flat_pairs.append(np.full(len(rows), pair))
        if not flat_rows:
            return out
        row_of, pair_of = np.concatenate(flat_rows), np.concatenate(flat_pairs)
        shapes = np.unique(self.pairs[np.unique(pair_of)])
        placed = np.full((len(self._capsules), len(rotation), 2, 3), np.nan)
        wanted = np.zeros(len(rotation), dtype=bool)
        wanted[row_of] = True
        used = np.flatnonzero(wanted)
        for shape in shapes.tolist():
            joint = self._joints[shape]
            local, _ = self._capsules[shape]
            placed[shape, used] = np.einsum('nij,kj->nki', rotation[used, joint], local) + \
                translation[used, joint][:, None, :]
        a, b = self.pairs[pair_of, 0], self.pairs[pair_of, 1]
        first, second = placed[a, row_of], placed[b, row_of]
        radius = np.array([capsule[1] for capsule in self._capsules])
        gap = segment_distance(first[:, 0], first[:, 1], second[:, 0], second[:, 1]) - \
            radius[a] - radius[b] - self._slack[a] - self._slack[b]
        starts = np.cumsum([0] + [len(rows) for rows in flat_rows])
        for index, (rows, which) in enumerate(zip(flat_rows, flat_pairs)):
            out[int(which[0])] = (rows, gap[starts[index]:starts[index + 1]])
        return out

    def _refined(self, rotation: np.ndarray, translation: np.ndarray, rows: np.ndarray,
                 pair: int) -> np.ndarray:
        """Return a lower bound of pair ``pair``'s distance at ``rows`` from its capsules."""
        a, b = (int(k) for k in self.pairs[pair])
        if a in self._planes or b in self._planes:
            return np.full(len(rows), -np.inf)
        ends = []
        for shape in (a, b):
            joint = self._joints[shape]
            local, _ = self._capsules[shape]
            ends.append(np.einsum('nij,kj->nki', rotation[rows, joint], local)
                        + translation[rows, joint][:, None, :])
        gap = segment_distance(ends[0][:, 0], ends[0][:, 1], ends[1][:, 0], ends[1][:, 1])
        return gap - self._capsules[a][1] - self._capsules[b][1] - self._slack[a] - \
            self._slack[b]


@dataclass(frozen=True)
class _Capsule:
    """A mesh's capsule in its link's frame: a segment's ends (3,) (3,) and a radius [m]."""

    start: np.ndarray
    end: np.ndarray
    radius: float

    def placed(self, placement: 'pinocchio.SE3') -> Tuple[np.ndarray, float]:
        """Return the ends (2, 3) in the frame the link is placed in, and the radius."""
        rotation, shift = np.asarray(placement.rotation), np.asarray(placement.translation)
        return np.stack((self.start, self.end)) @ rotation.T + shift, self.radius


def segment_distance(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray,
                     q2: np.ndarray) -> np.ndarray:
    """Return the distances (n,) between segments p1-q1 and p2-q2, each (n, 3) [m]."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a = np.maximum(np.einsum('ni,ni->n', d1, d1), 1e-18)
    e = np.maximum(np.einsum('ni,ni->n', d2, d2), 1e-18)
    b, c, f = (np.einsum('ni,ni->n', x, y) for x, y in ((d1, d2), (d1, r), (d2, r)))
    denominator = a * e - b * b
    free = np.clip((b * f - c * e) / np.maximum(denominator, 1e-18), 0.0, 1.0)
    s = np.where(denominator > 1e-18, free, 0.0)
    t = (b * s + f) / e
    below, beyond = np.clip(-c / a, 0.0, 1.0), np.clip((b - c) / a, 0.0, 1.0)
    s = np.where(t < 0.0, below, np.where(t > 1.0, beyond, s))
    t = np.clip(t, 0.0, 1.0)
    return np.linalg.norm(p1 + s[:, None] * d1 - p2 - t[:, None] * d2, axis=1)


def first_contact(approaches: List[PairApproach], margin: float) -> Optional[PairApproach]:
    """Return the closest approach below ``margin``, None when every pair keeps it."""
    below = [a for a in approaches if a.distance < margin]
    return min(below, key=lambda a: a.distance) if below else None
