"""The robot model: chains, resource groups, canonical joint order, kinematics (no rclpy)."""

from sweetie_motion.model.description import load_robot_description, robot_model_from_mapping
from sweetie_motion.model.robot_model import (
    ChainSpec, GroupSpec, JointInfo, JointLimits, RobotModel, RobotModelView,
)

__all__ = ['ChainSpec', 'GroupSpec', 'JointInfo', 'JointLimits', 'RobotModel', 'RobotModelView',
           'load_robot_description', 'robot_model_from_mapping']
