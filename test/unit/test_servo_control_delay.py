"""
Each line's control delay from the driver's schedule: identification fits every line.

The driver on the package's simulator over real ptys (one simulator process per line), a
sweep excitation at the cycle rate, and the identification fed as the cycle's observer feeds
it: the reference with the cycle's time, the measurements with the times the servos sampled
them, each servo's control delay its line's (:meth:`SerialServoBus.control_delays`).
"""

import os
import threading
import time

import numpy as np
import pytest

from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.servo import driver as sb
from sweetie_motion.servo.components import DELAY_REFRESH_TICKS
from sweetie_motion.servo.ident import IdentConfig, ServoIdentification
from sweetie_motion.servo.servo_model import default_params
from sweetie_motion.servo.sim import sim_config_from_bus, SimulatorProcess

#: serial: the identification fits what the lines measured in real time; with another real-time
#: test beside it on two cores, a stalled line's samples took the head servos' prediction error
#: from 2 to 11 mrad (over the 10 mrad threshold) in one run of a fresh clone
pytestmark = [pytest.mark.slow, pytest.mark.serial]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PONY_SERVOS = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')
PERIOD = 0.01
#: the sweep speeds [rad/s] and its amplitude [rad]
SPEEDS = (0.15, 0.4, 0.8, 1.3)
AMPLITUDE = 0.5


class Sweeps:
    """Constant-speed sweeps over +-AMPLITUDE, one per joint, each its own phase."""

    def __init__(self, joints, acceleration=3.0):
        self.n = len(joints)
        self.acceleration = acceleration
        self.q = np.zeros(self.n)
        self.v = np.zeros(self.n)
        self.k = np.arange(self.n) % len(SPEEDS)
        self.direction = np.where(np.arange(self.n) % 2, 1.0, -1.0)

    def step(self, dt):
        speeds = np.array(SPEEDS)[self.k % len(SPEEDS)]
        target = self.direction * speeds
        braking = self.direction * self.q + self.v ** 2 / (2 * self.acceleration) >= AMPLITUDE
        target[braking] = 0.0
        turn = braking & (np.abs(self.v) < 1e-9)
        self.direction[turn] *= -1
        self.k[turn] += 1
        target[turn] = self.direction[turn] * np.array(SPEEDS)[self.k[turn] % len(SPEEDS)]
        dv = np.clip(target - self.v, -self.acceleration * dt, self.acceleration * dt)
        self.q += (self.v + 0.5 * dv) * dt
        self.v += dv
        return self.q.copy(), self.v.copy()


def identify(tmp_path, buses, seconds):
    """Identify every servo of ``buses`` from a sweep; return (result, per line delay [s])."""
    sims, configured = [], []
    scheduling = set_realtime_priority(50)   # this thread plays the cycle, as the cycle is
    try:
        for bus in buses:
            sim = SimulatorProcess(sim_config_from_bus(bus), str(tmp_path), bus.name)
            sim.start()
            sims.append(sim)
            configured.append(sb.BusConfig(bus.name, sim.port, bus.baud, bus.servos))
        driver = sb.SerialServoBus(sb.DriverConfig(tuple(configured), period=PERIOD,
                                                   shutdown_torque='keep', priority=49))
        driver.connect()
        joints = list(driver.joints)
        # the identification starts from models off the simulated servos' (their types')
        start = [default_params(s.servo_type, s.joint).with_alpha((0.1, 0.1, 0.0, 1.0))
                 for bus in buses for s in bus.servos]
        ident = ServoIdentification(joints, start, IdentConfig(
            period=PERIOD, relaxation_factor=0.9998, velocity_span=6))
        sweeps = Sweeps(joints)
        stop = threading.Event()
        seen = np.zeros(len(joints))

        def cycle(steps, identifying=False):
            deadline = time.monotonic()
            for step in range(steps):
                now = time.monotonic()
                position, velocity = sweeps.step(PERIOD)
                state = driver.receive(now)
                driver.send(now, position, velocity)
                # the identification is an observer: after the output, as in the cycle (its
                # work before the send would lengthen the lines' S_JOG lag it was given)
                ident.push_reference(position, velocity, None, stamp=now)
                fresh = state.stamps > seen
                seen[:] = state.stamps
                if fresh.any():
                    chosen = np.flatnonzero(fresh)
                    ident.add_measurement([joints[i] for i in chosen], state.position[chosen],
                                          stamp=state.stamps[chosen])
                if identifying and step % DELAY_REFRESH_TICKS == 0:
                    take_delays()
                deadline += PERIOD
                time.sleep(max(0.0, deadline - time.monotonic()))
                if stop.is_set():
                    return
        delays = {}

        def take_delays():
            # as the identification's component takes them: at the start, then while it runs
            delays.update(driver.control_delays())
            ident.set_control_delays({j: d / PERIOD for j, (_, d) in delays.items()})

        cycle(100)   # the lines run: the S_JOG's measured lag settles
        ident.start(joints)
        take_delays()
        cycle(int(seconds / PERIOD), identifying=True)
        result = ident.end()
        driver.disconnect()
    finally:
        for sim in sims:
            sim.stop()
        if scheduling.startswith('SCHED_FIFO'):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    per_line = dict(delays.values())
    return result, per_line


def plausible(result, buses):
    """Assert that every servo got a model near its simulated servo's viscous friction."""
    joints = [s.joint for bus in buses for s in bus.servos]
    assert not result.refused, result.describe()
    assert result.names == sorted(result.names, key=joints.index) and \
        set(result.names) == set(joints), result.describe()
    truth = default_params('DRS-0101', 'any').alpha
    for bus in buses:
        models = [m for m in result.models if m.name in {s.joint for s in bus.servos}]
        viscous = [m.alpha[0] for m in models]
        # the viscous friction is what a wrong delay moves (k_p U per second of error): the
        # line's median within 15 % (a delay 4 ms off moves it by 20 %), each servo's within
        # 35 % (12 s of sweeps at about 30 reads a second)
        assert float(np.median(viscous)) == pytest.approx(truth[0], rel=0.15), (bus.name,
                                                                                viscous)
        for model in models:
            assert model.alpha[0] == pytest.approx(truth[0], rel=0.35), (model.name,
                                                                         model.alpha)
            assert model.alpha[1] + model.alpha[2] == pytest.approx(truth[1] + truth[2],
                                                                    rel=0.5), model


def test_every_line_of_the_pony_gets_its_delay_and_every_servo_a_model(tmp_path):
    buses = sb.load_bus_config_file(PONY_SERVOS).buses
    result, delays = identify(tmp_path, buses, 12.0)
    print({line: round(d * 1e3, 1) for line, d in delays.items()}, result.describe())
    # the 4-servo head line's S_JOG is 24 bytes shorter than a leg line's: 2 ms at 115200 Bd
    assert delays['head'] < delays['leg12'] - 0.0015
    assert delays['leg12'] == pytest.approx(delays['leg34'], abs=0.001)
    plausible(result, buses)


def test_a_line_of_another_size_and_speed_gets_its_own_delay(tmp_path):
    pony = sb.load_bus_config_file(PONY_SERVOS).buses
    fast = sb.BusConfig('fast', 'unused', 666666, pony[0].servos[:6])
    result, delays = identify(tmp_path, [fast], 10.0)
    print(delays, result.describe())
    # the S_JOG takes a sixth of the leg line's time on the wire
    schedule = sb.wire_budget(6, 666666, PERIOD)
    assert delays['fast'] < 1.5 * PERIOD * schedule.goal_every + 0.004
    plausible(result, [fast])
