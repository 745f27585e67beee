"""
How the ROS side talks to the cycle host, in a child process or in the same process.

:class:`RemoteHost` (the default) runs the host in a child process, :class:`LocalHost` in this
one; both offer one API.

Why a child process: the ROS side must convert every message a client sends into Python
objects, and rclpy does that in C while holding the GIL — 28 ms for a 10 000-point
FollowJointTrajectory goal, 54 ms to publish it back (docs/cycle_timing.md). A cycle thread in
the same process waits that long for the GIL and loses ticks. In its own process the cycle has
its own GIL; only small calls and the (memory-mapped) spline of a goal cross over.

The ROS side calls through typed proxies: ``client.component(JointTrajectoryCore, name)``
is typed as the component's own class, so mypy checks each call and go-to-definition leads to
the method that runs on the cycle side; ``client.cycle()`` does the same for the
:class:`~sweetie_motion.host.host.CycleHost`. Both clients deliver the host's events
(:mod:`sweetie_motion.core.events`) to listeners in a thread of their own, so a listener may
call the host.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
import itertools
from multiprocessing.connection import Connection
import os
import queue
import subprocess
import sys
import threading
from typing import Any, Callable, cast, Dict, List, Mapping, Optional, Sequence, Type, TypeVar

from sweetie_motion.core.component import Component
from sweetie_motion.core.events import CycleEvent, HostExited
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.host import CycleHost, HOST
from sweetie_motion.host.transport import Channel, decode_error, remove_leftovers
from sweetie_motion.model.robot_model import RobotModel

#: default time a call may take before the caller gives up [s]
CALL_TIMEOUT = 10.0
#: time the child process may take to start (imports, robot model, DDS) [s]
START_TIMEOUT = 60.0

#: the module run as the cycle process
CHILD_MODULE = 'sweetie_motion.host.cycle_process'

Listener = Callable[[CycleEvent], None]
#: a component class reached through a proxy
C = TypeVar('C', bound=Component)


class HostError(SweetieMotionError):
    """The cycle host cannot be reached: it did not start, it died, or a call timed out."""


@dataclass
class HostSettings:
    """
    What the cycle process needs to start.

    :param robot: path of the robot description (the same file the ROS side loaded).
    :param period: cycle period [s].
    :param namespace: the robot namespace (for the state publisher's node).
    :param ros_args: the process's ROS arguments (``--ros-args ...``): remappings apply to
        both sides.
    :param node_name: name of the node that publishes joint_states for the cycle process.
    :param priority: the cycle's SCHED_FIFO priority (0: normal scheduling); the other threads
        of the cycle process run just below it.
    :param urdf_xml: the URDF the ROS side took from ``robot_description`` ('' : the file's).
    """

    robot: str
    period: float
    namespace: str = ''
    ros_args: List[str] = field(default_factory=list)
    node_name: str = 'cycle_state'
    priority: int = 0
    urdf_xml: str = ''


class HostClient(ABC):
    """
    Calls into the cycle host and delivers its events.

    :param period: the cycle period [s]; the ROS side reads it here (one holder).
    """

    #: True when the cycle runs in a process of its own
    isolated = False

    def __init__(self, period: float) -> None:
        self.period = float(period)
        self._listeners: List[Listener] = []
        self._events: 'queue.SimpleQueue[Optional[CycleEvent]]' = queue.SimpleQueue()
        self._dispatcher = threading.Thread(target=self._dispatch_events,
                                            name='host_events', daemon=True)
        self._dispatcher.start()

    def component(self, kind: Type[C], name: str, timeout: float = CALL_TIMEOUT,
                  wait: bool = True) -> C:
        """
        Return a proxy of the component ``name`` (of class ``kind``) on the cycle side.

        Its methods run there, with the arguments pickled; errors come back with their class
        and fields. ``wait=False``: calls return None at once and a failure comes back as a
        :class:`~sweetie_motion.core.events.CallFailed` event.

        :param timeout: how long each call may take [s] before :class:`HostError`.
        """
        return cast(C, _Proxy(self, name, timeout, wait))

    def cycle(self, timeout: float = CALL_TIMEOUT) -> CycleHost:
        """Return a proxy of the cycle host (its cycle, poses, statistics; create, destroy)."""
        return cast(CycleHost, _Proxy(self, HOST, timeout, True))

    @abstractmethod
    def call(self, target: str, method: str, args: Sequence[Any] = (),
             kwargs: Optional[Mapping[str, Any]] = None, timeout: float = CALL_TIMEOUT) -> Any:
        """
        Call a method of the host (target ``''``) or of a component (what proxies do).

        :raises HostError: the host is gone or did not answer within ``timeout`` [s].
        :raises Exception: whatever the method raised, same class and message.
        """

    def cast(self, target: str, method: str, args: Sequence[Any] = (),
             kwargs: Optional[Mapping[str, Any]] = None) -> None:
        """Call without waiting for the result (a failure becomes a CallFailed event)."""
        self.call(target, method, args, kwargs)

    @abstractmethod
    def close(self) -> None:
        """Stop the cycle and release the host."""

    @property
    def pid(self) -> int:
        """Return the process id of the cycle."""
        return os.getpid()

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(event)`` for every event of the host (in the events thread)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        self._listeners = [f for f in self._listeners if f != listener]

    def _dispatch_events(self) -> None:
        while True:
            event = self._events.get()
            if event is None:
                return
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception as error:  # noqa: B902 -- one listener must not stop others
                    print(f'sweetie_motion: event listener failed on {type(event).__name__}: '
                          f'{error}', file=sys.stderr)

    def _stop_events(self) -> None:
        self._events.put(None)
        if self._dispatcher is not threading.current_thread():
            self._dispatcher.join(2.0)


class LocalHost(HostClient):
    """
    The cycle host inside this process (``isolated_cycle: false``).

    For debugging, and for measuring what the child process buys (bench/cycle.py).

    :param model: the configured robot model.
    :param period: cycle period [s].
    """

    def __init__(self, model: RobotModel, period: float) -> None:
        super().__init__(period)
        self.host = CycleHost(model, period, self._events.put)

    def call(self, target: str, method: str, args: Sequence[Any] = (),
             kwargs: Optional[Mapping[str, Any]] = None, timeout: float = CALL_TIMEOUT) -> Any:
        """Call directly, in the caller's thread."""
        return self.host.dispatch(target, method, args, kwargs)

    def close(self) -> None:
        """Stop the cycle and release the components."""
        self.host.shutdown()
        self._stop_events()


class _Pending:
    __slots__ = ('done', 'ok', 'value')

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok: Optional[bool] = False  # None: the cycle process exited before replying
        self.value: Any = None


def child_environment() -> Dict[str, str]:
    """
    Return the environment of the cycle process: this one, with single-threaded numpy.

    OpenBLAS (numpy's linear algebra) hands larger operations to a pool thread of normal
    priority; the real-time cycle thread would then wait for a thread that any busy process of
    the machine can keep off the CPU (seen as tens of lost ticks at 500 Hz). The arrays of a
    tick are far too small to gain from threads.
    """
    environment = os.environ.copy()
    for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        environment[name] = '1'
    return environment


class RemoteHost(HostClient):
    """
    The cycle host in a child process of its own (the default).

    Started here, stopped by :meth:`close`, and gone with this process if it dies (the child
    sees the pipe close).

    :param settings: what the child needs to start.
    :param start_timeout: how long the child may take to start [s].
    :raises HostError: the child did not start (its exit code and reason).
    """

    isolated = True

    def __init__(self, settings: HostSettings, start_timeout: float = START_TIMEOUT) -> None:
        super().__init__(settings.period)
        child_in, parent_out = os.pipe()
        parent_in, child_out = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, '-m', CHILD_MODULE, str(child_in), str(child_out)],
            pass_fds=(child_in, child_out), env=child_environment())
        os.close(child_in)
        os.close(child_out)
        self._requests = Channel(Connection(parent_out, readable=False))
        self._replies = Channel(Connection(parent_in, writable=False))
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._closing = False
        self.info: Dict[str, Any] = {}
        self._requests.send(settings)
        self._wait_ready(start_timeout)
        self._reader = threading.Thread(target=self._read, name='host_replies', daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        """Return the process id of the cycle process."""
        return self.process.pid

    def _wait_ready(self, timeout: float) -> None:
        result: List[Any] = []

        def read_first() -> None:
            try:
                result.append(self._replies.recv())
            except (EOFError, OSError) as error:
                result.append(('failed', f'no answer ({error or "pipe closed"})'))
        reader = threading.Thread(target=read_first, daemon=True)
        reader.start()
        reader.join(timeout)
        if not result:
            self.process.kill()
            raise HostError(f'the cycle process did not start within {timeout:.0f} s')
        message = result[0]
        if message[0] != 'ready':
            code = self.process.wait(10)
            raise HostError(f'the cycle process failed to start (exit code {code}): '
                            f'{message[1]}')
        self.info = dict(message[1])

    def _read(self) -> None:
        while True:
            try:
                message = self._replies.recv()
            except (EOFError, OSError):
                break
            if message[0] == 'reply':
                _, request_id, ok, value = message
                with self._pending_lock:
                    pending = self._pending.pop(request_id, None)
                if pending is not None:
                    pending.ok, pending.value = ok, value
                    pending.done.set()
            elif message[0] == 'event':
                self._events.put(message[1])
        code = self.process.wait()
        with self._pending_lock:
            pending_calls, self._pending = list(self._pending.values()), {}
        for pending in pending_calls:
            pending.ok, pending.value = None, code
            pending.done.set()
        if not self._closing:
            self._events.put(HostExited(code))
        self._stop_events()

    def call(self, target: str, method: str, args: Sequence[Any] = (),
             kwargs: Optional[Mapping[str, Any]] = None, timeout: float = CALL_TIMEOUT) -> Any:
        """Send the call to the cycle process and wait for its answer."""
        request_id = next(self._ids)
        pending = _Pending()
        with self._pending_lock:
            self._pending[request_id] = pending
        try:
            self._requests.send(('call', request_id, target, method, tuple(args),
                                 dict(kwargs or {})))
        except OSError:
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise HostError(f'the cycle process is gone (exit code {self.process.poll()})'
                            ) from None
        if not pending.done.wait(timeout):
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise HostError(f'the cycle process did not answer {method} of '
                            f'{target or "the host"} within {timeout:g} s')
        if pending.ok is None:
            raise HostError(f'the cycle process ended (exit code {pending.value}) during '
                            f'{method} of {target or "the host"}')
        if not pending.ok:
            raise decode_error(pending.value)
        return pending.value

    def cast(self, target: str, method: str, args: Sequence[Any] = (),
             kwargs: Optional[Mapping[str, Any]] = None) -> None:
        """Send the call without waiting; a failure comes back as a CallFailed event."""
        try:
            self._requests.send(('call', None, target, method, tuple(args), dict(kwargs or {})))
        except OSError:
            raise HostError(f'the cycle process is gone (exit code {self.process.poll()})'
                            ) from None

    def close(self, timeout: float = 5.0) -> None:
        """Ask the cycle process to stop the cycle and exit; kill it if it does not."""
        self._closing = True
        try:
            self._requests.send(('close',))
        except OSError:
            pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self._requests.close()
        self._reader.join(2.0)
        remove_leftovers(os.getpid())

    def alive(self) -> bool:
        """Return whether the cycle process runs."""
        return self.process.poll() is None


class _Proxy:
    """
    Stands for an object of the cycle side: calling a method calls it there.

    Typed as the object's class by :meth:`HostClient.component` and :meth:`HostClient.cycle`.
    """

    def __init__(self, client: HostClient, target: str, timeout: float, wait: bool) -> None:
        self._client = client
        self._target = target
        self._timeout = timeout
        self._wait = wait

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith('_'):
            raise AttributeError(method)
        client, target = self._client, self._target
        if not self._wait:
            return lambda *args, **kwargs: client.cast(target, method, args, kwargs)
        timeout = self._timeout
        return lambda *args, **kwargs: client.call(target, method, args, kwargs, timeout)
