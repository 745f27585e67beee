#!/usr/bin/env python3
"""
The motion checks (self-collision, balance, servo load) on a 10 s, 32-joint motion.

    .venv/bin/python bench/checks.py [--repeats 10] [--busy]

The pony (32 joints) moves every joint through eleven keyframes, one a second, within 0.2 rad
of the zero pose (a dance, every joint at once); sampled at 100 Hz that is 1001 poses. Measured in
the same run:
- ours: all three checks (MotionChecker.check: sphere bounds for all poses, coal where a pair
  may come within the margin; balance; loads) — target (#22): <= 100 ms;
- baseline: a plain loop over all poses and all checked link pairs with coal's distance
  (CollisionModel.all_exact), the collision check alone; on Proto2's meshes that takes most
  of a minute, so it runs on every tenth pose and its time is scaled by ten;
- the parts of ours: collision, the stance (balance), the loads;
- a goal's planning with and without the checks (GoalPlanner.plan on a 500-point goal): what
  the checks add before its first reference (target: a cycle, 10 ms, if it can hold).
``--busy`` runs one busy loop per core beside it. Prints p50, p99 and max of each and the
ratio of the medians.
"""

import argparse
import os
from pathlib import Path
import subprocess
import sys
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sweetie_motion.checks.motion import checker_for, PoseSamples  # noqa: E402
from sweetie_motion.controllers.goals import GoalPlanner  # noqa: E402
from sweetie_motion.core.ports import JointVector  # noqa: E402
from sweetie_motion.model.description import load_robot_description  # noqa: E402
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint  # noqa: E402
from sweetie_motion.trajectory.spline import build_spline  # noqa: E402
from sweetie_motion.trajectory.tolerances import ToleranceDefaults  # noqa: E402


def figures(seconds):
    values = np.array(seconds) * 1e3
    return (f'p50 {np.percentile(values, 50):7.1f} ms  p99 {np.percentile(values, 99):7.1f} ms'
            f'  max {values.max():7.1f} ms')


def timed(function, repeats):
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        out.append(time.perf_counter() - start)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--repeats', type=int, default=10)
    parser.add_argument('--busy', action='store_true', help='one busy loop per core beside it')
    args = parser.parse_args()
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(os.cpu_count() or 1)] if args.busy else []
    try:
        return run(args.repeats, bool(busy))
    finally:
        for process in busy:
            process.kill()


def run(repeats, busy):
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    joints = model.list_all_joints()
    lower, upper = model.position_limits()
    rng = np.random.default_rng(22)
    keys = np.arange(11.0)
    rows = np.clip(rng.uniform(-0.2, 0.2, (len(keys), len(joints))), lower, upper)
    # the legs' sideways joints less: a dance does not cross its legs
    sideways = [joints.index(j) for j in ('joint11', 'joint21', 'joint31', 'joint41')]
    rows[:, sideways] /= 4
    rows[0] = rows[-1] = 0.0   # it ends where it began (no hoof left dragged)
    spline = build_spline(keys, rows)
    start = time.perf_counter()
    checker = checker_for(model)
    built = time.perf_counter() - start
    samples = PoseSamples.from_spline(spline, np.arange(len(joints)), np.zeros(len(joints)),
                                      100.0)
    report = checker.check(samples)
    ours = timed(lambda: checker.check(samples), repeats)
    collision = checker.collision
    tenth = samples.positions[::10]
    baseline = [10 * t for t in timed(lambda: collision.all_exact(tenth), 1)]
    standing = timed(lambda: checker.standing(samples), repeats)
    collision_only = timed(lambda: collision.closest(samples.positions, samples.times,
                                                     checker.settings.collision_margin),
                           repeats)
    # a 500-point goal of the head and a leg, planned as the trajectory node plans it
    goal_joints = ['joint11', 'joint12', 'joint13', 'joint51', 'joint52', 'joint53']
    times = np.linspace(0.0, 10.0, 500)
    columns = [joints.index(j) for j in goal_joints]
    values, _, _ = spline.sample_many(times)
    goal = TrajectoryGoal(goal_joints, [TrajectoryPoint(float(t), row[columns].tolist(),
                                                        [], [], []) for t, row in
                                        zip(times + 0.5, values)])
    pose = JointVector.zeros(len(joints))
    chains = ['leg1', 'leg2', 'leg3', 'leg4', 'head', 'nose', 'eyes']
    defaults = ToleranceDefaults(0.3, 0.05, 1.0, {})
    plain = GoalPlanner('bench', model.view(), chains, defaults)
    checked = GoalPlanner('bench', model.view(), chains, defaults, checker=checker)

    def poses():
        return pose, pose
    plan_plain = timed(lambda: plain.plan(goal, poses), repeats)
    plan_checked = timed(lambda: checked.plan(goal, poses), repeats)
    print(f'motion checks of a 10 s, {len(joints)}-joint motion ({len(samples.times)} poses, '
          f'{len(collision.pairs)} link pairs){" beside one busy loop per core" * busy}:')
    print(f'  checker built once in {built * 1e3:.0f} ms; the motion: '
          f'{report.describe() or "no finding"}')
    print(f'  ours, all three checks        {figures(ours)}')
    print(f'  ours, collision alone         {figures(collision_only)}')
    print(f'  ours, the stance alone        {figures(standing)}')
    print(f'  baseline: coal on every pair  {figures(baseline)}')
    print(f'  ratio (baseline / ours, p50)  {np.median(baseline) / np.median(ours):7.1f} x'
          f'   (collision alone: {np.median(baseline) / np.median(collision_only):.1f} x)')
    print(f'  planning a 500-point goal     without checks {figures(plan_plain)}')
    print(f'                                with checks    {figures(plan_checked)}')
    added = (np.median(plan_checked) - np.median(plan_plain)) * 1e3
    print(f'  the checks add {added:.1f} ms (p50) before the first reference')
    target = np.median(ours) <= 0.100
    print(f'  target <= 100 ms (p50): {"met" if target else "MISSED"}')
    return 0 if target else 1


if __name__ == '__main__':
    sys.exit(main())
