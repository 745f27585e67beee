"""
The controller manager of a motion process, as ros2_control's tools expect one.

``ros2 control list_controllers`` and rqt_joint_trajectory_controller look for a node
``<namespace>/controller_manager`` serving ros2_control's services
(controller_manager_msgs). This node serves them for the motion process's own nodes: the
controllers and servo buses among its components, as the registry of component types says
(:mod:`sweetie_motion.controllers.catalog`: a user's ``module:Class`` controller too):

- ``list_controllers``: each controller with its lifecycle state, its ros2_control type
  (a trajectory controller is a ``joint_trajectory_controller/JointTrajectoryController``, a
  user's ``module:Class`` a ``module/Class``),
  ``<joint>/position`` of its chains as required interfaces and of the groups it owns now as
  claimed ones. Answered at once from what this process knows, in a callback group of its own
  (rqt_joint_trajectory_controller asks every second and waits without a timeout);
- ``switch_controller``, ``configure_controller``, ``cleanup_controller``: the controllers'
  lifecycle (deactivations first, as ros2_control does; STRICT: nothing changes unless every
  name is known);
- ``load_controller``: a controller of the process config is loaded already (ok); any other is
  refused, the log saying why; ``unload_controller``: refused (deactivate instead);
  ``reload_controller_libraries``: nothing to reload (ok); ``list_controller_types``: the
  built-in controller types and the process's own;
- ``list_hardware_components`` and ``list_hardware_interfaces``: the servo bus as the hardware.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from controller_manager_msgs.msg import ControllerState, HardwareComponentState, HardwareInterface
from controller_manager_msgs.srv import (
    CleanupController, ConfigureController, ListControllers, ListControllerTypes,
    ListHardwareComponents, ListHardwareInterfaces, LoadController, ReloadControllerLibraries,
    SwitchController, UnloadController,
)
from lifecycle_msgs.msg import State
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from sweetie_motion.controllers.catalog import (
    ComponentType, CONTROLLER, CONTROLLER_BASE_CLASS, CONTROLLER_TYPES, ControllerEntry,
    HARDWARE, hardware_interfaces, owned_by,
)
from sweetie_motion.errors import did_you_mean
from sweetie_motion.nodes.controllers import ControllerNode
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.motion_core import MotionCoreNode

#: lifecycle_msgs/State ids of the primary states, by label
STATE_IDS = {'unconfigured': State.PRIMARY_STATE_UNCONFIGURED,
             'inactive': State.PRIMARY_STATE_INACTIVE, 'active': State.PRIMARY_STATE_ACTIVE,
             'finalized': State.PRIMARY_STATE_FINALIZED}


class ControllerManagerNode(Node):
    """
    ros2_control's controller manager services over the nodes of one motion process.

    :param motion: the motion core node (the resource owners).
    :param components: every component node with its type (the registry's: the controllers
        and the servo buses among them, a user's ``module:Class`` controller too).
    :param kwargs: for rclpy's Node (namespace, context).
    """

    def __init__(self, motion: MotionCoreNode,
                 components: Sequence[Tuple[ManagedNode, ComponentType]], **kwargs) -> None:
        super().__init__('controller_manager', **kwargs)
        self.motion = motion
        self.controllers = [(n, t) for n, t in components if t.role == CONTROLLER]
        self.hardware = [(n, t) for n, t in components if t.role == HARDWARE]
        self.view = motion.process.view
        self.update_rate = int(round(1.0 / motion.process.period))
        listing = MutuallyExclusiveCallbackGroup()  # always answered, never behind a switch
        switching = MutuallyExclusiveCallbackGroup()
        for srv_type, name, callback, group in (
                (ListControllers, 'list_controllers', self._list_controllers, listing),
                (ListControllerTypes, 'list_controller_types', self._list_types, listing),
                (ListHardwareComponents, 'list_hardware_components', self._list_hardware,
                 listing),
                (ListHardwareInterfaces, 'list_hardware_interfaces', self._list_interfaces,
                 listing),
                (LoadController, 'load_controller', self._load, listing),
                (UnloadController, 'unload_controller', self._unload, listing),
                (ReloadControllerLibraries, 'reload_controller_libraries', self._reload,
                 listing),
                (SwitchController, 'switch_controller', self._switch, switching),
                (ConfigureController, 'configure_controller', self._configure, switching),
                (CleanupController, 'cleanup_controller', self._cleanup, switching)):
            self.create_service(srv_type, f'~/{name}', callback, callback_group=group)

    # --- what the process has ------------------------------------------------------------------

    def entries(self) -> List[ControllerEntry]:
        """Return every controller as ros2_control's tools see it, in config order."""
        owners = dict(self.motion.owners)
        return [self._entry(node, kind.name, owners) for node, kind in self.controllers]

    def _entry(self, node: ManagedNode, type_name: str, owners: Dict[str, str]
               ) -> ControllerEntry:
        name = node.get_name()
        chains = self._chains_of(node)
        resources = self._groups_of(chains)
        owned = owned_by(owners, name)
        # a controller's own list (what JTC's `joints` parameter says), else its chains'
        joints = node.controlled_joints() if isinstance(node, ControllerNode) else \
            self._joints_of(chains)
        return ControllerEntry(name, type_name, node.lifecycle_state, tuple(chains),
                               tuple(joints), tuple(resources), tuple(owned),
                               tuple(self._joints_of(owned)))

    def _chains_of(self, node: ManagedNode) -> List[str]:
        if isinstance(node, ControllerNode):
            return node.controlled_names()
        if node.has_parameter('chain'):  # the Cartesian motion node moves one chain
            return [node.get_parameter('chain').value or self.view.list_chains()[0]]
        return []

    def _groups_of(self, names: Sequence[str]) -> List[str]:
        chains = set(self.view.list_chains())
        groups = [self.view.get_chain_group(n) if n in chains else n for n in names]
        return list(dict.fromkeys(groups))

    def _joints_of(self, names: Sequence[str]) -> List[str]:
        """Return the joints of chains and groups, in the robot's order."""
        chains = set(self.view.list_chains())
        wanted = set()
        for name in names:
            wanted.update(self.view.list_joints(name) if name in chains
                          else self.view.get_group_joints(name))
        return [j for j in self.view.list_all_joints() if j in wanted]

    def _node(self, name: str) -> Optional[ManagedNode]:
        return next((n for n, _ in self.controllers if n.get_name() == name), None)

    def _unknown(self, name: str) -> str:
        known = [n.get_name() for n, _ in self.controllers]
        return (f'no controller named {name!r}{did_you_mean(name, known)} in this motion '
                f'process (controllers: {", ".join(known)})')

    # --- listing ---------------------------------------------------------------------------------

    def _list_controllers(self, request, response):
        for entry in self.entries():
            response.controller.append(ControllerState(
                name=entry.name, state=entry.state, type=entry.ros2_control_type,
                is_async=False, update_rate=self.update_rate,
                claimed_interfaces=entry.claimed_interfaces(),
                required_command_interfaces=entry.command_interfaces(),
                required_state_interfaces=entry.state_interfaces()))
        return response

    def _list_types(self, request, response):
        # the built-in controller types, then those of this process's own (module:Class)
        response.types = list(dict.fromkeys(
            list(CONTROLLER_TYPES.values()) + [kind.ros2_control for _, kind in self.controllers]))
        response.base_classes = [CONTROLLER_BASE_CLASS] * len(response.types)
        return response

    def _hardware_interfaces(self) -> Tuple[List[HardwareInterface], List[HardwareInterface]]:
        claimed = [i for e in self.entries() for i in e.claimed_interfaces()]
        active = any(node.lifecycle_state == 'active' for node, _ in self.hardware)
        commands, states = hardware_interfaces(self.motion.process.servo_joints(), claimed)
        return ([HardwareInterface(name=n, data_type='double', is_available=active,
                                   is_claimed=held) for n, held in commands],
                [HardwareInterface(name=n, data_type='double', is_available=active)
                 for n in states])

    def _list_hardware(self, request, response):
        commands, states = self._hardware_interfaces()
        for node, kind in self.hardware:
            label = node.lifecycle_state
            response.component.append(HardwareComponentState(
                name=node.get_name(), type='system', is_async=False,
                rw_rate=self.update_rate, class_type=kind.ros2_control,
                plugin_name=kind.ros2_control,
                state=State(id=STATE_IDS.get(label, State.PRIMARY_STATE_UNKNOWN), label=label),
                command_interfaces=commands, state_interfaces=states))
        return response

    def _list_interfaces(self, request, response):
        response.command_interfaces, response.state_interfaces = self._hardware_interfaces()
        return response

    # --- loading: the process config decides ---------------------------------------------------

    def _load(self, request, response):
        response.ok = self._node(request.name) is not None
        if not response.ok:
            self.get_logger().warning(
                f'load_controller {request.name!r} refused: {self._unknown(request.name)}; '
                'the controllers of a motion process are those of its process config')
        return response

    def _unload(self, request, response):
        response.ok = False
        self.get_logger().warning(
            f'unload_controller {request.name!r} refused: a motion process keeps the '
            'controllers of its process config; deactivate it instead (switch_controller)')
        return response

    def _reload(self, request, response):
        response.ok = True  # the controllers are classes of this process: nothing to reload
        return response

    # --- lifecycle -----------------------------------------------------------------------------

    def _switch(self, request, response):
        names = list(request.deactivate_controllers) + list(request.activate_controllers)
        unknown = [n for n in names if self._node(n) is None]
        if unknown and request.strictness == SwitchController.Request.STRICT:
            response.ok, response.message = False, self._unknown(unknown[0])
            self.get_logger().warning(f'switch_controller refused: {response.message}')
            return response
        failed = []
        for name, operational in ([(n, False) for n in request.deactivate_controllers]
                                  + [(n, True) for n in request.activate_controllers]):
            node = self._node(name)
            if node is None:
                continue
            done, state = node.make_operational(operational)
            if not done:
                failed.append(f'{name}: {state}')
        response.ok = not failed
        response.message = '; '.join(failed) if failed else 'switched'
        if failed:
            self.get_logger().warning(f'switch_controller: {response.message}')
        return response

    def _configure(self, request, response):
        node = self._node(request.name)
        if node is not None and node.lifecycle_state == 'unconfigured':
            node.trigger_configure()
        response.ok = node is not None and node.lifecycle_state in ('inactive', 'active')
        return response

    def _cleanup(self, request, response):
        node = self._node(request.name)
        if node is not None and node.lifecycle_state == 'inactive':
            node.trigger_cleanup()
        response.ok = node is not None and node.lifecycle_state == 'unconfigured'
        return response
