"""
The editor's ROS side: an rclpy node spun in a background thread, talking to the GUI by signals.

Nothing here touches a widget. High-rate data (joint_states) is kept in a buffer that the GUI
drains with a QTimer; rare events (service answers, action results, stored trajectories) reach
the GUI as Qt signals, which Qt delivers in the GUI thread.
"""

import threading
from typing import Dict, List, Optional, Sequence, Tuple

from PyQt5.QtCore import pyqtSignal, QObject


class EditorBridge(QObject):
    """
    The rclpy node of the trajectory editor.

    :param args: ROS arguments (``--ros-args ...``) for rclpy.init.
    """

    #: (succeeded, error_code, error_string) of an executed trajectory
    executed = pyqtSignal(bool, int, str)
    #: (time_from_start, duration) while a trajectory runs
    progress = pyqtSignal(float, float)
    #: (torque_off, message) after set_torque_off answered or diagnostics changed
    servos = pyqtSignal(bool, str)
    #: names of the stored trajectories
    listed = pyqtSignal(list)
    #: (name, goal or None, error message) after a load
    loaded = pyqtSignal(str, object, str)
    #: (name, succeeded, message) after a save
    saved = pyqtSignal(str, bool, str)
    #: a message for the status bar
    message = pyqtSignal(str)

    def __init__(self, args: Optional[List[str]] = None) -> None:
        super().__init__()
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        self._rclpy = rclpy
        self.context = Context()
        rclpy.init(args=args, context=self.context)
        self.node = rclpy.create_node('trajectory_editor', context=self.context)
        self._declare_parameters()
        self._lock = threading.Lock()
        self._pose: Optional[Tuple[List[str], List[float]]] = None
        self._goal_handle = None
        self._setup_entities()
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name='editor_ros', daemon=True)
        self._thread.start()

    # --- parameters ----------------------------------------------------------------------------

    def _declare_parameters(self) -> None:
        from rcl_interfaces.msg import ParameterDescriptor
        table = {
            'namespace': ('sweetie_bot', 'Robot namespace of the motion process.'),
            'trajectory_storage': ('joint_trajectory',
                                   'Parameter namespace of the stored trajectories.'),
            'storage_node': ('trajectory_storage', 'The trajectory storage node.'),
            'legs': (['leg1', 'leg2', 'leg3', 'leg4'], 'Chains that can be support legs.'),
            'joint_states_topic': ('joint_states', 'Where poses are taken from.'),
            'set_topic': ('joint_states_set', 'Set robot pose (FollowJointState input).'),
            'marker_topic': ('joint_states_marker_set', 'The selected row, for displays.'),
            'support_topic': ('support_state_override', 'Support legs (SupportState).'),
            'torque_service': ('set_torque_off', 'The TorqueMainSwitch service.'),
            'controller': ('joint_trajectory', 'The trajectory controller Execute uses.'),
            'robot_description': ('sweetie_bot.yaml',
                                  'Robot description for limits and the robot view.'),
            'backup_file': ('~/.local/share/sweetie_motion/editor_backup.yaml',
                            'Where the editor saves its table on close.'),
        }
        for name, (default, description) in table.items():
            self.node.declare_parameter(name, default,
                                        ParameterDescriptor(description=description))

    def parameter(self, name: str):
        """Return the value of one of the editor's parameters."""
        return self.node.get_parameter(name).value

    def _name(self, relative: str) -> str:
        namespace = self.parameter('namespace').strip('/')
        return f'/{namespace}/{relative}' if namespace else f'/{relative}'

    # --- entities ------------------------------------------------------------------------------

    def _setup_entities(self) -> None:
        from control_msgs.action import FollowJointTrajectory
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.action import ActionClient
        from rclpy.parameter_client import AsyncParameterClient
        from sensor_msgs.msg import JointState
        from std_srvs.srv import SetBool
        from sweetie_motion_msgs.msg import SupportState
        node = self.node
        node.create_subscription(JointState, self._name(self.parameter('joint_states_topic')),
                                 self._on_joint_states, 10)
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        self._set_pub = node.create_publisher(JointState,
                                              self._name(self.parameter('set_topic')), 10)
        self._marker_pub = node.create_publisher(JointState,
                                                 self._name(self.parameter('marker_topic')), 10)
        self._support_pub = node.create_publisher(SupportState,
                                                  self._name(self.parameter('support_topic')), 10)
        self._torque = node.create_client(SetBool, self._name(self.parameter('torque_service')))
        self._action = ActionClient(node, FollowJointTrajectory, self._name(
            f'{self.parameter("controller")}/follow_joint_trajectory'))
        self._storage = AsyncParameterClient(node, self._name(self.parameter('storage_node')))
        self._JointState, self._SupportState = JointState, SupportState

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except Exception:  # noqa: B902 -- the context shuts down under the executor
            pass

    def close(self) -> None:
        """Stop the ROS side."""
        self._executor.shutdown()
        self._thread.join(5.0)
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)

    # --- incoming ------------------------------------------------------------------------------

    def _on_joint_states(self, msg) -> None:
        if len(msg.name) == len(msg.position):
            with self._lock:
                self._pose = (list(msg.name), list(msg.position))

    def latest_pose(self) -> Optional[Tuple[List[str], List[float]]]:
        """Return the newest (names, positions) of joint_states, None before the first."""
        with self._lock:
            return self._pose

    def _on_diagnostics(self, msg) -> None:
        namespace = self.parameter('namespace').strip('/')
        for status in msg.status:
            if status.name == f'{namespace}: servos':
                values = {kv.key: kv.value for kv in status.values}
                self.servos.emit(values.get('torque_off') == 'true', status.message)

    # --- outgoing ------------------------------------------------------------------------------

    def _joint_state(self, names: Sequence[str], positions: Sequence[float]):
        msg = self._JointState(name=list(names), position=[float(p) for p in positions])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        return msg

    def set_pose(self, names: Sequence[str], positions: Sequence[float]) -> None:
        """Publish a pose on joint_states_set (FollowJointState moves the robot there)."""
        self._set_pub.publish(self._joint_state(names, positions))

    def publish_marker(self, names: Sequence[str], positions: Sequence[float]) -> None:
        """Publish the selected row on joint_states_marker_set."""
        self._marker_pub.publish(self._joint_state(names, positions))

    def publish_support(self, support: Dict[str, float]) -> None:
        """Publish SupportState on support_state_override."""
        msg = self._SupportState(name=list(support),
                                 support=[float(v) for v in support.values()])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._support_pub.publish(msg)

    def set_torque_off(self, off: bool) -> None:
        """Ask the TorqueMainSwitch to free (True) or hold (False) the servos."""
        from std_srvs.srv import SetBool
        if not self._torque.service_is_ready():
            self.servos.emit(not off, 'the torque switch is not available')
            return
        future = self._torque.call_async(SetBool.Request(data=off))

        def done(f) -> None:
            response = f.result()
            if response is None:
                self.servos.emit(not off, 'no answer from the torque switch')
            elif response.success:
                self.servos.emit(off, response.message)
            else:
                self.servos.emit(not off, f'refused: {response.message}')
        future.add_done_callback(done)

    def execute(self, goal) -> None:
        """Send a TrajectoryGoal to the trajectory controller; the result comes as a signal."""
        from sweetie_motion.conversions import goal_to_msg
        if not self._action.server_is_ready():
            self.executed.emit(False, -1, 'the trajectory controller is not available')
            return

        def feedback(message) -> None:
            self.progress.emit(message.feedback.desired.time_from_start.sec +
                               message.feedback.desired.time_from_start.nanosec * 1e-9,
                               goal.duration)

        def accepted(future) -> None:
            handle = future.result()
            if handle is None or not handle.accepted:
                self.executed.emit(False, -1, 'the goal was rejected')
                return
            self._goal_handle = handle
            handle.get_result_async().add_done_callback(finished)

        def finished(future) -> None:
            from action_msgs.msg import GoalStatus
            response = future.result()
            self._goal_handle = None
            ok = response.status == GoalStatus.STATUS_SUCCEEDED
            self.executed.emit(ok, response.result.error_code, response.result.error_string or
                               f'status {response.status}')
        self._action.send_goal_async(goal_to_msg(goal),
                                     feedback_callback=feedback).add_done_callback(accepted)

    def stop(self) -> None:
        """Cancel the running trajectory (the robot decelerates and holds)."""
        if self._goal_handle is not None:
            self._goal_handle.cancel_goal_async()

    def list_trajectories(self) -> None:
        """Ask the storage node for the names; they come as :attr:`listed`."""
        prefix = self.parameter('trajectory_storage')
        if not self._storage.services_are_ready():
            self.message.emit('trajectory storage is not available')
            self.listed.emit([])
            return

        def done(future) -> None:
            response = future.result()
            names = [] if response is None else [
                n[len(prefix) + 1:] for n in response.result.names
                if n.startswith(prefix + '.')]
            self.listed.emit(sorted(names))
        self._storage.list_parameters(prefixes=[prefix], depth=0).add_done_callback(done)

    def load(self, name: str) -> None:
        """Load a stored trajectory; it comes as :attr:`loaded`."""
        from sweetie_motion.conversions import goal_from_bytes
        from sweetie_motion.errors import SweetieMotionError
        if not self._storage.services_are_ready():
            self.loaded.emit(name, None, 'trajectory storage is not available')
            return
        parameter = f'{self.parameter("trajectory_storage")}.{name}'

        def done(future) -> None:
            response = future.result()
            value = response.values[0] if response is not None and response.values else None
            if value is None or not value.byte_array_value:
                self.loaded.emit(name, None, f'no stored trajectory named {name!r}')
                return
            data = value.byte_array_value
            try:
                goal = goal_from_bytes(b''.join(data) if isinstance(data, list) else data)
            except SweetieMotionError as error:
                self.loaded.emit(name, None, str(error))
                return
            self.loaded.emit(name, goal, '')
        self._storage.get_parameters([parameter]).add_done_callback(done)

    def save(self, name: str, goal) -> None:
        """Store a trajectory; the outcome comes as :attr:`saved`."""
        from rclpy.parameter import Parameter
        from sweetie_motion.conversions import byte_array_value, goal_to_bytes
        if not self._storage.services_are_ready():
            self.saved.emit(name, False, 'trajectory storage is not available')
            return
        parameter = Parameter(f'{self.parameter("trajectory_storage")}.{name}',
                              Parameter.Type.BYTE_ARRAY, byte_array_value(goal_to_bytes(goal)))

        def done(future) -> None:
            response = future.result()
            if response is None or not response.results:
                self.saved.emit(name, False, 'no answer from the trajectory storage')
                return
            result = response.results[0]
            self.saved.emit(name, result.successful, result.reason or 'saved')
        self._storage.set_parameters([parameter]).add_done_callback(done)
