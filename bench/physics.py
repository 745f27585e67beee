#!/usr/bin/env python3
"""
The physics (#34): a 10 s motion of the pony simulated on the floor, on one core.

    .venv/bin/python bench/physics.py [--repeats 5]

The pony moves every servo through eleven keyframes, one a second, within 0.1 rad (legs) and
0.3 rad (head) of its standing pose: a 10 s plan. Measured in the same run, pinned to one core:
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
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        out.append(time.perf_counter() - start)
    return np.array(out)


def figures(seconds):
    return f'p50 {np.median(seconds) * 1e3:7.1f} ms  max {seconds.max() * 1e3:7.1f} ms'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, 'sched_setaffinity'):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
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
    print(f'ours (simulate):       {figures(ours)}   real-time factor '
          f'{simulated / np.median(ours):.0f}')
    print(f'baseline (MuJoCo only): {figures(baseline)}   real-time factor '
          f'{simulated / np.median(baseline):.0f}')
    print(f'ratio ours / baseline (medians): {np.median(ours) / np.median(baseline):.2f}')
    print(f'simulate --all over {len(goals)} motions of config/trajectories: '
          f'{everything[0]:.2f} s')
    targets = Targets('physics, one core')
    targets.check('a 10 s motion of the pony simulated (p50)', f'{np.median(ours):.3f} s',
                  f'<= {TARGET} s', np.median(ours) <= TARGET)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
