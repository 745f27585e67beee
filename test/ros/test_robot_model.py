"""RobotModel: chains, groups, canonical order, extract/pack, kinematics, errors (R-MODEL)."""

import math
import threading

import numpy as np
import pinocchio
import pytest
from sensor_msgs.msg import JointState
from sweetie_motion.errors import (
    ChainDeclarationError, ChainOverlapError, MissingJointError, NotConfiguredError,
    UnknownChainError, UnknownJointError, UnknownLinkError, UrdfError,
)
from sweetie_motion.model import RobotModel
from sweetie_motion.paths import config_path

LEGS = [f'joint{leg}{k}' for leg in range(1, 5) for k in range(1, 7)]
CANONICAL = LEGS + ['joint51', 'joint52', 'joint53', 'joint54', 'joint55', 'joint56',
                    'eyes_yaw', 'eyes_pitch']


def small_urdf(extra_joint='', extra_link=''):
    return f"""<robot name="small">
      <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="side"/>
      {extra_link}
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
        <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" velocity="2" effort="3"/></joint>
      <joint name="j2" type="continuous"><parent link="a"/><child link="b"/>
        <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/></joint>
      <joint name="j3" type="prismatic"><parent link="b"/><child link="c"/>
        <origin xyz="0.3 0 0"/><axis xyz="1 0 0"/>
        <limit lower="0" upper="0.5" velocity="0.1" effort="10"/></joint>
      <joint name="js" type="revolute"><parent link="base"/><child link="side"/>
        <axis xyz="1 0 0"/><limit lower="-2" upper="2" velocity="1" effort="1"/></joint>
      {extra_joint}
    </robot>"""


# --- the pony ------------------------------------------------------------------------------------


def test_pony_has_32_joints_in_canonical_order(pony):
    assert pony.list_all_joints() == CANONICAL
    assert pony.list_joints() == CANONICAL
    assert [pony.get_joint_index(j) for j in CANONICAL] == list(range(32))


def test_pony_chains_groups_and_virtual_joints(pony):
    assert pony.list_chains() == ['leg1', 'leg2', 'leg3', 'leg4', 'head', 'nose']
    assert pony.list_groups() == ['leg1', 'leg2', 'leg3', 'leg4', 'head', 'eyes']
    assert pony.list_joints('leg3') == [f'joint3{k}' for k in range(1, 7)]
    assert pony.list_joints('nose') == [f'joint5{k}' for k in range(1, 7)]
    assert pony.get_group_chains('head') == ['head', 'nose']
    assert pony.get_group_joints('eyes') == ['eyes_yaw', 'eyes_pitch']
    assert pony.list_virtual_joints() == ['joint16', 'joint26', 'joint36', 'joint46',
                                          'joint55', 'joint56', 'eyes_yaw', 'eyes_pitch']
    assert pony.is_virtual('joint46') and not pony.is_virtual('joint45')
    assert pony.get_chain_property('leg2', 'contact') == 'hoof2'
    assert pony.get_chain_property('head', 'contact', 'no') == 'no'


def test_joint_to_chain_and_group_lookups(pony):
    assert pony.get_joint_chain('joint23') == 'leg2'
    assert pony.get_joint_chain('joint51') == 'head'  # shared with nose: the first chain
    assert pony.get_joint_chain('eyes_yaw') == ''     # group-only joint
    assert pony.get_joint_chain('tail') == ''
    assert pony.get_joint_index('tail') == -1
    assert pony.get_joints_chains(['joint56', 'joint11', 'joint12', 'tail']) == ['leg1', 'nose']
    assert pony.get_joints_groups(['joint56', 'eyes_pitch', 'joint41']) == [
        'eyes', 'head', 'leg4']
    with pytest.raises(UnknownJointError, match='tail'):
        pony.get_joint_indices(['joint11', 'tail'])


def test_limits_come_from_the_urdf(pony):
    lower, upper = pony.position_limits()
    i = pony.get_joint_index
    assert (lower[i('joint51')], upper[i('joint51')]) == (-1.5708, 0.26)
    assert (lower[i('joint53')], upper[i('joint53')]) == (-0.55, 1.0)
    assert (lower[i('joint54')], upper[i('joint54')]) == (-0.4, 0.4)
    assert (lower[i('joint23')], upper[i('joint23')]) == (-1.9, 1.9)
    assert (lower[i('joint34')], upper[i('joint34')]) == (-1.7, 1.7)
    assert upper[i('joint12')] == 1.5708
    assert pony.velocity_limits()[i('joint12')] == 1.5708
    with pytest.raises(ValueError):
        lower[0] = 5.0  # shared arrays are read-only


def _shuffled_state(model, seed=3):
    rng = np.random.default_rng(seed)
    names = model.list_all_joints()
    order = rng.permutation(len(names))
    msg = JointState()
    msg.name = [names[k] for k in order]
    msg.position = [float(k) for k in order]
    msg.velocity = [10.0 + k for k in order]
    msg.effort = []
    return msg


def test_extract_chain_from_any_joint_order(pony):
    msg = _shuffled_state(pony)
    pos, vel, eff = pony.extract_chain('leg2', msg)
    np.testing.assert_array_equal(pos, [6, 7, 8, 9, 10, 11])
    np.testing.assert_array_equal(vel, [16, 17, 18, 19, 20, 21])
    assert eff.size == 0
    msg.name = [n for n in msg.name if n != 'joint24']
    msg.position = list(msg.position)[:31]
    msg.velocity = []
    with pytest.raises(MissingJointError, match='joint24'):
        pony.extract_chain('leg2', msg)
    with pytest.raises(UnknownChainError, match='leg9'):
        pony.extract_chain('leg9', msg)


def test_pack_chain_fills_an_empty_state_with_the_full_pose(pony):
    msg = JointState()
    assert pony.pack_chain('nose', [1, 2, 3, 4, 5, 6], [], [], msg)
    assert list(msg.name) == CANONICAL
    assert list(msg.position[24:30]) == [1, 2, 3, 4, 5, 6]
    assert sum(msg.position) == 21
    pos, _, _ = pony.extract_chain('head', msg)
    np.testing.assert_array_equal(pos, [1, 2, 3, 4])


def test_pack_chain_into_a_shuffled_state_round_trips(pony):
    msg = _shuffled_state(pony)
    assert pony.pack_chain('leg4', [0.1] * 6, [0.2] * 6, [], msg)
    pos, vel, _ = pony.extract_chain('leg4', msg)
    np.testing.assert_allclose(pos, 0.1)
    np.testing.assert_allclose(vel, 0.2)
    other, _, _ = pony.extract_chain('leg3', msg)
    np.testing.assert_array_equal(other, [12, 13, 14, 15, 16, 17])


def test_pack_chain_refuses_without_writing(pony):
    msg = _shuffled_state(pony)
    before = list(msg.position)
    assert not pony.pack_chain('leg9', [0] * 6, [], [], msg)
    assert not pony.pack_chain('leg1', [0] * 5, [], [], msg)
    assert not pony.pack_chain('leg1', [0] * 6, [0] * 6, [0] * 2, msg)
    partial = JointState(name=['joint11'], position=[0.0])
    assert not pony.pack_chain('leg1', [1] * 6, [], [], partial)
    assert list(msg.position) == before and list(partial.position) == [0.0]


# --- errors --------------------------------------------------------------------------------------


def test_use_before_configure_is_a_clear_error():
    model = RobotModel(urdf=small_urdf(), chains={'c': {'first_link': 'base', 'last_link': 'c'}})
    assert not model.is_configured
    with pytest.raises(NotConfiguredError, match='list_chains'):
        model.list_chains()
    with pytest.raises(NotConfiguredError):
        model.view().get_joint_index('j1')
    model.configure()
    assert model.is_configured and model.list_joints('c') == ['j1', 'j2', 'j3']
    model.cleanup()
    with pytest.raises(NotConfiguredError):
        model.forward_kinematics('c', [0, 0, 0])


def test_unknown_link_names_chain_and_link():
    model = RobotModel(urdf=small_urdf(),
                       chains={'arm': {'first_link': 'base', 'last_link': 'hand'}})
    with pytest.raises(UnknownLinkError) as caught:
        model.configure()
    assert caught.value.chain == 'arm' and caught.value.link == 'hand'
    assert 'last_link' in str(caught.value)
    assert not model.is_configured


def test_overlapping_chains_must_share_a_group():
    chains = {'long': {'first_link': 'base', 'last_link': 'c'},
              'short': {'first_link': 'base', 'last_link': 'b'}}
    with pytest.raises(ChainOverlapError, match='j1, j2') as caught:
        RobotModel(urdf=small_urdf(), chains=chains).configure()
    assert caught.value.chains == ('long', 'short')
    model = RobotModel(urdf=small_urdf(), chains=chains,
                       groups={'arm': {'chains': ['long', 'short']}})
    model.configure()
    assert model.list_all_joints() == ['j1', 'j2', 'j3']
    assert model.list_joints('short') == ['j1', 'j2']


@pytest.mark.parametrize('urdf, message', [
    ('<robot name="x"><link name="a"/>', 'malformed URDF'),
    ('<robt name="x"/>', 'root element'),
    ('<robot name="x"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
     '<child link="zz"/><limit lower="0" upper="1"/></joint></robot>', "unknown link 'zz'"),
    ('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/></joint></robot>', 'has no <limit>'),
    ('<robot name="x"><link name="a"/><link name="b"/></robot>', 'one root link'),
])
def test_malformed_urdf_is_reported(urdf, message):
    model = RobotModel(urdf=urdf, chains={'c': {'first_link': 'a', 'last_link': 'b'}})
    with pytest.raises(UrdfError, match=message):
        model.configure()


def test_missing_urdf_file_is_reported(tmp_path):
    model = RobotModel(urdf_file=str(tmp_path / 'nope.urdf'), chains={})
    with pytest.raises(UrdfError, match='nope.urdf'):
        model.configure()


@pytest.mark.parametrize('chains, groups, error, message', [
    ({'c': {'first_link': 'b', 'last_link': 'a'}}, {}, ChainDeclarationError, 'not an ancestor'),
    ({'c': {'first_link': 'base'}}, {}, ChainDeclarationError, 'missing last_link'),
    ({'c': {'first_link': 'a', 'last_link': 'a'}}, {}, ChainDeclarationError, 'no movable'),
    ({'c': {'first_link': 'base', 'last_link': 'a'}}, {'g': {'chains': ['c', 'd']}},
     ChainDeclarationError, "unknown chain 'd'"),
    ({'c': {'first_link': 'base', 'last_link': 'a'}},
     {'g': {'chains': ['c']}, 'h': {'chains': ['c']}}, ChainDeclarationError, 'two groups'),
    ({'c': {'first_link': 'base', 'last_link': 'a'}}, {'g': {'joints': ['nope']}},
     UnknownJointError, 'nope'),
    ({'c': {'first_link': 'base', 'last_link': 'a'}},
     {'c': {'chains': ['c']}, 'g': {'joints': ['j1']}}, ChainDeclarationError,
     "already belongs to chain 'c'"),
])
def test_bad_declarations_are_reported(chains, groups, error, message):
    with pytest.raises(error, match=message):
        RobotModel(urdf=small_urdf(), chains=chains, groups=groups).configure()


def test_failed_reconfigure_keeps_the_previous_model():
    model = RobotModel(urdf=small_urdf(), chains={'c': {'first_link': 'base', 'last_link': 'c'}})
    model.configure()
    model.add_chain('bad', 'base', 'nowhere')
    with pytest.raises(UnknownLinkError):
        model.configure()
    assert model.list_chains() == ['c']
    model.remove_chain('bad')
    model.add_chain('side', 'base', 'side', group='extra', purpose='demo')
    model.configure()
    assert model.list_chains() == ['c', 'side']
    assert model.get_chain_group('side') == 'extra'
    assert model.get_chain_property('side', 'purpose') == 'demo'
    assert model.list_all_joints() == ['j1', 'j2', 'j3', 'js']


def test_group_only_joints_come_after_the_chains():
    model = RobotModel(urdf=small_urdf(), chains={'c': {'first_link': 'a', 'last_link': 'c'}},
                       groups={'c': {'chains': ['c']}, 'loose': {'joints': ['js', 'j1']}})
    model.configure()
    assert model.list_all_joints() == ['j2', 'j3', 'js', 'j1']
    assert model.get_joint_group('j1') == 'loose' and model.get_joint_chain('j1') == ''
    np.testing.assert_array_equal(model.get_group_indices('loose'), [2, 3])


# --- kinematics ----------------------------------------------------------------------------------


def test_forward_kinematics_of_the_arm_matches_the_paper(arm):
    # Seed 004: at q = (-90 deg, 0, 0, 0, 0, 0) the flange is waypoint 1,
    # (0, -384.8, 850.2) mm with orientation EulerZYZ(pi/2, -pi/2, 0), in the world frame.
    pose = arm.forward_kinematics('arm', np.radians([-90, 0, 0, 0, 0, 0]))
    np.testing.assert_allclose(pose[:3, 3], [0.0, -0.3848, 0.8502], atol=5e-5)  # 0.1 mm
    zyz = (pinocchio.utils.rotate('z', math.pi / 2) @ pinocchio.utils.rotate('y', -math.pi / 2))
    np.testing.assert_allclose(pose[:3, :3], zyz, atol=1e-9)


def test_forward_kinematics_of_a_leg_in_the_zero_pose(pony):
    pose = pony.forward_kinematics('leg1', np.zeros(6))
    # Proto2: hip (0.080425, 0.037, -0.0275), upper leg 0.08, lower leg 0.09605 (0.0016 out)
    np.testing.assert_allclose(pose[:3, 3], [0.080425, 0.0386, -0.20355], atol=1e-9)
    hoof = pony.forward_kinematics('leg1', np.zeros(6), link='hoof1')
    np.testing.assert_allclose(hoof[:3, 3], pose[:3, 3] + [0, 0, -0.03])  # the hoof below


def test_forward_kinematics_with_continuous_and_prismatic_joints():
    model = RobotModel(urdf=small_urdf(), chains={'c': {'first_link': 'base', 'last_link': 'c'}})
    model.configure()
    pose = model.forward_kinematics('c', [math.pi / 2, math.pi / 2, 0.1])
    # j1 turns the arm to +y; j2 (about y) tilts the prismatic link down.
    np.testing.assert_allclose(pose[:3, 3], [0, 0.2, 0.1 - 0.4], atol=1e-9)


@pytest.mark.parametrize('robot, chain', [('arm', 'arm'), ('pony', 'leg2'), ('pony', 'nose')])
def test_jacobian_matches_finite_differences(robot, chain, request):
    model = request.getfixturevalue(robot)
    rng = np.random.default_rng(7)
    n = len(model.list_joints(chain))
    q = rng.uniform(-0.8, 0.8, n)
    jac = model.jacobian(chain, q)
    assert jac.shape == (6, n)
    base = model.forward_kinematics(chain, q)
    step = 1e-6
    for k in range(n):
        dq = q.copy()
        dq[k] += step
        moved = model.forward_kinematics(chain, dq)
        linear = (moved[:3, 3] - base[:3, 3]) / step
        angular = pinocchio.log3(moved[:3, :3] @ base[:3, :3].T) / step
        np.testing.assert_allclose(jac[:3, k], linear, atol=1e-5)
        np.testing.assert_allclose(jac[3:, k], angular, atol=1e-5)


def test_kinematics_from_several_threads_agree(arm):
    rng = np.random.default_rng(1)
    configurations = rng.uniform(-1, 1, (200, 6))
    expected = [arm.forward_kinematics('arm', q) for q in configurations]
    failures = []

    def work():
        for q, pose in zip(configurations, expected):
            if not np.allclose(arm.forward_kinematics('arm', q), pose):
                failures.append(q)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_view_is_read_only(pony):
    view = pony.view()
    assert view.list_all_joints() == CANONICAL
    assert view.get_joint_index('joint54') == 27
    for forbidden in ('configure', 'cleanup', 'forward_kinematics', 'pack_chain', 'add_chain'):
        assert not hasattr(view, forbidden)
    with pytest.raises(ValueError):
        view.get_chain_indices('leg1')[0] = 3


def test_robot_description_files_exist():
    assert config_path('sweetie_bot.urdf').is_file()
    assert config_path('winding_arm.yaml').is_file()
