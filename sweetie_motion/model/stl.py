"""
A link's mesh file (STL, binary or ASCII) read into triangles (pure numpy).

The geometry the checks (:mod:`sweetie_motion.checks.meshes`) and the physics
(:mod:`sweetie_motion.physics.meshes`) build their collision shapes from.
"""

from pathlib import Path
import struct

import numpy as np

from sweetie_motion.errors import ModelError


class MeshError(ModelError):
    """
    A mesh file that cannot be used.

    :param path: the file; :param reason: what is wrong.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f'{path}: {reason}')


def read_stl(path: str) -> np.ndarray:
    """
    Return the triangles of a binary or ASCII STL file, shape (n, 3, 3) [file units].

    :raises MeshError: the file cannot be read or holds no triangle.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise MeshError(path, f'cannot read it ({error.strerror})') from None
    if len(data) >= 84:
        count = struct.unpack('<I', data[80:84])[0]
        if len(data) == 84 + 50 * count:
            record = np.dtype([('normal', '<f4', 3), ('vertices', '<f4', (3, 3)),
                               ('attribute', '<u2')])
            triangles = np.frombuffer(data, record, count, 84)['vertices'].astype(float)
            return _checked(path, triangles)
    words = data.decode('ascii', errors='replace').split()
    values = [float(words[k + 1 + j]) for k, word in enumerate(words) if word == 'vertex'
              for j in range(3) if k + 3 < len(words)]
    return _checked(path, np.array(values, dtype=float).reshape(-1, 3, 3))


def _checked(path: str, triangles: np.ndarray) -> np.ndarray:
    if len(triangles) == 0 or not np.all(np.isfinite(triangles)):
        raise MeshError(path, 'holds no triangle (or values that are not numbers)')
    return triangles
