"""
Poses and rotations of the Cartesian core: ZYZ Euler angles, SO(3) exp/log, mm <-> m.

Conventions (the paper's, i.e. KDL's ``Rotation::EulerZYZ``):

- ``euler_zyz(alpha, beta, gamma)`` is ``Rz(alpha) @ Ry(beta) @ Rz(gamma)``: a rotation by alpha
  about z, then by beta about the *new* y, then by gamma about the *new* z (intrinsic
  z-y'-z''); the same matrix is the extrinsic (fixed-axes) rotation z by gamma, y by beta, z by
  alpha. Angles are radians unless ``degrees=True``; the Cartesian program language (its A B C
  words) uses degrees.
- Inside the core every length is metres and every angle radians; millimetres appear only at
  the edges (:meth:`Pose.from_mm_zyz`, :meth:`Pose.mm_zyz`, the program language).
- A rotation vector (``exp_so3`` / ``log_so3``) is axis * angle [rad].
"""

from dataclasses import dataclass
import math
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike

#: metres per millimetre
MM = 1e-3
#: how far from orthonormal a rotation matrix may be (max abs entry of R^T R - I)
ROTATION_TOLERANCE = 1e-6


def rot_z(angle: float) -> np.ndarray:
    """Return the rotation by ``angle`` [rad] about z (3x3)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_y(angle: float) -> np.ndarray:
    """Return the rotation by ``angle`` [rad] about y (3x3)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def euler_zyz(alpha: float, beta: float, gamma: float, degrees: bool = False) -> np.ndarray:
    """
    Return the rotation matrix of ZYZ Euler angles (KDL's ``Rotation::EulerZYZ``).

    :param alpha: first rotation, about z [rad, or deg with ``degrees``].
    :param beta: second rotation, about the new y.
    :param gamma: third rotation, about the newest z.
    :param degrees: the angles are degrees.
    :return: ``Rz(alpha) @ Ry(beta) @ Rz(gamma)`` (3x3).
    """
    if degrees:
        alpha, beta, gamma = (math.radians(v) for v in (alpha, beta, gamma))
    return rot_z(alpha) @ rot_y(beta) @ rot_z(gamma)


def euler_zyz_angles(rotation: ArrayLike, degrees: bool = False) -> Tuple[float, float, float]:
    """
    Return ZYZ Euler angles of a rotation matrix (the inverse of :func:`euler_zyz`).

    beta is in [0, pi]; at beta = 0 or pi (gimbal lock) gamma is 0 and alpha takes the whole
    rotation about z. ``euler_zyz(*euler_zyz_angles(R)) == R``, but the angles need not be
    those R was made from (the paper's beta = -pi/2 comes back as +pi/2 with alpha and gamma
    turned by pi).

    :param rotation: 3x3 rotation matrix.
    :param degrees: return degrees instead of radians.
    :return: (alpha, beta, gamma).
    """
    r = np.asarray(rotation, dtype=float)
    beta = math.atan2(math.hypot(r[0, 2], r[1, 2]), r[2, 2])
    if math.sin(beta) > 1e-12:
        alpha = math.atan2(r[1, 2], r[0, 2])
        gamma = math.atan2(r[2, 1], -r[2, 0])
    elif r[2, 2] > 0:  # beta = 0: Rz(alpha + gamma)
        alpha, gamma = math.atan2(r[1, 0], r[0, 0]), 0.0
    else:  # beta = pi: Rz(alpha - gamma) Ry(pi), first column (-cos alpha, -sin alpha, 0)
        alpha, gamma = math.atan2(-r[1, 0], -r[0, 0]), 0.0
    if degrees:
        return math.degrees(alpha), math.degrees(beta), math.degrees(gamma)
    return alpha, beta, gamma


def skew(vector: ArrayLike) -> np.ndarray:
    """Return the cross-product matrices of vectors: shape (..., 3) -> (..., 3, 3)."""
    v = np.asarray(vector, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def exp_so3(rotation_vector: ArrayLike) -> np.ndarray:
    """
    Return the rotation matrices of rotation vectors (Rodrigues' formula, vectorised).

    :param rotation_vector: axis * angle [rad], shape (..., 3).
    :return: shape (..., 3, 3).
    """
    v = np.asarray(rotation_vector, dtype=float)
    angle = np.linalg.norm(v, axis=-1)
    small = angle < 1e-8
    safe = np.where(small, 1.0, angle)
    # Series below 1e-8 rad: sin(x)/x = 1 and (1 - cos x)/x^2 = 1/2 to double precision.
    a = np.where(small, 1.0, np.sin(angle) / safe)[..., None, None]
    b = np.where(small, 0.5, (1.0 - np.cos(angle)) / (safe * safe))[..., None, None]
    k = skew(v)
    return np.eye(3) + a * k + b * (k @ k)


def log_so3(rotation: ArrayLike) -> np.ndarray:
    """
    Return the rotation vector of a rotation matrix (the inverse of :func:`exp_so3`).

    :param rotation: 3x3 rotation matrix.
    :return: axis * angle, angle in [0, pi] [rad], shape (3,).
    """
    r = np.asarray(rotation, dtype=float)
    cos_angle = (np.trace(r) - 1.0) / 2.0
    axial = np.array([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]]) / 2.0
    sin_angle = float(np.linalg.norm(axial))
    # atan2, not acos: acos loses half the digits near 0 and near pi
    angle = math.atan2(sin_angle, cos_angle)
    if math.pi - angle > 1e-3:
        return axial * (angle / sin_angle) if sin_angle > 0 else np.zeros(3)
    # Near pi the skew part vanishes: the axis comes from (R + R^T) / 2 - cos I = (1 - cos) uu^T.
    outer = (r + r.T) / 2.0 - cos_angle * np.eye(3)
    column = int(np.argmax(np.diag(outer)))
    axis = outer[:, column] / np.linalg.norm(outer[:, column])
    if axial @ axis < 0:
        axis = -axis
    return axis * angle


def rotation_angle(first: ArrayLike, second: ArrayLike) -> np.ndarray:
    """
    Return the angles of the relative rotations ``first^T @ second`` (vectorised).

    :param first: rotations, shape (..., 3, 3).
    :param second: rotations, same shape.
    :return: angles [rad] in [0, pi], shape (...).
    """
    a = np.asarray(first, dtype=float)
    b = np.asarray(second, dtype=float)
    # Not arccos of the trace alone, which loses half the digits of small angles:
    # |a - b|_F = 2 sqrt(2) sin(angle / 2) and cos^2(angle / 2) = (1 + cos angle) / 2.
    cos_angle = (np.einsum('...ij,...ij->...', a, b) - 1.0) / 2.0  # trace(a^T b) = 1 + 2 cos
    half_sin = np.linalg.norm(a - b, axis=(-2, -1)) / (2.0 * math.sqrt(2.0))
    half_cos = np.sqrt(np.clip((1.0 + cos_angle) / 2.0, 0.0, 1.0))
    return 2.0 * np.arctan2(half_sin, half_cos)


def is_rotation(matrix: ArrayLike, tolerance: float = ROTATION_TOLERANCE) -> bool:
    """Return whether ``matrix`` is a finite 3x3 proper rotation within ``tolerance``."""
    m = np.asarray(matrix, dtype=float)
    if m.shape != (3, 3) or not np.all(np.isfinite(m)):
        return False
    return (np.max(np.abs(m.T @ m - np.eye(3))) <= tolerance
            and abs(np.linalg.det(m) - 1.0) <= 10 * tolerance)


def quaternion_to_rotation(x: float, y: float, z: float, w: float) -> np.ndarray:
    """
    Return the rotation matrix of a quaternion (x, y, z, w), as ROS messages carry them.

    :raises ValueError: a quaternion that is not finite or too far from unit length (|q|
        outside 0.99..1.01: a typo rather than rounding); others are normalised.
    """
    q = np.array((w, x, y, z), dtype=float)
    norm = float(np.linalg.norm(q))
    if not np.all(np.isfinite(q)) or abs(norm - 1.0) > 0.01:
        raise ValueError(f'not a unit quaternion: (x {x}, y {y}, z {z}, w {w}), |q| = {norm:g}')
    w, x, y, z = q / norm
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rotation_to_quaternion(rotation: ArrayLike) -> Tuple[float, float, float, float]:
    """Return the unit quaternion (x, y, z, w) of a rotation matrix, with w >= 0."""
    m = np.asarray(rotation, dtype=float)
    trace = float(np.trace(m))
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 1e-300))
        v = [0.0, 0.0, 0.0]
        v[i] = 0.25 * s
        v[j] = (m[j, i] + m[i, j]) / s
        v[k] = (m[k, i] + m[i, k]) / s
        q = ((m[k, j] - m[j, k]) / s, *v)
    w, x, y, z = q
    if w < 0:
        w, x, y, z = -w, -x, -y, -z
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    return x / norm, y / norm, z / norm, w / norm


@dataclass(frozen=True, eq=False)
class Pose:
    """
    A position and an orientation (a frame), in metres.

    :param position: origin [m], shape (3,).
    :param rotation: orientation, 3x3 rotation matrix (columns: the frame's axes).
    """

    position: np.ndarray
    rotation: np.ndarray

    def __post_init__(self) -> None:
        position = np.array(self.position, dtype=float).reshape(3)
        rotation = np.array(self.rotation, dtype=float).reshape(3, 3)
        position.setflags(write=False)
        rotation.setflags(write=False)
        object.__setattr__(self, 'position', position)
        object.__setattr__(self, 'rotation', rotation)

    @classmethod
    def from_matrix(cls, matrix: ArrayLike) -> 'Pose':
        """Return the pose of a 4x4 homogeneous transform (translation in m)."""
        m = np.asarray(matrix, dtype=float)
        if m.shape != (4, 4):
            raise ValueError(f'expected a 4x4 homogeneous transform, got shape {m.shape}')
        return cls(m[:3, 3], m[:3, :3])

    @classmethod
    def from_zyz(cls, x: float, y: float, z: float, alpha: float, beta: float, gamma: float,
                 degrees: bool = False) -> 'Pose':
        """
        Return the pose at (x, y, z) [m] with ZYZ Euler angles (see :func:`euler_zyz`).

        :param degrees: the angles are degrees (else radians).
        """
        return cls(np.array((x, y, z), dtype=float), euler_zyz(alpha, beta, gamma, degrees))

    @classmethod
    def from_mm_zyz(cls, x: float, y: float, z: float, alpha: float, beta: float,
                    gamma: float, degrees: bool = False) -> 'Pose':
        """
        Return the pose at (x, y, z) [mm] with ZYZ Euler angles, as the paper writes them.

        :param degrees: the angles are degrees (else radians, as in the paper).
        """
        return cls(np.array((x, y, z), dtype=float) * MM, euler_zyz(alpha, beta, gamma, degrees))

    def matrix(self) -> np.ndarray:
        """Return the 4x4 homogeneous transform (translation in m)."""
        m = np.eye(4)
        m[:3, :3] = self.rotation
        m[:3, 3] = self.position
        return m

    def mm_zyz(self, degrees: bool = True) -> Tuple[float, float, float, float, float, float]:
        """Return (x, y, z) [mm] and ZYZ Euler angles [deg, or rad without ``degrees``]."""
        x, y, z = (float(v) / MM for v in self.position)
        return (x, y, z) + euler_zyz_angles(self.rotation, degrees)

    def is_close(self, other: 'Pose', position_tolerance: float = 1e-9,
                 angle_tolerance: float = 1e-9) -> bool:
        """Return whether ``other`` is within the tolerances [m], [rad] of this pose."""
        return (float(np.linalg.norm(self.position - other.position)) <= position_tolerance
                and float(rotation_angle(self.rotation, other.rotation)) <= angle_tolerance)

    def __repr__(self) -> str:
        x, y, z, a, b, c = self.mm_zyz()
        return (f'Pose(x={x:.3f} mm, y={y:.3f} mm, z={z:.3f} mm, '
                f'zyz=({a:.3f}, {b:.3f}, {c:.3f}) deg)')
