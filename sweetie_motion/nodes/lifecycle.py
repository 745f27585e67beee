"""The base of every lifecycle node of sweetie_motion."""

from typing import Any

from rclpy._rclpy_pybind11 import RCLError
from rclpy.lifecycle import LifecycleNode


class ManagedNode(LifecycleNode):
    """
    A LifecycleNode whose change_state service survives invalid requests.

    rclpy (Jazzy) raises RCLError from inside the change_state service when a client asks for
    a transition that does not exist in the current state (`ros2 lifecycle set` to deactivate
    an inactive node, say), and the exception ends the executor and the whole process. Here
    such a request is answered with success = False and logged, as rclcpp does.
    """

    def __init__(self, node_name: str, **kwargs: Any) -> None:
        super().__init__(node_name, **kwargs)
        service = getattr(self, '_service_change_state', None)
        if service is not None:
            service.callback = self._guard_change_state(service.callback)

    def _guard_change_state(self, handler):
        def change_state(request, response):
            try:
                return handler(request, response)
            except RCLError as error:
                self.get_logger().warning(
                    f'refused lifecycle transition id={request.transition.id} '
                    f'label={request.transition.label!r} from state '
                    f'{self._state_machine.current_state[1]!r}: {error}')
                response.success = False
                return response
        return change_state
