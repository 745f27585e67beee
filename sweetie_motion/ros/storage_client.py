"""
The one client of the trajectory storage node: list, load, save and delete over its parameters.

Each stored trajectory is the BYTE_ARRAY parameter ``<trajectory_namespace>.<name>`` of the
``trajectory_storage`` node (:mod:`sweetie_motion.nodes.storage`), holding a serialized
control_msgs FollowJointTrajectory goal. This module is the only place that encodes and decodes
those values and turns the parameter services' answers into goals or errors.

Two ways to use it, on a node the caller owns and spins (the client never spins it):

- **futures** (``list_async``, ``load_async``, ``save_async``, ``delete_async``): they complete
  in the node's executor with the decoded value, or with a :class:`StorageError`; a coroutine of
  that executor can ``await`` them (the trajectory controller's play-by-name does). A timeout
  makes them fail with :class:`StorageTimeoutError` when the storage never answers (it died
  after the request went out);
- **blocking** (``names``, ``load``, ``save``, ``delete``): wait for the services and the answer
  with a timeout, for a caller whose node spins in another thread (the CLI, the Python API).

    client = TrajectoryStorageClient(node, '/sweetie_bot/trajectory_storage')
    goal = client.load('greeting', timeout=5.0)
"""

import threading
from typing import Any, Callable, List, Optional

from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rclpy.task import Future

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.ros.conversions import byte_array_value, goal_from_bytes, goal_to_bytes
from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
from sweetie_motion.trajectory.goal import TrajectoryGoal
from sweetie_motion.trajectory.validation import check_structure, GoalError

#: how long the blocking calls wait for the services and for an answer by default [s]
DEFAULT_TIMEOUT = 15.0
#: a request that may be repeated (list, load) is sent again after this long without an
#: answer [s]: Fast DDS drops a response whose reader it has not matched yet ("failed to send
#: response (timeout)"), and the client would otherwise wait out the whole timeout
ASK_AGAIN_AFTER = 0.5


class StorageError(SweetieMotionError):
    """
    A storage request failed; the message says why.

    :param message: for the user.
    :param name: the trajectory concerned ('' for a listing).
    :param reason: the storage node's own reason, when it gave one.
    """

    def __init__(self, message: str, name: str = '', reason: str = '') -> None:
        self.name = name
        self.reason = reason
        super().__init__(message)


class StorageUnavailableError(StorageError):
    """The storage node's parameter services are not there (not running, not discovered)."""


class StorageTimeoutError(StorageError):
    """The storage node did not answer in time."""


class TrajectoryNotFoundError(StorageError):
    """No stored trajectory has that name."""


class StorageRefusedError(StorageError):
    """The storage node refused a save or a delete (its reason is in ``reason``)."""


def _checked(name: str, goal: Optional[TrajectoryGoal] = None) -> str:
    """Return ``name`` if it (and ``goal``) can be stored; raise a StorageError otherwise."""
    try:
        check_name(name)
        if goal is not None:
            check_structure(goal)
    except (TrajectoryFileError, GoalError) as error:
        raise StorageError(str(error), name if isinstance(name, str) else '',
                           str(error)) from None
    return name


def encode_goal(goal: TrajectoryGoal) -> List[bytes]:
    """Return the parameter value that stores ``goal`` (rclpy's form of a BYTE_ARRAY)."""
    return byte_array_value(goal_to_bytes(goal))


def decode_value(value: Any, name: str = '') -> TrajectoryGoal:
    """
    Return the goal held by a ParameterValue message of the storage node.

    rclpy hands byte arrays over as a list of 1-byte ``bytes`` or as one ``bytes``: both work.

    :raises TrajectoryNotFoundError: no value (the parameter is not set).
    :raises StorageError: the bytes are not a serialized FollowJointTrajectory goal.
    """
    data = getattr(value, 'byte_array_value', None) if value is not None else None
    if not data:
        raise TrajectoryNotFoundError(f'no stored trajectory named {name!r}', name)
    blob = b''.join(data) if isinstance(data, (list, tuple)) else bytes(data)
    try:
        return goal_from_bytes(blob)
    except GoalError as error:
        raise StorageError(f'stored trajectory {name!r} is unreadable: {error}', name,
                           str(error)) from None


class _PendingRequest:
    """
    One request to the storage node: the future of its decoded answer, its timers, its resends.

    The first answer, error or timeout settles ``outer``; the others are ignored, and the
    requests still in flight are cancelled.
    """

    def __init__(self, node: Any, what: str, name: str, send: Callable[[], Future],
                 decode: Callable[[Any], Any]) -> None:
        self.node, self.what, self.name = node, what, name
        self._send, self._decode = send, decode
        self.outer = Future(executor=getattr(node, 'executor', None))
        self._lock = threading.Lock()
        self._timers: List[Any] = []
        self._sent: List[Future] = []
        self._timeout: Optional[float] = None

    def start(self, inner: Future, timeout: Optional[float], repeatable: bool) -> None:
        """Watch the request sent (``inner``): its timeout, and resends when ``repeatable``."""
        self._sent.append(inner)
        self._timeout = timeout
        if timeout is not None:
            with self._lock:
                self._timers.append(self.node.create_timer(timeout, self._expired))
        if repeatable and (timeout is None or timeout > ASK_AGAIN_AFTER):
            with self._lock:
                self._timers.append(self.node.create_timer(ASK_AGAIN_AFTER, self._ask_again))
        inner.add_done_callback(self._answered)

    def settle(self, result: Any = None, error: Optional[Exception] = None) -> bool:
        """Give ``outer`` its result or error unless it has one; return whether it took it."""
        with self._lock:
            if self.outer.done():
                return False
            for timer in self._timers:
                timer.cancel()
                self.node.destroy_timer(timer)
            self._timers.clear()
            if error is not None:
                self.outer.set_exception(error)
            else:
                self.outer.set_result(result)
            pending = list(self._sent)
        for request in pending:
            if not request.done():
                request.cancel()
        return True

    def _answered(self, future: Future) -> None:
        if future.cancelled():
            return
        response = future.result()
        if response is None:
            self.settle(error=StorageError(f'{self.what}: no answer from the storage node',
                                           self.name))
            return
        try:
            value = self._decode(response)
        except StorageError as error:
            self.settle(error=error)
            return
        self.settle(value)

    def _expired(self) -> None:
        self.settle(error=StorageTimeoutError(
            f'{self.what}: the trajectory storage did not answer within {self._timeout:g} s',
            self.name))

    def _ask_again(self) -> None:
        with self._lock:
            if self.outer.done():
                return
            again = self._send()
            self._sent.append(again)
        again.add_done_callback(self._answered)


class TrajectoryStorageClient:
    """
    Talk to a ``trajectory_storage`` node through its parameter services.

    :param node: the rclpy node to use; the caller spins it (in any executor).
    :param storage_node: the storage node's name, absolute ('/sweetie_bot/trajectory_storage')
        or relative to ``node``'s namespace.
    :param trajectory_namespace: the storage node's ``trajectory_namespace`` parameter.
    :param timeout: default timeout of every request [s] (None: futures wait forever).
    """

    def __init__(self, node, storage_node: str = 'trajectory_storage',
                 trajectory_namespace: str = 'joint_trajectory',
                 timeout: Optional[float] = DEFAULT_TIMEOUT) -> None:
        self.node = node
        self.storage_node = storage_node
        self.prefix = trajectory_namespace + '.'
        self.timeout = timeout
        self._parameters = AsyncParameterClient(node, storage_node)

    # --- readiness -----------------------------------------------------------------------------

    def ready(self) -> bool:
        """Return whether the storage node's services are discovered (does not wait)."""
        return self._parameters.services_are_ready()

    def wait_ready(self, timeout: Optional[float] = None) -> bool:
        """
        Wait until the services are discovered (the node must spin in another thread).

        :param timeout: [s]; default: the client's timeout.
        :return: whether they are.
        """
        timeout = self.timeout if timeout is None else timeout
        return self._parameters.wait_for_services(timeout_sec=timeout)

    # --- futures -------------------------------------------------------------------------------

    def list_async(self, timeout: Optional[float] = None) -> Future:
        """
        Ask for the names of the stored trajectories.

        :param timeout: [s]; default: the client's timeout.
        :return: a future of the sorted names, or failing with a :class:`StorageError`.
        """
        def decode(response) -> List[str]:
            names = response.result.names
            return sorted(n[len(self.prefix):] for n in names if n.startswith(self.prefix))
        return self._request('list trajectories', '', lambda: self._parameters.list_parameters(
            prefixes=[self.prefix.rstrip('.')], depth=0), decode, timeout, repeatable=True)

    def load_async(self, name: str, timeout: Optional[float] = None) -> Future:
        """
        Ask for a stored trajectory.

        :param timeout: [s]; default: the client's timeout.
        :return: a future of the :class:`TrajectoryGoal`, or failing with a
            :class:`StorageError` (:class:`TrajectoryNotFoundError` for an unknown name).
        """
        def decode(response) -> TrajectoryGoal:
            value = response.values[0] if response.values else None
            return decode_value(value, name)
        return self._request(f'load {name!r}', name, lambda: self._parameters.get_parameters(
            [self.prefix + check_name(name)]), decode, timeout, repeatable=True)

    def save_async(self, name: str, goal: TrajectoryGoal,
                   timeout: Optional[float] = None) -> Future:
        """
        Store a trajectory; the future completes once the storage node wrote it to its file.

        The goal's structure is checked here first (an invalid goal fails the future at once).

        :param timeout: [s]; default: the client's timeout.
        :return: a future of None, or failing with :class:`StorageRefusedError` (the node's
            reason) or another :class:`StorageError`.
        """
        def send():
            check_structure(goal)
            parameter = Parameter(self.prefix + check_name(name), Parameter.Type.BYTE_ARRAY,
                                  encode_goal(goal))
            return self._parameters.set_parameters([parameter])
        return self._request(f'save {name!r}', name, send,
                             lambda response: self._outcome(response, 'saving', name),
                             timeout)

    def delete_async(self, name: str, timeout: Optional[float] = None) -> Future:
        """
        Delete a stored trajectory (a built-in one of that name shows again).

        :param timeout: [s]; default: the client's timeout.
        :return: a future of None, or failing with :class:`StorageRefusedError` (unknown name,
            built-in trajectory) or another :class:`StorageError`.
        """
        return self._request(f'delete {name!r}', name, lambda: self._parameters.
                             delete_parameters([self.prefix + check_name(name)]),
                             lambda response: self._outcome(response, 'deleting', name),
                             timeout)

    @staticmethod
    def _outcome(response, verb: str, name: str) -> None:
        result = response.results[0] if response.results else None
        if result is None:
            raise StorageError(f'{verb} {name!r}: the storage node gave no result', name)
        if not result.successful:
            raise StorageRefusedError(f'{verb} {name!r} refused: {result.reason}', name,
                                      result.reason)

    def _request(self, what: str, name: str, send: Callable[[], Future],
                 decode: Callable[[Any], Any], timeout: Optional[float],
                 repeatable: bool = False) -> Future:
        """
        Send a request; return a future of its decoded answer (or of the error).

        :param repeatable: the request may be sent again (every ``ASK_AGAIN_AFTER`` without
            an answer; the first answer counts): reads only. A save sent again could undo
            another client's save in between, a delete would answer "unknown name".
        """
        pending = _PendingRequest(self.node, what, name, send, decode)
        if not self.ready():
            pending.outer.set_exception(StorageUnavailableError(
                f'{what}: the trajectory storage {self.storage_node!r} is not available '
                '(is the motion process running?)', name))
            return pending.outer
        try:
            inner = send()
        except (TrajectoryFileError, GoalError) as error:
            pending.outer.set_exception(StorageError(f'{what}: {error}', name, str(error)))
            return pending.outer
        pending.start(inner, self.timeout if timeout is None else timeout, repeatable)
        return pending.outer

    # --- blocking ------------------------------------------------------------------------------

    def wait(self, future: Future, timeout: Optional[float] = None) -> Any:
        """
        Wait for a future of this client (the node spins in another thread); return its value.

        :raises StorageError: the future's error.
        """
        return self._wait(future, timeout)

    def _wait(self, future: Future, timeout: Optional[float]) -> Any:
        """Wait for a future completed by the executor of another thread."""
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        limit = self.timeout if timeout is None else timeout
        # the future's own timer fails it first; this only guards a node nobody spins
        if not done.wait(None if limit is None else limit + 1.0):
            raise StorageTimeoutError('no answer from the trajectory storage (is the node '
                                      'spinning?)')
        error = future.exception()
        if error is not None:
            raise error
        return future.result()

    def _blocking(self, make: Callable[[], Future], timeout: Optional[float]) -> Any:
        if not self.ready() and not self.wait_ready(timeout):
            raise StorageUnavailableError(f'the trajectory storage {self.storage_node!r} is not '
                                          'available (start the motion process first)')
        return self._wait(make(), timeout)

    def names(self, timeout: Optional[float] = None) -> List[str]:
        """
        Return the names of the stored trajectories, sorted.

        :param timeout: for the services and for the answer [s]; default: the client's.
        :raises StorageError: not available, no answer.
        """
        return self._blocking(lambda: self.list_async(timeout), timeout)

    def load(self, name: str, timeout: Optional[float] = None) -> TrajectoryGoal:
        """
        Return a stored trajectory.

        :raises TrajectoryNotFoundError: unknown name.
        :raises StorageError: invalid name, not available, no answer.
        """
        _checked(name)
        return self._blocking(lambda: self.load_async(name, timeout), timeout)

    def save(self, name: str, goal: TrajectoryGoal, timeout: Optional[float] = None) -> None:
        """
        Store a trajectory; returns once it is written to its file.

        :raises StorageRefusedError: with the storage node's reason.
        :raises StorageError: invalid name or goal, not available, no answer.
        """
        _checked(name, goal)
        self._blocking(lambda: self.save_async(name, goal, timeout), timeout)

    def delete(self, name: str, timeout: Optional[float] = None) -> None:
        """
        Delete a stored trajectory.

        :raises StorageRefusedError: unknown or built-in name.
        :raises StorageError: invalid name, not available, no answer.
        """
        _checked(name)
        self._blocking(lambda: self.delete_async(name, timeout), timeout)
