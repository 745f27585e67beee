"""
Collision meshes for the physics: an STL's convex hull, boxes fitted to a concave solid.

MuJoCo collides every mesh as its convex hull. That is exact against the floor (a plane
touches a solid where it touches its hull) but not between links: the hull of a U-shaped
bracket fills the U. So a concave solid is cut into boxes: the planes of its vertices'
coordinates (closer ones merged) make a grid, each cell whose centre is inside the solid (by
the crossings of a vertical line) is filled, and filled cells are merged greedily into boxes.
Proto2's meshes are boxes with chamfers: a few boxes fit them to a few millimetres
(the chamfers), the solid's volume kept within 5 %. Pure numpy and scipy.
"""

from dataclasses import dataclass
import functools
from typing import List, Tuple

import numpy as np

from sweetie_motion.model.stl import MeshError, read_stl

#: a solid whose volume is at least this share of its hull's is taken as convex [-]
CONVEX_SHARE = 0.9
#: planes of the grid closer than this are merged [m] (the cut boxes' resolution)
GRID_STEP = 0.002
#: the most cells a solid is cut into (a finer grid is coarsened)
MAX_CELLS = 40000


@dataclass(frozen=True)
class CollisionMesh:
    """
    A link's collision mesh as the physics uses it, in the link's frame [m].

    :param hull: the vertices of its convex hull, shape (k, 3): its shape against the floor.
    :param boxes: (centre, half sizes) of the boxes cut from a concave closed solid, each
        shape (3,); empty for a convex mesh or an open surface (then the hull serves for
        contacts between links too).
    :param solid_share: the mesh's volume over its hull's (1: convex; an open surface: 0).
    """

    hull: np.ndarray
    boxes: Tuple[Tuple[np.ndarray, np.ndarray], ...]
    solid_share: float


@functools.lru_cache(maxsize=64)
def collision_mesh(path: str, scale: float = 1.0) -> CollisionMesh:
    """
    Return the hull and, for a concave closed solid, the fitted boxes of an STL file.

    Cached per file: the same file gives the same shapes (and costs once per process).

    :param scale: metres per file unit.
    :raises MeshError: the file cannot be read or is flat.
    """
    from scipy.spatial import ConvexHull, QhullError
    triangles = read_stl(path) * scale
    points = np.unique(triangles.reshape(-1, 3), axis=0)
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError):
        raise MeshError(path, 'is flat or degenerate: it has no volume') from None
    share = mesh_volume(triangles) / hull.volume if is_closed(triangles) else 0.0
    boxes: Tuple[Tuple[np.ndarray, np.ndarray], ...] = ()
    if 0.0 < share < CONVEX_SHARE:
        boxes = tuple(fitted_boxes(triangles))
    return CollisionMesh(points[hull.vertices], boxes, max(share, 0.0))


def is_closed(triangles: np.ndarray) -> bool:
    """Return whether a triangle mesh is closed: every edge is shared by two triangles."""
    corners = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)[1]
    corners = corners.reshape(-1, 3)
    edges = np.sort(np.concatenate([corners[:, [0, 1]], corners[:, [1, 2]],
                                    corners[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return bool(np.all(counts == 2))


def mesh_volume(triangles: np.ndarray) -> float:
    """Return the volume a closed, outward-facing triangle mesh encloses [unit^3]."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    return float(np.einsum('ij,ij->i', a, np.cross(b, c)).sum() / 6.0)


def inside_grid(centres: List[np.ndarray], triangles: np.ndarray) -> np.ndarray:
    """
    Return which points of a grid lie inside a closed mesh, shape (len(x), len(y), len(z)).

    Each vertical line of the grid is cut with every triangle once; a point is inside where
    an odd number of crossings lie above it. The lines are nudged off the grid by a few
    tenths of a micrometre so that none runs exactly through an edge or a vertex.

    :param centres: the grid's x, y and z values [m]; :param triangles: shape (n, 3, 3).
    """
    x, y = np.meshgrid(centres[0] + 3.1e-7, centres[1] + 1.7e-7, indexing='ij')
    lines = np.stack((x.ravel(), y.ravel()), axis=1)
    a, b, c = (triangles[:, k, :] for k in range(3))
    # barycentric coordinates of each line's foot in each triangle's projection on z = 0
    det = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    usable = np.abs(det) > 1e-18
    a, b, c, det = a[usable], b[usable], c[usable], det[usable]
    dx = lines[:, None, 0] - a[None, :, 0]
    dy = lines[:, None, 1] - a[None, :, 1]
    u = (dx * (c[:, 1] - a[:, 1]) - dy * (c[:, 0] - a[:, 0])) / det
    v = (dy * (b[:, 0] - a[:, 0]) - dx * (b[:, 1] - a[:, 1])) / det
    hit = (u >= 0) & (v >= 0) & (u + v <= 1)
    z = a[:, 2] + u * (b[:, 2] - a[:, 2]) + v * (c[:, 2] - a[:, 2])
    crossings = np.where(hit, z, np.inf)
    above = (crossings[:, :, None] > centres[2][None, None, :]) & hit[:, :, None]
    inside = above.sum(axis=1) % 2 == 1
    return inside.reshape(len(centres[0]), len(centres[1]), len(centres[2]))


def fitted_boxes(triangles: np.ndarray, step: float = GRID_STEP
                 ) -> List[Tuple[np.ndarray, np.ndarray]]:
    """
    Return boxes (centre, half sizes) [m] that together fill a closed solid.

    :param triangles: the solid's surface, shape (n, 3, 3) [m].
    :param step: planes of the grid closer than this are merged [m].
    """
    vertices = triangles.reshape(-1, 3)
    while True:
        planes = [_merged(np.unique(vertices[:, axis]), step) for axis in range(3)]
        if np.prod([len(p) - 1 for p in planes]) <= MAX_CELLS:
            break
        step *= 1.5
    centres = [(p[1:] + p[:-1]) / 2 for p in planes]
    filled = inside_grid(centres, triangles)
    return [((low + high) / 2, (high - low) / 2) for low, high in _greedy_boxes(filled, planes)]


def _merged(values: np.ndarray, step: float) -> np.ndarray:
    """Return sorted ``values`` with those closer than ``step`` to the previous kept dropped."""
    kept = [float(values[0])]
    for value in values[1:]:
        if value - kept[-1] > step:
            kept.append(float(value))
    kept[-1] = float(values[-1])   # the solid's extent stays exact
    return np.array(kept)


def _greedy_boxes(filled: np.ndarray, planes: List[np.ndarray]
                  ) -> List[Tuple[np.ndarray, np.ndarray]]:
    """Return (low, high) corners of boxes covering every filled cell once (x, then y, z)."""
    free = filled.copy()
    nx, ny, nz = filled.shape
    boxes = []
    for i, j, k in zip(*np.nonzero(filled)):
        if not free[i, j, k]:
            continue
        i2, j2, k2 = i + 1, j + 1, k + 1
        while i2 < nx and free[i2, j, k]:
            i2 += 1
        while j2 < ny and free[i:i2, j2, k].all():
            j2 += 1
        while k2 < nz and free[i:i2, j:j2, k2].all():
            k2 += 1
        free[i:i2, j:j2, k:k2] = False
        boxes.append((np.array([planes[0][i], planes[1][j], planes[2][k]]),
                      np.array([planes[0][i2], planes[1][j2], planes[2][k2]])))
    return boxes
