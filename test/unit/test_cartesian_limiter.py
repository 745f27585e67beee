"""Workspace zones before IK, joint limits and branch flips after it (R-CART-2)."""

import math

import numpy as np
import pytest
from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.limiter import (
    Box, BranchFlipViolation, check_branch_flips, find_branch_flips, HalfSpace,
    JointLimiter, JointLimitViolation, Sphere, WorkspaceLimiter, ZoneConfigError,
    zones_from_config, ZoneViolation,
)
from sweetie_motion.cartesian.path import CartesianPath
from sweetie_motion.cartesian.profile import path_profile, sample_path
from sweetie_motion.model.robot_model import JointLimits
import yaml

TIMES = np.arange(4) * 0.01


def at(x, y, z):
    return Pose((x, y, z), np.eye(3))


# --- zones --------------------------------------------------------------------------------------


@pytest.mark.parametrize('zone, inside, touching, outside', [
    (Box(np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0]), 'box'),
     [0.5, 0.5, 0.5], [1.0, 0.5, 0.2], [1.0 + 1e-9, 0.5, 0.2]),
    (Sphere(np.array([0.0, 0.0, 1.0]), 0.5, 'ball'),
     [0.1, 0.0, 1.1], [0.0, 0.5, 1.0], [0.0, 0.5 + 1e-9, 1.0]),
    (HalfSpace(np.array([0.0, 0.0, 0.1]), np.array([0.0, 0.0, -1.0]), 'floor'),
     [3.0, -2.0, 0.0], [0.3, 0.3, 0.1], [0.3, 0.3, 0.1 + 1e-9]),
])
def test_each_zone_kind_inside_touching_outside(zone, inside, touching, outside):
    limiter = WorkspaceLimiter([zone])
    limiter.check_positions([[5.0, 5.0, 5.0], outside], TIMES[:2])
    for point in (inside, touching):
        with pytest.raises(ZoneViolation) as error:
            limiter.check_positions([[5.0, 5.0, 5.0], outside, point], TIMES[:3])
        assert error.value.zone == zone.name and error.value.zone_index == 0
        assert error.value.sample == 2 and error.value.time == pytest.approx(0.02)
        assert zone.name in str(error.value) and 't = 0.020 s' in str(error.value)


def test_a_margin_grows_the_zones():
    ball = Sphere(np.zeros(3), 0.1, 'ball')
    WorkspaceLimiter([ball]).check_positions([[0.12, 0, 0]], [0.0])
    with pytest.raises(ZoneViolation, match='ball'):
        WorkspaceLimiter([ball], margin=0.03).check_positions([[0.12, 0, 0]], [0.0])


def test_a_sampled_path_through_a_box_names_the_zone_the_segment_and_the_time():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.1)
    profile = path_profile(path, 0.5, 1.0)
    samples = sample_path(path, profile, 0.01)
    fixture = Box(np.array([0.95, 0.4, -0.1]), np.array([1.05, 0.6, 0.1]), 'fixture')
    limiter = WorkspaceLimiter([Sphere(np.array([0, 0, 2.0]), 0.1, 'lamp'), fixture])
    with pytest.raises(ZoneViolation) as error:
        limiter.check(samples)
    violation = error.value
    assert violation.zone == 'fixture' and violation.zone_index == 1
    assert violation.segment_index == 2 and violation.segment_kind == 'line'
    first = violation.sample
    assert samples.position[first, 0] == pytest.approx(1.0)
    assert samples.position[first, 1] >= 0.4 and samples.position[first - 1, 1] < 0.4
    assert violation.time == pytest.approx(samples.time[first])
    assert 'segment 2 (line to waypoint 3)' in str(violation)
    WorkspaceLimiter([Sphere(np.array([0, 0, 2.0]), 0.1, 'lamp')]).check(samples)


def test_zones_from_the_robot_yaml():
    document = yaml.safe_load("""
        robot:
          workspace:
            margin: 0.01
            forbidden:
              - box: {min: [0.3, -0.2, 0.0], max: [0.6, 0.2, 0.4]}
                name: fixture
              - sphere: {center: [0, 0, 1.2], radius: 0.15}
              - half_space: {point: [0, 0, 0.05], normal: [0, 0, -2]}
    """)
    limiter = WorkspaceLimiter.from_config(document['robot']['workspace'])
    assert [z.name for z in limiter.zones] == ['fixture', 'forbidden[1] (sphere)',
                                               'forbidden[2] (half_space)']
    assert limiter.margin == 0.01
    np.testing.assert_allclose(limiter.zones[2].normal, [0, 0, -1])
    with pytest.raises(ZoneViolation, match='half_space'):
        limiter.check_positions([[1.0, 1.0, 0.055]], [0.0])  # within the margin of the floor
    assert WorkspaceLimiter.from_config(None).zones == ()


@pytest.mark.parametrize('entries, where, pattern', [
    ({'box': {}}, r'robot\.workspace\.forbidden', 'expected a list of zones'),
    ([42], r'robot\.workspace\.forbidden\[0\]', 'expected a mapping'),
    ([{'cube': {}}], r'robot\.workspace\.forbidden\[0\]\.cube', 'unknown key'),
    ([{'box': {'min': [0, 0, 0], 'max': [1, 1, 1]}, 'sphere': {}}],
     r'robot\.workspace\.forbidden\[0\]', 'exactly one of'),
    ([{'sphere': {'center': [0, 0, 0], 'radius': 1}}, {'sphere': {'center': [0, 0, 0]}}],
     r'robot.workspace.forbidden\[1\] \(sphere\).radius', 'missing'),
    ([{'sphere': {'center': [0, 0, 0], 'radius': -1}}],
     r'forbidden\[0\] \(sphere\).radius', 'expected a number > 0'),
    ([{'sphere': {'center': [0, 0], 'radius': 1}}], r'\(sphere\).center', 'expected 3'),
    ([{'box': {'min': [0, 2, 0], 'max': [1, 1, 1]}}], r'\(box\).min', 'above max on y'),
    ([{'box': {'min': [0, 0, 0], 'max': [1, 1, 'a']}}], r'\(box\).max', 'expected 3'),
    ([{'half_space': {'point': [0, 0, 0], 'normal': [0, 0, 0]}}], r'\(half_space\).normal',
     'must not be zero'),
    ([{'half_space': {'point': [0, 0, 0], 'normal': [0, 0, 1], 'offset': 1}}],
     r'\(half_space\).offset', 'unknown key'),
    ([{'box': {'min': [0, 0, 0], 'max': [1, 1, 1]}, 'name': ''}], r'\(box\).name',
     'non-empty'),
])
def test_zone_config_errors_name_the_entry(entries, where, pattern):
    with pytest.raises(ZoneConfigError, match=f'{where}: .*{pattern}'):
        zones_from_config(entries)


def test_workspace_config_errors():
    with pytest.raises(ZoneConfigError, match=r'robot.workspace.margin: expected a number >= 0'):
        WorkspaceLimiter.from_config({'margin': -1})
    with pytest.raises(ZoneConfigError, match=r'robot.workspace.zones: unknown key'):
        WorkspaceLimiter.from_config({'zones': []})


# --- joint limits ------------------------------------------------------------------------------


def smooth_motion(count=201, period=0.01):
    """Return a rest-to-rest motion of the 6 arm joints well within their limits."""
    t = np.arange(count) * period
    shape = 0.5 - 0.5 * np.cos(math.pi * t / t[-1])
    q = np.outer(shape, [0.5, -0.3, 0.4, 0.6, -0.5, 0.8])
    return t, q


def test_a_motion_within_the_limits_passes(arm):
    t, q = smooth_motion()
    JointLimiter.from_model(arm, 'arm').check(q, t)


def test_position_beyond_a_limit_names_the_joint_and_the_time(arm):
    limiter = JointLimiter.from_model(arm, 'arm')
    ramp = np.linspace(0, 3.0, 400)  # joint3: 2.6 rad at most, reached at sample 347
    with pytest.raises(JointLimitViolation, match='joint3 position 2.6') as error:
        limiter.check(np.outer(ramp, [0, 0, 1, 0, 0, 0]), np.arange(400) * 0.01)
    violation = error.value
    assert (violation.joint, violation.quantity) == ('joint3', 'position')
    assert violation.limit == pytest.approx(2.6)
    assert ramp[violation.sample] > 2.6 >= ramp[violation.sample - 1]
    assert violation.time == pytest.approx(violation.sample * 0.01)
    assert violation.segment_index is None  # a joint-space motion
    low = np.outer(-ramp, [0, 1, 0, 0, 0, 0])  # joint2: -2.4 rad at least
    with pytest.raises(JointLimitViolation, match='joint2 position -2.4.* < limit -2.4'):
        limiter.check(low, np.arange(400) * 0.01)


def test_the_earliest_violation_is_reported(arm):
    limiter = JointLimiter.from_model(arm, 'arm')
    t, q = smooth_motion()
    q[150:, 4] += 0.3  # joint5 jumps at sample 150 (a velocity of 30 rad/s), within its range
    q[180:, 0] += 3.0  # joint1 beyond its range later
    with pytest.raises(JointLimitViolation) as error:
        limiter.check(q, t)
    # the jump makes a velocity and an acceleration at sample 150: the velocity is named
    assert (error.value.joint, error.value.quantity, error.value.sample) == ('joint5',
                                                                             'velocity', 150)
    assert 'joint5 velocity 29.7' in str(error.value) and 't = 1.500 s' in str(error.value)


def test_velocity_and_acceleration_limits(arm):
    limiter = JointLimiter.from_model(arm, 'arm')
    t = np.arange(100) * 0.01
    fast = np.zeros((100, 6))
    fast[:, 0] = 2.7 * t  # joint1: 2.6 rad/s at most
    with pytest.raises(JointLimitViolation) as error:
        limiter.check(fast, t)
    assert (error.value.joint, error.value.quantity, error.value.sample) == ('joint1',
                                                                             'velocity', 1)
    assert error.value.value == pytest.approx(2.7) and error.value.limit == pytest.approx(2.6)
    limiter.check(fast * 2.6 / 2.7 * (1 - 1e-9), t)
    t = t[:10]  # short enough to stay within the velocity limits
    jerky = np.zeros((10, 6))
    jerky[:, 5] = 0.5 * 13.0 * t ** 2  # joint6: 12 rad/s^2 at most, 13 from the start
    with pytest.raises(JointLimitViolation) as error:
        limiter.check(jerky, t)
    assert (error.value.joint, error.value.quantity) == ('joint6', 'acceleration')
    assert error.value.value == pytest.approx(13.0)
    limiter.check(jerky * 12.0 / 13.0, t)


def test_joint_violation_on_a_sampled_path_names_the_segment():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.1)
    samples = sample_path(path, path_profile(path, 0.5, 1.0), 0.01)
    limits = JointLimits(np.array([-1.0]), np.array([1.5]), np.array([1.0]), np.array([5.0]),
                         np.array([math.inf]))
    with pytest.raises(JointLimitViolation) as error:
        JointLimiter(['j'], limits).check_samples(samples, samples.s[:, None])
    assert error.value.quantity == 'position'
    assert error.value.segment_index == 2 and error.value.segment_kind == 'line'
    assert samples.s[error.value.sample] > 1.5 >= samples.s[error.value.sample - 1]


def test_joint_limiter_refuses_mismatched_shapes(arm):
    limiter = JointLimiter.from_model(arm, 'arm')
    with pytest.raises(ValueError, match='shape'):
        limiter.check(np.zeros((10, 5)), np.arange(10) * 0.01)
    with pytest.raises(ValueError, match='increasing'):
        limiter.check(np.zeros((3, 6)), [0.0, 0.0, 0.01])


# --- branch flips ------------------------------------------------------------------------------


def flip_case():
    path = CartesianPath([at(0.5, 0, 0.5), at(0.5, 0.5, 0.5), at(0, 0.5, 0.5)], radius=0.05)
    samples = sample_path(path, path_profile(path, 0.3, 1.0), 0.01)
    # joints following the tool smoothly: about 2 rad per metre of path
    q = np.stack([2.0 * samples.s, -1.0 * samples.s, 0.5 * samples.s], axis=1)
    return samples, q


def test_smooth_joint_motion_has_no_flips():
    samples, q = flip_case()
    assert find_branch_flips(samples, q, ['a', 'b', 'c']) == []
    check_branch_flips(samples, q, ['a', 'b', 'c'])


def test_a_wrist_flip_is_flagged_with_the_time_and_the_joint():
    samples, q = flip_case()
    q[200:, 2] += math.pi  # IK switched to the other wrist solution
    flips = find_branch_flips(samples, q, ['a', 'b', 'c'])
    assert [(f.sample, f.joint) for f in flips] == [(200, 'c')]
    assert flips[0].time == pytest.approx(samples.time[200])
    assert flips[0].step == pytest.approx(math.pi, abs=0.01)
    with pytest.raises(BranchFlipViolation, match=r'c jumps 3\.1.* t = 2\.000 s') as error:
        check_branch_flips(samples, q, ['a', 'b', 'c'])
    assert error.value.segment_kind in ('line', 'arc')


def test_joints_swinging_while_the_tool_stands_still_are_flagged():
    samples, q = flip_case()
    q[-5:, 0] += np.linspace(0.1, 0.5, 5)  # the tool is at rest at the end
    flips = find_branch_flips(samples, q, ['a', 'b', 'c'])
    assert flips and flips[0].joint == 'a' and flips[0].sample == len(samples) - 5
