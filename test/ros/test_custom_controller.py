"""
A controller type of a user's own runs in the motion process without touching its registry.

test/helpers/hold_pose.py is all a user writes: a core (what it is made from, how it moves the
joints) and its node. The process config names it ``hold_pose:HoldPoseNode``; the bringup
imports it, the cycle process makes the core from the class that travels with its spec, the
node calls the core's own method through the typed proxy, and the robot moves (issue #21).
ros2_control's tools see it as every other controller: the controller manager lists it with
its type and switches it (issue #36).
"""

import os

from controller_manager_msgs.srv import ListControllers, ListControllerTypes, SwitchController
from motion_process import motion_process, MotionClient
import pytest
from ros_util import call_idempotent, HERE, wait_for
from std_srvs.srv import Trigger

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_custom'
CONFIG = """sweetie_motion:
  namespace: pony_custom
  robot: sweetie_bot.yaml
  period: 0.01
  autostart: true
  components:
    - name: virtual_robot
      type: virtual_robot
    - name: eyes_holder
      type: hold_pose:HoldPoseNode
      parameters:
        controlled_chains: [eyes]
        pose: [0.3, -0.2]
        speed: 1.0
"""


@pytest.fixture(scope='module')
def custom(tmp_path_factory):
    """Run the motion process of CONFIG (hold_pose importable) and a peer; yield the peer."""
    from domains import own_domain
    config = tmp_path_factory.mktemp('custom') / 'custom.yaml'
    config.write_text(CONFIG)
    helpers = os.path.join(HERE, 'helpers')
    with pytest.MonkeyPatch.context() as patch, own_domain() as domain:
        patch.setenv('PYTHONPATH', os.pathsep.join(
            p for p in (helpers, os.environ.get('PYTHONPATH', '')) if p))
        with motion_process(str(config), NS):
            with MotionClient(NS, domain) as peer:
                peer.wait_ready(['eyes_holder'])
                yield peer


def test_a_controller_type_of_ones_own_moves_the_robot(custom):
    peer = custom
    wait_for(lambda: peer.owners.get('eyes') == 'eyes_holder', 10,
             message='the eyes owned by the new controller')
    wait_for(lambda: abs(peer.position('eyes_yaw') - 0.3) < 1e-3 and
             abs(peer.position('eyes_pitch') + 0.2) < 1e-3, 10,
             message='the eyes at the pose')
    client = peer.node.create_client(Trigger, f'/{NS}/eyes_holder/at_pose')
    assert client.wait_for_service(timeout_sec=10)
    answer = call_idempotent(client, Trigger.Request(), 10)
    assert answer.success, answer.message


def manager_call(peer: MotionClient, srv_type, name: str, request=None):
    """Call a service of the process's controller manager; return the response."""
    client = peer.node.create_client(srv_type, f'/{NS}/controller_manager/{name}')
    assert client.wait_for_service(timeout_sec=15), f'{name} not available'
    future = client.call_async(request if request is not None else srv_type.Request())
    wait_for(future.done, 15, message=f'{name} answered')
    return future.result()


def listed(peer: MotionClient) -> dict:
    """Return the controllers ``list_controllers`` lists, by name."""
    client = peer.node.create_client(ListControllers, f'/{NS}/controller_manager/'
                                     'list_controllers')
    assert client.wait_for_service(timeout_sec=15)
    answer = call_idempotent(client, ListControllers.Request(), 15)
    return {c.name: c for c in answer.controller}


def switch(peer: MotionClient, **names) -> None:
    """Switch controllers (``activate_controllers=[...]`` etc.), STRICT; assert it worked."""
    answer = manager_call(peer, SwitchController, 'switch_controller', SwitchController.Request(
        strictness=SwitchController.Request.STRICT, **names))
    assert answer.ok, answer.message


def test_the_controller_manager_lists_and_switches_a_controller_of_ones_own(custom):
    peer = custom
    holder = listed(peer)['eyes_holder']
    assert holder.type == 'hold_pose/HoldPoseNode'
    assert holder.state == 'active'
    assert holder.required_command_interfaces == ['eyes_yaw/position', 'eyes_pitch/position']
    types = manager_call(peer, ListControllerTypes, 'list_controller_types').types
    assert 'hold_pose/HoldPoseNode' in types
    switch(peer, deactivate_controllers=['eyes_holder'])
    assert listed(peer)['eyes_holder'].state == 'inactive'
    wait_for(lambda: peer.owners.get('eyes') != 'eyes_holder', 10,
             message='the eyes released by the deactivated controller')
    switch(peer, activate_controllers=['eyes_holder'])
    assert listed(peer)['eyes_holder'].state == 'active'
    wait_for(lambda: peer.owners.get('eyes') == 'eyes_holder', 10,
             message='the eyes owned again by the reactivated controller')


def test_a_type_that_does_not_import_is_refused_at_the_config_line(tmp_path):
    from sweetie_motion.controllers.catalog import node_classes
    from sweetie_motion.process_config import ConfigError, load_process_config
    config = tmp_path / 'bad.yaml'
    for name, words in (('no_such_module:Node', "module 'no_such_module' does not import"),
                        ('os:path', "os has no node class 'path'"),
                        ('follow_joint_states', "did you mean 'follow_joint_state'")):
        config.write_text(CONFIG.replace('hold_pose:HoldPoseNode', name))
        with pytest.raises(ConfigError) as error:
            load_process_config(str(config), known_types=node_classes())
        assert words in str(error.value) and 'bad.yaml:10:' in str(error.value), error.value
