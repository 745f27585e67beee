"""
The component types of a motion process, and its controllers in ros2_control's terms.

:data:`COMPONENT_TYPES` is the one registry of the types a process config's component may have:
each built-in name with its node class and what ros2_control's tools see it as (a controller
type, a hardware plugin, or neither). :func:`component_type` resolves a component's ``type``,
a built-in name or a user's ``module:Class`` alike; the bringup creates the nodes from it and
the controller manager lists and switches the controllers among them, a user's too.

ros2_control's controller manager reports each controller's name, lifecycle state and type and
the joint interfaces it needs and holds; ``ros2 control list_controllers`` and
rqt_joint_trajectory_controller read that. Here a controller's chains (and resource groups)
become ``<joint>/position`` command interfaces, the groups it owns now its claimed interfaces,
and our component types ros2_control type names (a trajectory controller is a
``joint_trajectory_controller/JointTrajectoryController``: it speaks that controller's
interfaces; a user's ``module:Class`` is ``module/Class``, as a plugin name).
:func:`status_table` renders what ``sweetie-motion status`` prints. Imports no rclpy (the node
classes are named by their import path and imported when a process config asks for them).
"""

from dataclasses import dataclass
import importlib
from typing import Collection, Dict, Iterable, List, Mapping, Sequence, Tuple

from sweetie_motion.errors import ConfigError, did_you_mean

#: the role of a controller type: ``ros2 control list_controllers`` lists it, switches it
CONTROLLER = 'controller'
#: the role of a servo bus type: ``ros2 control list_hardware_components`` lists it
HARDWARE = 'hardware'


@dataclass(frozen=True)
class ComponentType:
    """
    A type a process config's component may have.

    :param name: the type as a process config names it ('joint_trajectory', 'module:Class').
    :param node: its node class as ``module:Class`` (imported by :meth:`node_class`).
    :param role: :data:`CONTROLLER`, :data:`HARDWARE` or '' (neither, to ros2_control).
    :param ros2_control: what ros2_control's tools see it as: the controller type or the
        hardware plugin ('' : neither).
    """

    name: str
    node: str
    role: str = ''
    ros2_control: str = ''

    def node_class(self) -> type:
        """Return the node class (its module imported now if it was not)."""
        module_name, _, class_name = self.node.partition(':')
        return getattr(importlib.import_module(module_name), class_name)


def _built_in(name: str, node: str, role: str = '', ros2_control: str = '') -> ComponentType:
    return ComponentType(name, f'sweetie_motion.nodes.{node}', role, ros2_control)


#: every built-in component type, by the name a process config gives it
COMPONENT_TYPES: Dict[str, ComponentType] = {t.name: t for t in (
    _built_in('virtual_robot', 'virtual_robot:VirtualRobotNode', HARDWARE,
              'sweetie_motion/VirtualServoBus'),
    _built_in('physics_robot', 'physics_robot:PhysicsRobotNode', HARDWARE,
              'sweetie_motion/PhysicsServoBus'),
    _built_in('follow_joint_state', 'controllers:FollowJointStateNode', CONTROLLER,
              'sweetie_motion/FollowJointStateController'),
    _built_in('torque_main_switch', 'controllers:TorqueMainSwitchNode', CONTROLLER,
              'sweetie_motion/TorqueMainSwitchController'),
    _built_in('joint_trajectory', 'trajectory:JointTrajectoryNode', CONTROLLER,
              'joint_trajectory_controller/JointTrajectoryController'),
    _built_in('trajectory_storage', 'storage:TrajectoryStorageNode'),
    _built_in('cartesian_motion', 'cartesian:CartesianMotionNode', CONTROLLER,
              'sweetie_motion/CartesianMotionController'),
    _built_in('gripper', 'gripper:GripperNode', CONTROLLER, 'sweetie_motion/GripperController'),
    _built_in('herkulex_bus', 'servo_bus:ServoBusNode', HARDWARE,
              'sweetie_motion/HerkulexServoBus'),
    _built_in('servo_ident', 'servo_ident:ServoIdentNode'),
)}
#: the ros2_control type of each built-in controller type (a view of :data:`COMPONENT_TYPES`)
CONTROLLER_TYPES: Dict[str, str] = {
    t.name: t.ros2_control for t in COMPONENT_TYPES.values() if t.role == CONTROLLER}
#: the ros2_control hardware plugin of each servo bus type (a view of :data:`COMPONENT_TYPES`)
HARDWARE_TYPES: Dict[str, str] = {
    t.name: t.ros2_control for t in COMPONENT_TYPES.values() if t.role == HARDWARE}
#: what every controller type derives from, in ros2_control's words
CONTROLLER_BASE_CLASS = 'controller_interface::ControllerInterface'
#: the interfaces of each joint the hardware offers (command: position only)
STATE_INTERFACES = ('position', 'velocity', 'effort')


def component_type(type_name: str) -> ComponentType:
    """
    Return the type of a process config's component: a built-in name or ``module:Class``.

    ``module:Class`` names a node class of your own (as a ros2_control plugin name does): the
    module is imported (it must be importable by the motion process and its cycle process, e.g.
    on ``PYTHONPATH``), and the class must be a node class of the package's kind (it has a
    ``PARAMETERS`` table). It is a controller when its node names a controller core (a
    ``ControllerNode``): ros2_control's tools see it as ``module/Class``.

    :raises ConfigError: an unknown name, a module that does not import, not a node class.
    """
    if type_name in COMPONENT_TYPES:
        return COMPONENT_TYPES[type_name]
    if ':' not in type_name:
        raise unknown_type(type_name, COMPONENT_TYPES)
    cls = _user_node_class(type_name)
    # imported here: reading a config of built-in types needs not the cycle's modules
    from sweetie_motion.controllers.base import ControllerCore
    core = getattr(cls, 'COMPONENT', None)
    if isinstance(core, type) and issubclass(core, ControllerCore):
        return ComponentType(type_name, type_name, CONTROLLER, type_name.replace(':', '/'))
    return ComponentType(type_name, type_name)


def unknown_type(type_name: str, known: Collection[str]) -> ConfigError:
    """Return the error of a type name that is neither one of ``known`` nor ``module:Class``."""
    return ConfigError(f'unknown type {type_name!r}{did_you_mean(type_name, known)} '
                       f'(known: {", ".join(sorted(known))}, or module:Class for a '
                       'node class of your own)')


def _user_node_class(type_name: str) -> type:
    """Import a user's node class, ``module:Class``; refuse a module or class that is not one."""
    module_name, _, class_name = type_name.partition(':')
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: B902 -- whatever the import raised, say it
        raise ConfigError(f'type {type_name!r}: module {module_name!r} does not import: '
                          f'{type(error).__name__}: {error}') from None
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not isinstance(getattr(cls, 'PARAMETERS', None), list):
        raise ConfigError(f'type {type_name!r}: {module_name} has no node class {class_name!r} '
                          '(a class with a PARAMETERS table, e.g. a ControllerNode)')
    return cls


def node_classes() -> Dict[str, type]:
    """Return the node class of each built-in type, by name (their modules imported now)."""
    return {name: kind.node_class() for name, kind in COMPONENT_TYPES.items()}


def ros2_control_name(type_name: str) -> str:
    """
    Return the type ros2_control's tools see for a component type, without importing it.

    A built-in type's from the registry, ``module:Class`` as ``module/Class``, any other name
    as ``sweetie_motion/<name>``.
    """
    if type_name in COMPONENT_TYPES and COMPONENT_TYPES[type_name].ros2_control:
        return COMPONENT_TYPES[type_name].ros2_control
    if ':' in type_name:
        return type_name.replace(':', '/', 1)
    return f'sweetie_motion/{type_name}'


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
        return ros2_control_name(self.type_name)

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
