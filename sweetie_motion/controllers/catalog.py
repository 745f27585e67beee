"""
The controllers of a motion process in ros2_control's terms, and the status table.

ros2_control's controller manager reports each controller's name, lifecycle state and type and
the joint interfaces it needs and holds; ``ros2 control list_controllers`` and
rqt_joint_trajectory_controller read that. Here a controller's chains (and resource groups)
become ``<joint>/position`` command interfaces, the groups it owns now its claimed interfaces,
and our component types ros2_control type names (a trajectory controller is a
``joint_trajectory_controller/JointTrajectoryController``: it speaks that controller's
interfaces). :func:`status_table` renders what ``sweetie-motion status`` prints. Imports no
rclpy.
"""

from dataclasses import dataclass
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

#: the ros2_control type of each controller type of a process config
CONTROLLER_TYPES: Dict[str, str] = {
    'joint_trajectory': 'joint_trajectory_controller/JointTrajectoryController',
    'follow_joint_state': 'sweetie_motion/FollowJointStateController',
    'torque_main_switch': 'sweetie_motion/TorqueMainSwitchController',
    'cartesian_motion': 'sweetie_motion/CartesianMotionController',
    'gripper': 'sweetie_motion/GripperController',
}
#: the ros2_control hardware plugin of each servo bus type of a process config
HARDWARE_TYPES: Dict[str, str] = {
    'virtual_robot': 'sweetie_motion/VirtualServoBus',
    'physics_robot': 'sweetie_motion/PhysicsServoBus',
    'herkulex_bus': 'sweetie_motion/HerkulexServoBus',
}
#: what every controller type derives from, in ros2_control's words
CONTROLLER_BASE_CLASS = 'controller_interface::ControllerInterface'
#: the interfaces of each joint the hardware offers (command: position only)
STATE_INTERFACES = ('position', 'velocity', 'effort')


@dataclass(frozen=True)
class ControllerEntry:
    """
    One controller of the motion process as the controller manager reports it.

    :param name: the controller's node name.
    :param type_name: its type in the process config ('joint_trajectory', ...).
    :param state: its lifecycle state ('unconfigured', 'inactive', 'active', 'finalized').
    :param chains: its ``controlled_chains`` (chains and chainless groups), in order.
    :param joints: the joints of those chains, in the robot's order.
    :param resources: the resource groups it may own.
    :param owned: the resource groups it owns now.
    :param owned_joints: the joints of those groups.
    """

    name: str
    type_name: str
    state: str
    chains: Tuple[str, ...] = ()
    joints: Tuple[str, ...] = ()
    resources: Tuple[str, ...] = ()
    owned: Tuple[str, ...] = ()
    owned_joints: Tuple[str, ...] = ()

    @property
    def ros2_control_type(self) -> str:
        """Return the type ros2_control's tools see ('sweetie_motion/<type>' when unmapped)."""
        return CONTROLLER_TYPES.get(self.type_name, f'sweetie_motion/{self.type_name}')

    def command_interfaces(self) -> List[str]:
        """Return the command interfaces it needs: ``<joint>/position`` of each joint."""
        return [f'{joint}/position' for joint in self.joints]

    def state_interfaces(self) -> List[str]:
        """Return the state interfaces it reads: position and velocity of each joint."""
        return [f'{joint}/{kind}' for joint in self.joints for kind in ('position', 'velocity')]

    def claimed_interfaces(self) -> List[str]:
        """Return the command interfaces it holds now (none unless active)."""
        if self.state != 'active':
            return []
        return [f'{joint}/position' for joint in self.owned_joints]


def owned_by(owners: Mapping[str, str], controller: str) -> List[str]:
    """Return the resource groups ``controller`` owns, in the order of ``owners``."""
    return [group for group, owner in owners.items() if owner == controller]


def hardware_interfaces(joints: Sequence[str], claimed: Iterable[str] = ()
                        ) -> Tuple[List[Tuple[str, bool]], List[str]]:
    """
    Return the hardware's command interfaces (name, claimed) and state interface names.

    :param joints: the joints the servo bus drives.
    :param claimed: the command interfaces some active controller holds.
    """
    held = set(claimed)
    commands = [(f'{joint}/position', f'{joint}/position' in held) for joint in joints]
    states = [f'{joint}/{kind}' for joint in joints for kind in STATE_INTERFACES]
    return commands, states


@dataclass(frozen=True)
class StatusRow:
    """One node of the motion process in the status table."""

    name: str
    kind: str
    state: str
    chains: str = ''
    owns: str = ''


def status_table(rows: Sequence[StatusRow], owners: Mapping[str, str],
                 notes: Sequence[Tuple[str, str]]) -> str:
    """
    Return the table ``sweetie-motion status`` prints.

    :param rows: the nodes, controllers first.
    :param owners: resource group -> owning controller ('' : free).
    :param notes: (what, state) lines under the table: the safety stage, the servos, the
        cycle.
    """
    from sweetie_motion.tables import table
    cells = [[r.name, r.kind or '-', r.state, r.chains or '-', r.owns or '-'] for r in rows]
    lines = [table(cells, ['node', 'type', 'state', 'chains', 'owns now'])]
    if owners:
        lines.append('')
        lines.append('resources: ' + ', '.join(f'{group} {owner or "free"}'
                                               for group, owner in owners.items()))
    if notes:
        lines.append('')
        width = max(len(what) for what, _ in notes)
        lines += [f'{what:<{width}}  {state}' for what, state in notes]
    return '\n'.join(lines)
