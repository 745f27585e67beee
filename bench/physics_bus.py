#!/usr/bin/env python3
"""
Benchmark of the physics robot beside the sync cycle (#34 items 3 and 5).

    .venv/bin/python bench/physics_bus.py [--seconds 10] [--load-seconds 20]

`bringup --bus physics` against the kinematic virtual robot, measured in the same run, each
as bench/cycle.py runs the motion process: the cycle process and the state publisher, three
FollowJointState controllers fed at 10 Hz from another process (every joint swinging
+-0.3 rad: on the physics robot the pony rocks, and may fall and lie there), at 100 Hz. Under
load also a joint_trajectory controller with 10 000-point goals every 2 s and a storm of 2000
malformed goals, from other processes. Per bus: lost ticks (FLOOR when every one fell into a
stall of the machine, see bench/floor.py), compute per tick, CPU of the three processes; for
the physics: the real-time factor (simulated time over the time of the ticks it followed,
which keep to the wall clock), the simulation's CPU per tick (thread CPU time of its steps),
time dropped after lost ticks. Prints the ratios and every target with ok/MISSED.
"""

import argparse
import os
import random
import sys

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

from cycle import header, lost_target, row, run_sweetie_motion, steal_note  # noqa: E402
from sweetie_motion.nodes.bringup import SWITCH_INTERVAL  # noqa: E402, I100
from targets import Targets  # noqa: E402

PERIOD = 0.01
#: the simulation keeps up: simulated time over wall time, at least
REAL_TIME = 0.99
#: a tick's compute time with the physics, p99 [s]: at most half the period, so that a tick
#: that starts late still ends within its period
COMPUTE_P99 = 0.5 * PERIOD
#: what the physics may add to the motion process's CPU [share of one core]: its steps take
#: 0.35 ms of a 10 ms tick on a quiet core and 0.6-0.75 ms beside the rest of the run on this
#: 2-core VM, the pose and contacts stream at 50 Hz 4-5 % on the ROS side
EXTRA_CPU = 0.20


def physics_line(result):
    """Say what the simulation did during a run."""
    p = result['physics']
    return (f'  physics: {p["simulated"]:.3f} s simulated over {p["followed"]:.3f} s of ticks '
            f'(real-time factor {p["real_time_factor"]:.4f}; wall {p["wall"]:.2f} s), steps '
            f'{p["step_mean"] * 1e3:.3f} ms CPU per tick (mean; longest since start '
            f'{p["step_max"] * 1e3:.2f} ms), dropped {p["dropped"] * 1e3:.0f} ms in '
            f'{p["drops"]} tick(s)')


def compare(label, seconds, targets, load):
    """Run both virtual robots under the same conditions; print and check them."""
    kinematic = run_sweetie_motion(PERIOD, seconds, load=load, bus='virtual')
    physics = run_sweetie_motion(PERIOD, seconds, load=load, bus='physics')
    print(f'--- 100 Hz, {label} --- times in ms as p50 / p99 / max')
    print(header())
    print(row('kinematic virtual robot', kinematic))
    print(row('physics robot', physics))
    print(physics_line(physics))
    for name, result in (('kinematic', kinematic), ('physics', physics)):
        print(f'  CPU, {name}: ROS side {result["cpu_ros"] * 100:.1f} %, cycle and state '
              f'publisher processes {result["cpu_cycle"] * 100:.1f} %')
    print(f'  ratios physics / kinematic: compute p50 '
          f'{physics["compute"][0] / max(kinematic["compute"][0], 1e-9):.1f}x, p99 '
          f'{physics["compute"][1] / max(kinematic["compute"][1], 1e-9):.1f}x; CPU '
          f'{physics["cpu"] / max(kinematic["cpu"], 1e-9):.2f}x '
          f'({kinematic["cpu"] * 100:.1f} % -> {physics["cpu"] * 100:.1f} % of a core); lost '
          f'{kinematic["lost"]} -> {physics["lost"]} of {physics["ticks"]} ticks')
    if load:
        watch = physics['watch']
        print(f'  physics under load: joint_states largest gap '
              f'{watch["stamp_gap_max"] * 1e3:.1f} ms between stamps')
    print()
    note = steal_note(physics['steal'])
    lost_target(targets, f'{label}: lost ticks, physics robot', physics, note)
    lost_target(targets, f'{label}: lost ticks, kinematic robot (same run)', kinematic,
                steal_note(kinematic['steal']))
    factor = physics['physics']['real_time_factor']
    dropped = physics['physics']['dropped']
    targets.check(f'{label}: real-time factor of the physics', f'{factor:.3f}',
                  f'>= {REAL_TIME}', factor >= REAL_TIME,
                  note + (f'  [dropped {dropped * 1e3:.0f} ms after lost ticks]'
                          if dropped else ''))
    targets.check(f'{label}: compute per tick p99, physics robot',
                  f'{physics["compute"][1] * 1e3:.3f} ms', f'<= {COMPUTE_P99 * 1e3:.1f} ms',
                  physics['compute'][1] <= COMPUTE_P99, note)
    extra = physics['cpu'] - kinematic['cpu']
    targets.check(f'{label}: CPU the physics adds (all three processes)',
                  f'{extra * 100:+.1f} %', f'<= {EXTRA_CPU * 100:.0f} %', extra <= EXTRA_CPU,
                  note)


def main():
    """Run the comparisons; return the number of targets missed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=10.0, help='length of the idle runs')
    parser.add_argument('--load-seconds', type=float, default=20.0,
                        help='length of the runs under load; 0 skips them')
    args = parser.parse_args()
    sys.setswitchinterval(SWITCH_INTERVAL)
    print(f'physics robot beside the sync cycle: {args.seconds:.0f} s idle, '
          f'{args.load_seconds:.0f} s under load, per virtual robot, {os.cpu_count()} cores\n')
    targets = Targets('the physics robot beside the cycle, #34 items 3 and 5')
    compare('idle', args.seconds, targets, load=False)
    if args.load_seconds > 0:
        compare('under load', args.load_seconds, targets, load=True)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
