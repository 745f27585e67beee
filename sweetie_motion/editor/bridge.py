"""
The editor's adapters to the robot and the storage: requests in, events out, over ROS.

:class:`EditorBridge` is given its rclpy node (the application creates, spins and destroys it)
and declares the editor's parameters on it from :data:`EditorBridge.PARAMETERS`. It carries out
the presenter's requests (:mod:`sweetie_motion.editor.presenter`) and turns what ROS says into
the presenter's events, which :meth:`EditorBridge.poll` hands over in the GUI thread: ROS
callbacks only fill a queue and a pose buffer, they never touch the presenter or a widget.

Every call to the robot has a time-out, so that every request gets its answer event: a goal
not accepted within ``call_timeout`` (asked twice) or without a result by its deadline ends as
``lost``, so does a running goal when joint_states stop (the motion process died: the action
server's disappearance takes DDS far longer to notice), and an unanswered torque switch call
reports the servos as unknown. Links (controller, FollowJointState, storage, servos) are re-checked
twice a second, so that everything works again as soon as the motion process is back.
"""

import math
import time
from typing import Any, Dict, List, Optional, Tuple

from sweetie_motion.editor.goal_runner import GoalRunner
from sweetie_motion.editor.requests import (
    BasePoseReceived, CancelGoal, ExecuteGoal, HoldPose, ListTrajectories, LoadTrajectory,
    MoveByHand, PoseHeld, PublishMarker, PublishSupport, RecordingFinished, SaveTrajectory,
    ServoState, SetPose, SetTorqueOff, StartRecording, StopRecording, TrajectoriesListed,
    TrajectoryLoaded, TrajectorySaved,
)
from sweetie_motion.gui.bridge_base import BridgeBase
from sweetie_motion.gui.dispatch import EventHandlers
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion.ros.storage_client import StorageError, TrajectoryStorageClient

#: servo diagnostics older than this are not believed [s] (they come once a second)
DIAGNOSTICS_STALE = 3.5


class EditorBridge(BridgeBase):
    """
    The trajectory editor's ROS side.

    :param node: the editor's rclpy node (spun by the caller in another thread).
    :param streams: a node spun in a thread of its own for ``joint_states`` (None: ``node``).
    """

    PARAMETERS = (
        ParameterSpec('namespace', 'sweetie_bot', 'Robot namespace of the motion process.'),
        ParameterSpec('trajectory_storage', 'joint_trajectory',
                      'Parameter namespace of the stored trajectories.'),
        ParameterSpec('storage_node', 'trajectory_storage', 'The trajectory storage node.'),
        ParameterSpec('legs', ['leg1', 'leg2', 'leg3', 'leg4'], 'Chains that can be support '
                      'legs.'),
        ParameterSpec('joint_states_topic', 'joint_states', 'Where poses are taken from.'),
        ParameterSpec('set_topic', 'joint_states_set', 'Set robot pose (FollowJointState).'),
        ParameterSpec('follow_joint_state', 'follow_joint_state', 'The FollowJointState node '
                      'that follows set_topic (its ~/hold stops a pose on its way).'),
        ParameterSpec('marker_topic', 'joint_states_marker_set', 'The selected row.'),
        ParameterSpec('support_topic', 'support_state_override', 'Support legs (SupportState).'),
        ParameterSpec('torque_service', 'set_torque_off', 'The TorqueMainSwitch service.'),
        ParameterSpec('chains_torque_service', 'set_chains_torque', "The TorqueMainSwitch's "
                      'service for some chains (a recording frees only its chains).'),
        ParameterSpec('controller', 'joint_trajectory', 'The trajectory controller Execute '
                      'uses.'),
        ParameterSpec('virtual_robot', 'virtual_robot', 'The virtual robot node, whose '
                      '~/move_by_hand the sliders use while the servos are off.'),
        ParameterSpec('base_pose_topic', 'physics_robot/base_pose', 'Where the robot on the '
                      "physics engine's floor has its base (geometry_msgs/PoseStamped): the 3D "
                      'view draws the robot there (a fall is seen); no such topic: at the '
                      'origin.'),
        ParameterSpec('robot_description', 'sweetie_bot.yaml',
                      'Robot description: limits, sliders, plots, Fit to limits.'),
        ParameterSpec('workspace_dir', '~/.local/share/sweetie_motion/editor',
                      'Folder of the backups and of the tables behind stored names.'),
        ParameterSpec('backup_period', 30.0, 'Shortest time between two backups while there '
                      'are unsaved changes [s].', low=1.0, high=3600.0),
        ParameterSpec('backups_kept', 20, 'How many backups are kept.', low=1, high=10000),
        ParameterSpec('call_timeout', 5.0, 'How long to wait for the robot or the storage to '
                      'answer a request [s].', low=0.2, high=600.0),
        ParameterSpec('interpolation', 'akima', "The controller's interpolation (plots, Fit "
                      'to limits, keyframes of a recording).', choices=('akima', 'cubic')),
    )

    def __init__(self, node, streams=None) -> None:
        from sweetie_motion.nodes.params import declare_table, read_table
        super().__init__()
        self._closed = False
        self.node = node
        declare_table(node, self.PARAMETERS)
        self.values: Dict[str, Any] = read_table(node, self.PARAMETERS)
        self.timeout = float(self.values['call_timeout'])
        self._recording: Optional[Tuple[List[str], List[float], List[List[float]]]] = None
        self._record_index: Optional[Tuple[Tuple[str, ...], List[int]]] = None
        self._torque: Optional[Tuple[Any, float, bool]] = None
        self._diagnostics: Optional[Tuple[bool, str]] = None
        self._diagnostics_time = -math.inf
        self._servo_reported: Optional[Tuple[Optional[bool], str]] = None
        self._base_pose: Optional[BasePoseReceived] = None
        self._connect(node, self.values, node if streams is None else streams)
        #: Execute's goals
        self._runner = GoalRunner(self._action, self._lock, self._put, self.timeout)
        #: the presenter's requests and who carries out each
        self._requests = EventHandlers('the editor bridge')
        self._requests.register(SetPose, self._do_set_pose)
        self._requests.register(HoldPose, self._do_hold_pose)
        self._requests.register(MoveByHand, self._do_move_by_hand)
        self._requests.register(PublishMarker, self._do_publish_marker)
        self._requests.register(PublishSupport, self._do_publish_support)
        self._requests.register(SetTorqueOff, self._do_set_torque_off)
        self._requests.register(ExecuteGoal, self._runner.execute)
        self._requests.register(CancelGoal, self._runner.cancel)
        self._requests.register(ListTrajectories, self._do_list_trajectories)
        self._requests.register(LoadTrajectory, self._do_load_trajectory)
        self._requests.register(SaveTrajectory, self._do_save_trajectory)
        self._requests.register(StartRecording, self._do_start_recording)
        self._requests.register(StopRecording, self._do_stop_recording)

    def _connect(self, node: Any, values: Dict[str, Any], streams: Any) -> None:
        """
        Create the subscriptions, publishers, clients and the pendant of the robot's names.

        ``joint_states`` (100 Hz) is heard on ``streams``, a node spun apart (see
        :attr:`~sweetie_motion.ros.background.BackgroundNode.streams`).
        """
        from control_msgs.action import FollowJointTrajectory
        from diagnostic_msgs.msg import DiagnosticArray
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState
        from std_srvs.srv import SetBool, Trigger
        from sweetie_motion.ros.action_client import ActionClient
        from sweetie_motion.ros.pendant import client_name, Pendant
        from sweetie_motion_msgs.msg import SupportState
        from sweetie_motion_msgs.srv import SetChainsTorque
        self._JointState, self._SupportState, self._SetBool = JointState, SupportState, SetBool
        self._SetChainsTorque, self._Trigger = SetChainsTorque, Trigger
        self._subscriptions = [
            streams.create_subscription(JointState, self.name(values['joint_states_topic']),
                                        self._on_joint_states, 50),
            node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics,
                                     10),
            node.create_subscription(PoseStamped, self.name(values['base_pose_topic']),
                                     self._on_base_pose, 10)]
        self.set_topic = self.name(values['set_topic'])
        self.hand_topic = self.name(f'{values["virtual_robot"]}/move_by_hand')
        self._set_pub = node.create_publisher(JointState, self.set_topic, 10)
        self._hand_pub = node.create_publisher(JointState, self.hand_topic, 10)
        self._marker_pub = node.create_publisher(JointState, self.name(values['marker_topic']),
                                                 10)
        self._support_pub = node.create_publisher(SupportState,
                                                  self.name(values['support_topic']), 10)
        self._torque_client = node.create_client(SetBool, self.name(values['torque_service']))
        self._hold_client = node.create_client(
            Trigger, self.name(f'{values["follow_joint_state"]}/hold'))
        self._chains_torque_client = node.create_client(
            SetChainsTorque, self.name(values['chains_torque_service']))
        #: should the editor die (kill -9, a crash), the motion process stops what it started:
        #: Execute's goal, and a pose of Set robot pose still on its way
        self.pendant = Pendant(node, self.name(''), client_name('trajectory editor'))
        self._action = ActionClient(node, FollowJointTrajectory, self.name(
            f'{values["controller"]}/follow_joint_trajectory'), pendant=self.pendant)
        self.storage = TrajectoryStorageClient(node, self.name(values['storage_node']),
                                               values['trajectory_storage'], self.timeout)

    def name(self, relative: str) -> str:
        """Return the absolute name of a topic or node of the robot's namespace."""
        namespace = self.values['namespace'].strip('/')
        return f'/{namespace}/{relative}' if namespace else f'/{relative}'

    def close(self) -> None:
        """Release the clients (the node's owner destroys the node); poll says nothing after."""
        self._closed = True
        self._action.destroy()
        self.pendant.destroy()

    # --- incoming ------------------------------------------------------------------------------

    def _on_joint_states(self, msg) -> None:
        if len(msg.name) != len(msg.position):
            return
        names, positions = tuple(msg.name), tuple(msg.position)
        now = time.monotonic()
        with self._lock:
            self._store_pose(names, positions, now)
            if self._recording is not None:
                stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
                self._record(names, positions, stamp if stamp > 0 else time.time())

    def _record(self, names: Tuple[str, ...], positions: Tuple[float, ...], stamp: float) -> None:
        assert self._recording is not None   # its one caller records only while recording
        joints, times, rows = self._recording
        if self._record_index is None or self._record_index[0] != names:
            if any(j not in names for j in joints):
                return
            self._record_index = (names, [names.index(j) for j in joints])
        columns = self._record_index[1]
        times.append(stamp)
        rows.append([positions[c] for c in columns])

    def _on_base_pose(self, msg) -> None:
        from sweetie_motion.ros.conversions import pose_from_msg
        try:
            pose = pose_from_msg(msg.pose)
        except ValueError:
            return      # a broken pose is not drawn; the next one is
        x, y, z = pose.position
        event = BasePoseReceived(tuple((float(a), float(b), float(c))
                                       for a, b, c in pose.rotation),
                                 (float(x), float(y), float(z)))
        with self._lock:
            self._base_pose = event

    def _on_diagnostics(self, msg) -> None:
        namespace = self.values['namespace'].strip('/')
        for status in msg.status:
            if status.name == f'{namespace}: servos':
                values = {kv.key: kv.value for kv in status.values}
                with self._lock:
                    self._diagnostics = (values.get('torque_off') == 'true', status.message)
                    self._diagnostics_time = time.monotonic()

    # --- the presenter's side ------------------------------------------------------------------

    def submit(self, request: object) -> None:
        """Carry out a request of the presenter (called in the GUI thread)."""
        self._requests.dispatch(request)

    def poll(self) -> List[object]:
        """Return the events that arrived since the last call, and those of the deadlines."""
        if self._closed:
            return []   # a window's timer may tick once more after its bridge is gone
        now = time.monotonic()
        events: List[object] = []
        pose, fresh = self._take_pose(now)
        with self._lock:
            diagnostics = self._diagnostics if now - self._diagnostics_time < \
                DIAGNOSTICS_STALE else None
        if pose is not None:
            events.append(PoseReceived(*pose))
        with self._lock:
            base, self._base_pose = self._base_pose, None
        if base is not None:
            events.append(base)
        self._refresh_links(now, fresh, events)
        self._deadlines(now, fresh)
        if diagnostics is not None and self._torque is None:
            self._report_servos(diagnostics[0], diagnostics[1])
        elif diagnostics is None and self._links is not None and not dict(
                self._links.links)['servos']:
            self._report_servos(None, 'the torque switch is not connected')
        self._drain(events)
        return events

    def _check_links(self, fresh: bool) -> LinksChanged:
        node = self.node
        links = (('controller', fresh and self._action.server_is_ready()),
                 ('follow_joint_state', fresh and node.count_subscribers(self.set_topic) > 0),
                 # a dead process's services look ready for 10 s or more: what its
                 # joint_states say decides, as for the other parts
                 ('storage', fresh and self.storage.ready()),
                 ('servos', fresh and self._torque_client.service_is_ready()))
        return LinksChanged(links, fresh and node.count_subscribers(self.hand_topic) > 0)

    def _report_servos(self, off: Optional[bool], message: str) -> None:
        if (off, message) != self._servo_reported:
            self._servo_reported = (off, message)
            self._put(ServoState(off, message))

    def _deadlines(self, now: float, fresh: bool) -> None:
        self._runner.check_deadlines(now, fresh)
        with self._lock:
            torque = self._torque
        if torque is not None and now > torque[1]:
            with self._lock:
                self._torque = None
            self._report_servos(None, f'no answer from the torque switch within '
                                      f'{self.timeout:g} s')

    # --- requests ------------------------------------------------------------------------------

    def _joint_state(self, names, positions):
        msg = self._JointState(name=list(names), position=[float(p) for p in positions])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        return msg

    def _do_set_pose(self, request: SetPose) -> None:
        self.pendant.follow([self.set_topic])
        self._set_pub.publish(self._joint_state(request.names, request.positions))

    def _do_hold_pose(self, request: HoldPose) -> None:
        if not self._hold_client.service_is_ready():
            self._put(PoseHeld(f'{self._hold_client.srv_name} is not available'))
            return

        def done(future) -> None:
            response = future.result()
            self._put(PoseHeld('' if response is not None and response.success else
                               (response.message if response is not None else 'no answer')))
        self._hold_client.call_async(self._Trigger.Request()).add_done_callback(done)

    def _do_move_by_hand(self, request: MoveByHand) -> None:
        self._hand_pub.publish(self._joint_state(request.names, request.positions))

    def _do_publish_marker(self, request: PublishMarker) -> None:
        self._marker_pub.publish(self._joint_state(request.names, request.positions))

    def _do_publish_support(self, request: PublishSupport) -> None:
        msg = self._SupportState(name=[leg for leg, _ in request.support],
                                 support=[float(v) for _, v in request.support])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._support_pub.publish(msg)

    def _do_set_torque_off(self, request: SetTorqueOff) -> None:
        client = self._chains_torque_client if request.chains else self._torque_client
        if not client.service_is_ready():
            self._report_servos(None, f'the torque switch is not available ({client.srv_name})')
            return
        if request.chains:
            future = client.call_async(self._SetChainsTorque.Request(
                chains=list(request.chains), torque_off=request.off))
        else:
            future = client.call_async(self._SetBool.Request(data=request.off))
        with self._lock:
            self._torque = (future, time.monotonic() + self.timeout, request.off)

        def done(f) -> None:
            with self._lock:
                if self._torque is None or self._torque[0] is not f:
                    return   # timed out already
                self._torque = None
            response = f.result()
            if response is None:
                self._report_servos(None, 'no answer from the torque switch')
            elif response.success:
                self._report_servos(request.off, response.message)
            else:
                self._report_servos(not request.off, f'refused: {response.message}')
        future.add_done_callback(done)

    def _do_list_trajectories(self, request: ListTrajectories) -> None:
        def done(future) -> None:
            error = future.exception()
            self._put(TrajectoriesListed(() if error else tuple(future.result()),
                                         str(error) if error else ''))
        self.storage.list_async().add_done_callback(done)

    def _do_load_trajectory(self, request: LoadTrajectory) -> None:
        def done(future) -> None:
            error = future.exception()
            self._put(TrajectoryLoaded(request.name, None if error else future.result(),
                                       str(error) if error else ''))
        self._storage_call(lambda: self.storage.load_async(request.name), done,
                           lambda error: TrajectoryLoaded(request.name, None, error))

    def _do_save_trajectory(self, request: SaveTrajectory) -> None:
        def done(future) -> None:
            error = future.exception()
            self._put(TrajectorySaved(request.name, str(error) if error else ''))
        self._storage_call(lambda: self.storage.save_async(request.name, request.goal), done,
                           lambda error: TrajectorySaved(request.name, error))

    def _storage_call(self, send, done, failed) -> None:
        try:
            future = send()
        except StorageError as error:
            self._put(failed(str(error)))
            return
        future.add_done_callback(done)

    def _do_start_recording(self, request: StartRecording) -> None:
        with self._lock:
            self._recording = (list(request.joints), [], [])
            self._record_index = None

    def _do_stop_recording(self, request: StopRecording) -> None:
        with self._lock:
            recording, self._recording = self._recording, None
        if recording is None:
            self._put(RecordingFinished((), (), (), 'not recording'))
            return
        joints, times, rows = recording
        error = '' if times else 'no joint_states arrived (is the motion process running?)'
        self._put(RecordingFinished(tuple(times), tuple(joints),
                                    tuple(tuple(r) for r in rows), error))
