"""
Faster checks, the same verdicts: every finding as recorded before the checks were sped up.

The checks' findings (check, severity, time to 0.01 s, message) and their worst figures on the
package's motions, the old robot's animations (as played: approach, retiming), the crafted
harmful and clean motions of the checks' tests and goals planned as the trajectory controller
plans them, and the benchmark's dance, recorded in ``test/data/checks/verdicts.json`` before
any speed-up (``python test/unit/test_checks_speed_same_verdicts.py --record`` wrote it). Each
case must give the same again.
"""

from dataclasses import replace
import hashlib
import json
from pathlib import Path
import sys

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / 'test' / 'data' / 'checks' / 'verdicts.json'
SHARED = ROOT.parent / 'shared' / 'sweetie_movements'


def stored_paths():
    """Return name -> path of the stored motions (shared's copies only where not in test/data)."""
    paths, seen = {}, set()
    folders = [('', ROOT / 'config' / 'trajectories', '*.yaml'),
               ('old/', ROOT / 'test' / 'data' / 'sweetie_movements', '*.json'),
               ('checks/', ROOT / 'test' / 'data' / 'checks', '*.*'),
               ('shared/', SHARED, '*.json')]
    for prefix, folder, pattern in folders:
        for path in sorted(folder.glob(pattern)):
            if path.suffix not in ('.json', '.yaml') or path.name == 'verdicts.json':
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                paths[prefix + path.stem] = path
    return paths


def _pony():
    from sweetie_motion.model.description import load_robot_description
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    return model


def _arm():
    from sweetie_motion.model.description import load_robot_description
    model = load_robot_description('winding_arm.yaml')
    model.configure()
    return model


def _pose(model, **values):
    joints = model.list_all_joints()
    row = np.zeros(len(joints))
    for joint, value in values.items():
        row[joints.index(joint)] = value
    return row


def _between(start, end, seconds, rate=100.0):
    from sweetie_motion.checks.motion import PoseSamples
    count = int(seconds * rate) + 1
    times = np.linspace(0.0, seconds, count)
    s = times / seconds
    shape = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    rate_1 = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / seconds
    rate_2 = (60 * s - 180 * s ** 2 + 120 * s ** 3) / seconds ** 2
    delta = end - start
    return PoseSamples(times, start + shape[:, None] * delta, rate_1[:, None] * delta,
                       rate_2[:, None] * delta, {})


def _still(row, seconds=1.0, rate=100.0):
    from sweetie_motion.checks.motion import PoseSamples
    count = int(seconds * rate) + 1
    positions = np.tile(row, (count, 1))
    return PoseSamples(np.linspace(0.0, seconds, count), positions, np.zeros_like(positions),
                       np.zeros_like(positions), {})


def _strict(model):
    from sweetie_motion.checks.motion import checker_for
    return checker_for(model, replace(model.check_settings, collision='refuse',
                                      balance='refuse', load='refuse'))


def _crafted(model):
    """Return name -> samples of the checks' unit tests' crafted motions of the pony."""
    lean = {}
    for angle in (0.3, 0.9):
        values = {f'joint{leg}2': -angle for leg in (1, 2, 3, 4)}
        values.update({f'joint{leg}4': angle for leg in (1, 2, 3, 4)})
        lean[angle] = _between(_pose(model), _pose(model, **values), 1.5)
    return {
        'standing still': _still(_pose(model)),
        'front legs crossing': _between(_pose(model), _pose(model, joint11=0.3, joint21=-0.3),
                                        2.0),
        'head into a raised hoof': _between(_pose(model), _pose(
            model, joint12=1.5, joint13=1.9, joint14=-1.2, joint53=0.6), 2.0),
        'lean 0.9': lean[0.9],
        'lean 0.3': lean[0.3],
        'hoof lifted': _still(_pose(model, joint12=1.2, joint13=-1.3, joint14=0.5), 0.1),
        'bow': _still(_pose(model, joint12=0.5, joint13=-1.0, joint14=0.5, joint22=0.5,
                            joint23=-1.0, joint24=0.5), 0.1),
        'head and leg swing': _between(_pose(model), _pose(
            model, joint52=0.8, joint53=0.6, joint12=0.4, joint13=-0.6), 0.6),
        'crouch': _between(_pose(model), _pose(
            model, joint32=-1.1, joint33=1.8, joint34=-0.7, joint42=-1.1, joint43=1.8,
            joint44=-0.7), 0.6),
    }


def bench_samples(model):
    """Return the benchmark's motion (bench/checks.py): every joint through eleven keys."""
    from sweetie_motion.checks.motion import PoseSamples
    from sweetie_motion.trajectory.spline import build_spline
    joints = model.list_all_joints()
    lower, upper = model.position_limits()
    rng = np.random.default_rng(22)
    rows = np.clip(rng.uniform(-0.2, 0.2, (11, len(joints))), lower, upper)
    sideways = [joints.index(j) for j in ('joint11', 'joint21', 'joint31', 'joint41')]
    rows[:, sideways] /= 4
    rows[0] = rows[-1] = 0.0
    spline = build_spline(np.arange(11.0), rows)
    return PoseSamples.from_spline(spline, np.arange(len(joints)), np.zeros(len(joints)), 100.0)


def _goals(model):
    """Return name -> goal of the ROS test's goals (the trajectory controller plans them)."""
    from sweetie_motion.trajectory.codec import load_goal_file
    from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint

    def goal(joints, rows, times):
        return TrajectoryGoal(list(joints), [TrajectoryPoint(float(t), [float(v) for v in row],
                                                             [], [], [])
                                             for row, t in zip(rows, times)])
    lean = [f'joint{leg}{k}' for leg in (1, 2, 3, 4) for k in (2, 4)]
    stored = load_goal_file(ROOT / 'test' / 'data' / 'checks' / 'greeting_before.yaml')
    return {
        'goal: legs cross': goal(['joint11', 'joint21'], [[0.3, -0.3]], [2.0]),
        'goal: lean': goal(lean, [[-0.9, 0.9] * 4] * 2, [1.5, 2.5]),
        'goal: greeting before': goal(stored.joint_names,
                                      [p.positions for p in stored.points[1:]],
                                      [p.time for p in stored.points[1:]]),
        'goal: nod': goal(['joint53'], [[0.3], [0.0]], [1.0, 2.0]),
    }


def digest(report):
    """Return what must not change of a report: its findings and its worst figures."""
    def rounded(value, places=6):
        return None if value is None else round(float(value), places)
    # the closest pairs and their distances; not when a pair that keeps the margin came
    # closest: where it is as close at several poses (joints between its links held), which
    # of them is a tie (the checks measure a pose of a held pair once: the first)
    collision = [[a.link_a, a.link_b, rounded(a.distance), a.exact]
                 for a in (report.collision or [])[:5]]
    summary = {key: rounded(value, 6 if key != 'load' else 3)
               for key, value in report.summary().items()}
    findings = [[f.check, f.severity, round(f.time, 2), f.message] for f in report.findings]
    support = None if report.support is None else \
        hashlib.sha256(np.packbits(report.support).tobytes()).hexdigest()[:16]
    return {'findings': findings, 'summary': summary, 'collision': collision,
            'support': support}


def cases():
    """Return name -> a function that computes the digest of that case."""
    from sweetie_motion.controllers.played_checks import check_motion, motion_planner
    from sweetie_motion.checks.motion import checker_for
    from sweetie_motion.controllers.goals import GoalPlanner
    from sweetie_motion.core.ports import JointVector
    from sweetie_motion.storage.migration import load_ros1_json
    from sweetie_motion.trajectory.codec import load_goal_file
    from sweetie_motion.trajectory.tolerances import ToleranceDefaults
    from sweetie_motion.trajectory.validation import GoalError
    pony = _pony()
    shared = {}

    def lazily(key, make):
        if key not in shared:
            shared[key] = make()
        return shared[key]

    def default():
        return lazily('default', lambda: checker_for(pony))

    def strict():
        return lazily('strict', lambda: _strict(pony))

    out = {}
    for name, path in stored_paths().items():
        def stored(path=path, name=name):
            goal = load_ros1_json(path) if path.suffix == '.json' else load_goal_file(path)
            checked = check_motion(default(), name, goal, lazily('planner',
                                                                 lambda: motion_planner(pony)))
            result = digest(checked.report)
            result['refused'] = checked.refused
            result['verdict'] = checked.verdict
            return result
        out[f'stored: {name}'] = stored
    for name, samples in _crafted(pony).items():
        out[f'crafted: {name}'] = lambda samples=samples: digest(strict().check(samples))
    out['bench: dance'] = lambda: digest(default().check(bench_samples(pony)))
    chains = ['leg1', 'leg2', 'leg3', 'leg4', 'head', 'nose', 'eyes']
    for name, goal in _goals(pony).items():
        def planned(goal=goal):
            planner = lazily('goal planner', lambda: GoalPlanner(
                'checks', pony.view(), chains, ToleranceDefaults(0.3, 0.05, 1.0, {}),
                checker=default()))
            pose = JointVector.zeros(len(pony.list_all_joints()))
            try:
                plan = planner.plan(goal, lambda: (pose, pose))
            except GoalError as error:
                return {'error': str(error)}
            return {'notes': list(plan.notes)}
        out[name] = planned

    def arm_fold():
        arm = lazily('arm', _arm)
        home = np.array(arm.get_chain_property('arm', 'home'))
        folded = np.array([-1.57, 1.23, 0.99, 0.0, 0.0, 0.0])
        return digest(_strict(arm).check(_between(home, folded, 3.0)))
    out['crafted: arm into its base'] = arm_fold
    return out


ALL = cases() if __name__ != '__main__' else {}


def _recorded():
    return json.loads(RECORD.read_text(encoding='utf-8'))


@pytest.mark.parametrize('name', sorted(ALL))
def test_the_checks_find_what_they_found_before_they_were_sped_up(name):
    recorded = _recorded()
    if name not in recorded:
        pytest.skip(f'{name}: not in the record (a motion of ../shared added since)')
    assert ALL[name]() == recorded[name]


def test_every_recorded_case_is_checked():
    # the shared animations are checked where ../shared is beside the checkout
    missing = set(_recorded()) - set(ALL)
    assert all(name.startswith('stored: shared/') for name in missing), missing
    if SHARED.is_dir():
        assert not missing


if __name__ == '__main__':
    if sys.argv[1:] != ['--record']:
        sys.exit('usage: test_checks_speed_same_verdicts.py --record')
    sys.path.insert(0, str(ROOT))
    record = {name: compute() for name, compute in sorted(cases().items())}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + '\n', encoding='utf-8')
    print(f'{len(record)} cases recorded in {RECORD}')
