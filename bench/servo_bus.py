#!/usr/bin/env python3
"""
The HerkuleX driver against the bus simulator over ptys: goals, state refresh, wire use.

    .venv/bin/python bench/servo_bus.py [--seconds S] [--json]

For the pony's 26 servos (``config/sweetie_bot_servos.yaml``) on one line and on the robot's
three lines (10 + 10 + 6), at 115200 and 666666 Bd, it starts one ``servo-sim`` per line,
connects :class:`sweetie_motion.servo.driver.SerialServoBus` to them and drives it at
100 Hz with moving goals. It measures

- the goal rate: S_JOG frames the simulators received per second (the slowest line);
- the state refresh: position reads answered per servo per second (the slowest servo);
- the bus utilisation: reply bytes on the slowest line's wire per second times the byte time;
- the CPU time of the driver's bus threads;

and compares each with the wire-time limit computed in the same run from the frame sizes
(:func:`sweetie_motion.servo.driver.wire_budget`: the S_JOG of the line's servos, the 9-byte
read request and its 19-byte reply, 10 bits a byte, full duplex, at most one read per servo and
cycle), and with the original robot's 17.9 Hz (its 56 ms control period).

A pty does not pace bytes by itself: written bytes arrive at once, whatever the baud rate.
The simulator's pacing (a byte takes 10 / baud s on each wire, a reply starts 0.3 ms after its
request's last byte, once the reply wire is free) is what makes the wire time real here; the
driver's figures are therefore what the same scheduler would get on a UART of that speed with
servos that answer in 0.3 ms.

Targets: each measured figure at least 85 % of its wire-time limit; on the original layout
(3 lines at 115200 Bd) a goal every cycle at 100 Hz and every servo's state refreshed at least
twice as often as the original robot's 17.9 Hz.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from sweetie_motion.servo import driver as sb  # noqa: E402
from sweetie_motion.servo.sim import sim_config_from_bus, SimulatorProcess  # noqa: E402

PERIOD = 0.01
ORIGINAL_RATE = 1 / 0.056     # the original robot: 17.9 Hz
PONY = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')


def layouts(config):
    """Return {name: buses}: the robot's three lines and all 26 servos on one."""
    three = list(config.buses)
    one = [sb.BusConfig('all', 'unused', 115200, tuple(s for b in three for s in b.servos))]
    return {'1 bus': one, '3 buses': three}


def run(buses, baud, seconds, directory):
    """Drive one layout at one baud rate; return the measured and limit figures."""
    sims = []
    configured = []
    try:
        for bus in buses:
            mapping = sim_config_from_bus(bus)
            mapping['servo_sim']['baud'] = baud
            sim = SimulatorProcess(mapping, directory, f'{bus.name}_{baud}')
            sim.start()
            sims.append(sim)
            configured.append(sb.BusConfig(bus.name, sim.port, baud, bus.servos))
        driver = sb.SerialServoBus(sb.DriverConfig(tuple(configured), period=PERIOD,
                                                   shutdown_torque='keep'))
        driver.connect()
        n = len(driver.joints)
        phase = np.linspace(0.0, 2 * math.pi, n, endpoint=False)

        def drive(duration):
            start = time.monotonic()
            deadline = start
            cycles = 0
            while deadline - start < duration:
                t = deadline
                driver.receive(time.monotonic())
                driver.send(time.monotonic(), 0.3 * np.sin(2.0 * t + phase),
                            0.6 * np.cos(2.0 * t + phase))
                cycles += 1
                deadline += PERIOD
                time.sleep(max(0.0, deadline - time.monotonic()))
            return cycles

        drive(1.0)   # warm-up: every servo read at least once, the pipeline full
        before = snapshot(driver, sims)
        start = time.monotonic()
        cycles = drive(seconds)
        elapsed = time.monotonic() - start
        after = snapshot(driver, sims)
        driver.disconnect()
    finally:
        for sim in sims:
            sim.stop()
    out = {'cycle_rate': cycles / elapsed, 'lines': []}
    for k, bus in enumerate(configured):
        budget = sb.wire_budget(len(bus.servos), baud, PERIOD)
        bt = budget.byte_time
        goals = (after['jogs'][k] - before['jogs'][k]) / elapsed
        reads = [(after['reads'][j] - before['reads'][j]) / elapsed for j in after['reads']
                 if j in {s.joint for s in bus.servos}]
        rx = (after['rx'][k] - before['rx'][k]) * bt / elapsed
        cpu = (after['cpu'][k] - before['cpu'][k]) / elapsed
        out['lines'].append({
            'name': bus.name, 'servos': len(bus.servos), 'goal_every': budget.goal_every,
            'goal_rate': goals, 'goal_limit': budget.goal_rate,
            'refresh_min': min(reads), 'refresh_mean': float(np.mean(reads)),
            'refresh_limit': budget.refresh_rate,
            'utilisation': rx, 'utilisation_limit': budget.read_rate * budget.reply_bytes * bt,
            'cpu': cpu, 'timeouts': after['timeouts'][k] - before['timeouts'][k]})
    return out


def snapshot(driver, sims):
    """Return the counters of the driver and of the simulators."""
    buses, servos = driver.statistics()
    return {'jogs': [s.control.state()['counters']['jog_frames'] for s in sims],
            'reads': {s.joint: s.reads for s in servos},
            'rx': [b.bytes_in for b in buses], 'cpu': [b.cpu_time for b in buses],
            'timeouts': [b.timeouts for b in buses]}


def main():
    """Run the layouts; print figures and targets; return the number of targets missed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=5.0, help='measuring time per run')
    parser.add_argument('--json', action='store_true', help='print the figures as JSON too')
    args = parser.parse_args()
    from targets import Targets
    targets = Targets('servo bus, R-SERVO-1')
    config = sb.load_bus_config_file(PONY)
    results = {}
    with tempfile.TemporaryDirectory(prefix='servo_bench_') as directory:
        for name, buses in layouts(config).items():
            for baud in (115200, 666666):
                key = f'{name} x {baud} Bd'
                result = run(buses, baud, args.seconds, directory)
                results[key] = result
                report(key, result, targets, original=(name == '3 buses' and baud == 115200))
    if args.json:
        print(json.dumps(results))
    return targets.report()


def report(key, result, targets, original):
    """Print one run's figures and add its targets."""
    lines = result['lines']
    print(f'{key}: cycle {result["cycle_rate"]:.1f} Hz', flush=True)
    for line in lines:
        print(f'  line {line["name"]:6s} {line["servos"]:2d} servos: goals '
              f'{line["goal_rate"]:6.1f} Hz (limit {line["goal_limit"]:5.1f}, '
              f'every {line["goal_every"]} cycle(s)), '
              f'refresh min {line["refresh_min"]:5.1f} / mean {line["refresh_mean"]:5.1f} Hz '
              f'(limit {line["refresh_limit"]:5.1f}, {line["refresh_min"] / ORIGINAL_RATE:.1f} x '
              f'the original 17.9 Hz), reply wire {100 * line["utilisation"]:4.1f} % '
              f'(limit {100 * line["utilisation_limit"]:4.1f} %), bus thread CPU '
              f'{100 * line["cpu"]:4.1f} %, timeouts {line["timeouts"]}', flush=True)
    goal = min(lines, key=lambda x: x['goal_rate'] / x['goal_limit'])
    refresh = min(lines, key=lambda x: x['refresh_min'] / x['refresh_limit'])
    wire = min(lines, key=lambda x: x['utilisation'] / x['utilisation_limit'])
    for label, line, value, limit, unit in (
            ('goal rate', goal, goal['goal_rate'], goal['goal_limit'], 'Hz'),
            ('state refresh of the slowest servo', refresh, refresh['refresh_min'],
             refresh['refresh_limit'], 'Hz'),
            ('reply wire utilisation', wire, 100 * wire['utilisation'],
             100 * wire['utilisation_limit'], '%')):
        targets.check(f'{key}: {label}', f'{value:.1f} {unit}',
                      f'>= 85 % of the wire limit {limit:.1f} {unit}', value >= 0.85 * limit,
                      f' ({100 * value / limit:.0f} %)')
    cpu = sum(line['cpu'] for line in lines)
    print(f'  driver threads CPU: {100 * cpu:.1f} % of one core', flush=True)
    if original:
        cycle = result['cycle_rate']
        slowest = min(line['goal_rate'] for line in lines)
        targets.check(f'{key}: a goal every cycle', f'{slowest:.1f} Hz',
                      f'>= 99 % of the cycle rate {cycle:.1f} Hz', slowest >= 0.99 * cycle)
        worst = min(line['refresh_min'] for line in lines)
        targets.check(f'{key}: every servo refreshed', f'{worst:.1f} Hz',
                      f'>= 2 x {ORIGINAL_RATE:.1f} Hz', worst >= 2 * ORIGINAL_RATE)


if __name__ == '__main__':
    sys.exit(main())
