"""
`sweetie-motion status`: the nodes of a motion process, who owns what, and how it is going.

Built on what any ROS 2 tool can read: the controller manager's ``list_controllers`` and
``list_hardware_components`` (controller_manager_msgs, as ``ros2 control`` reads them), each
node's lifecycle state and ``controlled_chains`` parameter, the latched ``resource_owners``
and the ``/diagnostics`` of the safety stage, the servos and the sync cycle.
"""

import argparse
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from sweetie_motion.controllers.catalog import owned_by, status_table, StatusRow

#: how long the diagnostics (published once a second) are waited for [s]
DIAGNOSTICS_WAIT = 2.5
#: the lifecycle node every motion process has
MOTION_NODE = 'motion'


class StatusReader:
    """
    Read the state of the motion process in ``client``'s namespace.

    :param client: a :class:`~sweetie_motion.ros.motion_client.MotionClient` (its node and
        discovery).
    """

    def __init__(self, client) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sweetie_motion_msgs.msg import ResourceOwnership
        self.client = client
        self.node = client.node
        self.ns = client.ns
        self._lock = threading.Lock()
        self.owners: Optional[Dict[str, str]] = None   # None: no ownership message came yet
        self.diagnostics: Dict[str, str] = {}
        self._subscriptions = [
            self.node.create_subscription(ResourceOwnership, f'{self.ns}/resource_owners',
                                          self._on_owners, QoSProfile(
                                              depth=1, durability=DurabilityPolicy.
                                              TRANSIENT_LOCAL)),
            # the motion process keeps its last reports: they come as soon as this matches
            self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                          QoSProfile(depth=20, durability=DurabilityPolicy.
                                                     TRANSIENT_LOCAL))]

    def _on_owners(self, msg) -> None:
        with self._lock:
            self.owners = dict(zip(msg.resources, msg.owners))

    def _on_diagnostics(self, msg) -> None:
        prefix = f'{self.ns.strip("/")}: '
        with self._lock:
            for status in msg.status:
                if status.name.startswith(prefix):
                    self.diagnostics[status.name[len(prefix):]] = status.message

    def snapshot(self) -> Tuple[Optional[Dict[str, str]], Dict[str, str]]:
        """
        Return (resource owners, diagnostics messages by name) as received so far.

        The owners are None while no ownership message came.
        """
        with self._lock:
            owners = dict(self.owners) if self.owners is not None else None
            return owners, dict(self.diagnostics)

    def parameter_of(self, nodes: List[str], name: str) -> List[Any]:
        """Return parameter ``name`` of each node (None: it has none), asked all at once."""
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python
        responses = self.client.call_services(
            [(GetParameters, f'{self.ns}/{node}/get_parameters', GetParameters.Request(
                names=[name])) for node in nodes], 'the parameters of the controllers')
        return [parameter_value_to_python(r.values[0]) if r.values and r.values[0].type
                else None for r in responses]

    def lifecycle_states(self, nodes: List[str]) -> List[str]:
        """Return the lifecycle state labels of ``nodes``, asked all at once."""
        from lifecycle_msgs.srv import GetState
        return [r.current_state.label for r in self.client.call_services(
            [(GetState, f'{self.ns}/{node}/get_state', GetState.Request()) for node in nodes],
            'lifecycle states')]

    def lifecycle_nodes(self) -> List[str]:
        """
        Return the nodes of the namespace that have a lifecycle (get_state), sorted.

        A new client learns a process's node names from its ``ros_discovery_info``, which may
        come after the services that answered it: the motion process's :data:`MOTION_NODE`
        is waited for (the client's timeout), and with it come the names of every node of
        its process. Without it the table shows what was found.
        """
        from sweetie_motion.ros.motion_client import ClientError
        found: List[str] = []

        def named() -> bool:
            services = dict(self.node.get_service_names_and_types())
            names = {name for name, space in self.node.get_node_names_and_namespaces()
                     if space == self.ns}
            found[:] = sorted(n for n in names if f'{self.ns}/{n}/get_state' in services)
            return MOTION_NODE in found
        try:
            self.client.discover(named, f'the {MOTION_NODE} node')
        except ClientError:
            pass
        return found

    def wait_diagnostics(self, names: Tuple[str, ...]) -> None:
        """
        Wait (at most :data:`DIAGNOSTICS_WAIT`) until each of ``names`` has reported.

        The resource owners too: a latched message that comes a moment after the services
        answered (the status once printed no resources line at all).
        """
        deadline = time.monotonic() + DIAGNOSTICS_WAIT
        while time.monotonic() < deadline:
            with self._lock:
                if self.owners is not None and all(name in self.diagnostics
                                                   for name in names):
                    return
            time.sleep(0.05)


def read_status(reader: StatusReader) -> str:
    """Return the status table of the motion process ``reader`` looks at."""
    from controller_manager_msgs.srv import ListControllers, ListHardwareComponents
    manager = f'{reader.ns}/controller_manager'
    listed, components = reader.client.call_services(
        [(ListControllers, f'{manager}/list_controllers', ListControllers.Request()),
         (ListHardwareComponents, f'{manager}/list_hardware_components',
          ListHardwareComponents.Request())], 'controller manager')
    controllers, hardware = listed.controller, components.component
    switch = any(c.type.endswith('/TorqueMainSwitchController') for c in controllers)
    reader.wait_diagnostics(('safety stage', 'sync cycle') + (('servos',) if switch else ()))
    owners, diagnostics = reader.snapshot()
    rows = []
    names = [c.name for c in controllers]
    found = dict(zip(names, reader.parameter_of(names, 'controlled_chains')))
    lacking = [name for name in names if found[name] is None]   # a Cartesian node: one chain
    found.update(zip(lacking, reader.parameter_of(lacking, 'chain')))
    for controller in controllers:
        chains = found[controller.name]
        chains = [chains] if isinstance(chains, str) else list(chains or [])
        rows.append(StatusRow(controller.name, controller.type.split('/')[-1],
                              controller.state, ' '.join(c for c in chains if c),
                              ' '.join(owned_by(owners or {}, controller.name))))
    for component in hardware:
        rows.append(StatusRow(component.name, component.plugin_name.split('/')[-1],
                              component.state.label))
    listed = {row.name for row in rows}
    others = [name for name in reader.lifecycle_nodes() if name not in listed]
    for name, state in zip(others, reader.lifecycle_states(others)):
        rows.append(StatusRow(name, '', state))
    notes = [(what, diagnostics.get(what, f'no report within {DIAGNOSTICS_WAIT:g} s'))
             for what in ('safety stage', 'servos', 'sync cycle')]
    if owners is None:
        notes.insert(0, ('resources', f'no report within {DIAGNOSTICS_WAIT:g} s'))
    notes += sorted((what, message) for what, message in diagnostics.items()
                    if what.startswith('servo bus '))
    return status_table(rows, owners or {}, notes)


def show_status(args: argparse.Namespace) -> int:
    """Print the status table of the motion process in ``args.namespace``."""
    from sweetie_motion.command_line import notice
    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient(args.namespace, timeout=args.timeout, notice=notice) as client:
        print(read_status(StatusReader(client)))
    return 0
