"""
The HerkuleX bus simulator: simulated servos behind a pseudo-terminal, speaking the same bytes.

Product code, not a test double only: ``--bus sim-serial`` drives it through the real driver,
``sweetie-motion servo-sim`` serves it alone, and the tests and benchmarks use it. Its parts:

* :mod:`~sweetie_motion.servo.sim.config`: the simulated line and its servos (YAML);
* :mod:`~sweetie_motion.servo.sim.servo`: one servo's registers, requests, ticks and flags,
  moved by :mod:`~sweetie_motion.servo.sim.motion` (trajectory generator, shaft);
* :mod:`~sweetie_motion.servo.sim.line`: the line: both wires at the baud rate, reply latency,
  collisions of replies, the faults of :mod:`~sweetie_motion.servo.sim.faults`;
* :mod:`~sweetie_motion.servo.sim.server`: the line behind a pty in real time, and its control
  channel; :mod:`~sweetie_motion.servo.sim.process`: the program and a child process of it.
"""

from sweetie_motion.servo.sim.config import (
    load_sim_config, load_sim_config_file, sim_config_from_bus, SimConfig,
    SimServoConfig, SimulatorConfigError,
)
from sweetie_motion.servo.sim.faults import FaultEvent, FaultPlan, parse_fault, parse_faults
from sweetie_motion.servo.sim.line import BusSimulator, SimCounters
from sweetie_motion.servo.sim.process import main, SimulatorControl, SimulatorProcess
from sweetie_motion.servo.sim.server import PtyServer
from sweetie_motion.servo.sim.servo import SimulatedServo

__all__ = [
    'BusSimulator', 'FaultEvent', 'FaultPlan', 'load_sim_config', 'load_sim_config_file', 'main',
    'parse_fault', 'parse_faults', 'PtyServer', 'sim_config_from_bus', 'SimConfig',
    'SimCounters', 'SimServoConfig', 'SimulatedServo', 'SimulatorConfigError',
    'SimulatorControl', 'SimulatorProcess',
]
