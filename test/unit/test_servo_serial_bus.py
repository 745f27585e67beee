"""The serial driver against the bus simulator over real ptys: every command and procedure."""

import concurrent.futures
import math
import os
import sys
import time
import warnings

import numpy as np
import pytest

from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.errors import UnknownJointError
from sweetie_motion.servo import driver as sb
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.sim import SimulatorProcess
from waiting import wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'bench'))
from floor import AFTERMATH_PERIODS, FloorProbe  # noqa: E402, I100

PONY_SERVOS = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')
KIND = hx.servo_type('DRS-0101')

# real ptys, a simulator thread and wall-clock timeouts: a second or two per test
pytestmark = pytest.mark.slow
COUNT = KIND.rad_per_count
#: the oldest a measurement may get on a line with room for every servo every cycle [s]: a few
#: periods (the margin is this VM's: the simulator's wake-ups come milliseconds late now and
#: then)
FRESH_AGE_MAX = 0.080


def drive(bus, position, seconds, period=0.01):
    """Send a constant reference at the cycle rate; return the send/receive durations [s]."""
    position = np.asarray(position, dtype=float)
    velocity = np.zeros_like(position)
    durations = []
    deadline = time.monotonic()
    end = deadline + seconds
    while deadline < end:
        start = time.perf_counter()
        bus.receive(time.monotonic())
        bus.send(time.monotonic(), position, velocity)
        durations.append(time.perf_counter() - start)
        deadline += period
        time.sleep(max(0.0, deadline - time.monotonic()))
    return np.array(durations)


def drive_until(bus, position, condition, timeout=5.0, period=0.01):
    """Send a constant reference at the cycle rate until ``condition()``; return whether met."""
    position = np.asarray(position, dtype=float)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        drive(bus, position, 0.05, period)
        if condition():
            return True
    return False


def never_waits(durations, period=0.01):
    """Return whether send/receive never waited for the line (whatever the OS did now and then)."""
    # waiting for the line takes a wire time, for a reply the timeout (3 periods), and a driver
    # that waited would do so in most calls; a busy machine preempts the caller now and then
    durations = np.asarray(durations)
    return np.median(durations) < period / 10 and np.mean(durations > period) < 0.05


def longest_stall(floor_events, aftermath=AFTERMATH_PERIODS * 0.01):
    """
    Return how long the machine stopped us at worst [s]: the longest stall the probes saw.

    A stall the probes saw lasted at least from a probe's deadline to its late wake-up; the
    threads it held up then all want to run at once (``aftermath``: bench/floor.py).
    """
    worst = max((actual - expected for _, expected, actual in floor_events), default=0.0)
    return worst + aftermath if worst else 0.0


def unexplained_timeouts(stats, rig):
    """
    Return the timeouts of ``stats`` that the simulators' own stalls do not explain.

    A reply that came after its timeout (late) is the simulator's process descheduled on a
    busy machine, and so is a request that arrived while the simulator slept (it reports how
    often it woke more than 5 ms late); what is left is the driver's.
    """
    stalls = sum(sim.control.state()['lateness']['over_5ms'] for sim in rig.sims)
    return stats.timeouts - stats.late_replies - 3 * stalls


class Rig:
    """Simulated servos on a pty and the driver on them."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.sims = []
        self.bus = None

    def start(self, servos, faults=(), buses=1, **driver):
        """servos: list of (id, position) per bus; returns the connected driver."""
        if buses == 1:
            servos = [servos]
        configs = []
        for k, group in enumerate(servos):
            entries = [{'id': i, 'model': 'DRS-0101', 'position': p, 'joint': f'j{i}'}
                       for i, p in group]
            args = [a for f in (faults[k] if buses > 1 else faults) for a in ('--fault', f)]
            sim = SimulatorProcess({'servo_sim': {'servos': entries}}, str(self.tmp_path),
                                   f'bus{k}', args + ['--seed', str(k + 1)])
            sim.start()
            self.sims.append(sim)
            configs.append(sb.BusConfig(f'bus{k}', sim.port, 115200,
                                        tuple(sb.ServoConfig(i, f'j{i}') for i, _ in group)))
        driver.setdefault('timeout', 0.03)
        # the line threads as in the motion process: real-time where the system allows it
        driver.setdefault('priority', 49)
        self.bus = sb.SerialServoBus(sb.DriverConfig(tuple(configs), **driver))
        self.bus.connect()
        return self.bus

    def state(self, k=0):
        return self.sims[k].control.state()['servos']

    def close(self):
        if self.bus is not None:
            self.bus.disconnect()
        for sim in self.sims:
            sim.stop()


@pytest.fixture
def rig(tmp_path):
    # this thread plays the cycle: real-time where the system allows it, as the cycle is
    # (a busy machine would otherwise preempt it, not the driver, in the middle of a send)
    scheduling = set_realtime_priority(50)
    rig = Rig(tmp_path)
    try:
        yield rig
    finally:
        rig.close()
        if scheduling.startswith('SCHED_FIFO'):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


# --- configuration ------------------------------------------------------------------------------

def test_the_pony_configuration_covers_its_servo_joints(model):
    config = sb.load_bus_config_file(PONY_SERVOS)
    servo_joints = [j for j in model.list_all_joints() if not model.is_virtual(j)]
    assert sorted(config.joints) == sorted(servo_joints) and len(servo_joints) == 24
    assert [len(b.servos) for b in config.buses] == [10, 10, 4]
    assert all(len(b.servos) <= 10 for b in config.buses)
    bus = sb.SerialServoBus(config, servo_joints)
    assert bus.joints == servo_joints


@pytest.mark.parametrize('change, key', [
    (lambda c: c['buses']['leg12'].update(baud=9600), 'buses.leg12.baud'),
    (lambda c: c['buses']['leg12']['servos'][1].update(id=11), 'leg12.servos[1].id'),
    (lambda c: c['buses']['leg34']['servos'][0].update(joint='joint11'), 'leg34.servos[0].joint'),
    (lambda c: c['buses']['head']['servos'][0].update(direction=2), 'servos[0].direction'),
    (lambda c: c['buses']['head']['servos'][0].update(model='XL-320'), 'servos[0].model'),
    (lambda c: c['buses']['head']['servos'][0].pop('joint'), 'servos[0].joint'),
    (lambda c: c['buses']['head'].update(port=c['buses']['leg12']['port']), 'head.port'),
    (lambda c: c.update(timeout=-1), 'servo_bus.timeout'),
    (lambda c: c.update(operations_age_cost=0), 'servo_bus.operations_age_cost'),
    (lambda c: c.update(shutdown_torque='explode'), 'shutdown_torque'),
    (lambda c: c.update(ram_init={'absolute_position': 3}), 'ram_init.absolute_position'),
    (lambda c: c.update(speed=3), 'servo_bus.speed'),
])
def test_bad_configuration_names_the_key(change, key):
    import yaml
    with open(PONY_SERVOS) as stream:
        data = yaml.safe_load(stream)
    change(data['servo_bus'])
    with pytest.raises(sb.BusConfigError) as info:
        sb.load_bus_config(data)
    assert key in info.value.key


def test_joints_must_match_the_servos():
    config = sb.load_bus_config_file(PONY_SERVOS)
    with pytest.raises(sb.BusConfigError, match='eyes_roll'):
        sb.SerialServoBus(config, config.joints + ['eyes_roll'])
    with pytest.raises(sb.BusConfigError, match='joint11'):
        sb.SerialServoBus(config, config.joints[1:])


def test_wire_budget_from_the_frame_sizes():
    one = sb.wire_budget(26, 115200, 0.01)
    # the S_JOG of 26 servos is 112 bytes = 9.7 ms: every cycle would leave no reads; with a
    # goal every 4th cycle (25 Hz, the least the driver allows) each servo is read at 17 Hz
    assert one.jog_bytes == 112 and one.goal_every == 4 and one.goal_rate == 25.0
    assert one.refresh_rate == pytest.approx(17.0, abs=0.1)
    three = sb.wire_budget(10, 115200, 0.01)
    assert three.goal_every == 1 and three.goal_rate == 100.0
    # a reply may only start once the previous one is over (the servos share the reply wire):
    # each read (9 bytes) is followed by a 9-byte spacer, a full read (every 4th) by two, and
    # the 48-byte S_JOG stands for one spacer: (115.2 - 48 + 9) / 20.25 reads a cycle
    assert three.read_bytes == pytest.approx((3 * 18 + 27) / 4)
    assert three.read_rate == pytest.approx((0.01 / (10 / 115200) - 48 + 9) / 20.25 / 0.01)
    assert three.refresh_rate >= 2 * 17.9
    fast = sb.wire_budget(26, 666666, 0.01)
    assert fast.goal_every == 1 and fast.refresh_rate > 55


def test_goal_playtime_leads_by_about_a_tick():
    assert sb.goal_playtime(0.01) == (2, pytest.approx(0.0124))
    assert sb.goal_playtime(0.056) == (6, pytest.approx(0.0112))


# --- connect, goals, measurement ----------------------------------------------------------------

def test_connect_reads_the_pose_and_inits_the_servos(rig):
    bus = rig.start([(1, 0.3), (2, -0.2), (3, 0.0)])
    state = bus.receive(time.monotonic())
    assert np.allclose(state.position, [0.3, -0.2, 0.0], atol=COUNT)
    assert bus.torque().all() and all(s.ok for s in bus.status())
    servos = rig.state()
    assert all(s['torque_control'] == hx.TORQUE_ON and s['ack_policy'] == 2
               for s in servos.values())
    assert bus.read_register('j1', 'acceleration_ratio').result(2) == 0


def test_missing_servo_fails_connect_with_its_name(rig, tmp_path):
    sim = SimulatorProcess({'servo_sim': {'servos': [{'id': 1}]}}, str(tmp_path), 'lonely')
    sim.start()
    rig.sims.append(sim)
    config = sb.DriverConfig((sb.BusConfig('b', sim.port, 115200, (
        sb.ServoConfig(1, 'j1'), sb.ServoConfig(9, 'j9'))),), connect_timeout=1.0)
    with pytest.raises(sb.ServoNotFoundError) as info:
        sb.SerialServoBus(config).connect()
    assert info.value.joints == ['j9'] and 'ID 9' in str(info.value)
    # and what it did not answer, so that a person can tell a silent servo from a slow start
    assert 'did not answer: j9 (bus b, ID 9) (j9: no reply to ' in str(info.value), info.value
    lenient = sb.SerialServoBus(sb.DriverConfig(config.buses, connect_timeout=1.0,
                                                require_all_servos=False))
    rig.bus = lenient
    lenient.connect()
    status = {s.joint: s for s in lenient.status()}
    assert status['j1'].ok and not status['j9'].ok and 'no answer' in status['j9'].message


def test_a_servo_silent_for_a_while_at_connect_is_asked_until_connect_timeout(rig, tmp_path):
    # three lost tries take ~0.1 s: a stall of the machine or a noisy line longer than that
    # lost a servo that answers a moment later (beside a busy loop, ~1 connect in 20)
    sim = SimulatorProcess({'servo_sim': {'servos': [{'id': 1}, {'id': 9}]}}, str(tmp_path),
                           'late', args=['--fault', 'silent=9@0+0.8'])
    sim.start()
    rig.sims.append(sim)
    config = sb.DriverConfig((sb.BusConfig('b', sim.port, 115200, (
        sb.ServoConfig(1, 'j1'), sb.ServoConfig(9, 'j9'))),), connect_timeout=5.0)
    rig.bus = sb.SerialServoBus(config)
    rig.bus.connect()
    status = {s.joint: s for s in rig.bus.status()}
    assert status['j1'].ok and status['j9'].ok, status
    _, servos = rig.bus.statistics()
    lost = {s.joint: s.timeouts for s in servos}
    # the servo was asked more than one try's worth while it was silent
    assert lost['j9'] > config.retries, lost


def test_goals_move_the_servos_and_receive_follows(rig):
    bus = rig.start([(1, 0.0), (2, 0.0), (3, 0.0)])
    target = np.array([0.4, -0.3, 0.1])
    durations = drive(bus, target, 1.5)
    assert np.allclose(bus.receive(time.monotonic()).position, target, atol=3 * COUNT)
    servos = rig.state()
    # within the static friction band of the servos (about 1.5 counts)
    assert [servos[str(i)]['position'] for i in (1, 2, 3)] == pytest.approx(target, abs=3 * COUNT)
    buses, stats = bus.statistics()
    assert buses[0].goals > 100
    assert unexplained_timeouts(buses[0], rig) <= buses[0].replies // 100
    assert all(s.reads > 50 for s in stats)
    assert never_waits(durations)


def test_offset_and_direction(rig, tmp_path):
    sim = SimulatorProcess({'servo_sim': {'servos': [{'id': 4, 'position': 0.1}]}},
                           str(tmp_path), 'mapped')
    sim.start()
    rig.sims.append(sim)
    config = sb.DriverConfig((sb.BusConfig('b', sim.port, 115200, (
        sb.ServoConfig(4, 'knee', offset=0.3, direction=-1),)),))
    bus = rig.bus = sb.SerialServoBus(config)
    bus.connect()
    # servo angle 0.1 = 0.3 - joint: the joint is at 0.2
    assert bus.receive(0).position[0] == pytest.approx(0.2, abs=COUNT)
    drive(bus, [0.5], 1.0)
    assert sim.control.state()['servos']['4']['position'] == pytest.approx(-0.2, abs=3 * COUNT)


# --- torque and posing by hand ------------------------------------------------------------------

def test_torque_off_pose_by_hand_torque_on_holds(rig):
    bus = rig.start([(1, 0.0), (2, 0.0)])
    future = bus.set_torque_async(['j1'], False)
    assert list(bus.torque()) == [False, True]      # the command, at once
    assert future.result(2) == [False]
    assert list(bus.torque()) == [False, True]
    assert rig.state()['1']['torque_control'] == hx.TORQUE_FREE
    assert rig.sims[0].control.move({1: 0.5, 2: 0.5}) == [1]       # j2 resists
    wait_for(lambda: abs(bus.receive(0).position[0] - 0.5) < 2 * COUNT)
    # a reference that follows the measured pose (TorqueMainSwitch), then torque on: no jump
    measured = bus.receive(0).position.copy()
    bus.set_torque(['j1'], True)
    drive(bus, measured, 0.5)
    assert rig.state()['1']['position'] == pytest.approx(0.5, abs=3 * COUNT)
    assert rig.state()['1']['torque_control'] == hx.TORQUE_ON
    # reported on by both servos (a stall of the machine that holds a reply back long enough
    # reports a servo lost, and its torque not on, until it answers again)
    wait_for(lambda: bus.torque().all(), message='both servos reported with their torque on')
    with pytest.raises(UnknownJointError):
        bus.set_torque(['tail'], False)


@pytest.mark.parametrize('policy, register', [('brake', hx.TORQUE_BRAKE),
                                              ('off', hx.TORQUE_FREE), ('keep', hx.TORQUE_ON)])
def test_disconnect_applies_the_shutdown_torque(rig, policy, register):
    bus = rig.start([(1, 0.0), (2, 0.1)], shutdown_torque=policy)
    drive(bus, [0.0, 0.1], 0.2)
    bus.disconnect()
    rig.bus = None
    assert [s['torque_control'] for s in rig.state().values()] == [register, register]
    assert not bus.connected
    assert all(not s.ok and 'disconnected' in s.message for s in bus.status())

    def received():
        return rig.sims[0].control.state()['counters']['bytes_in']
    # what was written before the disconnect may still be on its way through the pty
    seen = [received()]
    wait_for(lambda: seen.append(received()) or seen[-1] == seen[-2])
    bus.send(time.monotonic(), np.zeros(2), np.zeros(2))     # ignored, never raises
    # nothing may arrive: the simulator has read its line for a while after the send (its own
    # clock went on by 0.1 s), and counted no byte
    after = rig.sims[0].control.state()['time']
    wait_for(lambda: rig.sims[0].control.state()['time'] >= after + 0.1, 10,
             message='the simulator running on')
    assert received() == seen[-1]


# --- procedures of the fact sheet ---------------------------------------------------------------

def test_error_flag_switches_the_servo_off_and_clear_errors(rig):
    bus = rig.start([(1, 0.0), (2, 0.0)])
    rig.sims[0].control.fault('error=2:overload+0.3')
    injected = rig.sims[0].control.state()['time']   # the condition began before this
    wait_for(lambda: bus.active_faults())
    fault = bus.faults()[0]
    assert (fault.joint, fault.servo_id, fault.flags) == ('j2', 2, ['overload'])
    wait_for(lambda: rig.state()['2']['torque_control'] == hx.TORQUE_FREE)
    status = {s.joint: s for s in bus.status()}
    assert not status['j2'].ok and 'overload' in status['j2'].message and status['j1'].ok
    assert list(bus.torque()) == [True, False]
    wait_for(lambda: rig.sims[0].control.state()['time'] > injected + 0.3, 10,
             message='the end of the overload condition')
    statuses = bus.clear_errors(['j2']).result(2)
    assert statuses[0].error == 0 and not bus.active_faults()
    assert not bus.torque()[1]          # fact sheet 10.1: the torque stays off after clearing
    bus.set_torque_async(['j2'], True).result(2)
    assert rig.state()['2']['torque_control'] == hx.TORQUE_ON
    assert all(s.ok for s in bus.status())


def test_clearing_is_refused_while_the_condition_persists(rig):
    bus = rig.start([(1, 0.0)])
    rig.sims[0].control.fault('error=1:overheat+1.5')
    wait_for(lambda: bus.active_faults(), timeout=5)
    # the servo clears its flag, its next temperature check (504 ms) sets it again: the driver
    # reads the status after that check and says so, and the fault stays
    started = rig.sims[0].control.state()['time']
    with pytest.raises(sb.ServoStatusError, match='overheat.*persists') as info:
        bus.clear_errors().result(5)
    assert info.value.flags == ['overheat'] and info.value.joint == 'j1'
    assert 'overheat' in bus.status()[0].message and bus.active_faults()
    assert not bus.torque()[0]
    # once the condition is over, clearing succeeds
    wait_for(lambda: rig.sims[0].control.state()['time'] > started + 1.5, 10,
             message='the end of the overheat condition')
    assert bus.clear_errors().result(5)[0].error == 0
    assert not bus.active_faults() and bus.status()[0].ok


def test_reboot_and_reinit_apply_eep_and_restore_the_torque(rig):
    bus = rig.start([(1, 0.2)], reboot_delay=0.3)
    assert bus.write_register('j1', 'max_position', 900, hx.Memory.EEP).result(2) == 900
    assert bus.read_register('j1', 'max_position').result(2) == 1002   # RAM: not yet
    statuses = bus.reboot().result(5)
    assert statuses[0].motor_on
    assert bus.read_register('j1', 'max_position').result(2) == 900
    state = rig.state()['1']
    assert state['ack_policy'] == 2 and state['torque_control'] == hx.TORQUE_ON
    assert state['position'] == pytest.approx(0.2, abs=COUNT)
    drive(bus, [0.25], 0.5)
    assert rig.state()['1']['position'] == pytest.approx(0.25, abs=3 * COUNT)


def test_change_control_mode(rig):
    bus = rig.start([(1, 0.0)])
    assert bus.set_control_mode('j1', 'speed').result(3) == 'speed'
    assert rig.state()['1']['mode'] == 1 and rig.state()['1']['torque_control'] == hx.TORQUE_ON
    assert bus.set_control_mode('j1', 'position').result(3) == 'position'
    assert rig.state()['1']['mode'] == 0
    with pytest.raises(ValueError):
        bus.set_control_mode('j1', 'torque')


def test_read_write_registers_and_scan(rig):
    bus = rig.start([(5, 0.0), (7, 0.0)])
    assert bus.write_register('j5', 'led_control', 2).result(2) == 2
    assert rig.state()['5']['led'] == 2
    assert bus.read_register('j7', 'voltage').result(2) == hx.volts_to_voltage(7.4)
    with pytest.raises(hx.UnknownRegisterError):
        bus.read_register('j5', 'colour')
    with pytest.raises(hx.ValueRangeError):
        bus.write_register('j5', 'led_control', 300)
    found = bus.scan(ids=range(0, 12)).result(10)
    assert found == [[(5, 'DRS-0101'), (7, 'DRS-0101')]]


def test_a_scan_finds_the_servos_missing_from_the_configuration(rig, tmp_path):
    # what a scan is for: a servo whose ID nobody wrote down. Its STAT was once taken as
    # needing no reply, and a scan listed only configured servos.
    sim = SimulatorProcess({'servo_sim': {'servos': [{'id': 1}, {'id': 9}, {'id': 200}]}},
                           str(tmp_path), 'strangers')
    sim.start()
    rig.sims.append(sim)
    rig.bus = sb.SerialServoBus(sb.DriverConfig((sb.BusConfig('b', sim.port, 115200, (
        sb.ServoConfig(1, 'j1'),)),), priority=49))
    rig.bus.connect()
    found = rig.bus.scan().result(30)
    assert found == [[(1, 'DRS-0101'), (9, 'DRS-0101'), (200, 'DRS-0101')]]
    # the 251 absent IDs are no lost replies of the line (its servo's own reads may be)
    lines, servos = rig.bus.statistics()
    assert lines[0].timeouts == servos[0].timeouts < 50, (lines[0], servos[0])


def test_scan_asks_a_configured_servo_again_that_missed_the_sweep(rig):
    bus = rig.start([(5, 0.0), (7, 0.0)])
    # servo 7 is silent when the sweep asks it (first) and no longer when the sweep ends: each
    # of the 246 absent IDs after it waits at least for its STAT and reply on the wire (1.4 ms)
    rig.sims[0].control.fault('silent=7+0.15')
    found = bus.scan(ids=[7] + list(range(8, 254)) + [5]).result(30)
    assert found == [[(5, 'DRS-0101'), (7, 'DRS-0101')]]


@pytest.mark.parametrize('baud, servos, at_least', [(115200, 1, 10), (115200, 10, 3),
                                                    (666666, 10, 16)])
def test_a_scan_asks_several_ids_at_once(baud, servos, at_least):
    # one STAT per round trip made a full scan 254 round trips per line: on a loaded machine
    # each waits for the operation's thread to be scheduled (a CI scan took 50 s); the line
    # writes a window's STATs as the operations' share of its wire lets it
    from sweetie_motion.servo.driver.line import BusLine
    from sweetie_motion.servo.driver.operations import LineOperations, SCAN_WINDOW
    from sweetie_motion.servo.driver.servo_state import MeasurementBoard
    config = sb.BusConfig('line', 'unused', baud,
                          tuple(sb.ServoConfig(i + 1, f'j{i}') for i in range(servos)))
    line = BusLine(config, sb.DriverConfig((config,)), np.arange(servos),
                   MeasurementBoard(servos))
    assert at_least <= LineOperations(line).scan_window() <= SCAN_WINDOW


@pytest.mark.serial   # it compares ages: a starved simulator ages them too
def test_a_scan_costs_the_reads_of_a_full_line_half_a_cycle(rig):
    # a scan's windows follow each other as fast as they are answered: once they took the
    # request wire from the reads, one read a cycle, and the measurements aged 400 ms; a third
    # of each cycle's wire still aged them by half on this line (p99 33 -> 50-55 ms)
    ids = list(range(1, 11))
    bus = rig.start([(i, 0.0) for i in ids])
    drive(bus, [0.0] * len(ids), 1.0)
    bus.reset_ages()
    drive(bus, [0.0] * len(ids), 2.0)
    quiet = bus.statistics()[0][0]
    bus.reset_ages()
    scan = bus.scan(ids=range(254))
    drive_until(bus, [0.0] * len(ids), scan.done, timeout=30)
    assert scan.result(1) == [[(i, 'DRS-0101') for i in ids]]
    during = bus.statistics()[0][0]
    # 10 servos at 115200 Bd fill the wire: every servo is read half a cycle later, on
    # average (quiet: p99 31-33 ms, during the scan 41 ms); the bound leaves a loaded machine
    # room (beside two busy loops once 123 ms with a third of the wire)
    assert during.age_p99 <= 3 * quiet.age_p99 + 0.030, (quiet, during)


def test_a_torque_switch_beside_a_scan_is_done_within_a_few_cycles(rig):
    # operations keep to a tenth of a full line's wire; a torque switch is urgent: the robot
    # goes limp at once, not after the scan's STATs and at their pace (20 cycles and more)
    ids = list(range(1, 11))
    bus = rig.start([(i, 0.0) for i in ids])
    drive(bus, [0.0] * len(ids), 0.5)
    scan = bus.scan(ids=range(254))
    drive(bus, [0.0] * len(ids), 0.2)
    line = bus.statistics()[0][0]
    before = line.cycles
    switch = bus.set_torque_async([f'j{i}' for i in ids], False)
    assert drive_until(bus, [0.0] * len(ids), switch.done, timeout=10)
    assert switch.result(0) == [False] * len(ids)
    cycles = bus.statistics()[0][0].cycles - before
    assert cycles <= 10 and not scan.done(), cycles
    drive_until(bus, [0.0] * len(ids), scan.done, timeout=30)


# --- faults -------------------------------------------------------------------------------------

@pytest.mark.serial   # 'lost' is 3 missed replies: a starved simulator loses its servo too
def test_lost_servo_keeps_its_measurement_and_comes_back(rig):
    bus = rig.start([(1, 0.1), (2, 0.2)], lost_after=3, late_grace=0.05)
    rig.sims[0].control.fault('silent=2+1.0')
    # the cycle goes on while the servo is silent (1 s): until the driver calls it lost
    start, parts = time.monotonic(), [drive(bus, [0.1, 0.2], 0.2)]
    while {s.joint: s.ok for s in bus.status()}['j2'] and time.monotonic() - start < 0.9:
        parts.append(drive(bus, [0.1, 0.2], 0.05))
    durations = np.concatenate(parts)
    status = {s.joint: s for s in bus.status()}
    assert not status['j2'].ok and 'no answer' in status['j2'].message and status['j1'].ok
    assert bus.receive(0).position[1] == pytest.approx(0.2, abs=COUNT)
    assert not bus.torque()[1]
    assert never_waits(durations)
    drive(bus, [0.1, 0.2], 0.8)
    wait_for(lambda: all(s.ok for s in bus.status()))
    stats = {s.joint: s for s in bus.statistics()[1]}
    assert stats['j2'].timeouts >= 3
    assert unexplained_timeouts(stats['j1'], rig) <= stats['j1'].replies // 100


def test_port_closing_and_coming_back(rig):
    bus = rig.start([(1, 0.0), (2, 0.0)], reconnect_interval=0.05)
    drive(bus, [0.1, 0.1], 0.3)
    rig.sims[0].control.close_port(reopen=0.6)
    durations = drive(bus, [0.1, 0.1], 0.3)
    statuses = bus.status()
    assert all(not s.ok and 'port lost' in s.message for s in statuses)
    assert never_waits(durations)   # never blocks, never raises
    wait_for(lambda: all(s.ok for s in bus.status()), timeout=5)
    assert bus.statistics()[0][0].reconnects == 1
    drive(bus, [0.3, -0.2], 1.0)
    state = rig.state()
    assert state['1']['position'] == pytest.approx(0.3, abs=3 * COUNT)
    assert state['2']['position'] == pytest.approx(-0.2, abs=3 * COUNT)


def test_goals_resume_slowly_after_a_reconnection(rig):
    bus = rig.start([(1, 0.0)], reconnect_interval=0.05, resume_speed=1.0)
    rig.sims[0].control.close_port(reopen=0.2)
    wait_for(lambda: not bus.status()[0].ok)
    wait_for(lambda: bus.status()[0].ok, timeout=5)
    start = time.monotonic()
    drive(bus, [1.0], 0.4)
    moved = rig.state()['1']['position']
    # 1 rad/s from the measured pose, not a jump to the reference
    assert moved < 1.0 * (time.monotonic() - start) + 0.1
    drive(bus, [1.0], 1.0)
    assert rig.state()['1']['position'] == pytest.approx(1.0, abs=3 * COUNT)


def test_operations_fail_clearly_when_the_servo_is_gone(rig):
    bus = rig.start([(1, 0.0)], retries=2)
    rig.sims[0].control.fault('silent=1')
    with pytest.raises(sb.ServoTimeoutError, match='j1'):
        bus.read_register('j1', 'voltage').result(3)


def test_two_buses_run_in_parallel(rig):
    bus = rig.start([[(1, 0.0), (2, 0.0)], [(3, 0.0), (4, 0.0)]], faults=[(), ()], buses=2)
    drive(bus, [0.2, 0.2, -0.2, -0.2], 1.0)
    assert math.isclose(rig.state(1)['4']['position'], -0.2, abs_tol=3 * COUNT)
    buses, _ = bus.statistics()
    assert [b.name for b in buses] == ['bus0', 'bus1'] and all(b.goals > 50 for b in buses)
    assert all(b.cpu_time > 0 for b in buses)


# --- LEDs and freshness -------------------------------------------------------------------------

GREEN, BLUE, RED = 1, 2, 4


def test_the_led_shows_the_state_and_a_written_led_stays(rig):
    bus = rig.start([(1, 0.0), (2, 0.0)])
    # every goal carries each servo's LED bits: green with the torque on
    assert drive_until(bus, [0.0, 0.0], lambda: rig.state()['1']['led'] == GREEN)
    bus.set_torque_async(['j2'], False).result(2)
    assert drive_until(bus, [0.0, 0.0], lambda: rig.state()['2']['led'] == BLUE)
    # a person's LED value stays: the goals carry it from then on (fact sheet 3.2: the SET
    # byte of every JOG holds the LED bits)
    assert bus.write_register('j1', 'led_control', BLUE | RED).result(2) == BLUE | RED
    seen = rig.sims[0].control.state()['counters']['jog_frames']
    assert drive_until(bus, [0.0, 0.0], lambda: rig.sims[0].control.state()['counters'][
        'jog_frames'] > seen + 20)
    assert rig.state()['1']['led'] == BLUE | RED
    assert bus.read_register('j1', 'led_control').result(2) == BLUE | RED


@pytest.mark.serial
def test_measurements_stay_fresh_on_a_noisy_line(rig):
    bus = rig.start([(1, 0.0), (2, 0.0), (3, 0.0)])
    for fault in ('corrupt-reply=0.05', 'drop=0.01'):
        rig.sims[0].control.fault(fault)
    # the probes watch before the window opens: a stall of the machine in it is never missed
    probe = FloorProbe(0.01, 0.0015)
    try:
        # the window opens on a driven line: a caller that stops sending (here while it waits
        # for the probes or the simulator's answer) ages every measurement as long as it waits,
        # as the cycle would if it stopped (CI once waited 190 ms for the simulator's reset)
        drive(bus, [0.1, 0.1, 0.1], 0.2)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            reset = pool.submit(rig.sims[0].control.reset_statistics)
            drive_until(bus, [0.1, 0.1, 0.1], reset.done)
            reset.result()
        drive(bus, [0.1, 0.1, 0.1], 0.2)
        bus.reset_ages()
        t = np.linspace(0.0, 2 * np.pi, 300)
        for k in range(300):   # 3 s of a swinging reference
            drive(bus, 0.3 * np.sin(t[k] + np.arange(3)), 0.01)
        line = bus.statistics()[0][0]
        state = rig.sims[0].control.state()
    finally:
        stalls = probe.stop()
    counters = state['counters']
    assert counters['replies_corrupted'] > 20 and line.timeouts > 20
    # every lost reply is counted as the simulator injected it, once the line is quiet (it
    # reads on without goals, and a loss is the simulator's when it sends the reply but the
    # driver's only at its timeout): the driver ends after the requests on the wire
    bus.disconnect()
    final = bus.statistics()[0][0]
    counters = rig.sims[0].control.state()['counters']
    # (a reply that came after the late grace, in a stall of the machine, was a timeout the
    # simulator did not inject: the driver names it an unexpected reply)
    assert final.timeouts - final.late_replies - final.unexpected_replies == \
        counters['replies_corrupted'] + counters['replies_dropped'] + counters['collisions'], (
            final, counters, stalls)
    assert final.timeouts == final.damaged + final.missing
    # a lost reply is asked again with another span, before the next cycle where the wire has
    # room, else in it: on a line with room for every servo every cycle, no measurement gets
    # older than a few periods (the old driver left a servo alone for 100 ms after two losses
    # in a row: ages over 150 ms). A stall of the machine holds the driver and the simulator
    # alike, and the age grows by as long as it lasts (the CI machine once stopped for 114 ms
    # or more here): what a stall the floor probes saw explains is the machine's, and reported
    stalled = longest_stall(stalls)
    if max(line.age_max, state['sample_gaps']['max_ms'] / 1e3) > FRESH_AGE_MAX:
        warnings.warn(f'a measurement {line.age_max * 1e3:.0f} ms old on the noisy line; the '
                      f'floor probes saw {len(stalls)} stalls, the longest '
                      f'{stalled * 1e3:.0f} ms')
    assert line.age_p99 <= 0.040, (line, stalls)
    assert line.age_max <= FRESH_AGE_MAX + stalled, (line, stalls)
    assert state['sample_gaps']['max_ms'] / 1e3 <= FRESH_AGE_MAX + stalled, (
        state['sample_gaps'], stalls)
    # every lost reply is counted, damaged or missing
    assert line.timeouts == line.damaged + line.missing
