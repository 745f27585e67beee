"""
The physics robot node: the robot on a floor in MuJoCo as the motion process's servo bus.

`sweetie-motion bringup --bus physics` puts it where the virtual robot was
(:class:`~sweetie_motion.physics.robot.PhysicsRobotComponent` on the cycle side steps the
simulation in the cycle's input stage). This node publishes what the cycle's joint states do
not carry, from a thread of its own at ``publish_rate``: the root link's pose on ``/tf``
(``odom`` -> ``base_link``) and on ``~/base_pose`` (geometry_msgs/PoseStamped), the feet's
contacts on ``~/contacts`` (sweetie_motion_msgs/FootContacts); ``~/reset`` (std_srvs/Trigger)
stands the robot up again.
"""

import threading
import time
from typing import List, Optional

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.time import Time
from std_srvs.srv import Trigger
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.lifecycle import ComponentNode
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterError, ParameterSpec
from sweetie_motion.physics.robot import (
    PhysicsRobotComponent, PhysicsRobotSpec, ReadPhysicsState, ResetPhysics,
)
from sweetie_motion.ros.conversions import PhysicsMessages

#: /tf as tf2_ros's TransformBroadcaster has it (DynamicBroadcasterQoS)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)


def frame_name(value: str) -> Optional[str]:
    """Check a tf frame id: not empty, no leading slash, no spaces (a validator)."""
    if not value:
        return 'must not be empty'
    if value.startswith('/') or any(c.isspace() for c in value):
        return f'{value!r} is not a tf frame id (no leading slash, no spaces)'
    return None


class PhysicsRobotNode(ComponentNode):
    """The physics robot (its simulated servo bus) as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('publish_rate', 50.0, 'Rate of the base pose, /tf and the contacts '
                      '[Hz]; at most the cycle rate.', low=1.0, high=1000.0),
        ParameterSpec('max_catch_up', 2, 'After lost ticks, the most simulated time one tick '
                      'makes up [cycle periods]; the rest is dropped (the robot lags the wall '
                      'clock) so that a stalled machine never makes a tick longer.',
                      low=1, high=50),
        ParameterSpec('world_frame', 'odom', 'The fixed frame of the base pose and contacts.',
                      check=frame_name),
        ParameterSpec('base_frame', 'base_link', "The robot's root link frame (child of "
                      'world_frame on /tf).', check=frame_name),
        ParameterSpec('publish_tf', True, 'Publish world_frame -> base_frame on /tf.'),
    )

    def __init__(self, process: MotionProcess, name: str = 'physics_robot', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._publisher: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._publishers: List = []

    def configure_component(self) -> None:
        values = self.read_parameters()
        rate = 1.0 / self.process.period
        if values['publish_rate'] > rate + 1e-9:
            raise ParameterError(f'publish_rate: must be <= the cycle rate {rate:g} Hz, got '
                                 f'{values["publish_rate"]:g}')
        if values['world_frame'] == values['base_frame']:
            raise ParameterError(f'base_frame: must differ from world_frame '
                                 f'({values["world_frame"]!r})')
        from geometry_msgs.msg import PoseStamped
        from sweetie_motion_msgs.msg import FootContacts
        from tf2_msgs.msg import TFMessage
        # building the physics model (collision meshes, two MuJoCo compiles) takes a second or
        # two; a loaded machine may take several
        self.create_component(PhysicsRobotComponent, PhysicsRobotSpec(values['max_catch_up']),
                              timeout=60.0)
        self._tf = self.make_publisher(TFMessage, '/tf', TF_QOS) if values['publish_tf'] \
            else None
        self._pose = self.make_publisher(PoseStamped, '~/base_pose', 10)
        self._contacts = self.make_publisher(FootContacts, '~/contacts', 10)
        self._entities = [p for p in (self._tf, self._pose, self._contacts) if p is not None]
        self._entities.append(self.create_service(
            Trigger, '~/reset', self._on_reset,
            callback_group=MutuallyExclusiveCallbackGroup()))

    def activate_component(self) -> None:
        super().activate_component()
        self._stop.clear()
        self._publisher = threading.Thread(target=self._publish_loop, name='physics_state',
                                           daemon=True)
        self._publisher.start()

    def deactivate_component(self) -> None:
        self._stop_publishing()
        super().deactivate_component()

    def cleanup_component(self) -> None:
        self._stop_publishing()
        super().cleanup_component()

    def _stop_publishing(self) -> None:
        self._stop.set()
        if self._publisher is not None:
            self._publisher.join(2.0)
            self._publisher = None

    def _on_reset(self, request, response):
        if not self._created:
            response.success, response.message = False, (
                f'the physics robot is not configured (state {self.lifecycle_state})')
            return response
        try:
            response.message = self.host.run(ResetPhysics(self.get_name()), 2.0)
            response.success = True
            self.get_logger().info(f'reset: {response.message}')
        except SweetieMotionError as error:
            response.success, response.message = False, f'reset failed: {error}'
        return response

    def _publish_loop(self) -> None:
        """Publish the base pose, /tf and the contacts at publish_rate until stopped."""
        interval = 1.0 / self.values['publish_rate']
        read_state = ReadPhysicsState(self.get_name())
        messages: Optional[PhysicsMessages] = None
        clock = self.get_clock()
        deadline = time.monotonic()
        while not self._stop.is_set():
            deadline = max(deadline + interval, time.monotonic())
            if self._stop.wait(deadline - time.monotonic()):
                return
            try:
                state = self.host.run(read_state, 2.0)
            except SweetieMotionError as error:   # the cycle process is gone, or busy
                self.get_logger().warning(f'physics state unavailable: {error}',
                                          throttle_duration_sec=10.0)
                continue
            # stamped with its tick's time on the ROS clock, as joint_states are
            ros_now = clock.now()
            age = max(0.0, time.monotonic() - state.stamp)
            stamp = Time(nanoseconds=ros_now.nanoseconds - int(age * 1e9),
                         clock_type=ros_now.clock_type).to_msg()
            if messages is None:
                messages = PhysicsMessages(self.values['world_frame'],
                                           self.values['base_frame'], state.legs)
            messages.fill(state, stamp)
            try:
                if self._tf is not None:
                    self._tf.publish(messages.tf)
                self._pose.publish(messages.pose)
                self._contacts.publish(messages.contacts)
            except Exception as error:  # noqa: B902 -- e.g. the context shutting down
                if not self.context.ok():
                    return
                self.get_logger().warning(f'publishing the physics state failed: {error}',
                                          throttle_duration_sec=10.0)
