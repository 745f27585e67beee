#!/usr/bin/env python3
"""
The physics (#34): a 10 s motion of the pony simulated on the floor, on one core.

    .venv/bin/python bench/physics.py [--repeats 5]

The pony moves every servo through eleven keyframes, one a second, within 0.1 rad (legs) and
0.3 rad (head) of its standing pose: a 10 s plan. Everything runs in one thread (MuJoCo's
step is single-threaded); the figures are the process's CPU time, which other processes on
the machine do not inflate, and the wall time beside it. Measured in the same run:
- ours: ``MotionSimulator.simulate`` as `sweetie-motion simulate` runs it: the controller's
  plan, 1 s settling, the 10 s motion and 1.5 s after it at 100 Hz set-points, recording the
  body, the servos and the feet every cycle, and the findings — target (#34): <= 0.5 s;
- baseline: MuJoCo alone stepping the same model for the same simulated time (12.5 s) with
  the servos held still: what the engine costs before anything of ours;
- the real-time factor (simulated seconds per second) of both, and `simulate --all` over the
  package's motions (config/trajectories).
Prints p50 and max of each, the ratio of the medians and the targets with ok/MISSED.
"""

import argparse
import os
from pathlib import Path
import sys
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sweetie_motion.model.description import load_robot_description  # noqa: E402
from sweetie_motion.physics.motion import MotionSimulator  # noqa: E402
from sweetie_motion.physics.simulation import PhysicsSimulation  # noqa: E402
from sweetie_motion.trajectory.codec import load_goal_file  # noqa: E402
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint  # noqa: E402
from targets import Targets  # noqa: E402

TARGET = 0.5


def ten_seconds(robot) -> TrajectoryGoal:
    """Return the 10 s motion: every servo through eleven keyframes near the standing pose."""
    view = robot.view()
    virtual = set(view.list_virtual_joints())
    joints = [j for j in view.list_all_joints() if j not in virtual]
    rng = np.random.default_rng(34)
    reach = np.array([0.3 if j.startswith('joint5') else 0.1 for j in joints])
    lower, upper = view.position_limits()
    columns = [view.get_joint_index(j) for j in joints]
    rows = np.clip(rng.uniform(-1.0, 1.0, (11, len(joints))) * reach, lower[columns],
                   upper[columns])
    rows[0] = rows[-1] = 0.0
    return TrajectoryGoal(joints, [TrajectoryPoint(float(t), list(row))
                                   for t, row in enumerate(rows)])


def timed(function, repeats):
    """Return the CPU and the wall times of ``repeats`` calls [s], shape (repeats, 2)."""
    out = []
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        function()
        out.append((time.process_time() - cpu, time.perf_counter() - wall))
    return np.array(out)


def figures(seconds):
    cpu, wall = seconds[:, 0], seconds[:, 1]
    return (f'CPU p50 {np.median(cpu) * 1e3:7.1f} ms max {cpu.max() * 1e3:7.1f} ms  '
            f'(wall p50 {np.median(wall) * 1e3:7.1f} ms)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()
    print(f'load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores')
    robot = load_robot_description('sweetie_bot.yaml')
    robot.configure()
    start = time.perf_counter()
    simulator = MotionSimulator(robot)
    built = time.perf_counter() - start
    goal = ten_seconds(robot)
    plan = simulator.plan(goal)
    settings = simulator.settings
    simulated = settings.settle_time + plan.duration + settings.after_time
    result = simulator.simulate('ten_seconds', goal)
    ours = timed(lambda: simulator.simulate('ten_seconds', goal), args.repeats)

    def engine_alone():
        sim = PhysicsSimulation(simulator.physics)
        pose = simulator.standing_pose()
        sim.reset(pose)
        sim.hold(pose, simulated)
    baseline = timed(engine_alone, args.repeats)
    library = sorted((ROOT / 'config' / 'trajectories').glob('*.yaml'))
    goals = [(path.stem, load_goal_file(path)) for path in library]
    everything = timed(lambda: [simulator.simulate(n, g) for n, g in goals], 1)
    print(f'model built in {built * 1e3:.0f} ms (meshes, MuJoCo compile, planner)')
    print(f'the 10 s motion: plan {plan.duration:.2f} s, simulated {simulated:.2f} s, '
          f'{"stays up" if result.fall is None else "falls"}, tilt '
          f'{np.degrees(result.max_tilt()):.1f} deg')
    ours_cpu, base_cpu = np.median(ours[:, 0]), np.median(baseline[:, 0])
    print(f'ours (simulate):        {figures(ours)}  real-time factor '
          f'{simulated / ours_cpu:.0f}')
    print(f'baseline (MuJoCo only): {figures(baseline)}  real-time factor '
          f'{simulated / base_cpu:.0f}')
    print(f'ratio ours / baseline (CPU medians): {ours_cpu / base_cpu:.2f}')
    print(f'simulate --all over {len(goals)} motions of config/trajectories: CPU '
          f'{everything[0, 0]:.2f} s (wall {everything[0, 1]:.2f} s)')
    print(f'load average after: {os.getloadavg()[0]:.2f}')
    targets = Targets('physics, one thread')
    targets.check('a 10 s motion of the pony simulated (CPU p50)', f'{ours_cpu:.3f} s',
                  f'<= {TARGET} s', ours_cpu <= TARGET)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
