"""
The base of every lifecycle node of sweetie_motion.

Each component node owns a parameter table (declared with descriptors, validated at configure
and on set), creates its ROS entities in configure and releases them in cleanup, and hands the
work to a pure core object. Failures in a transition are reported with a clear message and the
transition fails; the process never dies of bad parameters or bad requests.
"""

from contextlib import contextmanager
import threading
import traceback
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.client import Client
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.lifecycle.publisher import LifecyclePublisher
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.timer import Timer
from sweetie_motion.core.component import Activate, Component, Deactivate
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.client import HostClient
from sweetie_motion.nodes.params import declare_table, read_table
from sweetie_motion.nodes.pendant_watch import PendantWatch
from sweetie_motion.nodes.rclpy_private import change_state_service, RCLError
from sweetie_motion.parameters import ParameterError, ParameterSpec
from sweetie_motion.ros.conversions import joint_state_positions


#: ``/diagnostics`` as the nodes publish it: the last reports are kept for a subscriber that
#: comes later (`sweetie-motion status` reads them at once instead of waiting up to a period);
#: volatile subscribers (diagnostic_aggregator, rqt_robot_monitor) match it as before
DIAGNOSTICS = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
#: parameters every rclpy node declares itself
BUILTIN_PARAMETERS = {'use_sim_time', 'start_type_description_service'}


class ManagedNode(LifecycleNode):
    """
    A LifecycleNode with a parameter table and guarded transitions.

    rclpy (Jazzy) raises RCLError from inside the change_state service when a client asks for a
    transition that does not exist in the current state (deactivating an inactive node, say),
    and the exception ends the executor and the whole process. Here such a request is answered
    with success = False and logged, as rclcpp does.

    Subclasses set :attr:`PARAMETERS` and implement :meth:`configure_component`,
    :meth:`activate_component`, :meth:`deactivate_component`, :meth:`cleanup_component`.

    :param parameters: values for the table (e.g. from the process config); they act as
        parameter overrides, so `--ros-args -p` and `ros2 param` see them.
    """

    PARAMETERS: Sequence[ParameterSpec] = ()

    def __init__(self, node_name: str, *, parameters: Optional[dict] = None,
                 **kwargs: Any) -> None:
        parameters = dict(parameters or {})
        # rclpy types an override by its value, and [] has none: empty lists are set after
        # the table is declared
        empty = [k for k, v in parameters.items() if isinstance(v, (list, tuple)) and not v]
        overrides = [Parameter(k, value=v) for k, v in parameters.items() if k not in empty]
        #: names set by the process config (and --ros-args) for this node: checked for typos
        self.configured_names = set(parameters)
        # The values come resolved (process config < --params-file < -p, see
        # sweetie_motion.ros_arguments): given as overrides they replace what rcl read of the
        # same names. Nothing is declared from overrides: a global -p rule for another node's
        # parameter must not appear on this one.
        super().__init__(node_name, parameter_overrides=overrides,
                         automatically_declare_parameters_from_overrides=False, **kwargs)
        service = change_state_service(self)
        if service is not None:
            service.callback = self._guard_change_state(service.callback)
        self._declare_parameters(parameters, empty)
        self.values: dict = {}
        #: topic inputs are streams whose newest message wins: they run one at a time, in the
        #: order they arrived (in a reentrant group two callbacks of one topic overlapped, and
        #: an older pose could reach the cycle after the newest one and stay the target)
        self.input_group = MutuallyExclusiveCallbackGroup()
        #: why the last transition failed ('' : it did not)
        self.failure = ''
        self._running_goals = 0
        self._running_lock = threading.Lock()

    # --- parameters ----------------------------------------------------------------------------

    def _declare_parameters(self, parameters: Dict[str, Any], empty: Sequence[str] = ()) -> None:
        # the table with its descriptors (override values win over defaults), then the names
        # outside it that the node accepts (per-joint entries such as smoothing.joint51.*)
        declare_table(self, self.PARAMETERS, empty)
        for name, value in parameters.items():
            if not self.has_parameter(name) and name not in empty:
                self.declare_parameter(name, value)

    def accepts_parameter(self, name: str) -> bool:
        """Return whether a parameter outside the table is meaningful (e.g. per-joint ones)."""
        return False

    def read_parameters(self) -> dict:
        """
        Validate the table and reject unknown parameters; store and return the values.

        :raises ParameterError: naming every problem.
        """
        values = read_table(self, self.PARAMETERS)
        # only names given to this node by the process config are checked: command-line
        # overrides (--ros-args -p) apply to every node of the process
        known = {spec.name for spec in self.PARAMETERS} | BUILTIN_PARAMETERS
        unknown = [name for name in self.configured_names
                   if name not in known and not self.accepts_parameter(name)]
        if unknown:
            raise ParameterError(f'unknown parameter(s) {", ".join(sorted(unknown))}')
        self.values = values
        return values

    # --- transitions ---------------------------------------------------------------------------

    def configure_component(self) -> None:
        """Read parameters, build the core, create ROS entities."""

    def activate_component(self) -> None:
        """Join the cycle."""

    def deactivate_component(self) -> None:
        """Leave the cycle."""

    def cleanup_component(self) -> None:
        """Release what configure created."""

    def _transition(self, step: str, action: Callable[[], None]) -> TransitionCallbackReturn:
        try:
            action()
        except (SweetieMotionError, ValueError) as error:
            self.get_logger().error(f'{step} failed: {error}')
            self.failure = f'{step} failed: {error}'
            return TransitionCallbackReturn.FAILURE
        except Exception as error:  # noqa: B902 -- a bug must fail the transition, not the process
            self.get_logger().error(f'{step} failed:\n{traceback.format_exc()}')
            self.failure = f'{step} failed: {type(error).__name__}: {error}'
            return TransitionCallbackReturn.FAILURE
        self.failure = ''
        return TransitionCallbackReturn.SUCCESS

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = self._transition('configure', self.configure_component)
        if result != TransitionCallbackReturn.SUCCESS:
            failure = self.failure
            self._transition('cleanup after failed configure', self.cleanup_component)
            self.failure = failure
        return result

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = self._transition('activate', self.activate_component)
        if result == TransitionCallbackReturn.SUCCESS:
            return super().on_activate(state)
        return result

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        result = self._transition('deactivate', self.deactivate_component)
        super().on_deactivate(state)
        return result

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        return self._transition('cleanup', self.cleanup_component)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if state.label == 'active':
            self._transition('deactivate', self.deactivate_component)
        if state.label in ('active', 'inactive'):
            self._transition('cleanup', self.cleanup_component)
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.get_logger().error(f'error processing in state {state.label}; cleaning up')
        self._transition('deactivate', self.deactivate_component)
        self._transition('cleanup', self.cleanup_component)
        return TransitionCallbackReturn.SUCCESS

    @property
    def lifecycle_state(self) -> str:
        """Return the label of the current lifecycle state ('active', 'inactive', ...)."""
        return self._state_machine.current_state[1]

    def make_operational(self, operational: bool) -> Tuple[bool, str]:
        """
        Bring the node to active (configuring it first if needed) or out of active.

        :return: (whether it got there, what its state is now).
        """
        if operational:
            if self.lifecycle_state == 'unconfigured':
                self.trigger_configure()
            if self.lifecycle_state == 'inactive':
                self.trigger_activate()
            done = self.lifecycle_state == 'active'
            reason = f': {self.failure}' if self.failure else ''
            return done, ('active' if done else
                          f'could not activate (state {self.lifecycle_state}{reason})')
        if self.lifecycle_state == 'active':
            self.trigger_deactivate()
        return self.lifecycle_state != 'active', f'state {self.lifecycle_state}'

    @contextmanager
    def goal_running(self) -> Iterator[None]:
        """Count an action goal's execute callback as running while inside this block."""
        with self._running_lock:
            self._running_goals += 1
        try:
            yield
        finally:
            with self._running_lock:
                self._running_goals -= 1

    def goals_running(self) -> int:
        """Return how many action goals of this node have not returned their result yet."""
        with self._running_lock:
            return self._running_goals

    def call_soon(self, function: Callable[[], None]) -> None:
        """Run ``function`` in the executor (e.g. a transition asked for from the cycle)."""
        executor = self.executor
        if executor is not None:
            executor.create_task(function)

    def _guard_change_state(self, handler):
        def change_state(request, response):
            try:
                return handler(request, response)
            except RCLError as error:
                self.get_logger().warning(
                    f'refused lifecycle transition id={request.transition.id} '
                    f'label={request.transition.label!r} from state '
                    f'{self.lifecycle_state!r}: {error}')
                response.success = False
                return response
        return change_state

    # --- entities ------------------------------------------------------------------------------

    def _incompatible_qos(self, topic: str):
        def warn(event) -> None:
            self.get_logger().warning(
                f'{topic}: incompatible QoS with a peer (policy {event.last_policy_kind})',
                throttle_duration_sec=10.0)
        return warn

    def make_publisher(self, msg_type, topic: str, qos,
                       matched: Optional[Callable[[Any], None]] = None) -> Publisher:
        """
        Create a publisher with one QoS event handler instead of rclpy's two.

        Every waitable costs the executor time on each wake-up (its wait set is rebuilt in
        Python), so entities of the motion process keep only the incompatible-QoS warning.

        :param matched: called with rmw's matched status when a subscriber comes or goes
            (``current_count``: how many there are now).
        """
        callbacks = PublisherEventCallbacks(incompatible_qos=self._incompatible_qos(topic),
                                            matched=matched, use_default_callbacks=False)
        return self.create_publisher(msg_type, topic, qos, event_callbacks=callbacks)

    def make_subscription(self, msg_type, topic: str, callback, qos) -> Subscription:
        """Create a subscription in the ordered input group with one QoS event handler."""
        callbacks = SubscriptionEventCallbacks(
            incompatible_qos=self._incompatible_qos(topic), use_default_callbacks=False)
        return self.create_subscription(msg_type, topic, callback, qos,
                                        callback_group=self.input_group,
                                        event_callbacks=callbacks)

    def hand_pose(self, msg: Any) -> Optional[Dict[str, float]]:
        """
        Return a move_by_hand JointState as {joint: position}, or None (a warning) if malformed.

        :param msg: a sensor_msgs/JointState.
        """
        try:
            return dict(zip(msg.name, joint_state_positions(msg)))
        except ValueError as error:
            self.get_logger().warning(f'move_by_hand ignored: {error}',
                                      throttle_duration_sec=5.0)
            return None

    def pendant_watches(self) -> List[PendantWatch]:
        """Return the watches over clients' pendants among this node's entities."""
        return [e for e in getattr(self, '_entities', ()) if isinstance(e, PendantWatch)]

    def destroy_entities(self, entities: List[Any]) -> None:
        """Destroy the publishers, subscriptions, services, timers, action servers given."""
        for entity in entities:
            if isinstance(entity, LifecyclePublisher):
                self.destroy_lifecycle_publisher(entity)
            elif isinstance(entity, Publisher):
                self.destroy_publisher(entity)
            elif isinstance(entity, Subscription):
                self.destroy_subscription(entity)
            elif isinstance(entity, Service):
                self.destroy_service(entity)
            elif isinstance(entity, Timer):
                self.destroy_timer(entity)
            elif isinstance(entity, Client):
                self.destroy_client(entity)
            elif entity is not None and hasattr(entity, 'destroy'):
                entity.destroy()  # action servers and clients
        entities.clear()

    async def sleep(self, seconds: float, group=None) -> None:
        """Wait ``seconds`` inside a coroutine of the executor (an action or service callback)."""
        from rclpy.task import Future
        future = Future()
        timer = self.create_timer(seconds, lambda: future.done() or future.set_result(True),
                                  callback_group=group)
        await future
        self.destroy_timer(timer)


class ComponentNode(ManagedNode):
    """
    A lifecycle node whose work runs as a component on the cycle side.

    Configure creates the component (:meth:`create_component`, from a spec), the lifecycle
    activates and deactivates it, cleanup destroys the node's entities (``self._entities``) and
    the component.

    :param process: the motion process (its model, period and cycle host).
    """

    def __init__(self, process, name: str, **kwargs: Any) -> None:
        self.process = process
        super().__init__(name, **kwargs)
        self._created = False
        self._entities: List[Any] = []

    @property
    def host(self) -> HostClient:
        """Return the client of the cycle host."""
        return self.process.host

    def create_component(self, kind: Type[Component], spec: Any, timeout: float = 10.0) -> None:
        """Create this node's component, of class ``kind``, on the cycle side."""
        self.host.cycle(timeout).create(self.get_name(), kind, spec)
        self._created = True

    def activate_component(self) -> None:
        self.host.run(Activate(self.get_name()))

    def deactivate_component(self) -> None:
        if self._created:
            self.host.run(Deactivate(self.get_name()))

    def cleanup_component(self) -> None:
        self.destroy_entities(self._entities)
        if self._created:
            self._created = False
            self.host.cycle(timeout=10.0).destroy(self.get_name())
