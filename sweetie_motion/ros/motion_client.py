"""
Python client API of a running motion process: stored trajectories and playback by name.

    from sweetie_motion.ros.motion_client import MotionClient
    with MotionClient('sweetie_bot') as robot:
        print(robot.names())
        result = robot.play('greeting', speed=1.5)
        print(result.succeeded, result.error_code, result.error_string)

The client owns an rclpy node spun in a background thread (or uses a node you give it, which
you spin). Storage goes through the parameters of the ``trajectory_storage`` node, playback
through the ``play_trajectory`` action and execution through FollowJointTrajectory: the same
plain ROS 2 interfaces any other tool uses.
"""

import os
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, TYPE_CHECKING, TypeVar, Union

from sweetie_motion.errors import did_you_mean, SweetieMotionError
from sweetie_motion.trajectory.goal import TrajectoryGoal

if TYPE_CHECKING:
    from sweetie_motion.ros.pendant import Pendant

#: a result is asked for again this often while waiting for it [s]
RESULT_RECHECK = 2.0
#: an action server not seen for this long is gone [s]
SERVER_GONE = 3.0
#: after an interrupt, the server's answer to the cancel is awaited this long [s]
CANCEL_GRACE = 2.0
#: a wait for the motion process that takes longer than this is announced [s]
NOTICE_AFTER = 0.5
#: a query not answered within this is asked again (then after twice as long, ...) [s]
ASK_AGAIN_AFTER = 0.5


class MotionResult(NamedTuple):
    """
    How a motion ended: success flag, the action's error_code and error_string.

    ``failed_waypoint``: a Cartesian motion's waypoint (index in the goal) planning failed at,
    -1 for none and for every other action.
    """

    succeeded: bool
    error_code: int
    error_string: str
    failed_waypoint: int = -1


class ClientError(SweetieMotionError):
    """The motion process did not answer, or refused a request (the reason is the message)."""


class UnknownTrajectoryError(ClientError):
    """No stored trajectory has that name (the message names the closest stored one)."""


class StopRequested(KeyboardInterrupt):
    """
    Ctrl+C while a motion ran: its goal was cancelled.

    A KeyboardInterrupt still (``except KeyboardInterrupt`` catches it).

    :param stopped: the controller confirmed the end of the motion; False: no answer within
        :data:`CANCEL_GRACE`; None: a second Ctrl+C left before the answer.
    """

    def __init__(self, stopped: Optional[bool]) -> None:
        super().__init__()
        self.stopped = stopped


def interrupt_message(error: BaseException) -> str:
    """Return what to tell a person who pressed Ctrl+C (``error`` the KeyboardInterrupt)."""
    stopped = getattr(error, 'stopped', 'idle')
    if stopped is True:
        return 'stopped: the motion was cancelled; the robot decelerated and holds'
    if stopped is False:
        return (f'stopped: the cancel was sent, but the motion process did not confirm it '
                f'within {CANCEL_GRACE:g} s: the robot may still be moving')
    if stopped is None:
        return 'interrupted again: leaving at once; the motion may still be running'
    return 'interrupted'


#: MotionClient or a subclass (``with ArmClient(...) as arm`` keeps the ArmClient type)
_Client = TypeVar('_Client', bound='MotionClient')


class MotionClient:
    """
    Talk to the motion process in ``namespace``.

    :param node: an rclpy node to use (you spin it); default: an own node in its own thread.
    :param timeout: how long to wait for services and answers [s].
    :param notice: told (one line) when a wait for the motion process begins to take time,
        e.g. ``print`` to standard error in a command; None: quiet.
    :param pendant: publish a heartbeat naming the goals this client sent
        (:class:`~sweetie_motion.ros.pendant.Pendant`): should this process die (kill -9, a
        crash), the motion process stops them within the lease. A Pendant: that one (shared
        with other clients of the process). False: the goals run on without their client, as
        those of a plain action client do.
    """

    def __init__(self, namespace: str = 'sweetie_bot', node=None, timeout: float = 15.0,
                 storage_node: str = 'trajectory_storage',
                 trajectory_namespace: str = 'joint_trajectory',
                 play_action: str = 'play_trajectory',
                 controller: str = 'joint_trajectory',
                 notice: Optional[Callable[[str], None]] = None,
                 pendant: Union[bool, 'Pendant'] = True) -> None:
        from sweetie_motion.ros.action_client import ActionClient
        from sweetie_motion.ros.pendant import Pendant
        from control_msgs.action import FollowJointTrajectory
        from sweetie_motion_msgs.action import PlayTrajectory
        self.ns = '/' + namespace.strip('/')
        self.timeout = timeout
        self._background = None
        if node is None:
            from sweetie_motion.ros.background import BackgroundNode
            self._background = BackgroundNode('sweetie_motion_client', lean=True)
            node = self._background.node
        #: set by :meth:`interrupt`: every wait of the client ends at once
        self._interrupt = threading.Event()
        #: the goals accepted and not finished yet (cancelled by :meth:`stop` and on Ctrl+C)
        self._handles: List = []
        #: the goals sent whose acceptance the sending thread has not taken yet: a stop
        #: meanwhile cancels them as soon as they are accepted (the robot may move already)
        self._sending: List = []
        self._goals_lock = threading.Lock()
        self.node = node
        from sweetie_motion.ros.storage_client import TrajectoryStorageClient
        self.storage = TrajectoryStorageClient(node, f'{self.ns}/{storage_node}',
                                               trajectory_namespace, timeout)
        #: the heartbeat that stops this client's motions should it die (None: none)
        self._own_pendant = pendant is True
        self.pendant: Optional[Pendant] = (Pendant(node, self.ns) if pendant is True else
                                           pendant or None)
        self._play = ActionClient(node, PlayTrajectory, f'{self.ns}/{play_action}',
                                  pendant=self.pendant)
        self._follow = ActionClient(node, FollowJointTrajectory,
                                    f'{self.ns}/{controller}/follow_joint_trajectory',
                                    pendant=self.pendant)
        self._play_type = PlayTrajectory
        self._notice = notice
        self._noticed = False
        self._storage_node = f'{self.ns}/{storage_node}'
        self._storage_checked = False
        # made now, not when first needed: its endpoints are discovered alongside the rest
        from lifecycle_msgs.srv import GetState
        self._storage_state = node.create_client(GetState, f'{self._storage_node}/get_state')

    # --- plumbing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the node (and its context, if the client created them)."""
        if self.pendant is not None and self._own_pendant and self._background is None:
            self.pendant.destroy()   # a node of the caller's: its heartbeat ends here
        if self._background is not None:
            self._background.close()

    def readiness(self) -> Dict[str, bool]:
        """Return, per part of the motion process this client uses, whether it answers now."""
        return {'trajectory_controller': self._follow.server_is_ready(),
                'play_trajectory': self._play.server_is_ready()}

    def interrupt(self) -> None:
        """End every wait of the client now (ClientError 'stopped'); see :meth:`resume`."""
        self._interrupt.set()

    def resume(self) -> None:
        """Let the client wait again after :meth:`interrupt` or :meth:`stop`."""
        self._interrupt.clear()

    def stop(self) -> None:
        """
        Cancel the motions in progress (they decelerate and hold) and end every wait.

        A wait for a motion's result ends when the cancelled result arrives, or after
        :data:`CANCEL_GRACE` seconds when nothing answers (a killed motion process). Motions
        are refused until :meth:`resume`.
        """
        self.interrupt()
        with self._goals_lock:
            handles, sending = list(self._handles), list(self._sending)
        for handle in handles:
            handle.cancel_goal_async()
        for sent in sending:
            sent.add_done_callback(_cancel_if_accepted)

    def __enter__(self: _Client) -> _Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def where(self) -> str:
        """Return where the client looks: namespace, ROS domain and discovery range."""
        domain = os.environ.get('ROS_DOMAIN_ID', '0') or '0'
        reach = os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET') or 'SUBNET'
        return f'{self.ns} (ROS_DOMAIN_ID {domain}, discovery {reach.lower()})'

    def motion_processes(self) -> List[str]:
        """Return the namespaces of the motion processes this client sees (their motion node)."""
        return sorted({space for name, space in self.node.get_node_names_and_namespaces()
                       if name == 'motion'})

    def discover(self, ready: Callable[[], bool], what: str) -> None:
        """
        Wait until ``ready()`` (something of the motion process is discovered).

        A wait that takes more than :data:`NOTICE_AFTER` is announced through ``notice``; one
        that ends without it says what was searched and what to check.

        :raises ClientError: not within the client's timeout.
        """
        deadline = time.monotonic() + self.timeout
        started = time.monotonic()
        while not ready():
            now = time.monotonic()
            if self._interrupt.is_set():
                raise ClientError(f'stopped while waiting for {what}')
            if now > deadline:
                seen = self.motion_processes()
                running = (f'motion processes seen: {", ".join(seen)}' if seen else
                           'no motion process seen at all')
                raise ClientError(
                    f'no {what} in {self.where()} within {self.timeout:g} s ({running}); is '
                    '`sweetie-motion bringup` running with that namespace (--namespace) and '
                    'ROS_DOMAIN_ID?')
            if now - started > NOTICE_AFTER and not self._noticed and self._notice is not None:
                self._noticed = True
                self._notice(f'waiting for the motion process in {self.where()} (up to '
                             f'{self.timeout:g} s, --timeout) ...')
            time.sleep(0.02)

    def _storage_ready(self) -> None:
        """Wait for the storage node; refuse one that is not active (its state named)."""
        if self._storage_checked:
            return
        from lifecycle_msgs.srv import GetState
        client = self._storage_state
        self.discover(lambda: self.storage.ready() and client.service_is_ready(),
                      'trajectory storage')
        state = self.ask(client, GetState.Request(),
                         'the trajectory storage state').current_state.label
        if state != 'active':
            raise ClientError(f'the trajectory storage {self._storage_node} is {state}, not '
                              'active: configure and activate it (ros2 lifecycle set '
                              f'{self._storage_node} configure, then activate), or start the '
                              'bringup without --no-autostart')
        self._storage_checked = True

    def call_service(self, srv_type: Any, name: str, request: Any = None, what: str = '') -> Any:
        """
        Call a service of the motion process (discovered first); return the response.

        :param name: the service's full name ('/sweetie_bot/controller_manager/...').
        :param request: default: an empty request.
        :raises ClientError: not discovered or not answered within the client's timeout.
        """
        client = self.node.create_client(srv_type, name)
        try:
            self.discover(client.service_is_ready, what or name)
            return self._wait(client.call_async(request if request is not None
                                                else srv_type.Request()), what or name)
        finally:
            self.node.destroy_client(client)

    def call_services(self, calls: List[Any], what: str) -> List[Any]:
        """
        Call several services of the motion process at once (queries); return the responses.

        Every client is made first, so that their discovery overlaps; then every request goes
        out, each asked again as :meth:`ask` does.

        :param calls: (service type, full name, request) each.
        :raises ClientError: one is not discovered or not answered within the timeout.
        """
        clients = [self.node.create_client(srv_type, name) for srv_type, name, _ in calls]
        try:
            self.discover(lambda: all(c.service_is_ready() for c in clients), what)
            futures = [c.call_async(r) for c, (_, _, r) in zip(clients, calls)]
            deadline = time.monotonic() + ASK_AGAIN_AFTER
            while not all(f.done() for f in futures) and time.monotonic() < deadline:
                time.sleep(0.005)
            return [f.result() if f.done() else self.ask(c, r, what)
                    for f, c, (_, _, r) in zip(futures, clients, calls)]
        finally:
            for client in clients:
                self.node.destroy_client(client)

    def ask(self, client, request, what: str) -> Any:
        """
        Call a discovered service whose request may be repeated (a query); return the answer.

        Fast DDS drops the answer to a client its server has not matched yet (the server logs
        "failed to send response"): the request is sent again after :data:`ASK_AGAIN_AFTER`,
        and then each time that much longer, instead of waiting out the timeout.

        :raises ClientError: no answer within the client's timeout.
        """
        deadline = time.monotonic() + self.timeout
        wait = ASK_AGAIN_AFTER
        while True:
            future = client.call_async(request)
            try:
                return self._wait(future, what, min(wait, max(0.0, deadline - time.monotonic())))
            except ClientError:
                client.remove_pending_request(future)
                if time.monotonic() >= deadline or self._interrupt.is_set():
                    raise ClientError(f'no answer within {self.timeout:g} s: {what} from the '
                                      'motion process') from None
                wait *= 2

    def _wait(self, future, what: str, timeout: Optional[float] = None):
        from sweetie_motion.ros.background import wait_future
        return wait_future(future, self.timeout if timeout is None else timeout,
                           f'{what} from the motion process', ClientError, self._interrupt)

    def _result(self, handle, server, what: str, timeout: float):
        """
        Wait for the result of an accepted goal.

        A killed motion process stays "ready" in DDS discovery for about 20 s, and one
        restarted meanwhile never answers the old goal: the result is asked for again every
        :data:`RESULT_RECHECK` seconds, and a server that does not know the goal (status
        UNKNOWN: a new process) or a server gone for :data:`SERVER_GONE` seconds ends the
        wait. So does :meth:`interrupt`, after the server had :data:`CANCEL_GRACE` seconds to
        answer the cancel that usually goes with it.
        """
        from action_msgs.msg import GoalStatus
        deadline = time.monotonic() + timeout
        future = handle.get_result_async()
        asked = time.monotonic()
        recheck = None
        gone_since = interrupted_at = None
        while not future.done():
            now = time.monotonic()
            if now > deadline:
                raise ClientError(f'no {what} within {timeout:g} s')
            if self._interrupt.is_set():
                interrupted_at = interrupted_at or now
                if now - interrupted_at > CANCEL_GRACE:
                    raise ClientError(f'stopped while waiting for {what}')
            if server.server_is_ready():
                gone_since = None
            else:
                gone_since = gone_since or now
                if now - gone_since > SERVER_GONE:
                    raise ClientError(f'the motion process went away during {what}')
            if recheck is not None and recheck.done():
                answer = recheck.result()
                if answer is not None and answer.status == GoalStatus.STATUS_UNKNOWN:
                    raise ClientError(f'the motion process restarted during {what}: the '
                                      'goal is lost')
                recheck = None
            if recheck is None and now - asked > RESULT_RECHECK:
                recheck, asked = handle.get_result_async(), now
            time.sleep(0.01)
        return future.result()

    # --- storage (the package's one storage client) --------------------------------------------

    def _storage(self, call, *args):
        from sweetie_motion.ros.storage_client import StorageError, TrajectoryNotFoundError
        self._storage_ready()
        try:
            return call(*args, timeout=self.timeout)
        except TrajectoryNotFoundError as error:
            known = self._storage(self.storage.names)
            raise UnknownTrajectoryError(f'{error}{did_you_mean(error.name, known)}') from None
        except StorageError as error:
            raise ClientError(str(error)) from None

    def names(self) -> List[str]:
        """Return the names of the stored trajectories."""
        return sorted(self._storage(self.storage.names))

    def load_many(self, names: List[str]) -> List[TrajectoryGoal]:
        """
        Return several stored trajectories, asked for all at once.

        :raises UnknownTrajectoryError: one of them is not stored.
        :raises ClientError: storage not running, no answer.
        """
        from sweetie_motion.ros.storage_client import StorageError, TrajectoryNotFoundError
        self._storage_ready()
        futures = [self.storage.load_async(name, self.timeout) for name in names]
        goals = []
        for name, future in zip(names, futures):
            try:
                goals.append(self.storage.wait(future, self.timeout))
            except TrajectoryNotFoundError as error:
                raise UnknownTrajectoryError(str(error)) from None
            except StorageError as error:
                raise ClientError(str(error)) from None
        return goals

    def load(self, name: str) -> TrajectoryGoal:
        """
        Return a stored trajectory.

        :raises UnknownTrajectoryError: no stored trajectory of that name.
        :raises ClientError: storage not running, no answer.
        """
        return self._storage(self.storage.load, name)

    def save(self, name: str, goal: TrajectoryGoal) -> None:
        """
        Store a trajectory (written to its file before this returns).

        :raises ClientError: with the storage node's reason when refused.
        """
        self._storage(self.storage.save, name, goal)

    def delete(self, name: str) -> None:
        """
        Delete a stored trajectory.

        :raises ClientError: unknown, built-in, or refused.
        """
        self._storage(self.storage.delete, name)

    # --- motion --------------------------------------------------------------------------------

    def play(self, name: str, speed: float = 1.0, backward: bool = False,
             feedback: Optional[Callable[[float, float, float], None]] = None,
             timeout: Optional[float] = None) -> MotionResult:
        """
        Play a stored trajectory by name and wait for the result.

        Ctrl+C (KeyboardInterrupt) while waiting cancels the motion: the robot decelerates
        and holds; the interrupt goes on once the cancel is answered.

        :param feedback: called with (time_from_start, duration, progress).
        :return: the outcome with PlayTrajectory.Result's error_code and error_string.
        """
        self._discover_play(name)
        goal = self._play_type.Goal(name=name, speed_scale=float(speed), backward=backward)

        def on_feedback(message) -> None:
            if feedback is not None:
                f = message.feedback
                feedback(f.time_from_start, f.duration, f.progress)
        return self._run_goal(self._play, goal, f'play {name!r}', timeout, on_feedback)

    def _discover_play(self, name: str) -> None:
        """
        Wait for the play action; meanwhile ask the storage whether ``name`` is stored.

        An unknown name is refused as soon as the storage answers (naming the closest), which
        may be before the action is discovered; a storage that does not answer delays nothing.

        :raises UnknownTrajectoryError: the storage has no trajectory of that name.
        """
        from sweetie_motion.ros.storage_client import StorageError
        names: List[Any] = []

        def ready() -> bool:
            if not names and self.storage.ready():
                names.append(self.storage.list_async(self.timeout))
            if names and names[0].done():
                try:
                    known = names[0].result()
                except StorageError:
                    known = None   # the controller says it, when it plays
                if known is not None and name not in known:
                    raise UnknownTrajectoryError(f'no stored trajectory named {name!r}'
                                                 f'{did_you_mean(name, known)}')
            return self._play.server_is_ready()
        self.discover(ready, 'play_trajectory action')

    def execute(self, goal: TrajectoryGoal, timeout: Optional[float] = None
                ) -> MotionResult:
        """Execute a goal on the trajectory controller and wait for the outcome (Ctrl+C stops)."""
        from sweetie_motion.ros.conversions import goal_to_msg
        self.discover(self._follow.server_is_ready, 'trajectory controller')
        return self._run_goal(self._follow, goal_to_msg(goal), 'the goal', timeout)

    def _run_goal(self, client, goal, what: str, timeout: Optional[float] = None,
                  feedback: Optional[Callable[[Any], None]] = None) -> MotionResult:
        """
        Send a goal, wait for its result; cancel it on Ctrl+C (and on :meth:`stop`).

        :raises ClientError: refused, stopped, or no result.
        :raises KeyboardInterrupt: after the cancel was answered (or :data:`CANCEL_GRACE`).
        """
        if self._interrupt.is_set():
            raise ClientError(f'stopped before {what}')
        with self._goals_lock:
            sent = client.send_goal_async(goal, feedback_callback=feedback)
            self._sending.append(sent)
        try:
            handle = self._wait(sent, f'send {what}')
        except KeyboardInterrupt:
            self._forget_sending(sent)
            # the server may accept it all the same: then cancel it as soon as it is
            deadline = time.monotonic() + CANCEL_GRACE
            while not sent.done() and time.monotonic() < deadline:
                time.sleep(0.01)
            accepted = sent.done() and sent.result() is not None and sent.result().accepted
            raise StopRequested(self._cancel(sent.result()) if accepted
                                else sent.done()) from None
        except ClientError:
            self._forget_sending(sent)   # a stop meanwhile cancels it once it is accepted
            raise
        with self._goals_lock:
            self._sending.remove(sent)
            if handle.accepted:
                self._handles.append(handle)
        if not handle.accepted:
            raise ClientError(f'{what} was rejected')
        try:
            result = self._result(handle, client, f'the result of {what}',
                                  timeout if timeout is not None else 3600.0)
        except KeyboardInterrupt:
            try:
                stopped = self._cancel(handle)
            except KeyboardInterrupt:
                raise StopRequested(None) from None
            raise StopRequested(stopped) from None
        finally:
            with self._goals_lock:
                self._handles.remove(handle)
        return _outcome(result)

    def _forget_sending(self, sent) -> None:
        with self._goals_lock:
            if sent in self._sending:
                self._sending.remove(sent)

    def _cancel(self, handle) -> bool:
        """
        Cancel a goal and wait (at most :data:`CANCEL_GRACE`) until it has ended.

        :return: whether it ended (the controller answered).
        """
        future = handle.cancel_goal_async()
        result = handle.get_result_async()
        deadline = time.monotonic() + CANCEL_GRACE
        while time.monotonic() < deadline and not result.done():
            time.sleep(0.01)
        if not future.done():
            future.cancel()
        return result.done()

    def last_goal(self, controller: str = 'joint_trajectory') -> TrajectoryGoal:
        """Return the last goal the trajectory controller accepted (e.g. from MoveIt)."""
        from control_msgs.action import FollowJointTrajectory
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sweetie_motion.ros.conversions import goal_from_msg
        box = []
        topic = f'{self.ns}/{controller}/last_goal'
        subscription = self.node.create_subscription(
            FollowJointTrajectory.Goal, topic, box.append,
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        try:
            self.discover(lambda: self.node.count_publishers(topic) > 0,
                          f'trajectory controller {controller!r}')
            # a goal it executed is latched: it comes as soon as the publisher is matched
            deadline = time.monotonic() + 2.0
            while not box and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            self.node.destroy_subscription(subscription)
        if not box:
            raise ClientError(f'{self.ns}/{controller} has executed no goal yet')
        return goal_from_msg(box[0])


def _cancel_if_accepted(sent) -> None:
    """Cancel a goal a stop caught before its acceptance reached the sender (done callback)."""
    if sent.cancelled() or sent.exception() is not None:
        return
    handle = sent.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()


def _outcome(response) -> MotionResult:
    from action_msgs.msg import GoalStatus
    succeeded = response.status == GoalStatus.STATUS_SUCCEEDED
    message = response.result.error_string
    if not succeeded and not message:
        message = f'the goal ended with status {response.status} and no reason'
    # only CartesianMotion's result has the field; FollowJointTrajectory's has none
    failed_waypoint = int(getattr(response.result, 'failed_waypoint', -1))
    return MotionResult(succeeded, response.result.error_code, message, failed_waypoint)
