"""Velocity profiles along a path and the per-cycle Cartesian sampler (R-CART-1)."""

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
import ruckig
from sweetie_motion.cartesian.frames import euler_zyz, Pose
from sweetie_motion.cartesian.path import CartesianPath
from sweetie_motion.cartesian.profile import (
    double_s_profile, path_profile, plan_blocks, ProfileError, sample_path, sample_path_at,
    trapezoidal_profile,
)

SLACK = 1 + 1e-9


def at(x, y, z, rotation=None):
    return Pose((x, y, z), np.eye(3) if rotation is None else rotation)


def fine(profile, override=1.0, count=20001):
    return profile.sample(np.linspace(0, profile.duration_at(override), count), override)


def assert_within(sample, v_max, a_max, j_max=None):
    assert np.all(np.abs(sample.velocity) <= v_max * SLACK), np.abs(sample.velocity).max()
    assert np.all(np.abs(sample.acceleration) <= a_max * SLACK), np.abs(sample.acceleration).max()
    assert np.all(sample.velocity >= -1e-12)  # never backwards
    if j_max is not None:
        assert np.all(np.abs(sample.jerk) <= j_max * SLACK)


# --- trapezoid ----------------------------------------------------------------------------------


def test_trapezoid_reaches_v_max_and_ends_exactly():
    profile = trapezoidal_profile(2.0, 0.5, 0.25)
    assert profile.duration == pytest.approx(2.0 / 0.5 + 0.5 / 0.25)
    sample = fine(profile)
    assert_within(sample, 0.5, 0.25)
    assert sample.velocity.max() == pytest.approx(0.5)
    cycles = profile.sample_period(0.01)
    assert len(cycles.time) == 601
    assert cycles.s[-1] == 2.0 and cycles.velocity[-1] == 0.0 and cycles.acceleration[-1] == 0
    assert np.all(np.diff(cycles.s) >= 0)


def test_trapezoid_is_a_triangle_when_too_short():
    profile = trapezoidal_profile(0.1, 1.0, 0.5)  # v_max would need 2 m
    assert profile.peak_velocity == pytest.approx(math.sqrt(0.5 * 0.1))
    assert profile.duration == pytest.approx(2 * math.sqrt(0.1 / 0.5))
    assert_within(fine(profile), 1.0, 0.5)


def test_velocity_and_acceleration_are_the_derivatives_of_s():
    for profile in (trapezoidal_profile(1.3, 0.4, 0.9), double_s_profile(1.3, 0.4, 0.9, 3.0)):
        t = np.linspace(0, profile.duration, 40001)
        sample = profile.sample(t)
        dt = t[1] - t[0]
        np.testing.assert_allclose(np.gradient(sample.s, dt)[1:-1], sample.velocity[1:-1],
                                   atol=2e-5)
        acceleration = np.gradient(sample.velocity, dt)
        step = np.abs(np.diff(sample.acceleration)) > 1e-3  # a trapezoid's acceleration steps
        smooth = np.ones(len(t), bool)
        smooth[:-1] &= ~step
        smooth[1:] &= ~step
        smooth[[0, -1]] = False
        np.testing.assert_allclose(acceleration[smooth], sample.acceleration[smooth], atol=1e-3)


# --- jerk limited ------------------------------------------------------------------------------


def ruckig_duration(length, v_max, a_max, j_max):
    data = ruckig.InputParameter(1)
    data.current_position, data.current_velocity, data.current_acceleration = [0.0], [0.0], [0.0]
    data.target_position, data.target_velocity, data.target_acceleration = [length], [0.0], [0.0]
    data.max_velocity, data.max_acceleration, data.max_jerk = [v_max], [a_max], [j_max]
    trajectory = ruckig.Trajectory(1)
    result = ruckig.Ruckig(1).calculate(data, trajectory)
    assert result in (ruckig.Result.Working, ruckig.Result.Finished)
    return trajectory.duration


@pytest.mark.parametrize('length, v_max, a_max, j_max', [
    (2.0, 0.5, 0.5, 2.0),    # every limit reached: 7 segments
    (0.3, 1.0, 0.5, 2.0),    # v_max not reached, a_max reached
    (0.01, 1.0, 0.5, 2.0),   # neither: 4 jerk phases
    (2.0, 0.5, 2.0, 1.0),    # a_max never reached (v_max * j_max < a_max^2)
    (1e-5, 0.3, 1.0, 10.0),
])
def test_double_s_is_within_its_limits_and_as_fast_as_ruckig(length, v_max, a_max, j_max):
    profile = double_s_profile(length, v_max, a_max, j_max)
    sample = fine(profile)
    assert_within(sample, v_max, a_max, j_max)
    assert profile.duration == pytest.approx(ruckig_duration(length, v_max, a_max, j_max),
                                             rel=1e-6)
    end = profile.sample_period(0.01)
    assert end.s[-1] == length and end.velocity[-1] == 0.0
    # continuous acceleration: no step between samples larger than the jerk allows
    dt = sample.time[1] - sample.time[0]
    assert np.max(np.abs(np.diff(sample.acceleration))) <= j_max * dt * SLACK


def test_override_plays_the_profile_slower_in_time():
    profile = double_s_profile(1.0, 0.5, 1.0, 5.0)
    slow = fine(profile, override=0.5)
    assert profile.duration_at(0.5) == pytest.approx(2 * profile.duration)
    assert_within(slow, 0.25, 0.25, 5.0 / 8)
    full = profile.sample(slow.time * 0.5)
    np.testing.assert_allclose(slow.s, full.s)
    np.testing.assert_allclose(slow.velocity, full.velocity * 0.5)
    assert len(profile.sample_period(0.01, 0.5).time) == math.ceil(
        profile.duration_at(0.5) / 0.01 - 1e-9) + 1


@pytest.mark.parametrize('override', [0.0, -0.5, 1.5, math.nan, 'fast'])
def test_bad_override_is_refused(override):
    with pytest.raises(ProfileError, match='override'):
        trapezoidal_profile(1.0, 1.0, 1.0).sample([0.0], override)


@pytest.mark.parametrize('args, name', [((1.0, 0.0, 1.0), 'v_max'), ((1.0, 1.0, -1.0), 'a_max'),
                                        ((1.0, math.inf, 1.0), 'v_max')])
def test_bad_limits_are_refused(args, name):
    with pytest.raises(ProfileError, match=name):
        trapezoidal_profile(*args)


# --- blocks with speed caps -------------------------------------------------------------------


@pytest.mark.parametrize('jerk', [None, 4.0])
def test_speed_caps_are_kept_in_each_block(jerk):
    lengths, caps = [0.5, 0.1, 0.6, 0.05], [0.6, 0.1, 0.8, 0.3]
    profile = plan_blocks(lengths, caps, 1.0, jerk)
    sample = fine(profile, count=50001)
    assert_within(sample, 0.8, 1.0, jerk)
    edges = np.cumsum([0.0] + lengths)
    for start, end, cap in zip(edges[:-1], edges[1:], caps):
        inside = (sample.s >= start) & (sample.s <= end)
        assert np.all(sample.velocity[inside] <= cap * SLACK), (start, end)
    assert sample.s[-1] == pytest.approx(sum(lengths))


def test_a_junction_cap_of_zero_is_a_stop():
    profile = plan_blocks([0.5, 0.5], [1.0, 1.0], 2.0, None, [0.0])
    assert profile.blocks[0].exit == 0.0 and profile.blocks[1].entry == 0.0
    sample = fine(profile)
    middle = np.argmin(np.abs(sample.s - 0.5))
    assert sample.velocity[middle] < 0.05


# --- profiles of paths -------------------------------------------------------------------------


def corner_path():
    return CartesianPath([at(0, 0, 0), at(0.5, 0, 0), at(0.5, 0.02, 0), at(0, 0.02, 0)],
                         radius=0.05)


def test_lateral_acceleration_is_limited_on_arcs():
    path = corner_path()
    profile = path_profile(path, v_max=0.5, a_max=1.0, lateral_acceleration=0.5)
    samples = sample_path_at(path, profile, np.linspace(0, profile.duration, 20001))
    arcs = np.array([path.segments[i].kind == 'arc' for i in samples.segment])
    radii = np.array([path.segments[i].radius for i in samples.segment])
    lateral = samples.s_dot[arcs] ** 2 / radii[arcs]
    assert lateral.max() <= 0.5 * SLACK
    unlimited = path_profile(path, v_max=0.5, a_max=1.0)
    assert unlimited.duration < profile.duration  # the limit costs time (and is real)


def test_angular_speed_is_limited():
    path = CartesianPath([at(0, 0, 0), at(0.3, 0, 0, euler_zyz(0, 0, 2.0)),
                          at(0.3, 0.3, 0, euler_zyz(0, 1.0, 2.0))], radius=0.05)
    profile = path_profile(path, v_max=0.5, a_max=1.0, angular_speed=0.8)
    samples = sample_path_at(path, profile, np.linspace(0, profile.duration, 20001))
    assert np.linalg.norm(samples.angular_velocity, axis=1).max() <= 0.8 * SLACK


def test_move_speeds_cap_their_segments():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.1)
    profile = path_profile(path, v_max=1.0, a_max=2.0, speeds=[None, None, 0.2])
    samples = sample_path_at(path, profile, np.linspace(0, profile.duration, 20001))
    on_last = samples.segment >= 1  # the arc and the line to waypoint 3
    assert samples.s_dot[on_last].max() <= 0.2 * SLACK
    assert samples.s_dot.max() > 0.9


def test_a_stop_corner_comes_to_rest():
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0)], radius=0.0)
    profile = path_profile(path, v_max=0.5, a_max=1.0)
    assert [b.entry for b in profile.blocks] == [0.0, 0.0]
    samples = sample_path(path, profile, 0.01)
    assert np.all(np.linalg.norm(samples.acceleration, axis=1) <= 1.0 * SLACK)


# --- the sampler ---------------------------------------------------------------------------------


def test_sampled_velocities_and_accelerations_match_finite_differences():
    rng = np.random.default_rng(4)
    poses = [Pose(p, euler_zyz(*rng.uniform(-1, 1, 3))) for p in rng.uniform(-0.5, 0.5, (5, 3))]
    path = CartesianPath(poses, radius=0.08)
    profile = path_profile(path, 0.4, 1.0, jerk=5.0, lateral_acceleration=1.0)
    t = np.linspace(0, profile.duration, 200001)
    samples = sample_path_at(path, profile, t)
    dt = t[1] - t[0]
    # central differences need both neighbours on the same segment (the curvature, and so
    # the acceleration, steps from a line to an arc)
    same = np.zeros(len(t), bool)
    same[1:-1] = (samples.segment[:-2] == samples.segment[1:-1]) & (
        samples.segment[2:] == samples.segment[1:-1])
    assert same.sum() > 0.99 * len(t)
    velocity = np.gradient(samples.position, dt, axis=0)
    np.testing.assert_allclose(velocity[same], samples.velocity[same], atol=1e-6)
    acceleration = np.gradient(samples.velocity, dt, axis=0)
    np.testing.assert_allclose(acceleration[same], samples.acceleration[same], atol=2e-3)
    r = samples.rotation
    derivative = (r[2:] - r[:-2]) / (2 * dt)
    w = np.einsum('nij,nkj->nik', derivative, r[1:-1])
    omega = np.stack([w[:, 2, 1], w[:, 0, 2], w[:, 1, 0]], axis=1)
    # (2e-5: at the ends of an orientation blend the angular acceleration steps)
    np.testing.assert_allclose(omega, samples.angular_velocity[1:-1], atol=2e-5)
    alpha = np.gradient(samples.angular_velocity, dt, axis=0)
    edges = [c.s + side * c.orientation_blend for c in path.corners for side in (-1, 1)
             if c.orientation_blend > 0]  # where the angular acceleration steps
    smooth = same & np.all(np.abs(samples.s[:, None] - np.array(edges)) > 2e-5, axis=1)
    np.testing.assert_allclose(alpha[smooth], samples.angular_acceleration[smooth], atol=2e-3)


def test_sampling_per_cycle_ends_exactly_at_the_last_waypoint():
    last = Pose((1.0, 1.0, 0.2), euler_zyz(0.3, 0.2, 0.1))
    path = CartesianPath([at(0, 0, 0), at(1, 0, 0), last], radius=0.1)
    profile = path_profile(path, 0.3, 0.5)
    samples = sample_path(path, profile, 0.01, override=0.8)
    assert len(samples) == math.ceil(profile.duration / 0.8 / 0.01 - 1e-9) + 1
    assert samples.time[1] == pytest.approx(0.01)
    np.testing.assert_allclose(samples.position[-1], last.position, atol=1e-12)
    np.testing.assert_allclose(samples.rotation[-1], last.rotation, atol=1e-12)
    np.testing.assert_allclose(samples.velocity[-1], 0.0)
    assert samples.segment_of(len(samples) - 1).kind == 'line'


def test_a_profile_of_another_path_is_refused():
    path = corner_path()
    with pytest.raises(ProfileError, match='profile'):
        sample_path(path, trapezoidal_profile(path.length + 0.1, 0.5, 1.0), 0.01)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-4, 2.0), st.floats(0.01, 2.0), st.booleans()),
                min_size=1, max_size=6),
       st.floats(0.05, 5.0), st.one_of(st.none(), st.floats(0.1, 50.0)))
def test_random_blocks_keep_every_limit_and_end_exactly(blocks, a_max, jerk):
    lengths = [b[0] for b in blocks]
    caps = [b[1] for b in blocks]
    stops = [0.0 if b[2] else math.inf for b in blocks[1:]]
    profile = plan_blocks(lengths, caps, a_max, jerk, stops)
    sample = fine(profile, count=4001)
    assert_within(sample, max(caps), a_max, jerk)
    edges = np.cumsum([0.0] + lengths)
    block = np.clip(np.searchsorted(edges, sample.s, side='right') - 1, 0, len(caps) - 1)
    assert np.all(sample.velocity <= np.array(caps)[block] * SLACK + 1e-9)
    assert np.all(np.diff(sample.s) >= -1e-12)
    end = profile.sample_period(0.01)
    assert end.s[-1] == pytest.approx(sum(lengths), abs=0) and end.velocity[-1] == 0.0
    for junction, stop in zip(profile.blocks[1:], stops):
        if stop == 0.0:
            assert junction.entry == 0.0
