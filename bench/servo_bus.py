#!/usr/bin/env python3
"""
The HerkuleX driver against the bus simulator over ptys: goals, state refresh, wire, freshness.

    .venv/bin/python bench/servo_bus.py [--seconds S] [--json] [--stack RUNS]

For the pony's 24 servos (``config/sweetie_bot_servos.yaml``) on one line and on the robot's
three lines (10 + 10 + 4), at 115200 and 666666 Bd, it starts one ``servo-sim`` per line,
connects :class:`sweetie_motion.servo.driver.SerialServoBus` to them and drives it at 100 Hz.
It measures

- the goal rate: S_JOG frames the simulators received per second (the slowest line);
- the state refresh: position reads answered per servo per second (the slowest servo);
- the reply wire in use: reply bytes per second times the byte time;
- the CPU time of the driver's line threads;
- the **age of the measurements**: the driver samples, every cycle and for every servo, now
  minus the time the servo sampled its newest measurement (p50 / p99 / max per line); the
  simulators count the gaps between the intact position replies they send each servo;

and compares the wire figures with the limit computed in the same run from the frame sizes
(:func:`sweetie_motion.servo.driver.wire_budget`: a reply may only start once the previous one
has ended, because the servos share the reply wire; the S_JOG takes the request wire).

Then, on the robot's layout at 115200 Bd, with **faults on every line** (5 % of the replies
corrupted: one byte flipped; 1 % dropped), it plays the stored ``greeting`` as the reference
(forward, then backward) and compares every cycle's measured position with the servo's real
position (the simulators'
state, polled with the same monotonic clock): how far ``joint_states`` lags what the servos
do.

A pty does not pace bytes by itself: the simulator's pacing (a byte takes 10 / baud s on each
wire, a reply starts 0.3 ms after its request's last byte) makes the wire time real, and it
garbles replies that overlap (none may).

With ``--stack RUNS`` it then runs the whole stack (``bringup --bus sim-serial``, the same
faults) at both baud rates, without and with another process typing ``servo status``,
``servo scan``, ``play nod``, ``status`` and ``list`` in a loop, and beside busy loops that
take as much CPU as that loop did (:mod:`servo_stack`), and reports the driver's measurement
ages of all three.

Targets: each wire figure at least 85 % of its limit; on the original layout (3 lines at
115200 Bd) a goal every cycle at 100 Hz and every servo refreshed at least twice as often as
the original robot's 17.9 Hz; with the faults, the largest measurement age at most 3 periods
and its p99 at most 2 periods (the issue's freshness target), and the measured position within
0.05 rad of the real one during the greeting.
"""

import argparse
import json
import math
import os
import random
import sys
import tempfile
import threading
import time

# the stack's DDS (--stack) stays on this machine, on a domain of its own, unless told otherwise
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from sweetie_motion.core.cycle import set_realtime_priority  # noqa: E402
from sweetie_motion.servo import driver as sb  # noqa: E402
from sweetie_motion.servo.sim import sim_config_from_bus, SimulatorProcess  # noqa: E402
from sweetie_motion.servo.sim.process import SIM_PRIORITY  # noqa: E402
from sweetie_motion.trajectory.analysis import goal_motion  # noqa: E402
from sweetie_motion.trajectory.codec import load_goal_file  # noqa: E402

PERIOD = 0.01
ORIGINAL_RATE = 1 / 0.056     # the original robot: 17.9 Hz
PONY = os.path.join(ROOT, 'config', 'sweetie_bot_servos.yaml')
GREETING = os.path.join(ROOT, 'config', 'trajectories', 'greeting.yaml')
FAULTS = ('corrupt-reply=0.05', 'drop=0.01')
#: the driver's line threads run with the cycle process's helpers' priority
DRIVER_PRIORITY = 49
#: the loop that drives the driver runs with the cycle's priority (SCHED_FIFO where permitted)
CYCLE_PRIORITY = 50


def layouts(config):
    """Return {name: buses}: the robot's three lines and all its servos on one."""
    three = list(config.buses)
    one = [sb.BusConfig('all', 'unused', 115200, tuple(s for b in three for s in b.servos))]
    return {'1 bus': one, '3 buses': three}


def sinusoid(joints):
    """Return a reference: every joint swinging 0.3 rad at 2 rad/s, phases spread."""
    phase = np.linspace(0.0, 2 * math.pi, len(joints), endpoint=False)
    return lambda t: (0.3 * np.sin(2.0 * t + phase), 0.6 * np.cos(2.0 * t + phase))


def greeting(joints):
    """Return a reference: the stored greeting forward, then backward, and again."""
    motion = goal_motion(load_goal_file(GREETING))
    columns = [motion.joints.index(j) if j in motion.joints else -1 for j in joints]
    sampled = motion.sample(int((motion.end - motion.start) / PERIOD) + 1)
    n = len(sampled.times)

    def at(t):
        k = int(t / PERIOD) % (2 * n - 2)
        sign = 1.0 if k < n else -1.0
        k = k if k < n else 2 * n - 2 - k
        position = np.array([sampled.position[k, c] if c >= 0 else 0.0 for c in columns])
        velocity = np.array([sign * sampled.velocity[k, c] if c >= 0 else 0.0
                             for c in columns])
        return position, velocity
    return at


class TruthRecorder(threading.Thread):
    """Polls the simulators' real servo positions (monotonic time, servo angle by ID)."""

    def __init__(self, sims, every=0.04):
        super().__init__(daemon=True)
        self.sims, self.every = sims, every
        self.samples = {}     # servo ID -> list of (time, angle)
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(self.every):
            for sim in self.sims:
                state = sim.control.state()
                for key, servo in state['servos'].items():
                    self.samples.setdefault(int(key), []).append((state['now'],
                                                                  servo['position']))


def run(buses, baud, seconds, directory, reference='sinusoid', faults=()):
    """Drive one layout at one baud rate; return the measured and limit figures."""
    sims, configured = [], []
    try:
        for bus in buses:
            mapping = sim_config_from_bus(bus)
            mapping['servo_sim']['baud'] = baud
            sim = SimulatorProcess(mapping, directory, f'{bus.name}_{baud}')
            sim.start()
            sims.append(sim)
            configured.append(sb.BusConfig(bus.name, sim.port, baud, bus.servos))
        driver = sb.SerialServoBus(sb.DriverConfig(tuple(configured), period=PERIOD,
                                                   shutdown_torque='keep',
                                                   priority=DRIVER_PRIORITY))
        driver.connect()
        for sim in sims:
            for fault in faults:
                sim.control.fault(fault)
        at = greeting(driver.joints) if reference == 'greeting' else sinusoid(driver.joints)
        measured = []

        origin = time.monotonic()    # one time base for the warm-up and the run: no jump

        lateness = []

        def drive(duration, record=False, late=None):
            # in a thread scheduled as the motion process's cycle is: at normal priority, the
            # simulators (real-time) delayed it by up to 20 ms, and the line cycles with it
            cycles = []

            def loop():
                set_realtime_priority(CYCLE_PRIORITY)
                start = time.monotonic()
                deadline = start
                while deadline - start < duration:
                    now = time.monotonic()
                    if late is not None:
                        late.append(now - deadline)
                    state = driver.receive(now)
                    if record:
                        measured.append((now, state.position.copy()))
                    driver.send(now, *at(deadline - origin))
                    cycles.append(now)
                    deadline += PERIOD
                    time.sleep(max(0.0, deadline - time.monotonic()))
            thread = threading.Thread(target=loop, name='bench_cycle')
            thread.start()
            thread.join()
            return len(cycles)

        drive(1.0)   # warm-up: every servo read at least once
        driver.reset_ages()
        for sim in sims:
            sim.control.reset_statistics()
        truth = TruthRecorder(sims) if reference == 'greeting' else None
        if truth is not None:
            truth.start()
        before = snapshot(driver, sims)
        start = time.monotonic()
        cycles = drive(seconds, record=truth is not None, late=lateness)
        elapsed = time.monotonic() - start
        after = snapshot(driver, sims)
        if truth is not None:
            truth.done.set()
            truth.join()
        driver.disconnect()
    finally:
        for sim in sims:
            sim.stop()
    late = np.array(lateness) if lateness else np.zeros(1)
    out = {'cycle_rate': cycles / elapsed, 'lines': [],
           'cycle_late_ms': [1e3 * float(np.percentile(late, 99)), 1e3 * float(late.max())]}
    buses_after = {b.name: b for b in after['buses']}
    for k, bus in enumerate(configured):
        budget = sb.wire_budget(len(bus.servos), baud, PERIOD)
        bt = budget.byte_time
        goals = (after['jogs'][k] - before['jogs'][k]) / elapsed
        reads = [(after['reads'][s.joint] - before['reads'][s.joint]) / elapsed
                 for s in bus.servos]
        rx = (after['rx'][k] - before['rx'][k]) * bt / elapsed
        cpu = (after['cpu'][k] - before['cpu'][k]) / elapsed
        stats = buses_after[bus.name]
        out['lines'].append({
            'name': bus.name, 'servos': len(bus.servos), 'goal_every': budget.goal_every,
            'goal_rate': goals, 'goal_limit': budget.goal_rate,
            'refresh_min': min(reads), 'refresh_mean': float(np.mean(reads)),
            'refresh_limit': budget.refresh_rate,
            'utilisation': rx,
            'utilisation_limit': budget.read_rate * budget.reply_bytes * bt,
            'cpu': cpu, 'lost': stats.timeouts - before['lost'][k],
            'age_ms': [1e3 * stats.age_p50, 1e3 * stats.age_p99, 1e3 * stats.age_max],
            'gaps_ms': [after['gaps'][k][key] for key in ('p50_ms', 'p99_ms', 'max_ms')],
            'collisions': after['collisions'][k] - before['collisions'][k]})
    if truth is not None:
        out['lag'] = lag(configured, driver.joints, measured, truth.samples)
    return out


def lag(buses, joints, measured, truth):
    """Return per joint the largest |measured - real| position over the run [rad]."""
    worst = {}
    servos = {s.joint: s for bus in buses for s in bus.servos}
    times = np.array([t for t, _ in measured])
    positions = np.array([p for _, p in measured])
    for k, joint in enumerate(joints):
        servo = servos[joint]
        series = np.array(truth.get(servo.servo_id, []))
        if len(series) < 2:
            continue
        inside = (times >= series[0, 0]) & (times <= series[-1, 0])
        real = servo.servo_to_joint(np.interp(times[inside], series[:, 0], series[:, 1]))
        worst[joint] = float(np.max(np.abs(positions[inside, k] - real)))
    return worst


def snapshot(driver, sims):
    """Return the counters of the driver and of the simulators."""
    buses, servos = driver.statistics()
    states = [s.control.state() for s in sims]
    return {'jogs': [s['counters']['jog_frames'] for s in states],
            'collisions': [s['counters']['collisions'] for s in states],
            'gaps': [s['sample_gaps'] for s in states],
            'reads': {s.joint: s.reads for s in servos}, 'buses': buses,
            'rx': [b.bytes_in for b in buses], 'cpu': [b.cpu_time for b in buses],
            'lost': [b.timeouts for b in buses]}


def main():
    """Run the layouts; print figures and targets; return the number of targets missed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=5.0, help='measuring time per run')
    parser.add_argument('--fault-seconds', type=float, default=20.0,
                        help='measuring time of the run with faults (the greeting)')
    parser.add_argument('--json', action='store_true', help='print the figures as JSON too')
    parser.add_argument('--stack', type=int, default=0, metavar='RUNS',
                        help='then the whole stack (bringup --bus sim-serial, faults on), '
                        'without and with commands typed beside it, RUNS times per baud rate')
    parser.add_argument('--stack-seconds', type=float, default=30.0,
                        help='measuring time of each stack run')
    parser.add_argument('--sim-priority', type=int, default=SIM_PRIORITY,
                        help="the stack's simulators' real-time priority (sim.priority; "
                        f'default {SIM_PRIORITY}, above the cycle; 45: below the line threads, '
                        'where they take no core from the driver, as servos take none)')
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
        for baud in (115200, 666666):
            key = f'3 buses x {baud} Bd, {" + ".join(FAULTS)}, greeting'
            result = run(list(config.buses), baud, args.fault_seconds, directory,
                         reference='greeting', faults=FAULTS)
            results[key] = result
            report(key, result, targets, original=False, freshness=True)
        if args.stack:
            results['stack'] = stack(args.stack, args.stack_seconds, directory, results,
                                     targets, args.sim_priority)
    if args.json:
        print(json.dumps(results))
    return targets.report()


def stack(runs, seconds, directory, results, targets, sim_priority):
    """
    Run the whole stack quiet, beside commands and beside their CPU load; print and judge.

    Targets: the largest measurement age at most 3 periods at 666666 Bd and at most this
    run's driver-only figure (the greeting with faults) plus a period at 115200 Bd, with the
    commands as without them. The plain CPU load (busy loops, as many as the commands kept
    cores busy beyond the quiet run's) is not judged: it tells how much of what the commands
    do is their CPU time.
    """
    from servo_stack import COMMANDS, run_loads
    print(f'the whole stack, its simulators at real-time priority {sim_priority}', flush=True)
    out = {}
    for baud in (666666, 115200):
        bench = max(line['age_ms'][2] for line in results[
            f'3 buses x {baud} Bd, {" + ".join(FAULTS)}, greeting']['lines'])
        limit = 3e3 * PERIOD if baud == 666666 else bench + 1e3 * PERIOD
        for run in range(runs):
            for load, cores, figures, typed, busy in run_loads(baud, seconds, directory,
                                                               sim_priority):
                beside = {None: 'without commands', 'commands': 'with commands',
                          'cpu': f'beside {cores} busy loop(s), no commands'}[load]
                key = f'stack x {baud} Bd, {beside}, run {run + 1}'
                out[key] = {'lines': figures, 'command_times_s': typed, 'busy_cores': busy}
                loops = min(len(times) for times in typed.values())
                worst = max(f['age_max_ms'] for f in figures.values())
                print(f'{key}: ' + '; '.join(
                    f'{line} age p50 / p99 / max {f["age_p50_ms"]:.1f} / {f["age_p99_ms"]:.1f}'
                    f' / {f["age_max_ms"]:.1f} ms, thread ran {f["wake_p99_ms"]:.1f} / '
                    f'{f["wake_max_ms"]:.1f} ms (p99 / max) after the goals'
                    for line, f in figures.items()) + (
                    f'; {loops} loops of {", ".join(" ".join(c) for c in COMMANDS)} ('
                    + ', '.join(f'{command} {sum(times) / len(times):.1f} s'
                                for command, times in typed.items() if times) + ' each)'
                    if load == 'commands' else '') + f'; the machine {busy:.2f} cores busy',
                    flush=True)
                if load != 'cpu':
                    targets.check(f'{key}: largest measurement age', f'{worst:.1f} ms',
                                  f'<= {limit:.0f} ms', worst <= limit)
    return out


def report(key, result, targets, original, freshness=False):
    """Print one run's figures and add its targets."""
    lines = result['lines']
    print(f'{key}: cycle {result["cycle_rate"]:.1f} Hz, late p99 / max '
          f'{result["cycle_late_ms"][0]:.1f} / {result["cycle_late_ms"][1]:.1f} ms', flush=True)
    for line in lines:
        age, gaps = line['age_ms'], line['gaps_ms']
        print(f'  line {line["name"]:6s} {line["servos"]:2d} servos: goals '
              f'{line["goal_rate"]:6.1f} Hz (limit {line["goal_limit"]:5.1f}, '
              f'every {line["goal_every"]} cycle(s)), '
              f'refresh min {line["refresh_min"]:5.1f} / mean {line["refresh_mean"]:5.1f} Hz '
              f'(limit {line["refresh_limit"]:5.1f}, {line["refresh_min"] / ORIGINAL_RATE:.1f} x '
              f'the original 17.9 Hz), reply wire {100 * line["utilisation"]:4.1f} % '
              f'(limit {100 * line["utilisation_limit"]:4.1f} %), thread CPU '
              f'{100 * line["cpu"]:4.1f} %, lost replies {line["lost"]}, collisions '
              f'{line["collisions"]}', flush=True)
        print(f'         measurement age p50 / p99 / max {age[0]:5.1f} / {age[1]:5.1f} / '
              f'{age[2]:5.1f} ms (driver), gaps between intact samples {gaps[0]:5.1f} / '
              f'{gaps[1]:5.1f} / {gaps[2]:5.1f} ms (simulator)', flush=True)
    if freshness:
        worst_age = max(line['age_ms'][2] for line in lines)
        worst_p99 = max(line['age_ms'][1] for line in lines)
        targets.check(f'{key}: largest measurement age', f'{worst_age:.1f} ms',
                      f'<= 3 periods ({3e3 * PERIOD:.0f} ms)', worst_age <= 3e3 * PERIOD)
        targets.check(f'{key}: measurement age p99', f'{worst_p99:.1f} ms',
                      f'<= 2 periods ({2e3 * PERIOD:.0f} ms)', worst_p99 <= 2e3 * PERIOD)
        joint, worst = max(result['lag'].items(), key=lambda item: item[1])
        targets.check(f'{key}: measured vs real position', f'{worst:.3f} rad ({joint})',
                      '<= 0.05 rad', worst <= 0.05)
        return
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
