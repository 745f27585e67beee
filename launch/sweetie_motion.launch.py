r"""
Launch the sweetie_motion motion process (the same as `sweetie-motion bringup`).

    ros2 launch sweetie_motion sweetie_motion.launch.py [config:=FILE] [namespace:=NS] \\
        [params_file:=PARAMS.yaml]

``config`` is a process config YAML (a name in the package's config/ or a path);
``params_file`` a ROS parameters file whose values win over the config's, with node-name keys
(``/sweetie_bot/follow_joint_state:``, ``/**:``), passed on as ``parameters=[...]`` (launch_ros
hands it to the process as ``--ros-args --params-file``). A launch file of your own can give
``parameters=[{'activation_delay': 2.5}]`` the same way: a dictionary is every node's (``/**``).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def motion_process(context, *args, **kwargs):
    """Return the bringup node, with the parameters file when one is given."""
    params_file = LaunchConfiguration('params_file').perform(context)
    return [Node(package='sweetie_motion', executable='sweetie-motion', output='screen',
                 arguments=['bringup', '--config', LaunchConfiguration('config'),
                            '--namespace', LaunchConfiguration('namespace')],
                 parameters=[params_file] if params_file else None)]


def generate_launch_description():
    """Run the motion process with the given config, namespace and parameters."""
    return LaunchDescription([
        DeclareLaunchArgument('config', default_value='sweetie_bot_motion.yaml',
                              description='process config (name in config/ or a path)'),
        DeclareLaunchArgument('namespace', default_value='sweetie_bot',
                              description='robot namespace of every node, topic and action'),
        DeclareLaunchArgument('params_file', default_value='',
                              description='ROS parameters file (node-name keys) whose values '
                                          'win over the process config; empty: none'),
        OpaqueFunction(function=motion_process),
    ])
