"""
The motion process through ros2_control's conventions, from another process.

What rqt_joint_trajectory_controller (Jazzy) does, step by step: find a controller manager by
its six services and their exact types; list the controllers and keep the active ones whose type
contains ``JointTrajectoryController``; take their joints from the ``<joint>/position`` entries
of ``required_state_interfaces``; read each joint's slider range from the ``<limit>`` of the
latched ``/robot_description``; then send single-point JointTrajectory messages on
``<controller>/joint_trajectory`` and read ``<controller>/controller_state``'s feedback. And
what `ros2 control` does with the other services; and `sweetie-motion status`.
"""

import re
import subprocess
import sys

from builtin_interfaces.msg import Duration
from control_msgs.msg import JointTrajectoryControllerState
from controller_manager_msgs.srv import (
    ListControllers, ListControllerTypes, ListHardwareComponents, ListHardwareInterfaces,
    LoadController, ReloadControllerLibraries, SwitchController, UnloadController,
)
from motion_process import LATCHED, motion_process, MotionClient
import pytest
from rclpy.qos import QoSProfile
from ros_util import call_idempotent, joint_limits, ROOT, wait_for
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [pytest.mark.ros]

NS = 'cm_pony'
MANAGER = f'/{NS}/controller_manager'
#: the services rqt_joint_trajectory_controller requires of a controller manager
RQT_JTC_SERVICES = {
    'list_controllers': 'controller_manager_msgs/srv/ListControllers',
    'list_controller_types': 'controller_manager_msgs/srv/ListControllerTypes',
    'load_controller': 'controller_manager_msgs/srv/LoadController',
    'unload_controller': 'controller_manager_msgs/srv/UnloadController',
    'switch_controller': 'controller_manager_msgs/srv/SwitchController',
    'reload_controller_libraries': 'controller_manager_msgs/srv/ReloadControllerLibraries',
}
HEAD_JOINTS = ['joint51', 'joint52', 'joint53', 'joint54', 'joint55', 'joint56', 'eyes_yaw',
               'eyes_pitch']


class Peer(MotionClient):
    """A test peer that also reads /robot_description and a controller's state."""

    def __init__(self, domain: int) -> None:
        super().__init__(NS, domain)
        self.descriptions = []
        self.controller_state = None
        self.node.create_subscription(String, '/robot_description',
                                      self.descriptions.append, LATCHED)
        self.node.create_subscription(JointTrajectoryControllerState,
                                      f'/{NS}/head_trajectory/controller_state',
                                      self._on_controller_state, 1)

    def _on_controller_state(self, msg) -> None:
        self.controller_state = msg

    def call(self, srv_type, name: str, request=None, timeout: float = 15.0):
        client = self.node.create_client(srv_type, f'{MANAGER}/{name}')
        assert client.wait_for_service(timeout_sec=timeout), f'{name} not available'
        future = client.call_async(request if request is not None else srv_type.Request())
        wait_for(future.done, timeout, message=f'{name} answered')
        return future.result()

    def controllers(self):
        client = self.node.create_client(ListControllers, f'{MANAGER}/list_controllers')
        assert client.wait_for_service(timeout_sec=15)
        listed = call_idempotent(client, ListControllers.Request(), 15)
        return {c.name: c for c in listed.controller}


@pytest.fixture(scope='module')
def pony():
    from domains import own_domain
    with own_domain() as domain:
        with motion_process('sweetie_bot_motion.yaml', NS) as process:
            with Peer(domain) as peer:
                peer.wait_ready(['motion', 'joint_trajectory', 'head_trajectory'], timeout=60)
                peer.process = process
                yield peer


def test_rqt_joint_trajectory_controller_finds_and_drives_the_trajectory_controllers(pony):
    wait_for(lambda: all(f'{MANAGER}/{name}' in dict(pony.node.get_service_names_and_types())
                         for name in RQT_JTC_SERVICES), 15, message='the manager discovered')
    services = dict(pony.node.get_service_names_and_types())
    for name, srv_type in RQT_JTC_SERVICES.items():
        assert services[f'{MANAGER}/{name}'] == [srv_type]
    controllers = pony.controllers()
    running = sorted(name for name, c in controllers.items()
                     if 'JointTrajectoryController' in c.type and c.state == 'active')
    assert running == ['head_trajectory', 'joint_trajectory']
    head = controllers['head_trajectory']
    joints = list(dict.fromkeys(i.rsplit('/', 1)[0] for i in head.required_state_interfaces
                                if i.endswith('/position')))
    assert joints == HEAD_JOINTS
    wait_for(lambda: pony.descriptions, 10, message='the latched /robot_description')
    limits = joint_limits(pony.descriptions[-1].data, joints)
    assert sorted(limits) == sorted(joints), 'a slider without a range'
    # a dragged slider: one point, its time from the joint's speed limit, ten times a second
    lower, upper, velocity = limits['joint51']
    target = max(lower + 0.05, -0.5)
    publisher = pony.node.create_publisher(JointTrajectory, f'/{NS}/head_trajectory/'
                                           'joint_trajectory', QoSProfile(depth=1))
    start = pony.position('joint51')

    def command_and_reached() -> bool:
        state = pony.controller_state
        if state is None:
            return False
        current = dict(zip(state.joint_names, state.feedback.positions))
        seconds = max(abs(target - current['joint51']) / velocity, 0.1)
        publisher.publish(JointTrajectory(joint_names=joints, points=[JointTrajectoryPoint(
            positions=[target if j == 'joint51' else current[j] for j in joints],
            time_from_start=Duration(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)))]))
        return abs(current['joint51'] - target) < 0.02
    wait_for(command_and_reached, 20, period=0.1, message='joint51 at the slider')
    assert abs(start - target) > 0.2
    # while its goal runs, the controller owns the joint: a slow move back (the last slider
    # command ends 0.1 s after it is reached: a busy machine's listing came after that)
    publisher.publish(JointTrajectory(joint_names=['joint51'], points=[JointTrajectoryPoint(
        positions=[start], time_from_start=Duration(sec=20))]))
    wait_for(lambda: 'joint51/position' in
             pony.controllers()['head_trajectory'].claimed_interfaces, 15,
             message='joint51 claimed by head_trajectory while it moves')
    publisher.publish(JointTrajectory(joint_names=['joint51']))   # empty: stop there
    # routine topic commands stay out of the INFO log (rqt_jtc sends ten a second)
    assert '~/joint_trajectory: 1 points' not in pony.process.output()


def test_switch_controller_maps_to_the_lifecycle(pony):
    off = pony.call(SwitchController, 'switch_controller', SwitchController.Request(
        deactivate_controllers=['head_trajectory'], strictness=SwitchController.Request.STRICT))
    assert off.ok, off.message
    assert pony.controllers()['head_trajectory'].state == 'inactive'
    refused = pony.call(SwitchController, 'switch_controller', SwitchController.Request(
        activate_controllers=['head_trajectory', 'head_trajectry'],
        strictness=SwitchController.Request.STRICT))
    assert not refused.ok
    assert "no controller named 'head_trajectry' (did you mean 'head_trajectory'?)" in \
        refused.message
    assert pony.controllers()['head_trajectory'].state == 'inactive', 'STRICT changed something'
    on = pony.call(SwitchController, 'switch_controller', SwitchController.Request(
        activate_controllers=['head_trajectory'], strictness=SwitchController.Request.STRICT))
    assert on.ok, on.message
    assert pony.controllers()['head_trajectory'].state == 'active'


def test_the_other_manager_services_answer_as_ros2_control_does(pony):
    types = pony.call(ListControllerTypes, 'list_controller_types')
    assert 'joint_trajectory_controller/JointTrajectoryController' in types.types
    assert len(types.types) == len(types.base_classes)
    assert pony.call(LoadController, 'load_controller',
                     LoadController.Request(name='joint_trajectory')).ok
    assert not pony.call(LoadController, 'load_controller',
                         LoadController.Request(name='admittance_controller')).ok
    assert not pony.call(UnloadController, 'unload_controller',
                         UnloadController.Request(name='joint_trajectory')).ok
    assert pony.call(ReloadControllerLibraries, 'reload_controller_libraries').ok
    hardware = pony.call(ListHardwareComponents, 'list_hardware_components').component
    assert [(h.name, h.state.label) for h in hardware] == [('virtual_robot', 'active')]
    interfaces = pony.call(ListHardwareInterfaces, 'list_hardware_interfaces')
    names = [i.name for i in interfaces.command_interfaces]
    assert 'joint11/position' in names and all(i.is_available
                                               for i in interfaces.command_interfaces)
    claimed = {i.name for i in interfaces.command_interfaces if i.is_claimed}
    owners = pony.controllers()
    # the virtual joints (hoof contacts, the nose) are the controllers' but no servo's
    assert claimed == {i for c in owners.values() for i in c.claimed_interfaces} & set(names)
    assert claimed


def test_status_shows_every_node_its_chains_owners_safety_and_servos(pony):
    result = subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', 'status',
                             '--namespace', NS], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines() if line}
    for node in ('joint_trajectory', 'head_trajectory', 'follow_joint_state',
                 'torque_main_switch', 'virtual_robot', 'motion', 'trajectory_storage'):
        assert node in rows and 'active' in rows[node], (node, result.stdout)
    assert rows['head_trajectory'][3:6] == ['head', 'nose', 'eyes']
    lines = {' '.join(words[:2]): ' '.join(words) for words in rows.values()}
    assert 'resources:' in result.stdout
    # what the safety stage did since its last report: nothing, or the ticks it limited (a
    # goal of an earlier test that the stage limited a moment ago, on a slow machine)
    assert re.search(r'within the joint limits|limited the reference in \d+ ticks? since the '
                     r'last report \(last: tick \d+: \S+ \(driven by \w+\)\)',
                     lines['safety stage']), result.stdout
    assert lines['servos 24'].startswith('servos 24 servos, torque on'), result.stdout
    assert ' Hz, compute p99 ' in lines['sync cycle'], result.stdout


def test_list_controllers_answers_while_a_controller_switches(pony):
    # rqt_jtc asks from its GUI thread without a timeout: a switch in progress must not hold it
    switch = pony.node.create_client(SwitchController, f'{MANAGER}/switch_controller')
    lister = pony.node.create_client(ListControllers, f'{MANAGER}/list_controllers')
    assert switch.wait_for_service(timeout_sec=15) and lister.wait_for_service(timeout_sec=15)
    for _ in range(3):
        switching = switch.call_async(SwitchController.Request(
            deactivate_controllers=['head_trajectory'], activate_controllers=['head_trajectory'],
            strictness=SwitchController.Request.STRICT))
        listed = [lister.call_async(ListControllers.Request()) for _ in range(5)]
        wait_for(lambda: all(f.done() for f in listed) and switching.done(), 20,
                 message='the listings and the switch answered')
        assert all(len(f.result().controller) == 4 for f in listed)
        assert switching.result().ok
    assert pony.controllers()['head_trajectory'].state == 'active'
