"""The bus simulator: its core command by command (bytes in, bytes out, times), faults, the pty."""

import math
import os
import select
import signal
import subprocess
import sys
import time

import pytest
import serial

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo import sim as sm
from sweetie_motion.servo.servo_model import ServoModelParams
from sweetie_motion.servo.sim.motion import TrajectoryProfile
from waiting import wait_for
import yaml

BT = 10 / 115200


class Line:
    """A simulated line driven in virtual time."""

    def __init__(self, servos=(sm.SimServoConfig(253),), faults=None, seed=0, **config):
        self.sim = sm.BusSimulator(sm.SimConfig(tuple(servos), **config), faults, seed)
        self.t = 0.0
        self.parser = hx.FrameParser(hx.REPLY_COMMANDS)

    def send(self, frame):
        self.sim.receive(frame.encode() if isinstance(frame, hx.Frame) else frame, self.t)

    def run(self, seconds):
        self.t += seconds
        self.sim.advance(self.t)
        return [hx.decode_reply(f) for f in self.parser.feed(self.sim.transmit(self.t))]

    def ask(self, frame, wait=0.02):
        self.send(frame)
        return self.run(wait)

    def write(self, servo_id, name, value):
        return self.ask(hx.write_register(servo_id, name, value))

    def read(self, servo_id, name):
        replies = self.ask(hx.read_register(servo_id, name))
        assert len(replies) == 1, f'no reply to the read of {name}'
        return replies[0].value(name)

    def status(self, servo_id=253):
        replies = self.ask(hx.StatRequest().frame(servo_id))
        return replies[0].status if replies else None

    def servo(self, servo_id=253):
        return self.sim.servo(servo_id)


def test_stat_reply_bytes_and_timing():
    line = Line()
    line.send(hx.StatRequest().frame(253))
    # request 7 bytes in, latency, 9 bytes out: nothing before the last byte's time
    done = 16 * BT + 0.0003
    line.sim.advance(done - 1e-5)
    first = line.sim.transmit(done - 1e-5)
    line.sim.advance(done + 1e-6)
    rest = line.sim.transmit(done + 1e-6)
    assert len(first) == 8 and len(rest) == 1
    # a factory servo: torque off, at its goal (in position)
    assert first + rest == hx.AckReply(253, hx.Command.STAT, hx.Status(0, 0x02)).frame().encode()


def test_replies_that_overlap_on_the_shared_wire_collide():
    def replies(gap):
        line = Line([sm.SimServoConfig(1), sm.SimServoConfig(2)])
        line.send(hx.StatRequest().frame(1))
        line.t += gap
        line.send(hx.StatRequest().frame(2))
        return sorted(r.servo_id for r in line.run(0.02)), line.sim.counters.collisions
    # the second request ends 7 byte times after the first: its servo starts talking while
    # the first reply (9 bytes) is on the wire; neither reaches the master
    assert replies(0.0) == ([], 2)
    # asked once the first reply is over (its 9 bytes after the 7 of the request), both arrive
    assert replies(16 * BT) == ([1, 2], 0)


@pytest.mark.parametrize('policy, answered', [
    (0, {'STAT'}), (1, {'STAT', 'RAM_READ', 'EEP_READ'}),
    (2, {'STAT', 'RAM_READ', 'EEP_READ', 'RAM_WRITE', 'EEP_WRITE', 'S_JOG', 'I_JOG',
         'ROLLBACK', 'REBOOT'})])
def test_ack_policy(policy, answered):
    requests = {
        'STAT': hx.StatRequest().frame(253), 'RAM_READ': hx.read_register(253, 'voltage'),
        'EEP_READ': hx.read_register(253, 'model_no1', hx.Memory.EEP),
        'RAM_WRITE': hx.write_register(253, 'led_control', 1),
        'EEP_WRITE': hx.write_register(253, 'max_temperature', 0xDE, hx.Memory.EEP),
        'S_JOG': hx.SJogRequest(10, (hx.JogTag(253, 512),)).frame(),
        'I_JOG': hx.IJogRequest((hx.JogTag(253, 512, playtime=10),)).frame(),
        'ROLLBACK': hx.RollbackRequest().frame(253), 'REBOOT': hx.RebootRequest().frame(253)}
    line = Line([sm.SimServoConfig(253, eep={'ack_policy': policy})])
    got = set()
    for name, frame in requests.items():
        if line.ask(frame, wait=0.5):
            got.add(name)
    assert got == answered


def test_broadcast_executes_without_reply_except_stat():
    line = Line([sm.SimServoConfig(1, eep={'ack_policy': 2}), sm.SimServoConfig(2)])
    assert line.ask(hx.write_register(hx.BROADCAST_ID, 'led_control', 4)) == []
    assert [line.servo(i).ram[53] for i in (1, 2)] == [4, 4]
    # every servo answers a broadcast STAT at once: on one wire the answers collide
    assert line.ask(hx.StatRequest().frame(hx.BROADCAST_ID)) == []
    assert line.sim.counters.collisions == 2
    alone = Line([sm.SimServoConfig(7)])
    assert [r.servo_id for r in alone.ask(hx.StatRequest().frame(hx.BROADCAST_ID))] == [7]
    # a request for another ID is not this servo's business
    assert line.ask(hx.read_register(3, 'voltage')) == []


def test_torque_on_holds_and_s_jog_moves_over_the_playtime():
    line = Line([sm.SimServoConfig(253, 'DRS-0201', position=0.0)])
    assert not line.status().motor_on
    line.ask(hx.write_register(253, 'acceleration_ratio', 0))
    line.ask(hx.write_register(253, 'torque_control', hx.TORQUE_ON))
    status = line.status()
    assert status.motor_on and status.in_position and not status.moving
    kind = hx.servo_type('DRS-0201')
    goal = kind.rad_to_position(0.5)
    line.ask(hx.SJogRequest(45, (hx.JogTag(253, goal),)).frame(), wait=0.0)   # 0.504 s
    line.run(0.25)
    servo = line.servo()
    assert 0.15 < servo.shaft.q < 0.35 and line.status().moving
    assert line.read(253, 'absolute_goal_position') == goal
    line.run(0.5)
    assert abs(line.read(253, 'calibrated_position') - goal) <= 2
    assert line.status().in_position


def test_jog_latches_on_the_servo_tick():
    line = Line([sm.SimServoConfig(253, position=0.0)])
    line.write(253, 'torque_control', hx.TORQUE_ON)
    servo = line.servo()
    line.send(hx.SJogRequest(0, (hx.JogTag(253, 700),)).frame())
    line.run(14 * BT + 1e-6)
    assert servo.pending is not None        # received, waits for the tick
    line.run(hx.TICK)
    assert servo.pending is None and servo.profile.goal > 0.9


def test_jog_with_torque_off_sets_only_the_mode():
    line = Line([sm.SimServoConfig(253, position=0.1)])
    line.ask(hx.IJogRequest((hx.JogTag(253, 0, speed_mode=True, invalid=True),)).frame())
    assert line.read(253, 'current_control_mode') == 1
    line.ask(hx.SJogRequest(1, (hx.JogTag(253, 900),)).frame(), wait=0.3)
    assert line.servo().shaft.q == pytest.approx(0.1)


def test_speed_mode_turns():
    line = Line([sm.SimServoConfig(253, position=0.0)])
    line.ask(hx.IJogRequest((hx.JogTag(253, 0, speed_mode=True, invalid=True),)).frame())
    line.write(253, 'torque_control', hx.TORQUE_ON)
    line.ask(hx.IJogRequest((hx.JogTag(253, -400, speed_mode=True, playtime=60),)).frame())
    start = line.servo().shaft.q
    line.run(0.2)
    assert line.servo().shaft.v < -0.5 and line.servo().shaft.q < start


def test_goal_outside_the_position_limits_is_clamped_and_flagged():
    line = Line([sm.SimServoConfig(253, position=0.0)])
    line.write(253, 'torque_control', hx.TORQUE_ON)
    line.ask(hx.SJogRequest(5, (hx.JogTag(253, 1020),)).frame(), wait=0.5)
    assert line.read(253, 'absolute_goal_position') == 1002
    assert line.status().errors & hx.StatusError.POT_LIMIT


def test_bad_packets_set_invalid_packet_and_are_not_executed():
    line = Line([sm.SimServoConfig(253, eep={'ack_policy': 2})])
    bad = bytearray(hx.write_register(253, 'led_control', 2).encode())
    bad[8] ^= 0x10
    line.send(bytes(bad))
    line.run(0.02)
    status = line.status()
    assert status.errors & hx.StatusError.INVALID_PACKET
    assert status.details & hx.StatusDetail.CHECKSUM_ERROR and line.servo().ram[53] == 0
    line.ask(hx.clear_errors(253))
    assert line.status().error == 0
    assert line.ask(hx.Frame(253, 0x0B)) == []
    assert line.status().details & hx.StatusDetail.UNKNOWN_COMMAND
    line.ask(hx.clear_errors(253))
    assert line.ask(hx.ReadRequest(hx.Memory.RAM, 70, 10).frame(253, check=False)) == []
    assert line.status().details & hx.StatusDetail.REGISTER_RANGE
    line.ask(hx.clear_errors(253))
    assert line.ask(hx.WriteRequest(hx.Memory.RAM, 60, b'\x00\x00').frame(253)) == []
    assert line.status().details & hx.StatusDetail.REGISTER_RANGE


def test_eep_writes_take_effect_after_reboot():
    line = Line([sm.SimServoConfig(253)], reboot_time=0.2)
    line.ask(hx.write_register(253, 'id', 7, hx.Memory.EEP))
    line.ask(hx.write_register(253, 'ack_policy', 2, hx.Memory.EEP))
    assert line.status(253) is not None and line.read(253, 'ack_policy') == 1
    line.write(253, 'led_control', 3)
    line.ask(hx.RebootRequest().frame(253), wait=0.05)
    assert line.status(253) is None and line.status(7) is None   # deaf while rebooting
    line.run(0.2)
    assert line.status(253) is None
    assert line.read(7, 'ack_policy') == 2 and line.read(7, 'led_control') == 0
    assert line.read(7, 'id') == 7


def test_reboot_reloads_ram_and_releases_the_torque():
    line = Line([sm.SimServoConfig(253)], reboot_time=0.1)
    line.write(253, 'torque_control', hx.TORQUE_ON)
    line.write(253, 'max_position', 900)
    line.ask(hx.RebootRequest().frame(253), wait=0.15)
    status = line.status()
    assert not status.motor_on and line.read(253, 'max_position') == 1002


def test_rollback_restores_factory_eep_after_reboot():
    line = Line([sm.SimServoConfig(5, eep={'ack_policy': 2, 'max_position': 800})],
                reboot_time=0.05)
    line.ask(hx.RollbackRequest(keep_id=True, keep_baud=True).frame(5))
    assert line.read(5, 'max_position') == 800
    line.ask(hx.RebootRequest().frame(5), wait=0.1)
    assert line.read(5, 'max_position') == 1002 and line.read(5, 'ack_policy') == 1


def test_a_servo_rebooted_into_another_baud_rate_is_deaf():
    line = Line([sm.SimServoConfig(253)], reboot_time=0.05)
    line.ask(hx.write_register(253, 'baud_rate', hx.baud_code(666666), hx.Memory.EEP))
    line.ask(hx.RebootRequest().frame(253), wait=0.1)
    assert line.status() is None


def test_torque_policy_releases_and_refuses_until_cleared():
    line = Line([sm.SimServoConfig(253)])
    line.write(253, 'torque_control', hx.TORQUE_ON)
    line.servo().set_condition('overload', True)
    line.servo().set_condition('overload', False)
    status = line.status()
    assert status.errors & hx.StatusError.OVERLOAD and not status.motor_on
    line.write(253, 'torque_control', hx.TORQUE_ON)
    assert not line.status().motor_on                 # refused: clear first
    line.ask(hx.clear_errors(253))                       # fact sheet 10.1
    assert not line.status().motor_on                 # stays off after clearing
    line.write(253, 'torque_control', hx.TORQUE_ON)
    assert line.status().motor_on


def test_external_torque_deflects_a_holding_servo():
    params = ServoModelParams(kp=2.0, alpha=(0.2, 0.02, 0.01, 1.0), qs=0.3)
    line = Line([sm.SimServoConfig(253, position=0.0, params=params, external_torque=0.6)])
    line.write(253, 'torque_control', hx.TORQUE_ON)
    holds = line.servo().profile.goal        # torque on holds where the load had pushed it
    line.run(1.0)
    expected = (0.6 - 0.03) / (2.0 * 7.4)    # beyond the static friction band
    assert line.servo().shaft.q - holds == pytest.approx(expected, rel=0.02)


def test_moved_by_hand_only_with_torque_off():
    line = Line([sm.SimServoConfig(1, position=0.0), sm.SimServoConfig(2, position=0.0)])
    line.write(2, 'torque_control', hx.TORQUE_ON)
    assert line.sim.move_by_hand({1: 0.4, 2: 0.4}) == [1]
    line.run(0.02)
    assert line.servo(1).shaft.q == pytest.approx(0.4)
    assert line.servo(2).shaft.q == pytest.approx(0.0)
    kind = hx.servo_type('DRS-0101')
    assert line.read(1, 'calibrated_position') == kind.rad_to_position(0.4)


def test_overload_from_a_jammed_servo():
    line = Line([sm.SimServoConfig(253, position=0.0)],
                faults=sm.parse_faults(['jam=253@0.1']))
    line.write(253, 'torque_control', hx.TORQUE_ON)
    line.run(0.2)
    line.ask(hx.SJogRequest(10, (hx.JogTag(253, 900),)).frame(), wait=1.0)
    assert line.servo().shaft.q == pytest.approx(0.0) and line.status().error == 0
    line.run(1.0)   # overload detection period 1.68 s of saturated PWM
    status = line.status()
    assert status.errors & hx.StatusError.OVERLOAD and not status.motor_on


def test_error_faults_appear_at_their_time():
    line = Line([sm.SimServoConfig(1), sm.SimServoConfig(2)],
                faults=sm.parse_faults(['error=1:overheat@0.5', 'error=2:voltage@0.2+0.6']))
    line.run(0.3)
    assert line.status(1).error == 0
    line.run(0.8)   # found at the next ADC check (504 ms)
    assert line.status(1).errors & hx.StatusError.TEMPERATURE
    assert line.status(2).errors & hx.StatusError.VOLTAGE
    injected = [(i, f) for _, i, f in line.sim.counters.errors_injected]
    assert injected == [(2, 'voltage'), (1, 'overheat')]
    line.ask(hx.clear_errors(2))
    line.run(0.6)
    assert line.status(2).error == 0        # the voltage is back: nothing new after clearing


def test_random_errors_are_reproducible():
    def injected(seed):
        line = Line([sm.SimServoConfig(i) for i in range(1, 6)],
                    faults=sm.parse_faults(['random-errors=4']), seed=seed)
        line.run(3.0)
        return [(round(t, 6), i, f) for t, i, f in line.sim.counters.errors_injected]
    first = injected(3)
    assert len(first) >= 4 and injected(3) == first and injected(4) != first


def test_silent_servo():
    line = Line([sm.SimServoConfig(253)], faults=sm.parse_faults(['silent=253@0.1+0.5']))
    assert line.status() is not None
    line.run(0.1)
    assert line.status() is None
    line.run(0.5)
    assert line.status() is not None


@pytest.mark.parametrize('fault, counter', [('drop=1', 'replies_dropped'),
                                            ('late=1:0.05', 'replies_late'),
                                            ('corrupt=0.2', 'replies_corrupted')])
def test_reply_faults_are_counted(fault, counter):
    line = Line([sm.SimServoConfig(253)], faults=sm.parse_faults([fault]), seed=1)
    got = 0
    for _ in range(50):
        got += len(line.ask(hx.StatRequest().frame(253), wait=0.01))
    counters = line.sim.counters
    got += len(line.run(0.1))
    lost = counters.replies_dropped + counters.replies_corrupted
    assert getattr(counters, counter) > 0
    assert got + lost == 50
    if fault.startswith('late'):
        assert got == 50


def test_corruption_is_always_detected_by_the_master():
    line = Line([sm.SimServoConfig(253)], faults=sm.parse_faults(['corrupt=0.05']), seed=2)
    ok = 0
    for _ in range(400):
        ok += len(line.ask(hx.read_register(253, 'voltage'), wait=0.005))
    counters = line.sim.counters
    assert counters.replies_corrupted > 50
    assert ok == 400 - counters.replies_corrupted
    assert counters.bytes_corrupted >= counters.replies_corrupted


@pytest.mark.parametrize('spec, where', [
    ('corrupt=2', 'corrupt=2'), ('error=1:melt', 'flag'), ('bogus=1', 'unknown fault'),
    ('jam=x', 'jam=x'), ('late=0.1:z', 'late')])
def test_bad_fault_specs_are_named(spec, where):
    with pytest.raises(sm.SimulatorConfigError, match=where):
        sm.parse_fault(spec)


@pytest.mark.parametrize('servos, key', [
    ([{'id': 1}, {'id': 1}], 'servos[1].id'), ([{'id': 300}], 'servos[0].id'),
    ([{'id': 1, 'model': 'DRS-9'}], 'servos[0].model'), ([{'model': 'DRS-0101'}], '.id'),
    ([{'id': 1, 'speed': 3}], 'servos[0].speed'), ([{'id': 1, 'position': 9}], 'position'),
    ([{'id': 1, 'params': {'kp': -1}}], 'params'), ([{'id': 1, 'eep': {'pwm': 1}}], 'eep.pwm')])
def test_bad_configuration_names_the_key(servos, key):
    with pytest.raises(sm.SimulatorConfigError) as info:
        sm.load_sim_config({'servo_sim': {'servos': servos}})
    assert key in info.value.where


def test_configuration_from_the_driver_file():
    path = os.path.join(os.path.dirname(__file__), '..', '..', 'config', 'sweetie_bot_servos.yaml')
    with pytest.raises(sm.SimulatorConfigError, match='leg12'):
        sm.load_sim_config_file(path)
    config = sm.load_sim_config_file(path, 'head')
    assert [s.servo_id for s in config.servos] == [51, 52, 53, 54]   # Proto2's eyes have no servo
    assert config.servos[0].joint == 'joint51' and config.baud == 115200


def test_an_unreadable_configuration_file_is_one_line_with_where(tmp_path):
    from sweetie_motion.servo.driver import BusConfigError, load_bus_config_file
    bad = tmp_path / 'servos.yaml'
    bad.write_text('servo_bus:\n  buses: [leg12\n  baud: 1\n')
    for load, error in ((sm.load_sim_config_file, sm.SimulatorConfigError),
                        (load_bus_config_file, BusConfigError)):
        with pytest.raises(error) as info:
            load(str(bad))
        message = str(info.value)
        assert f'{bad}:3:' in message and '\n' not in message, message
        with pytest.raises(error, match='no such file'):
            load(str(tmp_path / 'missing.yaml'))


# --- the program on a real pty ------------------------------------------------------------------

def _start(tmp_path, *args):
    config = tmp_path / 'servos.yaml'
    config.write_text(yaml.safe_dump({'servo_sim': {'servos': [{'id': 1, 'position': 0.2},
                                                               {'id': 2}]}}))
    process = subprocess.Popen([sys.executable, '-m', 'sweetie_motion.servo.sim',
                                '--servos', str(config), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], 20)
    assert ready, 'the simulator printed no path'
    return process, process.stdout.readline().strip()


def _ask(port, frame, timeout=1.0):
    port.write(frame.encode())
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        select.select([port.fileno()], [], [], 0.05)
        frames = parser.feed(port.read(256))
        if frames:
            return hx.decode_reply(frames[0])
    return None


def test_program_serves_a_pty_and_stops_cleanly_on_sigterm(tmp_path):
    process, path = _start(tmp_path)
    try:
        assert os.path.exists(path)
        with serial.Serial(path, 115200, timeout=0) as port:
            reply = _ask(port, hx.read_register(1, 'calibrated_position'))
            assert reply.value('calibrated_position') == \
                hx.servo_type('DRS-0101').rad_to_position(0.2)
            start = time.monotonic()
            replies = [_ask(port, hx.StatRequest().frame(2)) for _ in range(20)]
            elapsed = time.monotonic() - start
            assert all(r is not None and r.servo_id == 2 for r in replies)
            # the wire time is real: 20 x (7 + 9 bytes) cannot take less than 27.8 ms
            assert elapsed >= 20 * 16 * BT
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        process.stderr.close()


def test_program_control_channel_and_port_reopening(tmp_path):
    link = str(tmp_path / 'port')
    control = str(tmp_path / 'control')
    process, path = _start(tmp_path, '--link', link, '--control', control,
                           '--fault', 'close=0.5+0.5')
    client = sm.SimulatorControl(control)
    try:
        assert path == link
        state = client.state()
        assert state['servos']['1']['position'] == pytest.approx(0.2)
        assert client.move({1: -0.3}) == [1]
        wait_for(lambda: not client.state()['port_open'], 10, message='the port closed')
        assert not os.path.exists(link)
        wait_for(lambda: client.state()['port_open'], 10, message='the port reopened')
        with serial.Serial(link, 115200, timeout=0) as port:
            reply = _ask(port, hx.read_register(1, 'calibrated_position'))
        assert reply.value('calibrated_position') == \
            hx.servo_type('DRS-0101').rad_to_position(-0.3)
        with pytest.raises(sm.SimulatorConfigError, match='unknown op'):
            client.request(op='explode')
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == 0
    finally:
        client.close()
        if process.poll() is None:
            process.kill()
        process.stdout.close()
        process.stderr.close()


def test_program_refuses_a_bad_configuration(tmp_path):
    config = tmp_path / 'bad.yaml'
    config.write_text('servo_sim: {servos: [{id: 999}]}')
    result = subprocess.run([sys.executable, '-m', 'sweetie_motion.servo.sim', '--servos',
                             str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and 'servos[0].id' in result.stderr


def test_math_of_the_trapezoid():
    profile = TrajectoryProfile(0.0, 0.0, 1.0, duration=1.0, ramp=0.25)
    assert profile.at(0.5) == (pytest.approx(0.5), pytest.approx(1 / 0.75))
    assert profile.at(1.0) == (1.0, 0.0) and profile.at(-1) == (0.0, 0.0)
    assert profile.at(0.25)[0] == pytest.approx(0.5 * (1 / 0.75) * 0.25)
    assert math.isclose(profile.at(0.999)[0], 1.0, abs_tol=1e-4)
