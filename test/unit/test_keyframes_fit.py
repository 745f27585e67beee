"""Keyframes from a recorded demonstration (trajectory/keyframes.py)."""

from pathlib import Path

import numpy as np
import pytest

from sweetie_motion.trajectory.keyframes import (
    DEFAULT_TOLERANCE, estimate_noise, fit_keyframes, KeyframeError, smooth_recording,
)
from sweetie_motion.trajectory.spline import build_spline

#: a servo's measurement noise [rad]
NOISE = 0.005
KEYFRAME_TIMES = np.array([0.0, 0.8, 1.5, 2.6, 3.2, 4.5])
KEYFRAMES = np.array([[0.0, 0.0, 0.0], [0.6, -0.3, 0.2], [0.2, 0.4, 0.2], [0.9, 0.1, -0.5],
                      [0.5, 0.1, -0.2], [0.0, 0.0, 0.0]])


def record(spline, times, noise=0.0, seed=0):
    """Return the spline sampled at ``times`` plus white measurement noise [rad]."""
    positions = spline.sample_many(times)[0]
    return positions + np.random.default_rng(seed).normal(0.0, noise, positions.shape)


def deviation(fit, times, recording, interpolation='akima'):
    """Return per joint the largest |keyframes' spline - recording|, checked here."""
    spline = build_spline(fit.times, fit.positions, interpolation=interpolation)
    return np.max(np.abs(spline.sample_many(times)[0] - recording), axis=0)


@pytest.mark.parametrize('interpolation, most', [('akima', 6), ('cubic', 10)])
def test_a_recorded_spline_gives_about_its_keyframes_back(interpolation, most):
    spline = build_spline(KEYFRAME_TIMES, KEYFRAMES, interpolation=interpolation)
    times = np.round(np.arange(0.0, 4.5 + 1e-9, 0.01), 6)
    recording = record(spline, times)
    fit = fit_keyframes(times, recording, 0.01, interpolation=interpolation)
    assert len(fit.indices) <= most
    assert np.all(deviation(fit, times, recording, interpolation) <= 0.01 + 1e-12)
    assert fit.times[0] == 0.0 and fit.times[-1] == 4.5
    assert np.array_equal(fit.positions, recording[fit.indices])
    if interpolation == 'akima':
        assert fit.times == pytest.approx(KEYFRAME_TIMES)
        assert np.max(fit.max_deviation) < 1e-9


def test_the_tolerance_holds_per_joint_and_a_looser_one_needs_fewer_keyframes():
    spline = build_spline(KEYFRAME_TIMES, KEYFRAMES)
    times = np.arange(0.0, 4.5, 0.01) + np.random.default_rng(3).uniform(0, 0.004, 450)
    recording = record(spline, times, NOISE)
    tolerance = np.array([0.015, 0.05, 0.05])
    fit = fit_keyframes(times, recording, tolerance, joints=['a', 'b', 'c'])
    achieved = deviation(fit, times, recording)
    assert np.all(achieved <= tolerance + 1e-12)
    assert fit.max_deviation == pytest.approx(achieved)
    worst = np.argmax(np.abs(build_spline(fit.times, fit.positions).sample_many(times)[0]
                             - recording), axis=0)
    assert fit.worst_time == pytest.approx(times[worst])
    tight = fit_keyframes(times, recording, 0.015)
    loose = fit_keyframes(times, recording, 0.05)
    assert len(loose.indices) < len(fit.indices) <= len(tight.indices)


def demonstration(seed=1, noise=NOISE):
    """Return a 20 s recording at about 100 Hz: three moves, a 2 s pause, jitter and noise."""
    rng = np.random.default_rng(seed)
    key_times = np.array([0.0, 1.5, 3.0, 5.0, 7.0, 9.0, 11.0, 11.8, 14.0, 16.5, 18.0, 20.0])
    poses = rng.uniform(-0.8, 0.8, (len(key_times), 4))
    poses[5] = poses[4]                           # 7 s .. 9 s: the person holds still
    spline = build_spline(key_times, poses)
    times = np.arange(0.0, 20.0, 0.01) + rng.uniform(-0.003, 0.003, 2000)
    times[0] = 0.0
    return spline, times, record(spline, times, noise, seed)


def test_noise_does_not_become_keyframes():
    truth, times, recording = demonstration()
    fit = fit_keyframes(times, recording)
    assert len(fit.indices) < 0.05 * len(times)
    assert np.all(deviation(fit, times, recording) <= DEFAULT_TOLERANCE + 1e-12)
    # close to the motion itself, not only to the noisy measurement of it
    clean = truth.sample_many(times)[0]
    assert np.all(deviation(fit, times, clean) <= DEFAULT_TOLERANCE + 4 * NOISE)
    assert np.all(np.abs(fit.noise - NOISE) < 0.3 * NOISE)


def test_smoothing_gives_fewer_keyframes_on_a_noisy_recording():
    _, times, recording = demonstration()
    raw = fit_keyframes(times, recording, 0.02)
    smoothed = fit_keyframes(times, recording, 0.02, smoothing=0.03)
    assert len(smoothed.indices) < 0.7 * len(raw.indices)
    signal = smooth_recording(times, recording, 0.03)
    assert np.all(deviation(smoothed, times, signal) <= 0.02 + 1e-12)
    assert np.array_equal(smoothed.positions, signal[smoothed.indices])
    assert 'noisy' in fit_keyframes(times, recording, 0.01).describe()
    assert 'noisy' not in smoothed.describe()


def test_a_pause_is_held_still():
    _, times, recording = demonstration()
    fit = fit_keyframes(times, recording)
    inside = (fit.times > 7.2) & (fit.times < 8.8)
    assert np.count_nonzero(inside) <= 1
    spline = build_spline(fit.times, fit.positions)
    during = np.linspace(7.2, 8.8, 400)
    position, velocity, _ = spline.sample_many(during)
    held = recording[(times > 7.0) & (times < 9.0)].mean(axis=0)
    assert np.max(np.abs(position - held)) <= DEFAULT_TOLERANCE
    assert np.max(np.abs(velocity)) < 0.1          # [rad/s]: no creeping through the pause


def test_irregular_sampling_and_a_dropout():
    truth, times, recording = demonstration(seed=5)
    keep = (times < 12.0) | (times > 12.6)           # 0.6 s without samples
    keep &= np.random.default_rng(2).uniform(size=len(times)) > 0.3   # and 30 % lost
    times, recording = times[keep], recording[keep]
    fit = fit_keyframes(times, recording)
    assert np.all(deviation(fit, times, recording) <= DEFAULT_TOLERANCE + 1e-12)
    assert len(fit.indices) < 0.1 * len(times)


def test_keyframes_become_a_waypoint_list_from_zero():
    spline = build_spline(KEYFRAME_TIMES, KEYFRAMES)
    times = 100.0 + np.arange(0.0, 4.5 + 1e-9, 0.01)      # the recorder's clock
    fit = fit_keyframes(times, record(spline, times - 100.0), 0.01)
    waypoints = fit.to_waypoints(['joint51', 'joint52', 'joint53'])
    assert waypoints.joints == ['joint51', 'joint52', 'joint53']
    assert [w.time for w in waypoints.waypoints] == pytest.approx(list(fit.times - 100.0))
    assert waypoints.waypoints[0].time == 0.0
    assert fit.worst_time[0] >= 100.0
    with pytest.raises(KeyframeError, match='2 joint names for 3'):
        fit.to_waypoints(['a', 'b'])


def test_a_single_sample_and_a_single_joint():
    fit = fit_keyframes([2.0], [[0.1, 0.2]])
    assert list(fit.indices) == [0] and list(fit.times) == [2.0]
    times = np.arange(0, 2, 0.01)
    one = fit_keyframes(times, np.sin(times), 0.01)
    assert one.positions.shape[1] == 1
    assert np.all(deviation(one, times, np.sin(times)[:, None]) <= 0.01 + 1e-12)


@pytest.mark.parametrize('times, positions, tolerance, fragment', [
    ([0.0, 0.01, 0.02], [[0.0], [np.nan], [0.1]], 0.01,
     'sample 2 (t = 0.010 s): position nan of j'),
    ([0.0, 0.01, 0.01], [[0.0], [0.1], [0.1]], 0.01, 'sample 3 (0.010000 s) is not after'),
    ([0.0, np.nan], [[0.0], [0.1]], 0.01, 'sample 2: time nan'),
    ([0.0, 0.01], [[0.0], [0.1], [0.2]], 0.01, '2 times but positions of shape (3, 1)'),
    ([0.0, 0.01], [[0.0], [0.1]], 0.0, 'tolerance 0.0 of j must be > 0'),
    ([0.0, 0.01], [[0.0], [0.1]], [0.01, 0.02], '2 tolerances for 1 joints'),
    ([], [], 0.01, 'non-empty'),
])
def test_bad_recordings_get_a_clear_error(times, positions, tolerance, fragment):
    with pytest.raises(KeyframeError) as caught:
        fit_keyframes(times, positions, tolerance, joints=None if not len(times) else ['j'])
    assert fragment in str(caught.value)


def test_bad_options_get_a_clear_error():
    with pytest.raises(KeyframeError, match='smoothing -1'):
        fit_keyframes([0, 1], [[0], [1]], smoothing=-1)
    with pytest.raises(KeyframeError, match='unknown interpolation'):
        fit_keyframes([0, 1], [[0], [1]], interpolation='linear')


def test_smoothing_keeps_the_ends_and_a_ramp_and_halves_the_noise():
    times = np.sort(np.random.default_rng(4).uniform(0, 10, 1000))
    ramp = np.column_stack([0.3 * times, np.zeros_like(times)])
    assert np.allclose(smooth_recording(times, ramp, 0.05), ramp)
    noisy = ramp + np.random.default_rng(5).normal(0, NOISE, ramp.shape)
    smoothed = smooth_recording(times, noisy, 0.05)
    assert np.array_equal(smoothed[[0, -1]], noisy[[0, -1]])
    assert np.std(smoothed[50:-50] - ramp[50:-50]) < 0.5 * NOISE
    assert estimate_noise(noisy) == pytest.approx([NOISE, NOISE], rel=0.3)


def test_a_smooth_nod_recorded_by_hand_keeps_its_gentle_turns():
    # a real recording (test/data/recorded_nod.csv): the fit once put a keyframe one sample
    # before a turn's required keyframe, and that 10 ms segment bent the spline to 39 rad/s^2
    # where the hand never went above 3, so the editor said the nod would play 1.3 times slower
    data = np.loadtxt(Path(__file__).parents[1] / 'data' / 'recorded_nod.csv', delimiter=',',
                      skiprows=3)
    times, recording = data[:, 0], data[:, 1:]
    fit = fit_keyframes(times, recording, 0.02, smoothing=0.05, joints=['joint51', 'joint53'])
    assert 3 <= len(fit.indices) <= 10
    assert np.all(fit.max_deviation <= 0.02 + 1e-9)
    assert np.diff(fit.times).min() >= 0.1
    spline = build_spline(fit.times, fit.positions, interpolation='akima')
    acceleration = spline.sample_many(np.linspace(fit.times[0], fit.times[-1], 3000))[2]
    hand = np.gradient(np.gradient(smooth_recording(times, recording, 0.1), times, axis=0),
                       times, axis=0)
    # the head's acceleration limit is 20 rad/s^2; the hand's own peak is a few rad/s^2
    assert np.abs(acceleration).max() <= 3.0 * np.abs(hand).max()
    assert np.abs(acceleration).max() < 20.0
