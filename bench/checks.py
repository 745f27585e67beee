#!/usr/bin/env python3
"""
The motion checks (self-collision, balance, servo load) on a 10 s, 32-joint motion.

    .venv/bin/python bench/checks.py [--repeats 10] [--busy] [--before REV] [--no-brute]

The pony (32 joints) moves every joint through eleven keyframes, one a second, within 0.2 rad
of the zero pose (a dance, every joint at once); sampled at 100 Hz that is 1001 poses. Measured in
the same run:
- ours, all three checks (MotionChecker.check: sphere bounds for all poses, coal where a pair
  may come within the margin; the stance; balance; loads) — target (#22): <= 100 ms; and its
  parts: collision, the stance (balance);
- a goal's planning with and without the checks (GoalPlanner.plan on a 500-point goal): what
  the checks add before its first reference;
- before: the same figures of the checks as they were at revision ``--before`` (default: the
  last one before they were sped up), run from that revision's package in a child process of
  this run, and the ratios before / now;
- baseline: a plain loop over the poses and all checked link pairs with coal's distance
  (CollisionModel.all_exact), the collision check alone; on Proto2's meshes that takes most of a
  minute for all poses, so it runs on every 50th pose and its time is scaled by 50.
``--busy`` runs one busy loop per core beside it. Prints p50, p99 and max of each (wall clock),
the p50 of the CPU time this process spent (less sensitive to other work on the machine), and
the ratios of the medians.
"""

import argparse
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
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


#: the checks before they were sped up (the baseline of ``--before``)
BEFORE = 'cd54b7b573b31a651f38d88a5676befab7075c14'


def figures(times):
    values = np.array([wall for wall, _ in times]) * 1e3
    cpu = np.array([used for _, used in times]) * 1e3
    return (f'p50 {np.percentile(values, 50):7.1f} ms  p99 {np.percentile(values, 99):7.1f} ms'
            f'  max {values.max():7.1f} ms  (CPU p50 {np.percentile(cpu, 50):6.1f} ms)')


def timed(function, repeats):
    """Return (wall, CPU) seconds of ``repeats`` calls of ``function``."""
    out = []
    for _ in range(repeats):
        start, used = time.perf_counter(), time.process_time()
        function()
        out.append((time.perf_counter() - start, time.process_time() - used))
    return out


def median(times, which=0):
    """Return the median wall clock (``which`` 0) or CPU time (1) [s]."""
    return float(np.median([t[which] for t in times]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--repeats', type=int, default=10)
    parser.add_argument('--busy', action='store_true', help='one busy loop per core beside it')
    parser.add_argument('--before', default=BEFORE,
                        help='the revision to compare with ("" : none)')
    parser.add_argument('--no-brute', action='store_true', help='leave out coal on every pair')
    parser.add_argument('--json', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:   # the child that measures a revision's checks
        print(json.dumps(measure(args.repeats)))
        return 0
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(os.cpu_count() or 1)] if args.busy else []
    try:
        return run(args.repeats, bool(busy), args.before, not args.no_brute)
    finally:
        for process in busy:
            process.kill()


def measured_before(revision, repeats):
    """Return the figures of the checks at ``revision`` (its package, this bench), or None."""
    folder = Path(tempfile.mkdtemp(prefix='checks_before_'))
    try:
        archive = subprocess.run(['git', '-C', str(ROOT), 'archive', revision, 'sweetie_motion',
                                  'config'], capture_output=True, check=False)
        if archive.returncode:
            print(f'  (no revision {revision[:10]} here: {archive.stderr.decode().strip()})')
            return None
        subprocess.run(['tar', '-x', '-C', str(folder)], input=archive.stdout, check=True)
        (folder / 'bench').mkdir()
        shutil.copy(__file__, folder / 'bench' / 'checks.py')
        child = subprocess.run([sys.executable, str(folder / 'bench' / 'checks.py'), '--json',
                                '--repeats', str(repeats)], capture_output=True, text=True,
                               check=False, cwd=str(folder))
        if child.returncode:
            print(f'  (the checks at {revision[:10]} did not run: {child.stderr[-300:]})')
            return None
        return json.loads(child.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def motion(model):
    """Return the bench's spline: every joint through eleven keyframes, one a second."""
    joints = model.list_all_joints()
    lower, upper = model.position_limits()
    rng = np.random.default_rng(22)
    keys = np.arange(11.0)
    rows = np.clip(rng.uniform(-0.2, 0.2, (len(keys), len(joints))), lower, upper)
    # the legs' sideways joints less: a dance does not cross its legs
    sideways = [joints.index(j) for j in ('joint11', 'joint21', 'joint31', 'joint41')]
    rows[:, sideways] /= 4
    rows[0] = rows[-1] = 0.0   # it ends where it began (no hoof left dragged)
    return build_spline(keys, rows)


def measure(repeats, brute=False):
    """Return the timings (wall, CPU) [s] of the checks and of a goal's planning."""
    model = load_robot_description(ROOT / 'config' / 'sweetie_bot.yaml')
    model.configure()
    joints = model.list_all_joints()
    spline = motion(model)
    start = time.perf_counter()
    checker = checker_for(model)
    built = time.perf_counter() - start
    samples = PoseSamples.from_spline(spline, np.arange(len(joints)), np.zeros(len(joints)),
                                      100.0)
    report = checker.check(samples)
    out = {'built': built, 'poses': len(samples.times),
           'pairs': len(checker.collision.pairs), 'joints': len(joints),
           'findings': report.describe() or 'no finding'}
    out['ours'] = timed(lambda: checker.check(samples), repeats)
    collision = checker.collision
    out['collision'] = timed(lambda: collision.closest(
        samples.positions, samples.times, checker.settings.collision_margin), repeats)
    out['standing'] = timed(lambda: checker.standing(samples), repeats)
    if brute:
        sparse = samples.positions[::50]
        out['brute'] = [(50 * wall, 50 * used)
                        for wall, used in timed(lambda: collision.all_exact(sparse), 1)]
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
    out['plan_plain'] = timed(lambda: plain.plan(goal, poses), repeats)
    out['plan_checked'] = timed(lambda: checked.plan(goal, poses), repeats)
    return out


def run(repeats, busy, before, brute):
    now = measure(repeats, brute)
    print(f'motion checks of a 10 s, {now["joints"]}-joint motion ({now["poses"]} poses, '
          f'{now["pairs"]} link pairs){" beside one busy loop per core" * busy}; '
          f'load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores:')
    print(f'  checker built once in {now["built"] * 1e3:.0f} ms; the motion: {now["findings"]}')
    print(f'  ours, all three checks        {figures(now["ours"])}')
    print(f'  ours, collision alone         {figures(now["collision"])}')
    print(f'  ours, the stance alone        {figures(now["standing"])}')
    print(f'  planning a 500-point goal     without checks {figures(now["plan_plain"])}')
    print(f'                                with checks    {figures(now["plan_checked"])}')
    added = (median(now['plan_checked']) - median(now['plan_plain'])) * 1e3
    print(f'  the checks add {added:.1f} ms (p50) before the first reference')
    if brute:
        print(f'  baseline: coal on every pair  {figures(now["brute"])}')
        print(f'  ratio (baseline / ours, p50)  {median(now["brute"]) / median(now["ours"]):7.1f}'
              f' x   (collision alone: {median(now["brute"]) / median(now["collision"]):.1f} x)')
    then = measured_before(before, repeats) if before else None
    if then is not None:
        if then['findings'] != now['findings']:
            print(f'  FINDINGS DIFFER at {before[:10]}: {then["findings"]}')
        print(f'  before (revision {before[:10]}, measured in this run):')
        for key, what in (('ours', 'all three checks'), ('collision', 'collision alone'),
                          ('standing', 'the stance alone'),
                          ('plan_checked', 'planning with checks')):
            print(f'    {what:28s}{figures(then[key])}   before / now (p50): wall '
                  f'{median(then[key]) / median(now[key]):4.1f} x, CPU '
                  f'{median(then[key], 1) / median(now[key], 1):4.1f} x')
    target = median(now['ours']) <= 0.100
    print(f'  target <= 100 ms (p50): {"met" if target else "MISSED"}')
    return 0 if target else 1


if __name__ == '__main__':
    sys.exit(main())
