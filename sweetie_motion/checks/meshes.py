"""
Collision meshes for the self-collision check: a folder of ``<link>.STL`` as coal BVH models.

coal checks a mesh itself (a bounding volume hierarchy of its triangles, not its convex hull:
the U-shaped brackets of a leg stay U-shaped). A mesh of more than ``max_triangles``
triangles (none of Proto2's: :data:`MAX_TRIANGLES`) is thinned by vertex clustering: the
vertices in each cube of a grid become their mean, triangles that collapse are dropped. Every
vertex moves by less than the cube's diagonal; :attr:`LinkMesh.deviation` is that bound [m],
and the check takes it off every distance the mesh is part of, so a thinned mesh never
reports more room than there is.
Pure: numpy and coal.
"""

from dataclasses import dataclass
import functools
from pathlib import Path
from typing import Dict, Iterable, Tuple

import coal
import numpy as np

from sweetie_motion.model.stl import read_stl

#: a mesh with more triangles than this is thinned. Above Proto2's head (44 928 triangles, a
#: distance 0.1-1 ms): thinned to 5 500 it would lose 13 mm (the clusters' diagonal, taken off
#: every distance), more than the check can give; the capsule bounds keep its calls few
MAX_TRIANGLES = 1000000


@dataclass(frozen=True)
class LinkMesh:
    """
    A link's collision mesh, in the link's frame [m].

    :param vertices: (k, 3) its vertices; :param triangles: (t, 3) vertex indices.
    :param deviation: how far the mesh may lie from the file's surface [m] (0: as in the file).
    :param source_triangles: the file's triangle count.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    deviation: float
    source_triangles: int

    def bvh(self) -> 'coal.BVHModelOBBRSS':
        """Return a new coal BVH model of the mesh (each geometry object owns its own)."""
        model = coal.BVHModelOBBRSS()
        model.beginModel(len(self.triangles), len(self.vertices))
        model.addVertices(np.ascontiguousarray(self.vertices, dtype=float))
        model.addTriangles(np.ascontiguousarray(self.triangles, dtype=np.int64))
        model.endModel()
        return model


@functools.lru_cache(maxsize=64)
def link_mesh(path: str, max_triangles: int = MAX_TRIANGLES) -> LinkMesh:
    """
    Return an STL file's mesh, thinned to at most ``max_triangles`` triangles.

    Cached per file: the controller, the editor and the command build it once per process.

    :raises MeshError: the file cannot be read.
    """
    triangles = read_stl(path)
    vertices, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    faces = inverse.reshape(-1, 3)
    count = len(faces)
    deviation = 0.0
    if count > max_triangles:
        extent = float(np.max(np.ptp(vertices, axis=0)))
        cell = extent / 400.0
        while True:
            thin_vertices, thin_faces = cluster(vertices, faces, cell)
            if len(thin_faces) <= max_triangles:
                break
            cell *= 1.25
        vertices, faces, deviation = thin_vertices, thin_faces, cell * float(np.sqrt(3.0))
    return LinkMesh(vertices, faces, deviation, count)


def cluster(vertices: np.ndarray, faces: np.ndarray,
            cell: float) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return a mesh thinned by vertex clustering: one vertex per occupied cube of side ``cell``.

    :param vertices: (k, 3) [m]; :param faces: (t, 3) indices; :param cell: cube side [m].
    :return: the cubes' mean vertices and the triangles that keep three distinct corners.
    """
    keys = np.floor(vertices / cell).astype(np.int64)
    _, member = np.unique(keys, axis=0, return_inverse=True)
    member = member.ravel()
    counts = np.bincount(member)
    means = np.stack([np.bincount(member, weights=vertices[:, k]) for k in range(3)],
                     axis=1) / counts[:, None]
    mapped = member[faces]
    distinct = (mapped[:, 0] != mapped[:, 1]) & (mapped[:, 1] != mapped[:, 2]) & \
        (mapped[:, 0] != mapped[:, 2])
    kept = np.unique(np.sort(mapped[distinct], axis=1), axis=0)
    return means, kept


def folder_meshes(folder: str, links: Iterable[str],
                  max_triangles: int = MAX_TRIANGLES) -> Dict[str, LinkMesh]:
    """Return link -> its mesh, for the links that have a ``<link>.STL`` in ``folder``."""
    found = {}
    for link in links:
        path = Path(folder) / f'{link}.STL'
        if path.is_file():
            found[link] = link_mesh(str(path), max_triangles)
    return found


def capsule_of(points: np.ndarray) -> Tuple[np.ndarray, np.ndarray, float]:
    """
    Return a capsule around ``points`` (k, 3): a segment's ends (3,) (3,) and a radius [m].

    The segment runs along the points' principal axis; of a few lengths, the one with the
    least volume. Every point lies within the radius of the segment, so does each triangle of
    a mesh (a capsule is convex): the check's cheap bound of a pair's distance, tighter than a
    sphere for a long link.
    """
    centre = points.mean(axis=0)
    _, _, axes = np.linalg.svd(points - centre, full_matrices=False)
    axis = axes[0]
    along = (points - centre) @ axis
    low, high = float(along.min()), float(along.max())
    best = None
    for shrink in np.linspace(0.0, 0.5, 11):
        cut = shrink * (high - low)
        start, end = low + cut / 2.0, high - cut / 2.0
        nearest = np.clip(along, start, end)
        radius = float(np.linalg.norm(points - centre - nearest[:, None] * axis, axis=1).max())
        volume = np.pi * radius ** 2 * (end - start) + 4.0 / 3.0 * np.pi * radius ** 3
        if best is None or volume < best[0]:
            best = (volume, centre + start * axis, centre + end * axis, radius)
    assert best is not None
    return best[1], best[2], best[3]
