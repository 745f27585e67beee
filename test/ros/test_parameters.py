"""
Every parameter of every node reads through the parameter services (`ros2 param get/dump`).

Three motion processes as users start them (the pony on the virtual robot, the pony on the
simulated serial servos with identification, the winding arm with Cartesian motion and the
gripper) cover every node type; from another process every node's parameters are listed and
read, as ``ros2 param dump`` does: none may come back unset (the empty lists included).
"""

from pathlib import Path

from motion_process import motion_process, MotionClient, unreadable_parameters
import pytest
from ros_util import HERE, wait_for

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def servo_config(tmp: Path) -> str:
    text = (Path(HERE) / 'config' / 'servo_test.yaml').read_text()
    text = text.replace('sim: {models: MODELS_FILE, seed: 1}', 'sim: {seed: 1}').replace(
        'IDENT_FILE', str(tmp / 'identified.yaml')).replace('STORAGE_DIR', str(tmp / 'store'))
    path = tmp / 'servo_test.yaml'
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize('config, nodes', [
    ('sweetie_bot_motion.yaml', ['motion', 'virtual_robot', 'torque_main_switch',
                                 'follow_joint_state', 'joint_trajectory',
                                 'trajectory_storage']),
    ('servos', ['motion', 'servo_bus', 'servo_ident', 'joint_trajectory']),
    ('winding_arm_motion.yaml', ['motion', 'virtual_robot', 'joint_trajectory', 'cartesian',
                                 'gripper']),
])
def test_every_parameter_of_every_node_reads(config, nodes, domain_id, tmp_path):
    ns = f'params_{config.split(".")[0]}'
    path = servo_config(tmp_path) if config == 'servos' else config
    with motion_process(path, ns):
        with MotionClient(ns, domain_id) as peer:
            peer.wait_ready(nodes, timeout=60)

            def listed():
                found = {name for name, space in peer.node.get_node_names_and_namespaces()
                         if space == f'/{ns}'}
                return found if set(nodes) <= found else None
            present = wait_for(listed, 15, message='the nodes discovered')
            assert not unreadable_parameters(peer, ns, sorted(present)), \
                unreadable_parameters(peer, ns, sorted(present))
