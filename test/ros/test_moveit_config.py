"""config/moveit_controllers.yaml points MoveIt 2 at the controllers of the default process."""

from sweetie_motion.model import load_robot_description
from sweetie_motion.paths import config_path
from sweetie_motion.process_config import load_process_config
import yaml


def test_moveit_controllers_match_the_motion_process():
    moveit = yaml.safe_load(config_path('moveit_controllers.yaml').read_text())
    assert moveit['moveit_controller_manager'] == \
        'moveit_simple_controller_manager/MoveItSimpleControllerManager'
    manager = moveit['moveit_simple_controller_manager']
    process = load_process_config('sweetie_bot_motion.yaml')
    model = load_robot_description(process.robot)
    model.configure()
    for name in manager['controller_names']:
        controller = manager[name]
        assert controller['type'] == 'FollowJointTrajectory'
        assert controller['action_ns'] == 'follow_joint_trajectory'
        component = process.component(name)
        assert component is not None and component.type_name == 'joint_trajectory', name
        chains = component.parameters['controlled_chains']
        driven = {j for c in chains for j in (model.list_joints(c) if c in model.list_chains()
                                              else model.get_group_joints(c))}
        for joint in controller['joints']:
            assert joint in driven, f'{name} does not drive {joint}'
            assert not model.is_virtual(joint), f'{joint} is virtual: MoveIt must not plan it'
    assert sum(manager[n].get('default', False) for n in manager['controller_names']) == 1
