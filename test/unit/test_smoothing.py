"""Smoothing filters (R-SYS-4): step responses, settling, continuity after reset."""

import numpy as np
import pytest
from sweetie_motion.core.smoothing import (
    create_filter, filter_parameters, REGISTRY, SmoothingConfigError,
)

PERIOD = 0.01


def run(name, steps, ref_position, ref_velocity=None, start=(0.0, 0.0), **params):
    f = create_filter(name, ['a'], PERIOD, params)
    f.reset(np.array([start[0]]), np.array([start[1]]))
    out_p, out_v = [], []
    for k in range(steps):
        rp = ref_position(k) if callable(ref_position) else ref_position
        rv = 0.0 if ref_velocity is None else (
            ref_velocity(k) if callable(ref_velocity) else ref_velocity)
        p, v = f.update(np.zeros(1), np.zeros(1), np.array([rp]), np.array([rv]))
        out_p.append(p[0])
        out_v.append(v[0])
    return np.array(out_p), np.array(out_v)


def test_registry_has_the_required_filters():
    assert {'none', 'critically_damped', 'transient', 'jerk_limited'} <= set(REGISTRY)
    assert 'transient_time' in filter_parameters('critically_damped')


def test_critically_damped_step_settles_in_transient_time_without_overshoot():
    p, v = run('critically_damped', 200, 1.0, transient_time=0.4)
    assert p.max() <= 1.0 + 1e-12            # no overshoot
    assert np.all(np.diff(p) >= -1e-12)      # monotonic
    settle = np.argmax(np.abs(p - 1.0) < 0.02) * PERIOD + PERIOD
    assert settle == pytest.approx(0.4, abs=0.02)
    assert p[0] < 0.02                       # no jump at the start
    assert abs(p[-1] - 1.0) < 1e-6


def test_critically_damped_follows_a_ramp_without_lag():
    speed = 0.5
    p, v = run('critically_damped', 300, lambda k: speed * (k + 1) * PERIOD, speed,
               start=(0.0, speed))
    np.testing.assert_allclose(p, speed * (np.arange(300) + 1) * PERIOD, atol=1e-9)
    np.testing.assert_allclose(v, speed, atol=1e-9)


def test_transient_fades_the_offset_then_follows_exactly():
    ref = lambda k: 0.2 * np.sin(2 * (k + 1) * PERIOD)  # noqa: E731
    dref = lambda k: 0.4 * np.cos(2 * (k + 1) * PERIOD)  # noqa: E731
    p, v = run('transient', 150, ref, dref, start=(0.5, 0.0), transient_time=0.5)
    exact = np.array([ref(k) for k in range(150)])
    assert abs(p[0] - 0.5) < 0.01              # starts where the motion was
    np.testing.assert_allclose(p[50:], exact[50:], atol=1e-12)  # exactly the reference after T
    assert np.abs(np.diff(p)).max() < 0.02     # continuous


def test_transient_continues_the_velocity_at_reset():
    p, v = run('transient', 60, 0.0, 0.0, start=(0.0, 1.0), transient_time=0.5)
    assert v[0] == pytest.approx(1.0, abs=0.06)
    assert p[1] > p[0] > 0


def test_jerk_limited_respects_its_limits():
    p, v = run('jerk_limited', 400, 1.0, max_velocity=1.0, max_acceleration=4.0,
               max_jerk=40.0)
    assert np.abs(v).max() <= 1.0 + 1e-6
    acceleration = np.diff(v) / PERIOD
    assert np.abs(acceleration).max() <= 4.0 + 1e-3
    assert np.abs(np.diff(acceleration) / PERIOD).max() <= 40.0 * 1.01
    assert p.max() <= 1.0 + 1e-9 and abs(p[-1] - 1.0) < 1e-9


def test_jerk_limited_uses_per_joint_overrides():
    f = create_filter('jerk_limited', ['slow', 'fast'], PERIOD, {'max_velocity': 2.0},
                      {'slow': {'max_velocity': 0.2}, 'not_mine': {'max_velocity': 9}})
    f.reset(np.zeros(2), np.zeros(2))
    for _ in range(50):
        p, v = f.update(None, None, np.ones(2), np.zeros(2))
    assert abs(v[0]) <= 0.2 + 1e-9 and v[1] > 1.0


@pytest.mark.parametrize('name', ['critically_damped', 'transient', 'jerk_limited'])
def test_reset_in_motion_makes_no_jump(name):
    f = create_filter(name, ['a', 'b'], PERIOD, {})
    f.reset(np.array([0.3, -0.2]), np.array([0.5, 0.0]))
    p, v = f.update(None, None, np.array([1.0, 1.0]), np.zeros(2))
    # the reference is 0.7 and 1.2 rad away: the first output moves a few hundredths at most,
    # and joint a keeps going the way it went
    assert np.all(np.abs(p - [0.3, -0.2]) < 0.03)
    assert p[0] > 0.3 + 0.5 * PERIOD * 0.9


def test_bad_parameters_are_clear_errors():
    with pytest.raises(SmoothingConfigError, match='unknown smoothing filter'):
        create_filter('bessel', ['a'], PERIOD)
    with pytest.raises(SmoothingConfigError, match='transient_time must be > 0'):
        create_filter('critically_damped', ['a'], PERIOD, {'transient_time': 0})
    with pytest.raises(SmoothingConfigError, match='unknown parameter'):
        create_filter('transient', ['a'], PERIOD, {'max_jerk': 3})
    with pytest.raises(SmoothingConfigError, match='override'):
        create_filter('transient', ['a'], PERIOD, {}, {'a': {'cutoff': 3}})
