"""
The gripper node (R-CART-3): clamp, release or hold the arm's gripper.

``~/command`` (sweetie_motion_msgs/srv/Gripper) takes ``clamp``, ``release`` or ``hold`` and
answers when the jaws are there; ``~/state`` (std_msgs/String, latched) says ``released``,
``clamped`` or ``holding``. On the virtual robot (the only gripper this package drives today)
the jaws take ``closing_time`` to close or open; a hardware gripper would implement the same
interface.
"""

from typing import List

from rclpy.callback_groups import ReentrantCallbackGroup
from std_msgs.msg import String
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.motion_core import LATCHED
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion_msgs.srv import Gripper

#: what each command leads to, and from which states it may come
TRANSITIONS = {'clamp': ('clamped', ('released', 'clamped', 'holding')),
               'release': ('released', ('released', 'clamped', 'holding')),
               'hold': ('holding', ('clamped', 'holding'))}


class GripperNode(ManagedNode):
    """A simulated two-jaw gripper as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('closing_time', 0.3, 'Time the jaws take to close or open [s].',
                      low=0.0, high=10.0, dynamic=True),
    )

    def __init__(self, process: MotionProcess, name: str = 'gripper', **kwargs) -> None:
        self.process = process
        super().__init__(name, **kwargs)
        self._group = ReentrantCallbackGroup()
        self._entities: List = []
        self.state = 'released'

    def configure_component(self) -> None:
        self.read_parameters()
        self._state_pub = self.make_publisher(String, '~/state', LATCHED)
        self._service = self.create_service(Gripper, '~/command', self._command,
                                            callback_group=self._group)
        self._entities = [self._state_pub, self._service]
        self._publish()

    def cleanup_component(self) -> None:
        self.destroy_entities(self._entities)
        self._entities = []

    def _publish(self) -> None:
        self._state_pub.publish(String(data=self.state))

    async def _command(self, request, response):
        command = request.command.strip().lower()
        if self.lifecycle_state != 'active':
            response.success, response.state = False, self.state
            response.message = f'{self.get_name()} is not active ({self.lifecycle_state})'
            return response
        if command not in TRANSITIONS:
            response.success, response.state = False, self.state
            response.message = (f'unknown gripper command {request.command!r} (known: '
                                f'{", ".join(TRANSITIONS)})')
            return response
        target, allowed = TRANSITIONS[command]
        if self.state not in allowed:
            response.success, response.state = False, self.state
            response.message = f'cannot {command}: the gripper is {self.state}'
            return response
        moves = (target == 'released') != (self.state == 'released')
        closing = self.get_parameter('closing_time').value
        if moves and closing > 0:
            await self.sleep(closing, self._group)
        self.state = target
        self._publish()
        response.success, response.state = True, self.state
        response.message = f'gripper {self.state}'
        return response
