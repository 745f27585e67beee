"""
Launch the sweetie_motion motion process (the same as `sweetie-motion bringup`).

    ros2 launch sweetie_motion sweetie_motion.launch.py [config:=FILE] [namespace:=NS]

``config`` is a process config YAML (a name in the package's config/ or a path).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    """Run the motion process with the given config and namespace."""
    return LaunchDescription([
        DeclareLaunchArgument('config', default_value='sweetie_bot_motion.yaml',
                              description='process config (name in config/ or a path)'),
        DeclareLaunchArgument('namespace', default_value='sweetie_bot',
                              description='robot namespace of every node, topic and action'),
        Node(package='sweetie_motion', executable='sweetie-motion', output='screen',
             arguments=['bringup', '--config', LaunchConfiguration('config'),
                        '--namespace', LaunchConfiguration('namespace')]),
    ])
