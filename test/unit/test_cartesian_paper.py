"""
The paper's test path (seed 004, R-CART-4): its 8 waypoints plan, sample and compare.

The waypoints are the paper's ``path->Add(Frame(Rotation::EulerZYZ(...), Vector(...)))``
calls: millimetres and ZYZ radians in the world frame, 0.210 m below the robot's base. The
paper reports 12 path segments and 1559 interpolated points (10 ms apart: 15.58 s) and gives
neither its blend radius nor its speed and acceleration limits. KDL's Path_RoundedComposite,
which the paper used, builds 13 segments from these waypoints (7 lines and 6 blends) at every
radius it accepts and refuses the path from 5 mm on (the 10 mm hook leg between waypoints 3
and 4 cannot hold two blends of 5 mm); at 3-4 mm and 0.25 m/s, 0.1 m/s^2 it gives exactly the
paper's 1559 samples. The paper's 12 is not a count KDL gives (it is the index of KDL's last
segment, 0-12). Our planner builds KDL's 13 where KDL builds them, and above 5 mm shares the
short leg between its two blends (12 segments at the 20 mm of the arm's program).
"""

import math

import numpy as np
import pytest
from sweetie_motion.cartesian.frames import Pose, rotation_angle
from sweetie_motion.cartesian.path import CartesianPath
from sweetie_motion.cartesian.profile import path_profile, sample_path

PI = math.pi
#: (EulerZYZ [rad], Vector [mm]) of waypoints 1 to 8, as in the paper
PAPER_WAYPOINTS = [
    ((PI / 2, -PI / 2, 0), (0, -384.8, 850.2)),        # 1 initial position
    ((PI, -PI / 2, 0), (1037, 0, 735)),                # 2 near the turntable
    ((PI, -PI / 2, 0), (1080, 0, 735)),                # 3 on the turntable's hook
    ((PI, -PI / 2, 0), (1080, 0, 745)),                # 4 on the hook, lifted
    ((PI, -PI / 2, 0), (1037, 0, 745)),                # 5 back near the turntable
    ((-PI / 2, -PI / 2, -PI / 2), (-350, 1172, 1000)),  # 6 at the winding machine
    ((-PI / 2, -PI / 2, -PI / 2), (-410, 1172, 1000)),  # 7 in the three-jaw chuck
    ((-PI / 2, -PI / 2, -PI / 2), (-410, 1000, 1000)),  # 8 near the winding machine
]
PAPER_SAMPLES = 1559
#: the segments KDL's Path_RoundedComposite builds from the 8 waypoints: 7 lines, 6 blends
KDL_SEGMENTS = 13
#: blend radii [m] KDL accepts for the paper's waypoints (it refuses 5 mm and more)
KDL_RADII = (0.0005, 0.001, 0.002, 0.003, 0.004, 0.0049)
PERIOD = 0.01  # [s]
#: our choices: 20 mm blends (the 10 mm hook segment takes only 5 mm radii on both its
#: corners, the 60 mm chuck segment keeps a line), a tool speed and acceleration of a careful
#: pick-and-place (0.25 m/s, 0.1 m/s^2) and, for the execution, a centripetal limit
RADIUS = 0.020  # [m]
V_MAX = 0.25  # [m/s]
A_MAX = 0.1  # [m/s^2]
LATERAL = 0.5  # [m/s^2]


def paper_waypoints():
    return [Pose.from_mm_zyz(*position, *zyz) for zyz, position in PAPER_WAYPOINTS]


def test_the_first_waypoint_is_the_arms_pose_at_minus_90_degrees(arm):
    # R-CART-4: waypoint 1 is the flange at q = (-90 deg, 0, 0, 0, 0, 0) in the world frame,
    # which ties our ZYZ convention and the millimetres to the robot model.
    pose = Pose.from_matrix(arm.forward_kinematics('arm', np.radians([-90, 0, 0, 0, 0, 0])))
    first = paper_waypoints()[0]
    assert np.linalg.norm(pose.position - first.position) < 1e-4  # 0.1 mm
    assert float(rotation_angle(pose.rotation, first.rotation)) < 1e-6  # the URDF rounds pi


@pytest.mark.parametrize('radius', KDL_RADII)
def test_at_every_radius_kdl_accepts_the_path_has_kdls_13_segments(radius):
    path = CartesianPath(paper_waypoints(), radius=radius)
    assert [seg.kind for seg in path.segments] == ['line', 'arc'] * 6 + ['line']
    assert len(path.segments) == KDL_SEGMENTS
    samples = sample_path(path, path_profile(path, V_MAX, A_MAX), PERIOD)
    # the paper's 1559 (exactly at 3 and 4 mm)
    assert abs(len(samples) - PAPER_SAMPLES) <= 0.002 * PAPER_SAMPLES, len(samples)


def test_where_kdl_refuses_the_short_hook_leg_is_shared_by_its_two_blends():
    path = CartesianPath(paper_waypoints(), radius=0.005)
    assert len(path.segments) == KDL_SEGMENTS - 1   # the 10 mm leg 3-4 is all blend
    assert [round(c.radius * 1e3, 3) for c in path.corners[2:4]] == [5.0, 5.0]


def test_the_papers_path_plans_and_samples_like_the_paper():
    waypoints = paper_waypoints()
    path = CartesianPath(waypoints, radius=RADIUS)
    profile = path_profile(path, V_MAX, A_MAX)
    samples = sample_path(path, profile, PERIOD)
    limited = path_profile(path, V_MAX, A_MAX, lateral_acceleration=LATERAL)
    slow = sample_path(path, limited, PERIOD)
    kinds = ', '.join(seg.kind for seg in path.segments)
    radii = ', '.join(f'{c.radius * 1e3:.1f}' for c in path.corners[1:-1])
    report = (f'\npaper: {PAPER_SAMPLES} samples of 10 ms\n'
              f'ours (r = {RADIUS * 1e3:.0f} mm, v_max = {V_MAX} m/s, a_max = {A_MAX} m/s^2): '
              f'{len(path.segments)} segments ({kinds}), length {path.length * 1e3:.1f} mm, '
              f'{len(samples)} samples ({profile.duration:.2f} s); corner radii [mm] {radii}\n'
              f'with a centripetal limit of {LATERAL} m/s^2: {len(slow)} samples '
              f'({limited.duration:.2f} s)\n{path.describe()}')
    print(report)
    assert len(path.segments) == KDL_SEGMENTS - 1, report   # the hook leg shared, see above
    polyline = sum(np.linalg.norm(b.position - a.position)
                   for a, b in zip(waypoints, waypoints[1:]))
    assert polyline - 0.02 < path.length < polyline, report  # blends cut the corners a little
    assert abs(len(samples) - PAPER_SAMPLES) < 0.05 * PAPER_SAMPLES, report
    assert len(samples) < len(slow) < 1.3 * len(samples), report
    # the path starts and ends on the paper's first and last waypoints, at rest
    np.testing.assert_allclose(samples.position[0], waypoints[0].position, atol=1e-12)
    np.testing.assert_allclose(samples.position[-1], waypoints[-1].position, atol=1e-12)
    np.testing.assert_allclose(samples.rotation[-1], waypoints[-1].rotation, atol=1e-12)
    # every inner waypoint is passed close by (within what its blend cuts off)
    for corner, waypoint in zip(path.corners[1:-1], waypoints[1:-1]):
        gap = np.min(np.linalg.norm(samples.position - waypoint.position, axis=1))
        cut = corner.radius / math.cos(corner.turn / 2) - corner.radius
        assert gap <= cut + V_MAX * PERIOD, (corner.waypoint, gap, cut)
    # the profile's limits hold on the tangent; the centripetal one on the limited profile
    assert np.all(samples.s_dot <= V_MAX * (1 + 1e-9))
    assert np.all(np.abs(samples.s_ddot) <= A_MAX * (1 + 1e-9))
    acceleration = np.linalg.norm(slow.acceleration, axis=1)  # tangential and centripetal
    assert acceleration.max() <= math.hypot(LATERAL, A_MAX) * (1 + 1e-6), report
    assert np.linalg.norm(samples.acceleration, axis=1).max() > 5 * LATERAL, report


@pytest.mark.parametrize('override', [1.0, 0.5])
def test_a_speed_override_stretches_the_papers_motion_in_time(override):
    path = CartesianPath(paper_waypoints(), radius=RADIUS)
    full = sample_path(path, path_profile(path, V_MAX, A_MAX), PERIOD)
    samples = sample_path(path, path_profile(path, V_MAX, A_MAX), PERIOD, override)
    assert len(samples) == pytest.approx((len(full) - 1) / override + 1, abs=1)
    assert samples.s_dot.max() == pytest.approx(V_MAX * override)
    np.testing.assert_allclose(samples.position[-1], full.position[-1], atol=1e-12)
