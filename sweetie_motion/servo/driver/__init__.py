"""
The HerkuleX serial driver: :class:`SerialServoBus` drives servos on one or several lines.

Its parts, each with one job:

* :mod:`~sweetie_motion.servo.driver.config`: the configuration (YAML ``servo_bus``), errors;
* :mod:`~sweetie_motion.servo.driver.bus`: the driver the cycle calls (send, receive, torque,
  status, operations, statistics);
* :mod:`~sweetie_motion.servo.driver.line`: one line's I/O thread (goals out, replies in);
* :mod:`~sweetie_motion.servo.driver.port`: the port's life and reconnection;
* :mod:`~sweetie_motion.servo.driver.wire`: the wire time: budget and reply spacing;
* :mod:`~sweetie_motion.servo.driver.scheduler`: what goes on the line next;
* :mod:`~sweetie_motion.servo.driver.matching`: which reply answers which request;
* :mod:`~sweetie_motion.servo.driver.health`: the fault policy and the counters;
* :mod:`~sweetie_motion.servo.driver.servo_state`: what is known of each servo, the
  measurements shared with the cycle;
* :mod:`~sweetie_motion.servo.driver.operations`: torque, clear, reboot, mode, registers, scan.
"""

from sweetie_motion.servo.driver.bus import SerialServoBus
from sweetie_motion.servo.driver.config import (
    BusConfig, BusConfigError, BusPortError, BusStoppedError, DriverConfig, load_bus_config,
    load_bus_config_file, SerialBusError, ServoConfig, ServoNotFoundError, ServoStatusError,
    ServoTimeoutError, SHUTDOWN_TORQUE,
)
from sweetie_motion.servo.driver.health import BusStatistics, ServoFault, ServoStatistics
from sweetie_motion.servo.driver.operations import gather
from sweetie_motion.servo.driver.wire import (
    goal_playtime, jog_frame_size, read_frame_sizes, wire_budget, WireBudget,
)

__all__ = [
    'BusConfig', 'BusConfigError', 'BusPortError', 'BusStatistics', 'BusStoppedError',
    'DriverConfig', 'gather', 'goal_playtime', 'jog_frame_size', 'load_bus_config',
    'load_bus_config_file', 'read_frame_sizes', 'SerialBusError', 'SerialServoBus',
    'ServoConfig', 'ServoFault', 'ServoNotFoundError', 'ServoStatistics', 'ServoStatusError',
    'ServoTimeoutError', 'SHUTDOWN_TORQUE', 'WireBudget', 'wire_budget',
]
