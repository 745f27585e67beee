"""
A controller type of a user's own runs in the motion process without touching its registries.

test/helpers/hold_pose.py is all a user writes: a core (what it is made from, how it moves the
joints) and its node. The process config names it ``hold_pose:HoldPoseNode``; the bringup
imports it, the cycle process makes the core from the class that travels with its spec, the
node calls the core's own method through the typed proxy, and the robot moves (issue #21).
"""

import os

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


def test_a_controller_type_of_ones_own_moves_the_robot(tmp_path, domain_id, monkeypatch):
    helpers = os.path.join(HERE, 'helpers')
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join(
        p for p in (helpers, os.environ.get('PYTHONPATH', '')) if p))
    config = tmp_path / 'custom.yaml'
    config.write_text(CONFIG)
    with motion_process(str(config), NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(['eyes_holder'])
            wait_for(lambda: peer.owners.get('eyes') == 'eyes_holder', 10,
                     message='the eyes owned by the new controller')
            wait_for(lambda: abs(peer.position('eyes_yaw') - 0.3) < 1e-3 and
                     abs(peer.position('eyes_pitch') + 0.2) < 1e-3, 10,
                     message='the eyes at the pose')
            client = peer.node.create_client(Trigger, f'/{NS}/eyes_holder/at_pose')
            assert client.wait_for_service(timeout_sec=10)
            answer = call_idempotent(client, Trigger.Request(), 10)
            assert answer.success, answer.message


def test_a_type_that_does_not_import_is_refused_at_the_config_line(tmp_path):
    from sweetie_motion.nodes.bringup import COMPONENT_TYPES
    from sweetie_motion.process_config import ConfigError, load_process_config
    config = tmp_path / 'bad.yaml'
    for name, words in (('no_such_module:Node', "module 'no_such_module' does not import"),
                        ('os:path', "os has no node class 'path'"),
                        ('follow_joint_states', "did you mean 'follow_joint_state'")):
        config.write_text(CONFIG.replace('hold_pose:HoldPoseNode', name))
        with pytest.raises(ConfigError) as error:
            load_process_config(str(config), known_types=COMPONENT_TYPES)
        assert words in str(error.value) and 'bad.yaml:10:' in str(error.value), error.value
