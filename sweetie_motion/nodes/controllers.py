"""
Lifecycle nodes of the controllers: FollowJointState and TorqueMainSwitch.

Shared by every controller node: ``controlled_chains``, ``stay_operational``, the smoothing
filter (``smoothing.type`` plus its parameters, per-joint overrides as
``smoothing.<joint>.<parameter>``), the ``set_operational`` service (std_srvs/SetBool), and the
lifecycle policy: active = in the cycle and owning resources; losing every resource deactivates
the node unless ``stay_operational``.
"""

from typing import ClassVar, List, Optional, Sequence, Tuple, Type

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger
from sweetie_motion.controllers.base import Acquire, ControlledJoints, ControllerCore
from sweetie_motion.controllers.joint_state import (
    FollowJointStateCore, FollowJointStateSpec, Hold, PoseInput, ReadOfferedPose, SetTargets,
)
from sweetie_motion.controllers.pendants import Lapse
from sweetie_motion.controllers.torque_switch import (
    ReadTorqueStatus, SetTorqueOff, TorqueMainSwitchCore, TorqueSwitchSpec,
)
from sweetie_motion.core.events import ControllerEvent, CycleEvent, NotOperational
from sweetie_motion.core.smoothing import filter_spec, FilterSpec, REGISTRY
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.lifecycle import ComponentNode, DIAGNOSTICS
from sweetie_motion.nodes.pendant_watch import PendantWatch
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import (
    nested_overrides, non_empty, one_of, ParameterError, ParameterSpec, unique,
)
from sweetie_motion.ros.conversions import joint_state, joint_state_positions
from sweetie_motion_msgs.srv import SetChainsTorque

SMOOTHING_PARAMETERS = (
    ParameterSpec('smoothing.type', 'critically_damped',
                  'Smoothing filter between the raw reference and the output.',
                  choices=tuple(REGISTRY)),
    ParameterSpec('smoothing.transient_time', 0.3,
                  'critically_damped: 2 % settling time; transient: fade-out time [s].',
                  low=0.001, high=60.0),
    ParameterSpec('smoothing.max_velocity', 0.0,
                  "jerk_limited: velocity limit [rad/s]; 0 = each joint's URDF limit.",
                  low=0.0, high=100.0),
    ParameterSpec('smoothing.max_acceleration', 0.0,
                  "jerk_limited: acceleration limit [rad/s^2]; 0 = each joint's limit of the "
                  'robot config.', low=0.0, high=1e4),
    ParameterSpec('smoothing.max_jerk', 0.0,
                  "jerk_limited: jerk limit [rad/s^3]; 0 = each joint's limit of the robot "
                  'config (none if it gives none).', low=0.0, high=1e6),
)


def controller_parameters(default_chains: Sequence[str] = (), stay_operational: bool = False,
                          smoothing: str = 'critically_damped') -> List[ParameterSpec]:
    """Return the parameter specs every controller node has."""
    specs = [
        ParameterSpec('controlled_chains', list(default_chains),
                      'Chains this controller drives (their resource groups are requested); '
                      'a group name (e.g. eyes) is accepted too.',
                      check=unique, array_of=str),
        ParameterSpec('stay_operational', stay_operational,
                      'Keep running when every resource was taken by another controller, and '
                      'take resources back when they are released.'),
    ]
    for spec in SMOOTHING_PARAMETERS:
        if spec.name == 'smoothing.type':
            spec = ParameterSpec(spec.name, smoothing, spec.description, choices=spec.choices)
        specs.append(spec)
    return specs


class ControllerNode(ComponentNode):
    """
    Base of controller nodes: chains, smoothing, set_operational, the lifecycle policy.

    The controller's core runs on the cycle side: configure creates it there from
    :meth:`component_spec`, the lifecycle activates and deactivates it, cleanup destroys it.
    """

    #: place in the cycle among controllers (the bringup sets it from the config order)
    order = 0
    #: an empty controlled_chains means every chain of the robot
    ALL_CHAINS_BY_DEFAULT = False
    #: the class of the node's component on the cycle side
    COMPONENT: ClassVar[Type[ControllerCore]] = ControllerCore

    def __init__(self, process: MotionProcess, name: str, **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._service_group = MutuallyExclusiveCallbackGroup()
        self._operational_service = self.create_service(
            SetBool, '~/set_operational', self._set_operational,
            callback_group=self._service_group)

    # --- parameters ----------------------------------------------------------------------------

    def accepts_parameter(self, name: str) -> bool:
        parts = name.split('.')
        return len(parts) == 3 and parts[0] == 'smoothing'

    def read_parameters(self) -> dict:
        values = super().read_parameters()
        view = self.process.view
        names = view.list_chains() + [g for g in view.list_groups() if not
                                      view.get_group_chains(g)]
        if not values['controlled_chains'] and self.ALL_CHAINS_BY_DEFAULT:
            values['controlled_chains'] = names
        chains = values['controlled_chains']
        problem = non_empty(chains) or one_of(names, 'chain')(chains)
        if problem:
            raise ParameterError(f'controlled_chains: {problem}')
        return values

    def smoothing_spec(self) -> FilterSpec:
        """Return the configured smoothing filter (checked: unknown joints or parameters)."""
        params, overrides, odd = nested_overrides(
            {f'smoothing.{name}': parameter.value
             for name, parameter in self.get_parameters_by_prefix('smoothing').items()},
            'smoothing')
        if odd:
            raise ParameterError(f'smoothing overrides name unknown joints: {", ".join(odd)}')
        view = self.process.view
        return filter_spec(self.values['smoothing.type'], params, overrides,
                           view.list_all_joints(), view.velocity_limits(),
                           [spec.name.split('.')[1] for spec in SMOOTHING_PARAMETERS],
                           view.acceleration_limits(), view.jerk_limits())

    def component_spec(self):
        """Return the spec of this controller's component on the cycle side (subclasses)."""
        raise NotImplementedError

    # --- lifecycle -----------------------------------------------------------------------------

    def configure_component(self) -> None:
        self.read_parameters()
        spec = self.component_spec()
        self.host.add_listener(self._on_event)
        self.host.add_controller_listener(self.get_name(), self._on_controller_event)
        self.create_component(self.COMPONENT, spec)
        self.create_entities()

    def create_entities(self) -> None:
        """Create the node's topics, services and actions (subclasses)."""

    def cleanup_component(self) -> None:
        self.host.remove_listener(self._on_event)
        self.host.remove_listener(self._on_controller_event)
        super().cleanup_component()

    def _on_event(self, event: CycleEvent) -> None:
        """Handle an event of the cycle side addressed to no controller (subclasses)."""

    def _on_controller_event(self, event: ControllerEvent) -> None:
        """Handle an event addressed to this controller (in the host client's events thread)."""
        if isinstance(event, NotOperational):
            self.get_logger().info('every resource was taken by another controller: '
                                   'deactivating')
            self.call_soon(self._deactivate_if_active)

    def _deactivate_if_active(self) -> None:
        if self.lifecycle_state == 'active':
            self.trigger_deactivate()

    def make_operational(self, operational: bool) -> Tuple[bool, str]:
        """
        Activate the controller (and take its resources back if it is active) or deactivate it.

        :return: (whether it got there, what it is now).
        """
        try:
            if operational and self.lifecycle_state == 'active':
                self.host.run(Acquire(self.get_name()))
                return True, 'operational'
            done, state = super().make_operational(operational)
        except SweetieMotionError as error:
            return False, str(error)
        if operational:
            return done, 'operational' if done else state
        return done, f'not operational ({state})'

    def controlled_names(self) -> List[str]:
        """Return its controlled chains (and chainless groups): every one if none are set."""
        names = list(self.get_parameter('controlled_chains').value or [])
        if not names and self.ALL_CHAINS_BY_DEFAULT:
            view = self.process.view
            names = view.list_chains() + [g for g in view.list_groups()
                                          if not view.get_group_chains(g)]
        return names

    def controlled_joints(self) -> List[str]:
        """
        Return the joints it drives, in the robot's order: every joint of its resource groups.

        What a goal may name, what ``~/controller_state`` lists and what the controller manager
        reports as its interfaces; [] while ``controlled_chains`` names an unknown chain.
        """
        try:
            return list(ControlledJoints.of(self.process.view, self.controlled_names()).joints)
        except SweetieMotionError:
            return []

    def _set_operational(self, request, response):
        response.success, response.message = self.make_operational(request.data)
        return response


class FollowJointStateNode(ControllerNode):
    """
    FollowJointState (R-FJS): follows ``~/in_joints_ref`` and the shared ``joint_states_set``.

    While in the activation delay it publishes the current full pose on
    ``~/out_joints_src_reset`` (10 Hz) so that the source can adopt it. Incoming poses are
    checked here (:class:`PoseInput`) and only the accepted targets go to the cycle.
    ``~/hold`` (std_srvs/Trigger) stops following: the joints come to rest where a brake
    within the limits ends, until the next pose; so does a streaming client whose pendant
    falls silent (:class:`~sweetie_motion.nodes.pendant_watch.PendantWatch`).
    """

    COMPONENT = FollowJointStateCore
    PARAMETERS = controller_parameters(stay_operational=False, smoothing='jerk_limited') + [
        ParameterSpec('activation_delay', 1.0,
                      'After activation, hold the pose and offer it on out_joints_src_reset '
                      'for this long before obeying the input [s].', low=0.0, high=60.0),
        ParameterSpec('set_topic', 'joint_states_set',
                      'Shared topic of pose commands (the editor\'s "set robot pose") followed '
                      'besides ~/in_joints_ref; empty to disable.'),
    ]

    def __init__(self, process: MotionProcess, name: str = 'follow_joint_state',
                 **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._input = None
        self._src_reset_timer = None

    def component_spec(self) -> FollowJointStateSpec:
        values = self.values
        controlled = ControlledJoints.of(self.process.view, values['controlled_chains'])
        self._input = PoseInput(self.process.view, controlled.joints)
        return FollowJointStateSpec(tuple(values['controlled_chains']),
                                    values['activation_delay'], values['stay_operational'],
                                    self.smoothing_spec(), self.order)

    def create_entities(self) -> None:
        values = self.values
        qos = QoSProfile(depth=5)
        self._src_reset_pub = self.make_publisher(JointState, '~/out_joints_src_reset', 5)
        self._entities = [
            self.make_subscription(JointState, '~/in_joints_ref', self._on_input, qos),
            self._src_reset_pub]
        if values['set_topic']:
            self._entities.append(self.make_subscription(
                JointState, values['set_topic'], self._on_input, qos))
        self._names = self.process.model.list_all_joints()
        self._src_reset_timer = None
        self._entities += [
            self.create_service(Trigger, '~/hold', self._on_hold,
                                callback_group=self._service_group),
            # a client that streamed poses and is gone (a killed editor) stops its motion
            PendantWatch(self, self._service_group, lambda: (), lambda goal, lapse: None,
                         inputs=self._input_topics(), hold=self._hold_for_pendant)]

    def _input_topics(self) -> List[str]:
        """Return the full names of the topics this controller follows."""
        names = ['~/in_joints_ref'] + ([self.values['set_topic']] if self.values['set_topic']
                                       else [])
        return [self.resolve_topic_name(name) for name in names]

    def hold(self) -> str:
        """
        Stop following: rest where a brake within the limits ends, until the next pose.

        :return: what happened, for a person.
        :raises SweetieMotionError: the cycle did not take it.
        """
        if self.lifecycle_state != 'active':
            return f'{self.get_name()} is {self.lifecycle_state}: nothing to hold'
        self.host.cast(Hold(self.get_name()))
        return 'holding where a brake within the limits ends'

    def _on_hold(self, request, response):
        try:
            response.message = self.hold()
            response.success = True
        except SweetieMotionError as error:
            response.success, response.message = False, f'not held: {error}'
        return response

    def _hold_for_pendant(self, lapse: Lapse) -> None:
        try:
            self.hold()
        except SweetieMotionError as error:
            self.get_logger().warning(f'hold not delivered: {error}')

    def activate_component(self) -> None:
        super().activate_component()
        self._drop_src_reset_timer()
        # offered only during the activation delay: no timer wakes the executor afterwards
        self._src_reset_timer = self.create_timer(0.1, self._publish_src_reset)
        self._entities.append(self._src_reset_timer)

    def _on_input(self, msg: JointState) -> None:
        if self._input is None or not self._created:
            return
        try:
            local, values, report = self._input.check(list(msg.name),
                                                      joint_state_positions(msg))
        except ValueError as error:
            self.get_logger().warning(f'pose ignored: {error}', throttle_duration_sec=5.0)
            return
        if len(local):
            try:
                self.host.cast(SetTargets(self.get_name(), local, values))
            except SweetieMotionError as error:
                self.get_logger().warning(f'pose not delivered: {error}',
                                          throttle_duration_sec=5.0)
        problems = []
        if report.unknown:
            problems.append(f'unknown joints {", ".join(report.unknown)} ignored')
        if report.invalid:
            problems.append(f'non-finite values of {", ".join(report.invalid)} ignored')
        if report.clamped:
            problems.append(f'{", ".join(report.clamped)} clamped into their position limits')
        if problems:
            self.get_logger().warning('pose: ' + '; '.join(problems), throttle_duration_sec=5.0)

    def _drop_src_reset_timer(self) -> None:
        # a cancelled rclpy timer still wakes the executor: remove it altogether
        timer, self._src_reset_timer = self._src_reset_timer, None
        if timer is not None and timer in self._entities:
            self._entities.remove(timer)
            self.call_soon(lambda: self.destroy_timer(timer))

    def _publish_src_reset(self) -> None:
        if not self._created or self.lifecycle_state != 'active':
            return
        try:
            pending, pose = self.host.run(ReadOfferedPose(self.get_name()), timeout=1.0)
        except SweetieMotionError:
            return
        if not pending:
            self._drop_src_reset_timer()
            return
        if pose is not None:
            msg = joint_state(self._names, pose, np.zeros(len(pose)))
            msg.header.stamp = self.get_clock().now().to_msg()
            self._src_reset_pub.publish(msg)


class TorqueMainSwitchNode(ControllerNode):
    """
    TorqueMainSwitch (R-SYS-6): ``set_torque_off`` (std_srvs/SetBool, true = servos free).

    ``set_chains_torque`` (SetChainsTorque) does the same for some of its chains.

    Servo status goes to ``/diagnostics`` once a second. The node is active while it can
    serve; whether it holds resources depends only on the torque state.
    """

    COMPONENT = TorqueMainSwitchCore
    ALL_CHAINS_BY_DEFAULT = True
    PARAMETERS = controller_parameters(smoothing='none') + [
        ParameterSpec('service_name', 'set_torque_off',
                      'Name of the SetBool service (true = torque off), relative to the '
                      'robot namespace.', read_only=True),
        ParameterSpec('chains_service_name', 'set_chains_torque',
                      'Name of the SetChainsTorque service (torque of some chains), relative '
                      'to the robot namespace.', read_only=True),
    ]

    def __init__(self, process: MotionProcess, name: str = 'torque_main_switch',
                 **kwargs) -> None:
        super().__init__(process, name, **kwargs)

    def component_spec(self) -> TorqueSwitchSpec:
        return TorqueSwitchSpec(tuple(self.values['controlled_chains']), self.order)

    def create_entities(self) -> None:
        self._diag_pub = self.make_publisher(DiagnosticArray, '/diagnostics', DIAGNOSTICS)
        self._entities = [
            self.create_service(SetBool, self.values['service_name'], self._set_torque_off,
                                callback_group=self._service_group),
            self.create_service(SetChainsTorque, self.values['chains_service_name'],
                                self._set_chains_torque, callback_group=self._service_group),
            self._diag_pub, self.create_timer(1.0, self._publish_status)]

    def _set_torque_off(self, request, response):
        response.success, response.message = self._switch(bool(request.data), None)
        return response

    def _set_chains_torque(self, request, response):
        response.success, response.message = self._switch(bool(request.torque_off),
                                                          list(request.chains))
        return response

    def _switch(self, off: bool, chains: Optional[List[str]]) -> Tuple[bool, str]:
        if not self._created or self.lifecycle_state != 'active':
            return False, f'torque main switch is not active (state {self.lifecycle_state})'
        try:
            success, message = self.host.run(SetTorqueOff(self.get_name(), off, chains))
        except SweetieMotionError as error:
            success, message = False, str(error)
        # one severity per call site: rclpy refuses a logging line that changes it
        if success:
            self.get_logger().info(message)
        else:
            self.get_logger().warning(message)
        return success, message

    def _publish_status(self) -> None:
        if not self._created:
            return
        try:
            statuses = self.host.run(ReadTorqueStatus(self.get_name()), timeout=2.0)
        except SweetieMotionError as error:
            self.get_logger().warning(f'servo status unavailable: {error}',
                                      throttle_duration_sec=10.0)
            return
        free = [s.joint for s in statuses if not s.torque]
        faults = [s for s in statuses if not s.ok]
        status = DiagnosticStatus(name=f'{self.get_namespace().strip("/")}: servos',
                                  hardware_id='sweetie_motion')
        status.level = DiagnosticStatus.ERROR if faults else DiagnosticStatus.OK
        status.message = (f'{len(statuses)} servos, torque '
                          + ('off' if len(free) == len(statuses) and statuses else
                             f'off for {len(free)}' if free else 'on')
                          + (f', {len(faults)} faulty' if faults else ''))
        status.values = [KeyValue(key='torque_off', value=str(bool(free)).lower())] + [
            KeyValue(key=s.joint, value=('on' if s.torque else 'off') + f', {s.message}')
            for s in statuses]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diag_pub.publish(array)
