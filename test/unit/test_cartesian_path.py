"""Cartesian path geometry: blends, radius reduction, special waypoints, orientation (R-CART-1)."""

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from sweetie_motion.cartesian.frames import euler_zyz, exp_so3, Pose, rotation_angle
from sweetie_motion.cartesian.path import CartesianPath, PathError


def at(x, y, z, rotation=None):
    return Pose((x, y, z), np.eye(3) if rotation is None else rotation)


def vee_of_derivative(rotations, ds):
    """World angular rate from finite differences of rotation matrices: vee(dR/ds R^T)."""
    derivative = (rotations[2:] - rotations[:-2]) / (2 * ds)
    w = np.einsum('nij,nkj->nik', derivative, rotations[1:-1])
    return np.stack([w[:, 2, 1], w[:, 0, 2], w[:, 1, 0]], axis=1)


def interior_samples(path, count=4000, margin=1e-5):
    """Values of s away from every segment junction (finite differences are valid there)."""
    s = np.linspace(0, path.length, count)
    keep = np.ones(len(s), bool)
    for seg in path.segments:
        keep &= np.abs(s - seg.start) > margin
        keep &= np.abs(s - seg.end) > margin
    return s[keep]


# --- blends -------------------------------------------------------------------------------------


def test_right_angle_corner_is_an_arc_of_the_radius_tangent_to_both_lines():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.1)
    kinds = [seg.kind for seg in path.segments]
    assert kinds == ['line', 'arc', 'line']
    line1, arc, line2 = path.segments
    assert line1.length == pytest.approx(0.9)
    assert arc.radius == pytest.approx(0.1)
    assert arc.length == pytest.approx(0.1 * math.pi / 2)
    assert path.length == pytest.approx(1.8 + 0.05 * math.pi)
    # every point of the arc is r from the centre (0.9, 0.1, 0)
    s = np.linspace(arc.start, arc.end, 50)
    points = path.evaluate(s).position
    np.testing.assert_allclose(np.linalg.norm(points - [0.9, 0.1, 0], axis=1), 0.1, atol=1e-12)
    # tangency: the direction is continuous at both ends of the arc
    for junction in (arc.start, arc.end):
        before, after = path.evaluate([junction - 1e-9, junction + 1e-9]).dposition
        np.testing.assert_allclose(before, after, atol=1e-7)
    np.testing.assert_allclose(path.evaluate(arc.start).dposition[0], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(path.evaluate(arc.end).dposition[0], [0, 1, 0], atol=1e-12)


@pytest.mark.parametrize('turn_degrees', [10.0, 45.0, 90.0, 135.0, 170.0])
def test_length_of_a_blended_corner_is_the_analytic_value(turn_degrees):
    turn = math.radians(turn_degrees)
    r, a, b = 0.05, 0.8, 0.6
    direction = np.array([math.cos(turn), math.sin(turn), 0.0])
    corner = np.array([a, 0.0, 0.0])
    path = CartesianPath([at(0, 0, 0), at(*corner), at(*(corner + b * direction))], radius=r)
    d = r * math.tan(turn / 2)
    assert path.length == pytest.approx(a + b - 2 * d + r * turn, rel=1e-12)
    assert path.corners[1].radius == pytest.approx(r)
    # unit speed along lines and arcs: |dp/ds| = 1 everywhere
    sample = path.evaluate(np.linspace(0, path.length, 500))
    np.testing.assert_allclose(np.linalg.norm(sample.dposition, axis=1), 1.0, atol=1e-12)
    # the path never passes closer to the corner than the arc's distance r / cos(turn / 2) - r
    gap = np.min(np.linalg.norm(sample.position - corner, axis=1))
    assert gap >= r / math.cos(turn / 2) - r - 1e-9


def test_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    points = rng.uniform(-0.5, 0.5, (6, 3))
    rotations = [euler_zyz(*rng.uniform(-math.pi, math.pi, 3)) for _ in points]
    path = CartesianPath([Pose(p, r) for p, r in zip(points, rotations)], radius=0.08)
    s = interior_samples(path)
    h = 1e-6
    here, ahead, behind = path.evaluate(s), path.evaluate(s + h), path.evaluate(s - h)
    np.testing.assert_allclose((ahead.position - behind.position) / (2 * h), here.dposition,
                               atol=1e-6)
    np.testing.assert_allclose((ahead.dposition - behind.dposition) / (2 * h), here.ddposition,
                               atol=1e-4)
    stack = np.stack([behind.rotation, here.rotation, ahead.rotation], axis=1)
    numeric = np.array([vee_of_derivative(triple, h)[0] for triple in stack])
    np.testing.assert_allclose(numeric, here.drotation, atol=1e-5)
    np.testing.assert_allclose((ahead.drotation - behind.drotation) / (2 * h), here.ddrotation,
                               atol=1e-3)


def test_orientation_turns_about_one_axis_in_proportion_to_the_path_length():
    end = euler_zyz(0.0, 0.0, 1.2)
    path = CartesianPath([at(0, 0, 0), at(0.5, 0, 0, end)])
    for fraction in (0.0, 0.25, 0.5, 1.0):
        angle = rotation_angle(np.eye(3), path.pose(fraction * path.length).rotation)
        assert float(angle) == pytest.approx(1.2 * fraction, abs=1e-12)
    np.testing.assert_allclose(path.evaluate(0.3).drotation[0], [0, 0, 1.2 / 0.5], atol=1e-12)


def test_angular_rate_is_continuous_through_a_blended_corner():
    # The orientation rate changes from 1 rad over the first line to 0 on the second: KDL's
    # interpolation per segment jumps here, ours ramps over the blend zone.
    path = CartesianPath([at(0, 0, 0), at(0.5, 0, 0, euler_zyz(0, 0, 1.0)),
                          at(0.5, 0.5, 0, euler_zyz(0, 0, 1.0))], radius=0.05)
    corner = path.corners[1]
    assert corner.orientation_blend > 0
    s = np.linspace(0, path.length, 200001)
    rate = path.evaluate(s).drotation
    jumps = np.linalg.norm(np.diff(rate, axis=0), axis=1)
    assert jumps.max() < 1e-3, f'largest step of the angular rate: {jumps.max()}'
    # and the end orientation is the last waypoint's
    np.testing.assert_allclose(path.pose(path.length).rotation, euler_zyz(0, 0, 1.0), atol=1e-12)


def test_segment_angular_rates_bound_the_angular_rate():
    rng = np.random.default_rng(5)
    points = rng.uniform(-0.5, 0.5, (5, 3))
    poses = [Pose(p, euler_zyz(*rng.uniform(-2, 2, 3))) for p in points]
    path = CartesianPath(poses, radius=0.1)
    s = np.linspace(0, path.length, 20000)
    sample = path.evaluate(s)
    rates = np.linalg.norm(sample.drotation, axis=1)
    bound = np.array([path.segments[i].angular_rate for i in sample.segment])
    assert np.all(rates <= bound * (1 + 1e-9) + 1e-12)


# --- radius reduction ---------------------------------------------------------------------------


def test_radius_is_shared_on_a_too_short_segment():
    # Two right angles 0.1 m apart, radius 0.1 asked: each corner needs 0.1 m of the middle
    # segment; they get half of it each, radius 0.05, and the middle line vanishes.
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 0.1, 0), at(0, 0.1, 0)], radius=0.1)
    assert [seg.kind for seg in path.segments] == ['line', 'arc', 'arc', 'line']
    assert [c.radius for c in path.corners[1:3]] == pytest.approx([0.05, 0.05])
    assert path.length == pytest.approx(0.95 + 0.05 * math.pi + 0.95)


def test_radius_shares_are_proportional_to_the_tangent_lengths_asked():
    # corner 2 turns 90 deg (asks d = r), corner 3 turns 45 deg (asks r tan 22.5 deg)
    direction = np.array([-math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0])
    third = np.array([1.0, 0.1, 0.0])
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(*third), at(*(third + direction))],
                         radius=0.2)
    d2, d3 = 0.2, 0.2 * math.tan(math.pi / 8)
    share2, share3 = 0.1 * d2 / (d2 + d3), 0.1 * d3 / (d2 + d3)
    assert path.corners[1].radius == pytest.approx(share2 / math.tan(math.pi / 4))
    assert path.corners[2].radius == pytest.approx(share3 / math.tan(math.pi / 8))


def test_too_large_radius_is_refused_on_request_naming_the_waypoint():
    waypoints = [at(0, 0, 0), at(1, 0, 0), at(1, 0.1, 0), at(0, 0.1, 0)]
    with pytest.raises(PathError, match=r'waypoint 2 .*at most 50\.000 mm fits') as error:
        CartesianPath(waypoints, radius=0.1, reduce_radius=False)
    assert error.value.index == 1 and error.value.number == 2
    CartesianPath(waypoints, radius=0.05, reduce_radius=False)  # fits exactly


def test_a_radius_reduced_below_the_minimum_becomes_a_stop():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1e-4, 0), at(0, 1e-4, 0)],
                         radius=0.1, min_radius=1e-4)
    assert [c.kind for c in path.corners] == ['start', 'stop', 'stop', 'end']
    assert len(path.stops) == 4


def test_radius_per_waypoint():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0), at(0, 1, 0)],
                         radius=[0.0, 0.1, 0.0, 0.0])
    assert [c.kind for c in path.corners] == ['start', 'arc', 'stop', 'end']
    assert path.stops == pytest.approx((0.0, path.corners[2].s, path.length))


# --- coincident, collinear, reversal, orientation only -------------------------------------------


def test_coincident_waypoints_are_dropped_and_reported():
    plain = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.1)
    doubled = CartesianPath([at(0, 0, 0), at(0, 0, 0), at(1, 0, 0), at(1, 0, 5e-7),
                             at(1, 1, 0)], radius=0.1)
    assert doubled.dropped == (1, 3)
    assert doubled.input_indices == (0, 2, 4)
    assert doubled.length == pytest.approx(plain.length, abs=1e-15)
    assert [s.kind for s in doubled.segments] == [s.kind for s in plain.segments]
    assert doubled.segments[-1].waypoint == 4  # segments name the waypoints as given


def test_a_path_of_one_point_is_refused():
    with pytest.raises(PathError, match='waypoint 2 .*no length'):
        CartesianPath([at(0.1, 0.2, 0.3), at(0.1, 0.2, 0.3)])
    with pytest.raises(PathError, match='at least 2 waypoints'):
        CartesianPath([at(0, 0, 0)])


def test_collinear_waypoints_need_no_blend_and_no_stop():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(2, 0, 0)], radius=0.1)
    assert [seg.kind for seg in path.segments] == ['line', 'line']
    assert path.corners[1].kind == 'straight'
    assert path.stops == (0.0, 2.0)
    assert path.length == pytest.approx(2.0)


def test_a_reversal_is_a_stop():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(0.5, 0, 0)], radius=0.1)
    assert path.corners[1].kind == 'stop'
    assert path.length == pytest.approx(1.5)
    np.testing.assert_allclose(path.pose(1.0).position, [1, 0, 0])


def test_orientation_only_move():
    turned = euler_zyz(0, 0, math.pi / 2)
    path = CartesianPath([at(0.3, 0, 0.5), at(0.3, 0, 0.5, turned)], eqradius=0.2)
    assert [seg.kind for seg in path.segments] == ['rotation']
    assert path.length == pytest.approx(math.pi / 2 * 0.2)
    sample = path.evaluate(np.linspace(0, path.length, 11))
    np.testing.assert_allclose(sample.position, np.tile([0.3, 0, 0.5], (11, 1)))
    np.testing.assert_allclose(sample.dposition, 0.0)
    np.testing.assert_allclose(path.pose(path.length).rotation, turned, atol=1e-12)
    np.testing.assert_allclose(sample.drotation, np.tile([0, 0, 1 / 0.2], (11, 1)), atol=1e-12)


def test_orientation_only_move_inside_a_path_stops_at_both_ends():
    turned = euler_zyz(0, 0, 1.0)
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 0, 0, turned), at(1, 1, 0, turned)],
                         radius=0.1)
    assert [seg.kind for seg in path.segments] == ['line', 'rotation', 'line']
    assert [c.kind for c in path.corners] == ['start', 'stop', 'stop', 'end']
    assert path.length == pytest.approx(2.0 + 1.0 * path.eqradius)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize('waypoints, radius, pattern', [
    ([at(0, 0, 0), at(1, 0, 0), Pose((1, 1, 0), 2 * np.eye(3))], 0.0,
     r'waypoint 3 \(index 2\): orientation is not a rotation'),
    ([at(0, 0, 0), (np.array([1.0, np.nan, 0]), np.eye(3))], 0.0,
     r'waypoint 2 \(index 1\): position must be 3 finite'),
    ([at(0, 0, 0), 'here'], 0.0, r'waypoint 2 .*expected a Pose'),
    ([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], [0, -1, 0], r'waypoint 2 .*radius must be'),
    ([at(0, 0, 0), at(1, 0, 0)], [0.1], 'one blend radius per waypoint'),
    ([at(0, 0, 0), at(1, 0, 0)], math.nan, 'radius must be a finite'),
])
def test_bad_waypoints_and_radii_are_refused_naming_the_waypoint(waypoints, radius, pattern):
    with pytest.raises(PathError, match=pattern):
        CartesianPath(waypoints, radius=radius)


def test_waypoints_as_matrices_and_pairs():
    matrix = np.eye(4)
    matrix[:3, 3] = (1, 0, 0)
    path = CartesianPath([(np.zeros(3), np.eye(3)), matrix, at(1, 1, 0)], radius=0.1)
    assert len(path.segments) == 3
    assert 'segment 1 (arc r = 100.0 mm at waypoint 2)' in path.describe()


def test_a_blend_zone_of_the_orientation_is_symmetric_and_reaches_near_the_waypoint():
    # Over a symmetric corner the orientation at the arc's middle is the waypoint's, composed
    # with what the blend of two opposite equal rates leaves: the angle from the waypoint's
    # orientation is small (second order in the blend width).
    rotation = exp_so3([0.0, 0.0, 0.5])
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0, rotation), at(1, 1, 0)], radius=0.05)
    middle = path.corners[1].s
    angle = float(rotation_angle(path.pose(middle).rotation, rotation))
    assert angle < 0.5 * path.corners[1].orientation_blend


# --- random paths ---------------------------------------------------------------------------

coordinate = st.sampled_from([0.0, 0.1, 0.3]) | st.floats(-0.5, 0.5)
waypoint = st.tuples(coordinate, coordinate, coordinate,
                     st.sampled_from([0.0, 0.5]) | st.floats(-math.pi, math.pi))


@settings(max_examples=150, deadline=None)
@given(st.lists(waypoint, min_size=2, max_size=7), st.sampled_from([0.0, 0.02, 0.2, 1.0]))
def test_random_paths_are_continuous_and_end_on_the_last_waypoint(points, radius):
    # repeated coordinates make coincident, collinear, reversing and rotation-only waypoints
    poses = [at(x, y, z, euler_zyz(angle, 0.3, 0.0)) for x, y, z, angle in points]
    try:
        path = CartesianPath(poses, radius=radius)
    except PathError as error:
        assert 'no length' in str(error)
        return
    assert path.length == pytest.approx(sum(seg.length for seg in path.segments))
    assert path.pose(path.length).is_close(poses[path.input_indices[-1]], 1e-9, 1e-9)
    assert path.pose(0.0).is_close(poses[0], 1e-12, 1e-12)
    stops = np.array(path.stops)
    for seg in path.segments[1:]:
        both = path.evaluate([seg.start - 1e-11, seg.start + 1e-11])
        assert np.linalg.norm(both.position[0] - both.position[1]) < 1e-8
        # continuous: what turns over the 2e-11 m between the samples, no more (a short
        # rotation-only blend turns thousands of rad/m)
        turned = 2e-11 * float(np.max(np.linalg.norm(both.drotation, axis=1)))
        assert float(rotation_angle(both.rotation[0], both.rotation[1])) < 1e-7 + 2 * turned
        if np.min(np.abs(stops - seg.start)) > 1e-12:  # tangent continuous except at stops
            np.testing.assert_allclose(both.dposition[0], both.dposition[1], atol=1e-6)
