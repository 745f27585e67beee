"""ChainIK: inverse kinematics with joint limits on the arm and the pony legs (R-MODEL-4)."""

import math
import threading

import numpy as np
import pinocchio
import pytest
from sweetie_motion.errors import SweetieMotionError, UnknownChainError
from sweetie_motion.model import RobotModel
from sweetie_motion.model.ik import ChainIK, IkInputError, IkNoSolutionError
from sweetie_motion.paths import config_path

LIMIT_170 = math.radians(170.0)
LEGS = ('leg1', 'leg2', 'leg3', 'leg4')
# Generous wall time, a fixed iteration budget: the outcome does not depend on the machine.
BUDGET = {'time_guard': 10.0, 'max_iterations': 3000}


def pose_errors(model, chain, position, target):
    """Return (position error [m], orientation error [rad]) checked by RobotModel's FK."""
    pose = model.forward_kinematics(chain, position)
    return (np.linalg.norm(pose[:3, 3] - target[:3, 3]),
            np.linalg.norm(pinocchio.log3(target[:3, :3] @ pose[:3, :3].T)))


def within(position, lower, upper):
    return bool(np.all(position >= lower) and np.all(position <= upper))


# --- solutions -----------------------------------------------------------------------------------


@pytest.mark.parametrize('seeded', [False, True], ids=['zero seed', 'random seed'])
def test_arm_full_pose_on_random_in_limit_configurations(arm, seeded):
    lower, upper = np.full(6, -LIMIT_170), np.full(6, LIMIT_170)
    ik = ChainIK(arm, 'arm', lower=lower, upper=upper, random_seed=3, **BUDGET)
    rng = np.random.default_rng(11)
    for _ in range(25):
        target = arm.forward_kinematics('arm', rng.uniform(lower, upper))
        seed = rng.uniform(lower, upper) if seeded else None
        result = ik.solve(target, seed)
        assert result.success, result
        assert result.reason == 'converged'
        assert within(result.position, lower, upper)
        dp, dr = pose_errors(arm, 'arm', result.position, target)
        assert dp <= 1e-5 and dr <= 1e-4
        assert result.position_error == pytest.approx(dp, abs=1e-12)
        assert result.orientation_error == pytest.approx(dr, abs=1e-9)


def test_arm_uses_the_urdf_limits_by_default(arm):
    ik = ChainIK(arm, 'arm', random_seed=1, **BUDGET)
    limits = arm.joint_limits().take(arm.get_chain_indices('arm'))
    np.testing.assert_array_equal(ik.lower, limits.lower)
    np.testing.assert_array_equal(ik.upper, limits.upper)
    rng = np.random.default_rng(5)
    for _ in range(10):
        target = arm.forward_kinematics('arm', rng.uniform(limits.lower, limits.upper))
        result = ik.solve(target)
        assert result.success and within(result.position, limits.lower, limits.upper)


@pytest.mark.parametrize('leg', LEGS)
def test_pony_leg_places_its_hoof_position_only(pony, leg):
    virtual = pony.list_virtual_joints()
    fixed = [j for j in pony.list_joints(leg) if j in virtual]
    assert fixed, 'each leg ends with a virtual hoof joint'
    ik = ChainIK(pony, leg, task='position', fixed_joints=fixed, random_seed=2, **BUDGET)
    limits = pony.joint_limits().take(pony.get_chain_indices(leg))
    rng = np.random.default_rng(sum(map(ord, leg)))
    for _ in range(15):
        hoof = pony.forward_kinematics(leg, rng.uniform(limits.lower, limits.upper))[:3, 3]
        seed = rng.uniform(limits.lower, limits.upper)
        result = ik.solve(hoof, seed)
        assert result.success, result
        assert within(result.position, limits.lower, limits.upper)
        reached = pony.forward_kinematics(leg, result.position)[:3, 3]
        assert np.linalg.norm(reached - hoof) <= 1e-5
        assert result.orientation_error == 0.0  # not part of the task
        fixed_index = [pony.list_joints(leg).index(j) for j in fixed]
        np.testing.assert_array_equal(result.position[fixed_index], seed[fixed_index])


def test_position_task_takes_a_pose_and_ignores_its_rotation(pony):
    ik = ChainIK(pony, 'leg1', task='position', random_seed=4, **BUDGET)
    target = pony.forward_kinematics('leg1', np.full(6, 0.3))
    target[:3, :3] = pinocchio.utils.rotate('x', 1.0)  # an orientation the leg cannot take
    result = ik.solve(target)
    assert result.success
    reached = pony.forward_kinematics('leg1', result.position)[:3, 3]
    assert np.linalg.norm(reached - target[:3, 3]) <= 1e-5


def test_weighted_pose_leaves_a_zero_weight_component_free(arm):
    ik = ChainIK(arm, 'arm', weights=(1, 1, 1, 1, 1, 0), random_seed=6, **BUDGET)
    target = arm.forward_kinematics('arm', [0.3, -0.4, 0.5, 0.2, 0.6, -0.1])
    turned = target.copy()
    turned[:3, :3] = pinocchio.utils.rotate('z', 0.02) @ target[:3, :3]
    result = ik.solve(turned)
    assert result.success
    pose = arm.forward_kinematics('arm', result.position)
    error = pinocchio.log3(turned[:3, :3] @ pose[:3, :3].T)
    assert np.linalg.norm(pose[:3, 3] - turned[:3, 3]) <= 1e-5
    assert np.linalg.norm(error[:2]) <= 1e-4
    strict = ChainIK(arm, 'arm', random_seed=6, **BUDGET).solve(turned)
    dp, dr = pose_errors(arm, 'arm', strict.position, turned)
    assert strict.success and dr <= 1e-4


def test_seed_at_the_solution_returns_it_at_once(arm):
    ik = ChainIK(arm, 'arm', random_seed=0, **BUDGET)
    q = np.array([0.4, -0.7, 1.1, 0.3, -0.9, 2.0])
    result = ik.solve(arm.forward_kinematics('arm', q), q)
    assert result.success and result.iterations == 0 and result.attempts == 1
    np.testing.assert_array_equal(result.position, q)
    # Even with no time at all: the seed is checked before the budget.
    assert ik.solve(arm.forward_kinematics('arm', q), q, time_guard=0.0).success


def test_seed_outside_the_limits_is_clamped_into_them(arm):
    lower, upper = np.full(6, -1.0), np.full(6, 1.0)
    ik = ChainIK(arm, 'arm', lower=lower, upper=upper, random_seed=0, **BUDGET)
    target = arm.forward_kinematics('arm', [0.2, 0.3, -0.4, 0.5, 0.6, -0.7])
    result = ik.solve(target, np.full(6, 3.0))
    assert result.success and within(result.position, lower, upper)


def test_chain_that_does_not_start_at_the_root(arm):
    model = RobotModel(urdf_file=str(config_path('winding_arm.urdf')),
                       chains={'arm': {'first_link': 'world', 'last_link': 'tool0'},
                               'wrist': {'first_link': 'link2', 'last_link': 'tool0'}},
                       groups={'arm': {'chains': ['arm', 'wrist']}})
    model.configure()
    ik = ChainIK(model, 'wrist', random_seed=8, **BUDGET)
    rng = np.random.default_rng(8)
    for _ in range(10):
        q = rng.uniform(-2.0, 2.0, 4)
        target = model.forward_kinematics('wrist', q)
        np.testing.assert_allclose(ik.forward(q), target, atol=1e-12)
        result = ik.solve(target)
        assert result.success
        dp, dr = pose_errors(model, 'wrist', result.position, target)
        assert dp <= 1e-5 and dr <= 1e-4


def test_chain_evaluator_matches_the_robot_models_kinematics(arm, pony):
    wrist = RobotModel(urdf_file=str(config_path('winding_arm.urdf')),
                       chains={'wrist': {'first_link': 'link2', 'last_link': 'tool0'}})
    wrist.configure()
    rng = np.random.default_rng(13)
    for model, chain in ((arm, 'arm'), (wrist, 'wrist'), (pony, 'leg3'), (pony, 'nose'),
                         (continuous_arm(), 'arm')):
        kinematics, info = model._kinematics('test', chain)
        evaluator = kinematics.evaluator(info, info.tip)
        data = evaluator.create_data()
        for _ in range(5):
            q = rng.uniform(-1.5, 1.5, len(info.joints))
            placement, jacobian = evaluator.compute(data, q)
            np.testing.assert_allclose(placement.homogeneous,
                                       model.forward_kinematics(chain, q), atol=1e-12)
            np.testing.assert_allclose(jacobian, model.jacobian(chain, q), atol=1e-12)


# --- continuous and unlimited joints ----------------------------------------------------------


def continuous_arm() -> RobotModel:
    """Return the winding arm with joints 1, 4 and 6 turned into continuous joints."""
    urdf = config_path('winding_arm.urdf').read_text(encoding='utf-8')
    for name in ('joint1', 'joint4', 'joint6'):
        head = f'<joint name="{name}" type="revolute">'
        assert head in urdf
        start = urdf.index(head)
        end = urdf.index('</joint>', start)
        block = urdf[start:end].replace('type="revolute"', 'type="continuous"')
        limit_start = block.index('<limit')
        limit_end = block.index('/>', limit_start) + 2
        block = block[:limit_start] + '<limit velocity="2.6" effort="50"/>' + block[limit_end:]
        urdf = urdf[:start] + block + urdf[end:]
    model = RobotModel(urdf=urdf, chains={'arm': {'first_link': 'world', 'last_link': 'tool0'}})
    model.configure()
    return model


def test_continuous_joints_solve_and_turn_the_short_way():
    model = continuous_arm()
    ik = ChainIK(model, 'arm', random_seed=9, **BUDGET)
    continuous = np.isinf(ik.lower)
    assert continuous.tolist() == [True, False, False, True, False, True]
    rng = np.random.default_rng(9)
    for _ in range(15):
        q = rng.uniform(-2.0, 2.0, 6)
        q[continuous] = rng.uniform(-3 * math.pi, 3 * math.pi, 3)  # several turns
        target = model.forward_kinematics('arm', q)
        seed = rng.uniform(-2.0, 2.0, 6)
        seed[continuous] = rng.uniform(-10.0, 10.0, 3)
        result = ik.solve(target, seed)
        assert result.success, result
        dp, dr = pose_errors(model, 'arm', result.position, target)
        assert dp <= 1e-5 and dr <= 1e-4
        assert within(result.position, ik.lower, ik.upper)
        assert np.all(np.abs(result.position[continuous] - seed[continuous]) <= math.pi + 1e-9)


def test_revolute_continuous_and_prismatic_joints_in_one_chain():
    urdf = """<robot name="mixed">
      <link name="base"/><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" velocity="2" effort="3"/></joint>
      <joint name="j2" type="continuous"><parent link="a"/><child link="b"/>
        <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/></joint>
      <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/>
        <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
        <limit lower="0" upper="0.5" velocity="0.1" effort="10"/></joint>
    </robot>"""
    model = RobotModel(urdf=urdf, chains={'tool': {'first_link': 'base', 'last_link': 'c'}})
    model.configure()
    ik = ChainIK(model, 'tool', task='position', random_seed=10, **BUDGET)
    rng = np.random.default_rng(10)
    for _ in range(15):
        q = np.array([rng.uniform(-1, 1), rng.uniform(-6, 6), rng.uniform(0.05, 0.5)])
        target = model.forward_kinematics('tool', q)[:3, 3]
        result = ik.solve(target)
        assert result.success, result
        assert 0.0 <= result.position[2] <= 0.5 and -1.0 <= result.position[0] <= 1.0
        reached = model.forward_kinematics('tool', result.position)[:3, 3]
        assert np.linalg.norm(reached - target) <= 1e-5


# --- failures ------------------------------------------------------------------------------------


def test_target_beyond_reach_fails_at_once_with_the_residual(arm):
    ik = ChainIK(arm, 'arm', random_seed=0, **BUDGET)
    target = arm.forward_kinematics('arm', np.zeros(6))
    target[:3, 3] = [3.0, 2.0, 1.0]  # the arm reaches about 1.7 m
    result = ik.solve(target)
    assert not result.success and result.reason == 'beyond reach'
    assert result.attempts == 1 and result.iterations < 100
    assert within(result.position, ik.lower, ik.upper)
    dp, dr = pose_errors(arm, 'arm', result.position, target)
    assert result.position_error == pytest.approx(dp, abs=1e-12) and dp > 1.0
    with pytest.raises(IkNoSolutionError) as caught:
        result.require()
    assert caught.value.position_error == result.position_error
    assert caught.value.attempts == 1 and 'beyond reach' in str(caught.value)


def test_a_target_50_mm_beyond_the_shoulders_reach_fails_at_once_as_beyond_reach(arm):
    # The shoulder (joint2's origin) turns on a circle of 0.18 m about joint1's axis at
    # z = 0.21 m, and the arm reaches 1.361 m from it (winding_arm.urdf). A bound taken from
    # the base (joint1's origin) let such a target use up every restart first.
    ik = ChainIK(arm, 'arm', task='position')
    shoulder, reach = np.array([0.18, 0.0, 0.21]), 1.3611
    beyond = ik.solve(shoulder + [reach + 0.05, 0.0, 0.0])
    assert not beyond.success and beyond.reason == 'beyond reach'
    assert beyond.attempts == 1 and beyond.iterations < 100
    assert beyond.position_error == pytest.approx(0.05, abs=1e-3)
    within_reach = ik.solve(shoulder + [reach - 0.05, 0.0, 0.0])
    assert within_reach.success, within_reach


def test_the_same_request_gets_the_same_answer_whatever_was_solved_before(arm):
    # bounded by counts, restarts drawn alike in every solve: nothing depends on the clock or
    # on the solves before (a time budget made answers depend on the machine's load)
    ik = ChainIK(arm, 'arm')
    rng = np.random.default_rng(5)
    targets = [arm.forward_kinematics('arm', rng.uniform(ik.lower, ik.upper)) for _ in range(6)]
    seed = rng.uniform(ik.lower, ik.upper)
    first = [ik.solve(t, seed) for t in targets]
    again = [ik.solve(t, seed) for t in reversed(targets)][::-1]
    assert any(r.attempts > 1 for r in first)   # some needed restarts
    for a, b in zip(first, again):
        assert (a.success, a.attempts, a.iterations, a.reason) == \
            (b.success, b.attempts, b.iterations, b.reason)
        np.testing.assert_array_equal(a.position, b.position)


def test_pose_the_limits_forbid_fails_within_the_iteration_budget(arm):
    # joint1 at 2 rad (or its shoulder flip at 2 - pi) is outside +-0.3 rad.
    lower, upper = np.full(6, -0.3), np.full(6, 0.3)
    ik = ChainIK(arm, 'arm', lower=lower, upper=upper, random_seed=1, time_guard=10.0,
                 max_iterations=400)
    target = arm.forward_kinematics('arm', [2.0, 0.1, 0.1, 0.1, 0.1, 0.1])
    result = ik.solve(target)
    assert not result.success and result.reason == 'iteration budget'
    assert result.iterations <= 400 and result.attempts > 1
    assert within(result.position, lower, upper)
    dp, dr = pose_errors(arm, 'arm', result.position, target)
    assert result.position_error == pytest.approx(dp, abs=1e-12) and dp > 1e-3
    assert result.orientation_error == pytest.approx(dr, abs=1e-9)


def test_the_time_guard_and_the_attempt_budget_end_a_hopeless_solve(arm):
    lower, upper = np.full(6, -0.3), np.full(6, 0.3)
    ik = ChainIK(arm, 'arm', lower=lower, upper=upper, random_seed=1)
    target = arm.forward_kinematics('arm', [2.0, 0.1, 0.1, 0.1, 0.1, 0.1])
    timed = ik.solve(target, time_guard=0.02, max_iterations=10 ** 9, max_attempts=10 ** 9)
    assert not timed.success and timed.reason == 'time guard' and timed.elapsed >= 0.02
    counted = ik.solve(target, time_guard=10.0, max_attempts=3)
    assert not counted.success and counted.reason == 'attempt budget'
    assert counted.attempts == 3


# --- threads -------------------------------------------------------------------------------------


def test_one_solver_serves_several_threads(arm):
    ik = ChainIK(arm, 'arm', random_seed=12, **BUDGET)
    rng = np.random.default_rng(12)
    configurations = rng.uniform(ik.lower, ik.upper, (2, 12, 6))
    failures = []

    def worker(batch):
        for q in batch:
            target = arm.forward_kinematics('arm', q)
            result = ik.solve(target)
            dp, dr = pose_errors(arm, 'arm', result.position, target)
            if not (result.success and dp <= 1e-5 and dr <= 1e-4):
                failures.append(result)

    threads = [threading.Thread(target=worker, args=(batch,)) for batch in configurations]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []


# --- bad input -----------------------------------------------------------------------------------


def test_bad_input_raises_the_documented_error(arm):
    ik = ChainIK(arm, 'arm', **BUDGET)
    target = arm.forward_kinematics('arm', np.zeros(6))
    cases = [
        (lambda: ik.solve(target, np.zeros(5)), 'seed'),
        (lambda: ik.solve(target, [0, 0, float('nan'), 0, 0, 0]), 'seed'),
        (lambda: ik.solve(np.full((4, 4), np.nan)), 'target'),
        (lambda: ik.solve(np.eye(3)), 'target'),
        (lambda: ik.solve([0.1, 0.2, 0.3]), 'target'),  # a position for a pose task
        (lambda: ik.solve(np.diag([1.0, 1.0, -1.0, 1.0])), 'target'),  # a reflection
        (lambda: ik.solve(np.diag([2.0, 1.0, 1.0, 1.0])), 'target'),
        (lambda: ik.solve(np.vstack((target[:3], [[0, 0, 1, 1]]))), 'target'),
        (lambda: ik.solve('pose'), 'target'),
        (lambda: ik.solve(target, time_guard=-1.0), 'time_guard'),
        (lambda: ik.solve(target, max_attempts=0), 'max_attempts'),
        (lambda: ChainIK(arm, 'arm', task='orientation'), 'task'),
        (lambda: ChainIK(arm, 'arm', task='position', weights=[1] * 6), 'weights'),
        (lambda: ChainIK(arm, 'arm', weights=[1, 1, 1, 1, -1, 1]), 'weights'),
        (lambda: ChainIK(arm, 'arm', weights=[0] * 6), 'weights'),
        (lambda: ChainIK(arm, 'arm', position_tolerance=0.0), 'position_tolerance'),
        (lambda: ChainIK(arm, 'arm', orientation_tolerance=float('nan')),
         'orientation_tolerance'),
        (lambda: ChainIK(arm, 'arm', lower=np.zeros(6), upper=-np.ones(6)), 'lower/upper'),
        (lambda: ChainIK(arm, 'arm', lower=np.zeros(3)), 'lower'),
        (lambda: ChainIK(arm, 'arm', fixed_joints=['elbow']), 'fixed_joints'),
        (lambda: ChainIK(arm, 'arm', fixed_joints=arm.list_joints('arm')), 'fixed_joints'),
        (lambda: ChainIK(arm, 'arm', max_iterations=2.5), 'max_iterations'),
    ]
    for call, argument in cases:
        with pytest.raises(IkInputError) as caught:
            call()
        assert caught.value.argument == argument, caught.value
        assert isinstance(caught.value, SweetieMotionError)
        assert isinstance(caught.value, ValueError)
        assert argument.split('/')[0] in str(caught.value)


def test_unknown_chain_raises_the_models_error(arm):
    with pytest.raises(UnknownChainError) as caught:
        ChainIK(arm, 'leg1')
    assert caught.value.chain == 'leg1' and 'arm' in str(caught.value)


def test_bad_input_names_the_joint(arm):
    ik = ChainIK(arm, 'arm')
    with pytest.raises(IkInputError, match='joint3'):
        ik.solve(np.eye(4), [0, 0, float('nan'), 0, 0, 0])
