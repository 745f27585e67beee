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
from typing import Any, Dict, List, Tuple

from sweetie_motion.controllers.catalog import owned_by, status_table, StatusRow

#: how long the diagnostics (published once a second) are waited for [s]
DIAGNOSTICS_WAIT = 2.5


class StatusReader:
    """
    Read the state of the motion process in ``client``'s namespace.

    :param client: a :class:`~sweetie_motion.ros.motion_client.MotionClient` (its node and
        discovery).
    """

    def __init__(self, client) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from sweetie_motion.nodes.motion_core import LATCHED
        from sweetie_motion_msgs.msg import ResourceOwnership
        self.client = client
        self.node = client.node
        self.ns = client.ns
        self._lock = threading.Lock()
        self.owners: Dict[str, str] = {}
        self.diagnostics: Dict[str, str] = {}
        self._subscriptions = [
            self.node.create_subscription(ResourceOwnership, f'{self.ns}/resource_owners',
                                          self._on_owners, LATCHED),
            self.node.create_subscription(DiagnosticArray, '/diagnostics',
                                          self._on_diagnostics, 20)]

    def _on_owners(self, msg) -> None:
        with self._lock:
            self.owners = dict(zip(msg.resources, msg.owners))

    def _on_diagnostics(self, msg) -> None:
        prefix = f'{self.ns.strip("/")}: '
        with self._lock:
            for status in msg.status:
                if status.name.startswith(prefix):
                    self.diagnostics[status.name[len(prefix):]] = status.message

    def snapshot(self) -> Tuple[Dict[str, str], Dict[str, str]]:
        """Return (resource owners, diagnostics messages by name) as received so far."""
        with self._lock:
            return dict(self.owners), dict(self.diagnostics)

    def parameter(self, node: str, name: str) -> Any:
        """Return a parameter's value of a node of the process (None if it has none)."""
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python
        response = self.client.call_service(
            GetParameters, f'{self.ns}/{node}/get_parameters',
            GetParameters.Request(names=[name]), f'{node} parameters')
        values = list(response.values)
        return parameter_value_to_python(values[0]) if values and values[0].type else None

    def lifecycle_nodes(self) -> List[str]:
        """Return the nodes of the namespace that have a lifecycle (get_state), sorted."""
        services = dict(self.node.get_service_names_and_types())
        names = [name for name, space in self.node.get_node_names_and_namespaces()
                 if space == self.ns]
        return sorted(n for n in set(names) if f'{self.ns}/{n}/get_state' in services)

    def lifecycle_state(self, node: str) -> str:
        """Return a node's lifecycle state label."""
        from lifecycle_msgs.srv import GetState
        return self.client.call_service(GetState, f'{self.ns}/{node}/get_state',
                                        what=f'{node} state').current_state.label

    def wait_diagnostics(self, names: Tuple[str, ...]) -> None:
        """Wait (at most :data:`DIAGNOSTICS_WAIT`) until each of ``names`` has reported."""
        deadline = time.monotonic() + DIAGNOSTICS_WAIT
        while time.monotonic() < deadline:
            with self._lock:
                if all(name in self.diagnostics for name in names):
                    return
            time.sleep(0.05)


def read_status(reader: StatusReader) -> str:
    """Return the status table of the motion process ``reader`` looks at."""
    from controller_manager_msgs.srv import ListControllers, ListHardwareComponents
    manager = f'{reader.ns}/controller_manager'
    controllers = reader.client.call_service(
        ListControllers, f'{manager}/list_controllers', what='controller manager').controller
    hardware = reader.client.call_service(
        ListHardwareComponents, f'{manager}/list_hardware_components',
        what='controller manager').component
    switch = any(c.type.endswith('/TorqueMainSwitchController') for c in controllers)
    reader.wait_diagnostics(('safety stage', 'sync cycle') + (('servos',) if switch else ()))
    owners, diagnostics = reader.snapshot()
    rows = []
    for controller in controllers:
        chains = reader.parameter(controller.name, 'controlled_chains')
        if chains is None:
            chains = reader.parameter(controller.name, 'chain')
        chains = [chains] if isinstance(chains, str) else list(chains or [])
        rows.append(StatusRow(controller.name, controller.type.split('/')[-1],
                              controller.state, ' '.join(c for c in chains if c),
                              ' '.join(owned_by(owners, controller.name))))
    for component in hardware:
        rows.append(StatusRow(component.name, component.plugin_name.split('/')[-1],
                              component.state.label))
    listed = {row.name for row in rows}
    for name in reader.lifecycle_nodes():
        if name not in listed:
            rows.append(StatusRow(name, '', reader.lifecycle_state(name)))
    notes = [(what, diagnostics.get(what, f'no report within {DIAGNOSTICS_WAIT:g} s'))
             for what in ('safety stage', 'servos', 'sync cycle')]
    notes += sorted((what, message) for what, message in diagnostics.items()
                    if what.startswith('servo bus '))
    return status_table(rows, owners, notes)


def show_status(args: argparse.Namespace) -> int:
    """Print the status table of the motion process in ``args.namespace``."""
    from sweetie_motion.command_line import notice
    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient(args.namespace, timeout=args.timeout, notice=notice) as client:
        print(read_status(StatusReader(client)))
    return 0
