"""
One range check for parameters and configuration files, each saying it in its own words.

``out_of_range`` decides; a node parameter, a servo bus config key and a servo simulator config
key each name the parameter or key and keep their message (issue #36: it was written thrice).
"""

import math
import os

import pytest
from sweetie_motion.parameters import out_of_range, ParameterError, ParameterSpec
from sweetie_motion.servo.driver import BusConfigError, load_bus_config
from sweetie_motion.servo.sim.config import number, SimulatorConfigError

PONY_SERVOS = os.path.join(os.path.dirname(__file__), '..', '..', 'config',
                           'sweetie_bot_servos.yaml')


@pytest.mark.parametrize('value, low, high, broken', [
    (0.5, 0.0, 1.0, ''), (0.0, 0.0, 1.0, ''), (1.0, 0.0, 1.0, ''), (-0.1, 0.0, 1.0, 'low'),
    (1.1, 0.0, 1.0, 'high'), (5, None, None, ''), (-5, None, 0, ''), (7, 8, None, 'low'),
    (math.nan, None, None, 'finite'), (math.inf, 0.0, None, 'finite'),
    (-math.inf, -math.inf, math.inf, 'finite'), (10 ** 400, None, 1, 'high')])
def test_out_of_range_says_which_rule_a_number_breaks(value, low, high, broken):
    assert out_of_range(value, low, high) == broken


def test_a_parameter_out_of_range_names_itself_and_the_bound():
    spec = ParameterSpec('speed', 0.5, 'speed', low=0.01, high=10.0)
    for value, words in ((0.0, 'speed: must be >= 0.01, got 0.0'),
                         (11.0, 'speed: must be <= 10.0, got 11.0'),
                         (math.nan, 'speed: must be finite, got nan')):
        with pytest.raises(ParameterError) as error:
            spec.validate(value)
        assert str(error.value) == words
    assert spec.validate(10) == 10.0


def test_a_config_key_out_of_range_names_the_key_and_the_range():
    import yaml
    with open(PONY_SERVOS) as stream:
        data = yaml.safe_load(stream)
    data['servo_bus']['timeout'] = 2.0
    with pytest.raises(BusConfigError) as error:
        load_bus_config(data)
    assert str(error.value) == 'servo_bus.timeout: 2.0 is outside 0.0001..1.0'
    with pytest.raises(SimulatorConfigError) as error:
        number('servo_sim.voltage', 'inf', 6.0, 12.0)
    assert str(error.value).endswith('servo_sim.voltage: inf is outside 6.0..12.0')
    assert number('servo_sim.voltage', '7.4', 6.0, 12.0) == 7.4
