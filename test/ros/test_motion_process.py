"""
The motion process as a separate process on the virtual robot, driven over DDS (R-SYS, R-FJS).

One process runs for the whole module (starting it costs seconds); each test leaves it as it
found it: every controller active, torque on.
"""

import time

from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from motion_process import motion_process, MotionClient
import pytest
from ros_util import wait_for, wait_future
from waiting import stays

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_sys'
NODES = ['motion', 'virtual_robot', 'torque_main_switch', 'follow_joint_state', 'head_control']


@pytest.fixture(scope='module')
def pony():
    from domains import own_domain
    with own_domain() as domain:
        with motion_process('two_controllers.yaml', NS) as process:
            with MotionClient(NS, domain) as client:
                client.wait_ready(NODES)
                client.process = process
                yield client


def test_joint_states_are_full_poses_in_robot_model_order(pony):
    from sweetie_motion.model import load_robot_description
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    for msg in (pony.joint_states, pony.reference):
        assert list(msg.name) == model.list_all_joints()
        assert len(msg.position) == len(msg.velocity) == 32
        age = pony.node.get_clock().now().nanoseconds * 1e-9 - (
            msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
        assert abs(age) < 2.0, 'stamps must be current (MoveIt and robot_state_publisher)'


def test_ownership_is_visible_on_a_topic(pony):
    wait_for(lambda: pony.owners.get('head') == 'head_control', 10, message='owners')
    assert pony.owners['leg1'] == 'follow_joint_state'
    assert pony.owners['eyes'] == 'follow_joint_state'


def test_streamed_joint_states_are_followed(pony):
    target = {'joint12': 0.6, 'joint23': -0.5, 'eyes_yaw': 0.3}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        # any subset, any order, through the shared topic and the controller's own port
        pony.publish('joint_states_set', list(target), list(target.values()))
        pony.publish('follow_joint_state/in_joints_ref', ['joint41'], [0.4])
        wanted = {**target, 'joint41': 0.4}
        if all(abs(pony.position(j, which) - v) < 0.01 for j, v in wanted.items()
               for which in ('measured', 'reference')):
            break
        time.sleep(0.05)
    for joint, value in {**target, 'joint41': 0.4}.items():
        assert pony.position(joint) == pytest.approx(value, abs=0.01)
        assert pony.position(joint, 'reference') == pytest.approx(value, abs=0.01)
    # back to the zero pose for the next tests
    names = list(target) + ['joint41']
    pony.publish('joint_states_set', names, [0.0] * len(names))
    wait_for(lambda: abs(pony.position('joint12')) < 0.01, 10, message='back at zero')


def test_the_newest_pose_of_a_burst_wins(pony):
    # poses sent faster than the cycle: each one is obeyed in order, never an older one last
    # (two callbacks of one topic used to overlap and a stale pose stayed the target)
    for burst in range(20):
        values = [0.05 * (i % 7) for i in range(40)] + [0.1 * (burst % 2)]
        for value in values:
            pony.publish('joint_states_set', ['joint12', 'joint23'], [value, -value])
        wait_for(lambda: abs(pony.position('joint12') - values[-1]) < 0.005 and
                 abs(pony.position('joint23') + values[-1]) < 0.005, 10,
                 message=f'burst {burst}: the last pose')
    pony.publish('joint_states_set', ['joint12', 'joint23'], [0.0, 0.0])
    wait_for(lambda: abs(pony.position('joint12')) < 0.005, 10, message='back at zero')


def test_a_second_controller_takes_the_head_and_the_first_stops_driving_it(pony):
    # head_control owns the head since start-up (the later requester won)
    pony.stream('joint_states_set', ['joint51', 'joint12'], [-0.7, 0.3],
                lambda: abs(pony.position('joint12') - 0.3) < 0.01, 'leg follows')
    assert abs(pony.position('joint51')) < 0.01, 'follow_joint_state drove a lost chain'
    pony.stream('head_control/in_joints_ref', ['joint51'], [-0.3],
                lambda: abs(pony.position('joint51') + 0.3) < 0.01, 'head follows')

    # head_control switched off: the head returns to follow_joint_state (stay_operational)
    response = pony.call_bool('head_control/set_operational', False)
    assert response.success, response.message
    wait_for(lambda: pony.owners.get('head') == 'follow_joint_state', 10, message='head back')
    pony.stream('joint_states_set', ['joint51'], [-0.1],
                lambda: abs(pony.position('joint51') + 0.1) < 0.01, 'fjs drives head')

    # and back on: it takes the head again, the first controller stops driving it
    response = pony.call_bool('head_control/set_operational', True)
    assert response.success, response.message
    wait_for(lambda: pony.owners.get('head') == 'head_control', 10, message='head taken')
    pony.stream('joint_states_set', ['joint51', 'joint12'], [-0.6, 0.0],
                lambda: abs(pony.position('joint12')) < 0.01, 'leg back at zero')
    assert pony.position('joint51') == pytest.approx(-0.1, abs=0.01)
    pony.publish('head_control/in_joints_ref', ['joint51'], [0.0])
    wait_for(lambda: abs(pony.position('joint51')) < 0.01, 10, message='head at zero')


def test_torque_off_lets_the_reference_follow_the_measured_pose(pony):
    response = pony.call_bool('set_torque_off', True)
    assert response.success and 'torque off' in response.message
    wait_for(lambda: pony.owners.get('leg2') == 'torque_main_switch', 10, message='switch owns')
    for k in range(40):   # a person bends leg 2, slowly: the pace is the scenario
        pony.publish('virtual_robot/move_by_hand', ['joint22'], [0.01 * k])
        time.sleep(0.025)
    wait_for(lambda: abs(pony.position('joint22', 'reference') - 0.39) < 0.011, 10,
             message='reference follows the hand')
    assert pony.position('joint22') == pytest.approx(0.39, abs=0.011)
    # commands are not obeyed while the torque is off
    pony.publish('joint_states_set', ['joint22'], [-0.5])
    assert stays(lambda: abs(pony.position('joint22') - 0.39) < 0.011, 0.5), \
        'a command moved a leg whose torque is off'

    # head_control lost everything and is not stay_operational: it deactivated itself
    state = pony.node.create_client(GetState, f'/{NS}/head_control/get_state')
    wait_for(lambda: wait_future(state.call_async(GetState.Request()), 10)
             .current_state.label == 'inactive', 10, period=0.2, message='head_control off')

    response = pony.call_bool('set_torque_off', False)
    assert response.success and 'torque on' in response.message
    wait_for(lambda: pony.owners.get('leg2') == 'follow_joint_state', 10, message='returned')
    # ... and does not get the head back (it left); the background controller does
    assert pony.owners['head'] == 'follow_joint_state'
    held = pony.position('joint22', 'reference')
    assert stays(lambda: abs(pony.position('joint22', 'reference') - held) < 1e-3, 0.5), \
        'the reference drifted after torque on'
    assert held == pytest.approx(0.39, abs=0.011)  # holds the pose the person left
    pony.publish('virtual_robot/move_by_hand', ['joint22'], [1.0])  # torque on: resists
    assert stays(lambda: abs(pony.position('joint22') - held) < 1e-3, 0.3), \
        'the hand moved a leg whose torque is on'
    pony.stream('joint_states_set', ['joint22'], [0.0],
                lambda: abs(pony.position('joint22')) < 0.01, 'leg back at zero')
    assert pony.call_bool('head_control/set_operational', True).success
    wait_for(lambda: pony.owners.get('head') == 'head_control', 10, message='head_control on')


def test_torque_off_for_one_chain_leaves_the_rest_standing_and_obeying(pony):
    from sweetie_motion_msgs.srv import SetChainsTorque
    client = pony.node.create_client(SetChainsTorque, f'/{NS}/set_chains_torque')
    assert client.wait_for_service(timeout_sec=10)

    def switch(chains, off):
        return wait_future(
            client.call_async(SetChainsTorque.Request(chains=chains, torque_off=off)), 15)

    refused = switch(['leg9'], True)
    assert not refused.success and 'leg9' in refused.message
    response = switch(['leg2'], True)
    assert response.success and 'leg2' in response.message, response.message
    wait_for(lambda: pony.owners.get('leg2') == 'torque_main_switch', 10, message='leg2 free')
    assert pony.owners['leg1'] == 'follow_joint_state'
    for k in range(30):   # a person bends leg 2, slowly: the pace is the scenario
        pony.publish('virtual_robot/move_by_hand', ['joint22'], [0.01 * k])
        time.sleep(0.025)
    wait_for(lambda: abs(pony.position('joint22', 'reference') - 0.29) < 0.011, 10,
             message='the reference of leg2 follows the hand')
    # meanwhile leg 1 still obeys its controller
    pony.stream('joint_states_set', ['joint12'], [0.2],
                lambda: abs(pony.position('joint12') - 0.2) < 0.01, 'leg1 follows')
    response = switch(['leg2'], False)
    assert response.success and 'torque on' in response.message, response.message
    wait_for(lambda: pony.owners.get('leg2') == 'follow_joint_state', 10, message='leg2 back')
    assert pony.position('joint22', 'reference') == pytest.approx(0.29, abs=0.011)
    pony.stream('joint_states_set', ['joint12', 'joint22'], [0.0, 0.0],
                lambda: abs(pony.position('joint12')) < 0.01 and
                abs(pony.position('joint22')) < 0.01, 'legs back at zero')


def test_lifecycle_services_work_from_another_process(pony):
    node = pony.node
    get = node.create_client(GetState, f'/{NS}/head_control/get_state')
    change = node.create_client(ChangeState, f'/{NS}/head_control/change_state')
    assert change.wait_for_service(timeout_sec=10)

    def transition(tid):
        return wait_future(change.call_async(
            ChangeState.Request(transition=Transition(id=tid))), 10).success

    assert transition(Transition.TRANSITION_DEACTIVATE)
    wait_for(lambda: pony.owners.get('head') == 'follow_joint_state', 10, message='released')
    assert not transition(Transition.TRANSITION_DEACTIVATE)  # invalid: refused, no crash
    assert transition(Transition.TRANSITION_CLEANUP)
    assert wait_future(get.call_async(GetState.Request()), 10).current_state.label == \
        'unconfigured'
    assert transition(Transition.TRANSITION_CONFIGURE)
    assert transition(Transition.TRANSITION_ACTIVATE)
    wait_for(lambda: pony.owners.get('head') == 'head_control', 10, message='taken again')
    assert pony.process.alive()


def test_bad_input_is_ignored_and_the_process_survives(pony):
    from sensor_msgs.msg import JointState
    publisher = pony.node.create_publisher(JointState, f'/{NS}/joint_states_set', 10)
    publisher.publish(JointState(name=['joint12', 'joint13'], position=[0.1]))   # sizes
    publisher.publish(JointState(name=['no_such_joint'], position=[3.0]))
    publisher.publish(JointState(name=['joint12'], position=[float('nan')]))
    # a good pose after them is obeyed (inputs are taken in order): the bad ones were seen
    # and changed nothing else
    publisher.publish(JointState(name=['joint13'], position=[0.05]))
    wait_for(lambda: abs(pony.position('joint13') - 0.05) < 0.005, 10, message='good pose')
    assert pony.process.alive()
    assert abs(pony.position('joint12')) < 0.01
    pony.stream('joint_states_set', ['joint13'], [0.0],
                lambda: abs(pony.position('joint13')) < 0.005, 'back at zero')
    response = pony.call_bool('follow_joint_state/set_operational', True)
    assert response.success


def test_cycle_diagnostics_are_published(pony):
    from diagnostic_msgs.msg import DiagnosticArray
    seen = {}
    pony.node.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda m: seen.update({s.name: s for s in m.status}), 10)
    wait_for(lambda: f'{NS}: sync cycle' in seen and f'{NS}: servos' in seen, 10,
             message='diagnostics')
    cycle = {kv.key: kv.value for kv in seen[f'{NS}: sync cycle'].values}
    assert 90 < float(cycle['rate']) < 110
    assert float(cycle['compute_p50']) < 0.01
    assert 'owners' in cycle
    servos = {kv.key: kv.value for kv in seen[f'{NS}: servos'].values}
    assert servos['torque_off'] == 'false' and servos['joint11'].startswith('on')
