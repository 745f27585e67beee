"""Poses, ZYZ Euler angles (the paper's convention), SO(3) exp/log, mm <-> m (R-CART-1)."""

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from sweetie_motion.cartesian.frames import (
    euler_zyz, euler_zyz_angles, exp_so3, is_rotation, log_so3, MM, Pose, rotation_angle,
)


def test_euler_zyz_against_a_hand_computed_matrix():
    # Rz(90 deg) Ry(90 deg) Rz(0), worked out by hand: the new x axis points down (-z), the
    # new y axis along -x, the new z axis along +y.
    expected = np.array([[0.0, -1.0, 0.0],
                         [0.0, 0.0, 1.0],
                         [-1.0, 0.0, 0.0]])
    np.testing.assert_allclose(euler_zyz(90, 90, 0, degrees=True), expected, atol=1e-15)
    np.testing.assert_allclose(euler_zyz(math.pi / 2, math.pi / 2, 0), expected, atol=1e-15)


def test_euler_zyz_of_the_papers_first_waypoint_by_hand():
    # EulerZYZ(pi/2, -pi/2, 0): Rz(90) [[0,-1,0],[1,0,0],[0,0,1]] times
    # Ry(-90) [[0,0,-1],[0,1,0],[1,0,0]]: the tool's z axis points along -y.
    expected = np.array([[0.0, -1.0, 0.0],
                         [0.0, 0.0, -1.0],
                         [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(euler_zyz(math.pi / 2, -math.pi / 2, 0), expected, atol=1e-15)


def test_euler_zyz_is_intrinsic_zyz_and_extrinsic_in_reverse_order():
    rng = np.random.default_rng(1)
    for alpha, beta, gamma in rng.uniform(-math.pi, math.pi, (20, 3)):
        ours = euler_zyz(alpha, beta, gamma)
        intrinsic = Rotation.from_euler('ZYZ', [alpha, beta, gamma]).as_matrix()
        extrinsic = Rotation.from_euler('zyz', [gamma, beta, alpha]).as_matrix()
        np.testing.assert_allclose(ours, intrinsic, atol=1e-12)
        np.testing.assert_allclose(ours, extrinsic, atol=1e-12)


@pytest.mark.parametrize('angles', [
    (0.3, 1.2, -2.0), (-3.0, 0.01, 3.0), (1.0, math.pi - 1e-3, 0.5),
    (0.7, 0.0, 0.2), (0.7, math.pi, 0.2),  # gimbal lock
    (math.pi / 2, -math.pi / 2, 0.0),  # the paper's first waypoint: beta < 0
])
def test_euler_zyz_angles_give_the_same_rotation_back(angles):
    rotation = euler_zyz(*angles)
    back = euler_zyz_angles(rotation)
    assert 0.0 <= back[1] <= math.pi
    np.testing.assert_allclose(euler_zyz(*back), rotation, atol=1e-12)
    degrees = euler_zyz_angles(rotation, degrees=True)
    np.testing.assert_allclose(euler_zyz(*degrees, degrees=True), rotation, atol=1e-12)


def test_exp_and_log_are_inverse_and_vectorised():
    rng = np.random.default_rng(2)
    axes = rng.normal(size=(50, 3))
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    angles = np.concatenate([[0.0, 1e-9, 1e-5, math.pi - 1e-7, math.pi],
                             rng.uniform(0, math.pi, 45)])
    vectors = axes * angles[:, None]
    matrices = exp_so3(vectors)
    assert matrices.shape == (50, 3, 3)
    for vector, matrix in zip(vectors, matrices):
        assert is_rotation(matrix)
        np.testing.assert_allclose(matrix, Rotation.from_rotvec(vector).as_matrix(), atol=1e-12)
        back = log_so3(matrix)
        np.testing.assert_allclose(exp_so3(back), matrix, atol=1e-9)
        assert np.linalg.norm(back) == pytest.approx(np.linalg.norm(vector), abs=1e-7)


def test_rotation_angle_between_rotations():
    first = euler_zyz(0.1, 0.2, 0.3)
    second = first @ exp_so3([0.0, 0.0, 0.4])
    assert float(rotation_angle(first, second)) == pytest.approx(0.4, abs=1e-12)
    batch = rotation_angle(np.array([first, first]), np.array([second, first]))
    np.testing.assert_allclose(batch, [0.4, 0.0], atol=1e-7)


def test_is_rotation_refuses_scaled_reflected_and_non_finite_matrices():
    assert is_rotation(np.eye(3))
    assert not is_rotation(2 * np.eye(3))
    assert not is_rotation(np.diag([1.0, 1.0, -1.0]))
    assert not is_rotation(np.full((3, 3), np.nan))
    assert not is_rotation(np.eye(4))


def test_pose_millimetres_at_the_edges_only():
    pose = Pose.from_mm_zyz(1037, 0, 735, math.pi, -math.pi / 2, 0)
    np.testing.assert_allclose(pose.position, [1.037, 0.0, 0.735])
    assert MM == 1e-3
    x, y, z, a, b, c = pose.mm_zyz()
    np.testing.assert_allclose((x, y, z), (1037, 0, 735), atol=1e-9)
    np.testing.assert_allclose(euler_zyz(a, b, c, degrees=True), pose.rotation, atol=1e-12)
    matrix = pose.matrix()
    assert Pose.from_matrix(matrix).is_close(pose)
    with pytest.raises(ValueError):
        pose.position[0] = 1.0  # read-only
    with pytest.raises(ValueError, match='4x4'):
        Pose.from_matrix(np.eye(3))
