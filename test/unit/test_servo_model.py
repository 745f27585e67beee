"""The 7-parameter servo model: fields, prediction and its inverse, torque error, dynamics."""

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from sweetie_motion.servo.servo_model import (advance, default_params, ServoModelError,
                                              ServoModelParams)

MODEL = ServoModelParams('joint11', kp=2.7, kgear=1.0, alpha=(0.31, 0.06, 0.04, 1.0), qs=0.3)
U = 7.4


def test_fields_round_trip_and_messages():
    fields = MODEL.to_fields()
    assert fields == {'name': 'joint11', 'kp': 2.7, 'kgear': 1.0,
                      'alpha': [0.31, 0.06, 0.04, 1.0], 'qs': 0.3}
    assert ServoModelParams.from_fields(fields) == MODEL
    message = SimpleNamespace(name='joint11', kp=2.7, kgear=1.0,
                              alpha=np.array([0.31, 0.06, 0.04, 1.0]), qs=0.3)
    assert ServoModelParams.from_fields(message) == MODEL
    assert ServoModelParams.from_fields({'kp': 1.0}, name='joint12').name == 'joint12'


@pytest.mark.parametrize('fields, field', [
    ({'kp': -1}, 'kp'), ({'kgear': 0}, 'kgear'), ({'qs': 0}, 'qs'),
    ({'alpha': [1, 2, 3]}, 'alpha'), ({'kp': 'stiff'}, 'kp'), ({'alpha': 5}, 'alpha'),
    ({'kp': float('nan')}, 'parameters'), ({'delta': 1}, 'delta'),
])
def test_bad_parameters_name_the_field(fields, field):
    with pytest.raises(ServoModelError) as info:
        ServoModelParams.from_fields(dict(fields, name='joint11'))
    assert info.value.field == field and 'joint11' in str(info.value)


speeds = st.floats(-5, 5, allow_nan=False)
efforts = st.floats(-1, 1, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.floats(-2, 2), speeds, efforts)
def test_prediction_and_inverse_agree(desired, velocity, effort):
    q = MODEL.predict_position(desired, velocity, effort, U)
    assert MODEL.desired_for(q, velocity, effort, U) == pytest.approx(desired, abs=1e-12)
    # at the predicted position the model explains everything: no torque error
    assert MODEL.torque_error(desired, q, velocity, effort, U) == pytest.approx(0, abs=1e-9)
    # and the regressor reproduces the stiffness term (what the RLS fits)
    y = MODEL.stiffness(U) * (desired - q)
    assert float(MODEL.regressor(velocity, effort) @ np.array(MODEL.alpha)) == pytest.approx(y)


def test_torque_error_is_the_unexplained_load():
    # an external torque of +0.3 N m holds the servo 0.3 / (kp U) above its desired position
    deflection = 0.3 / MODEL.stiffness(U)
    assert MODEL.torque_error(0.0, deflection, 0.0, 0.0, U) == pytest.approx(-0.3)
    assert MODEL.position_error(0.0, deflection, 0.0, 0.0, U) == pytest.approx(deflection)


def test_friction_terms():
    assert MODEL.friction(0.0) == 0.0
    # Coulomb plus the static excess that fades with qs, plus viscous
    assert MODEL.friction(0.3) == pytest.approx(0.31 * 0.3 + 0.06 + 0.04 * np.exp(-1))
    assert MODEL.friction(-2.0) == pytest.approx(-MODEL.friction(2.0))


def test_a_model_without_stiffness_cannot_predict():
    empty = ServoModelParams('x', kp=0.0)
    with pytest.raises(ServoModelError, match='kp'):
        empty.predict_position(0, 0, 0, U)


def test_servo_angle_uses_kgear():
    assert ServoModelParams('x', kgear=-2.0).servo_angle(0.1) == pytest.approx(-0.2)


# --- dynamics -----------------------------------------------------------------------------------

def test_free_servo_sticks_below_static_friction_and_slips_above():
    q, v, motor = advance(MODEL, 0.2, 0.0, 0.0028, U, external_torque=0.09, drive=False)
    assert (q, v, motor) == (0.2, 0.0, 0.0)
    q, v, _ = advance(MODEL, 0.2, 0.0, 0.0028, U, external_torque=0.5, drive=False)
    assert v > 0 and q > 0.2
    # the velocity balances the load against the friction
    assert MODEL.friction(v) == pytest.approx(0.5, rel=1e-9)


def test_servo_follows_a_ramp_with_the_predicted_lag():
    q, dt, speed = 0.0, 0.0028, 1.2
    for k in range(1, 400):
        q, v, _ = advance(MODEL, q, speed * k * dt, dt, U)
    desired = speed * 399 * dt
    assert v == pytest.approx(speed, rel=1e-6)
    # backward Euler: the balance holds exactly with the step's velocity
    assert q == pytest.approx(MODEL.predict_position(desired, v, 0.0, U), abs=1e-9)


def test_motor_torque_saturates():
    q, v, motor = advance(MODEL, 0.0, 1.0, 0.0028, U, torque_limit=2.35)
    assert motor == pytest.approx(2.35)
    assert MODEL.friction(v) == pytest.approx(2.35)


def test_external_torque_deflects_a_holding_servo_beyond_the_static_band():
    q = 0.0
    for _ in range(2000):
        q, v, _ = advance(MODEL, q, 0.0, 0.0028, U, external_torque=0.5)
    static = MODEL.alpha[1] + MODEL.alpha[2]
    assert abs(v) < 1e-9   # it creeps to the edge of the static band and stays
    assert q == pytest.approx((0.5 - static) / MODEL.stiffness(U), rel=1e-3)


def test_brake_slows_the_fall():
    _, v_free, _ = advance(MODEL, 0.0, 0.0, 0.0028, U, external_torque=0.5, drive=False)
    _, v_brake, _ = advance(MODEL, 0.0, 0.0, 0.0028, U, external_torque=0.5, drive=False,
                            extra_damping=5.0)
    assert 0 < v_brake < v_free / 10


def test_defaults_per_servo_type():
    small, big = default_params('DRS-0101'), default_params('drs-0201', 'joint12')
    assert big.name == 'joint12' and big.kp > small.kp
    with pytest.raises(ServoModelError, match='DRS-0601'):
        default_params('DRS-0601')
