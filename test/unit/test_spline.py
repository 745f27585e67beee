"""Trajectory splines as animators and MoveIt users see them (trajectory/spline.py)."""

import numpy as np
import pytest
from sweetie_motion.trajectory.spline import build_spline, JointSpline, modified_akima_slopes

KINDS = ('akima', 'cubic', 'hermite', 'quintic')


def random_keyframes(rng, k, n, monotone=False):
    """Return non-uniform times starting at 0 and (k, n) positions."""
    times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 1.5, k - 1))])
    positions = rng.uniform(-1.5, 1.5, (k, n))
    if monotone:
        positions = np.sort(positions, axis=0)
        positions[:, ::2] = positions[::-1, ::2]      # some joints rise, others fall
    return times, positions


def spline_of(kind, times, positions, rng):
    """Build a spline of ``kind`` (random knot velocities/accelerations where needed)."""
    shape = np.shape(positions)
    if kind in ('akima', 'cubic'):
        return build_spline(times, positions, interpolation=kind), None, None
    velocities = rng.normal(size=shape)
    if kind == 'hermite':
        return build_spline(times, positions, velocities), velocities, None
    accelerations = rng.normal(size=shape)
    return build_spline(times, positions, velocities, accelerations), velocities, accelerations


def sample_many(spline, ts):
    """Return positions, velocities, accelerations at every time of ``ts``, shape (m, n)."""
    out = [spline.sample(float(t)) for t in ts]
    return tuple(np.array([o[i] for o in out]) for i in range(3))


def interior_times(times, per_segment, margin=1e-3):
    """Return times strictly inside every segment (away from the knots by ``margin``)."""
    return np.concatenate([np.linspace(a + margin, b - margin, per_segment)
                           for a, b in zip(times[:-1], times[1:])])


# --- keyframes -----------------------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
def test_passes_through_every_keyframe(kind):
    rng = np.random.default_rng(1)
    times, positions = random_keyframes(rng, 9, 4)
    spline, _, _ = spline_of(kind, times, positions, rng)
    for t, expected in zip(times, positions):
        position, _, _ = spline.sample(float(t))
        np.testing.assert_allclose(position, expected, atol=1e-12)
    # the left limit at each knot reaches the keyframe too (no jump)
    for t, expected in zip(times[1:], positions[1:]):
        np.testing.assert_allclose(spline.sample(float(t) - 1e-9)[0], expected, atol=1e-7)


def test_akima_velocity_is_zero_at_both_ends():
    rng = np.random.default_rng(2)
    times, positions = random_keyframes(rng, 6, 3, monotone=True)
    slopes = modified_akima_slopes(times, positions)
    assert slopes.shape == positions.shape
    np.testing.assert_array_equal(slopes[0], 0.0)
    np.testing.assert_array_equal(slopes[-1], 0.0)
    assert np.all(np.abs(slopes[1:-1]) > 0)            # monotone data: moving in between
    spline = build_spline(times, positions)
    np.testing.assert_allclose(spline.sample(times[0] + 1e-8)[1], 0.0, atol=1e-5)
    np.testing.assert_allclose(spline.sample(times[-1] - 1e-8)[1], 0.0, atol=1e-5)


def test_a_pause_holds_perfectly_still():
    times = np.array([0.0, 0.4, 1.1, 1.3, 2.6, 3.0])
    positions = np.array([[0.0, 1.0], [0.5, -0.2], [0.5, -0.2], [0.5, -0.2], [-0.3, 0.4],
                          [0.2, 0.4]])
    spline = build_spline(times, positions)
    slopes = modified_akima_slopes(times, positions)
    # the keyframes around the pause, and the ones next to the equal pair at the end
    np.testing.assert_array_equal(slopes[1:4], 0.0)
    assert slopes[4, 1] == 0.0 and slopes[5, 1] == 0.0
    ts = np.linspace(0.4, 1.3, 200)[:-1]      # at 1.3 the next segment starts to accelerate
    p, v, a = sample_many(spline, ts)
    np.testing.assert_allclose(p, np.tile([0.5, -0.2], (len(ts), 1)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(v, 0.0, atol=1e-15)
    np.testing.assert_allclose(a, 0.0, atol=1e-15)
    p, v, _ = sample_many(spline, np.linspace(2.6, 3.0, 50))
    np.testing.assert_allclose(p[:, 1], 0.4, atol=1e-15)
    np.testing.assert_allclose(v[:, 1], 0.0, atol=1e-15)


def test_local_extrema_get_zero_velocity():
    times = np.array([0.0, 0.3, 1.0, 1.2, 2.0])
    positions = np.array([[0.0], [1.0], [-0.5], [0.2], [0.1]])
    slopes = modified_akima_slopes(times, positions)
    np.testing.assert_array_equal(slopes[1:4, 0], 0.0)       # every inner knot is an extremum


@pytest.mark.parametrize('monotone', [True, False])
def test_akima_never_overshoots_the_neighbouring_keyframes(monotone):
    rng = np.random.default_rng(3 if monotone else 4)
    for _ in range(60):
        k = int(rng.integers(3, 9))
        times, positions = random_keyframes(rng, k, 3, monotone=monotone)
        spline = build_spline(times, positions)
        for i in range(k - 1):
            ts = np.linspace(times[i], times[i + 1], 25)
            p, v, _ = sample_many(spline, ts)
            lower = np.minimum(positions[i], positions[i + 1])
            upper = np.maximum(positions[i], positions[i + 1])
            assert np.all(p >= lower - 1e-12), (times, positions, i)
            assert np.all(p <= upper + 1e-12), (times, positions, i)
            # between two keyframes the joint moves one way only
            direction = np.sign(positions[i + 1] - positions[i])
            assert np.all(v * direction >= -1e-12), (times, positions, i)


def test_cubic_overshoots_a_step_where_akima_does_not():
    times = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    positions = np.array([[0.0], [0.0], [1.0], [1.0], [1.0]])
    ts = np.linspace(0.0, 4.0, 401)
    cubic, _, _ = sample_many(build_spline(times, positions, interpolation='cubic'), ts)
    akima, _, _ = sample_many(build_spline(times, positions), ts)
    assert cubic.max() > 1.01 or cubic.min() < -0.01      # the check below can fail
    assert akima.min() >= 0.0 and akima.max() <= 1.0


def test_akima_reproduces_a_straight_line_inside():
    times = np.array([0.0, 0.5, 0.7, 1.6, 2.0, 3.1])
    positions = (0.3 - 0.8 * times)[:, None]
    slopes = modified_akima_slopes(times, positions)
    np.testing.assert_allclose(slopes[1:-1, 0], -0.8, rtol=1e-12)


def test_akima_slopes_respect_the_fritsch_carlson_limit():
    rng = np.random.default_rng(5)
    for _ in range(50):
        times, positions = random_keyframes(rng, 7, 4, monotone=True)
        slopes = modified_akima_slopes(times, positions)
        secants = np.diff(positions, axis=0) / np.diff(times)[:, None]
        limit = 3 * np.minimum(np.abs(secants[:-1]), np.abs(secants[1:]))
        assert np.all(np.abs(slopes[1:-1]) <= limit + 1e-12)
        assert np.all(slopes[1:-1] * secants[1:] >= 0)          # same direction as the data


def test_akima_slopes_of_two_points_are_zero():
    slopes = modified_akima_slopes(np.array([0.0, 1.0]), np.array([[0.0, 1.0], [2.0, -1.0]]))
    np.testing.assert_array_equal(slopes, 0.0)


def test_akima_of_time_reversed_keyframes_is_the_time_reversed_curve():
    rng = np.random.default_rng(6)
    times, positions = random_keyframes(rng, 7, 2)
    end = times[-1]
    forward = build_spline(times, positions)
    backward = build_spline(end - times[::-1], positions[::-1])
    for t in np.linspace(0.0, end, 97):
        np.testing.assert_allclose(forward.sample(float(t))[0],
                                   backward.sample(float(end - t))[0], atol=1e-9)


# --- continuity and derivatives ------------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
def test_velocity_is_continuous_at_the_knots(kind):
    rng = np.random.default_rng(7)
    times, positions = random_keyframes(rng, 8, 3)
    spline, _, _ = spline_of(kind, times, positions, rng)
    eps = 1e-7
    for t in times[1:-1]:
        left = spline.sample(float(t) - eps)
        right = spline.sample(float(t) + eps)
        # a continuous velocity changes by at most ~ 2 eps |acceleration| across the knot
        allowed = 3 * eps * np.maximum(np.abs(left[2]), np.abs(right[2])) + 1e-7
        np.testing.assert_allclose(left[0], right[0], atol=1e-5)
        assert np.all(np.abs(left[1] - right[1]) <= allowed), (t, left[1], right[1])


def test_hermite_reproduces_the_given_velocities():
    rng = np.random.default_rng(8)
    times, positions = random_keyframes(rng, 6, 3)
    velocities = rng.normal(size=positions.shape)
    spline = build_spline(times, positions, velocities)
    for t, v in zip(times[1:-1], velocities[1:-1]):
        np.testing.assert_allclose(spline.sample(float(t))[1], v, atol=1e-12)
        np.testing.assert_allclose(spline.sample(float(t) - 1e-9)[1], v, atol=1e-6)
    np.testing.assert_allclose(spline.sample(times[0] + 1e-9)[1], velocities[0], atol=1e-6)
    np.testing.assert_allclose(spline.sample(times[-1] - 1e-9)[1], velocities[-1], atol=1e-6)


def test_quintic_reproduces_the_given_velocities_and_accelerations():
    rng = np.random.default_rng(9)
    times, positions = random_keyframes(rng, 6, 3)
    velocities = rng.normal(size=positions.shape)
    accelerations = rng.normal(size=positions.shape)
    spline = build_spline(times, positions, velocities, accelerations)
    for t, v, a in zip(times[1:-1], velocities[1:-1], accelerations[1:-1]):
        _, velocity, acceleration = spline.sample(float(t))
        np.testing.assert_allclose(velocity, v, atol=1e-12)
        np.testing.assert_allclose(acceleration, a, atol=1e-12)
        _, velocity, acceleration = spline.sample(float(t) - 1e-9)
        np.testing.assert_allclose(velocity, v, atol=1e-6)
        np.testing.assert_allclose(acceleration, a, atol=1e-5)
    for t, k in ((times[0] + 1e-9, 0), (times[-1] - 1e-9, -1)):
        _, velocity, acceleration = spline.sample(float(t))
        np.testing.assert_allclose(velocity, velocities[k], atol=1e-6)
        np.testing.assert_allclose(acceleration, accelerations[k], atol=1e-5)


@pytest.mark.parametrize('kind', ['akima', 'hermite'])
def test_sample_at_the_first_knot_returns_the_velocity_of_the_first_knot(kind):
    # build_spline documents start_velocity as 'velocity at the first knot'
    times = np.array([0.0, 1.0, 2.0])
    positions = np.array([[0.0], [1.0], [0.5]])
    first = np.array([0.7])
    if kind == 'akima':
        spline = build_spline(times, positions, start_velocity=first)
    else:
        spline = build_spline(times, positions, np.array([[0.7], [0.0], [0.0]]))
    np.testing.assert_allclose(spline.sample(1e-9)[1], first, atol=1e-6)   # the curve's
    np.testing.assert_allclose(spline.sample(0.0)[1], first, atol=1e-12)   # what sample says


@pytest.mark.parametrize('kind', KINDS)
def test_velocity_and_acceleration_match_finite_differences(kind):
    rng = np.random.default_rng(10)
    times, positions = random_keyframes(rng, 7, 3)
    spline, _, _ = spline_of(kind, times, positions, rng)
    h = 1e-5
    for t in interior_times(times, 7, margin=1e-3):
        p, v, a = spline.sample(float(t))
        p_plus, v_plus, _ = spline.sample(float(t) + h)
        p_minus, v_minus, _ = spline.sample(float(t) - h)
        scale = 1.0 + np.abs(v)
        np.testing.assert_allclose((p_plus - p_minus) / (2 * h), v, atol=1e-6 * scale.max())
        np.testing.assert_allclose((v_plus - v_minus) / (2 * h), a,
                                   atol=1e-5 * (1.0 + np.abs(a).max()))
        h2 = 1e-4
        second = (spline.sample(float(t) + h2)[0] - 2 * p + spline.sample(float(t) - h2)[0]
                  ) / h2 ** 2
        np.testing.assert_allclose(second, a, atol=1e-3 * (1.0 + np.abs(a).max()))


def test_cubic_is_c2_with_zero_end_velocities():
    rng = np.random.default_rng(11)
    times, positions = random_keyframes(rng, 8, 3)
    spline = build_spline(times, positions, interpolation='cubic')
    eps = 1e-7
    for t in times[1:-1]:
        left = spline.sample(float(t) - eps)
        right = spline.sample(float(t) + eps)
        np.testing.assert_allclose(left[1], right[1], atol=1e-4)
        np.testing.assert_allclose(left[2], right[2], atol=1e-3)
    np.testing.assert_allclose(spline.sample(times[0] + 1e-9)[1], 0.0, atol=1e-6)
    np.testing.assert_allclose(spline.sample(times[-1] - 1e-9)[1], 0.0, atol=1e-6)


def test_the_c2_check_detects_an_acceleration_jump():
    # guards the check above: hermite with prescribed velocities is only C1
    times = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
    positions = np.array([[0.0], [0.2], [1.0], [1.1], [2.0]])
    hermite = build_spline(times, positions, np.zeros((5, 1)))
    jumps = [abs(hermite.sample(t + 1e-7)[2][0] - hermite.sample(t - 1e-7)[2][0])
             for t in times[1:-1]]
    assert min(jumps) > 1e-1


def test_start_velocity_continues_a_motion_in_progress():
    times = np.array([0.0, 1.0, 2.0])
    positions = np.array([[0.0, 0.0], [0.5, 1.0], [1.0, 0.0]])
    start = np.array([0.4, -0.3])
    for kind in ('akima', 'cubic'):
        spline = build_spline(times, positions, interpolation=kind, start_velocity=start)
        np.testing.assert_allclose(spline.sample(1e-9)[1], start, atol=1e-6)
        np.testing.assert_allclose(spline.sample(2.0 - 1e-9)[1], 0.0, atol=1e-6)
        np.testing.assert_allclose(spline.sample(1.0)[0], positions[1], atol=1e-12)


# --- outside the knots, sizes, errors ------------------------------------------------------------


@pytest.mark.parametrize('kind', KINDS)
def test_end_positions_hold_before_the_first_and_after_the_last_knot(kind):
    rng = np.random.default_rng(12)
    times, positions = random_keyframes(rng, 5, 2)
    times = times + 0.5                                 # the first keyframe at 0.5 s
    spline, _, _ = spline_of(kind, times, positions, rng)
    for t in (-1.0, 0.0, 0.49):
        p, v, a = spline.sample(t)
        np.testing.assert_array_equal(p, positions[0])
        np.testing.assert_array_equal(v, 0.0)
        np.testing.assert_array_equal(a, 0.0)
    for t in (times[-1] + 1e-6, times[-1] + 10.0):
        p, v, a = spline.sample(float(t))
        np.testing.assert_array_equal(p, positions[-1])
        np.testing.assert_array_equal(v, 0.0)
        np.testing.assert_array_equal(a, 0.0)
    assert spline.duration == pytest.approx(times[-1])


def test_sample_returns_copies():
    spline = build_spline([0.0, 1.0], [[0.0], [1.0]])
    p, _, _ = spline.sample(5.0)
    p[0] = 42.0
    assert spline.sample(5.0)[0][0] == 1.0
    p, _, _ = spline.sample(-1.0)
    p[0] = 42.0
    assert spline.sample(-1.0)[0][0] == 0.0


def test_single_point_spline_holds_its_position():
    spline = build_spline([0.0], [[0.3, -0.2, 1.0]])
    assert isinstance(spline, JointSpline)
    assert spline.size == 3
    assert spline.duration == 0.0
    for t in (-1.0, 0.0, 0.5, 100.0):
        p, v, a = spline.sample(t)
        np.testing.assert_array_equal(p, [0.3, -0.2, 1.0])
        np.testing.assert_array_equal(v, [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(a, [0.0, 0.0, 0.0])


def test_two_keyframes_make_a_smooth_symmetric_move():
    spline = build_spline([0.0, 2.0], [[0.0], [1.0]])
    np.testing.assert_allclose(spline.sample(1.0)[0], [0.5], atol=1e-12)
    np.testing.assert_allclose(spline.sample(0.5)[0] + spline.sample(1.5)[0], [1.0],
                               atol=1e-12)
    assert spline.sample(1.0)[1][0] == pytest.approx(0.75)       # 3/2 * mean speed (cubic)


def test_unknown_interpolation_raises_value_error():
    with pytest.raises(ValueError, match='linear'):
        build_spline([0.0, 1.0, 2.0], [[0.0], [1.0], [0.0]], interpolation='linear')


def test_times_and_positions_of_different_lengths_raise_value_error():
    with pytest.raises(ValueError, match='3 times but 2 position rows'):
        build_spline([0.0, 1.0, 2.0], [[0.0], [1.0]])


@pytest.mark.parametrize('kind', KINDS)
def test_two_hundred_points_and_thirty_two_joints(kind):
    rng = np.random.default_rng(13)
    times, positions = random_keyframes(rng, 200, 32)
    spline, _, _ = spline_of(kind, times, positions, rng)
    assert spline.size == 32
    assert spline.coefficients.shape == (199, 6, 32)
    assert spline.duration == pytest.approx(times[-1])
    for t in np.linspace(-1.0, times[-1] + 1.0, 300):
        p, v, a = spline.sample(float(t))
        assert p.shape == v.shape == a.shape == (32,)
        assert np.all(np.isfinite(p)) and np.all(np.isfinite(v)) and np.all(np.isfinite(a))
    np.testing.assert_allclose(spline.sample(float(times[100]))[0], positions[100], atol=1e-12)


def test_joints_are_interpolated_independently():
    rng = np.random.default_rng(14)
    times, positions = random_keyframes(rng, 12, 5)
    together = build_spline(times, positions)
    for j in range(5):
        alone = build_spline(times, positions[:, j:j + 1])
        for t in interior_times(times, 5):
            np.testing.assert_allclose(together.sample(float(t))[0][j],
                                       alone.sample(float(t))[0][0], atol=1e-14)


def test_sampling_many_times_at_once_equals_sampling_each():
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.1, 0.5, 12))
    positions = rng.normal(0, 0.3, (12, 4))
    for velocities in (None, rng.normal(0, 0.2, (12, 4))):
        spline = build_spline(times, positions, velocities)
        grid = np.concatenate([[times[0] - 1.0], np.linspace(times[0], times[-1], 97),
                               [times[-1] + 1.0]])
        many = spline.sample_many(grid)
        for k, t in enumerate(grid):
            for got, expected in zip(many, spline.sample(t)):
                np.testing.assert_allclose(got[k], expected, atol=1e-12)
