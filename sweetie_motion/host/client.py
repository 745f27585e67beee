"""
How the ROS side talks to the cycle host, in a child process or in the same process.

:class:`RemoteHost` (the default) runs the host in a child process, :class:`LocalHost` in this
one; both offer one API.

Why a child process: the ROS side must convert every message a client sends into Python
objects, and rclpy does that in C while holding the GIL — 28 ms for a 10 000-point
FollowJointTrajectory goal, 54 ms to publish it back (docs/cycle_timing.md). A cycle thread in
the same process waits that long for the GIL and loses ticks. In its own process the cycle has
its own GIL; only small calls and the (memory-mapped) spline of a goal cross over.

Every call is a command sent by :meth:`HostClient.call`: a component's
(:class:`~sweetie_motion.core.component.ComponentCommand`, declared beside the component:
``client.run(StartGoal(name, goal_id, plan))`` returns what
:meth:`JointTrajectoryCore.start_goal` returned, typed) or the host's own
(:mod:`sweetie_motion.host.commands`, sent by ``client.cycle()``: :class:`CycleCalls`); mypy
checks each, and go-to-definition leads from a command to the code that runs on the cycle
side. Both clients deliver the host's events (:mod:`sweetie_motion.core.events`) to listeners
in a thread of their own, so a listener may call the host. An event addressed to a controller
(:class:`~sweetie_motion.core.events.ControllerEvent`) goes to that controller's listeners
only (:meth:`HostClient.add_controller_listener`), every other to every listener.
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
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar

from sweetie_motion.core.component import Component, ComponentCommand
from sweetie_motion.core.cycle import CycleSnapshot
from sweetie_motion.core.events import ControllerEvent, CycleEvent, HostExited
from sweetie_motion.core.safety import SafetyReport
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.commands import (
    CreateComponent, DestroyComponent, HostCommand, ReadOwners, ReadPoses, ReadSafety,
    ReadServoJoints, ReadStageTimes, ReadStatistics, StartCycle, StopCycle,
)
from sweetie_motion.host.host import CycleHost, Poses
from sweetie_motion.host.transport import Channel, decode_error, remove_leftovers
from sweetie_motion.model.robot_model import RobotModel

#: default time a call may take before the caller gives up [s]
CALL_TIMEOUT = 10.0
#: time the child process may take to start (imports, robot model, DDS) [s]
START_TIMEOUT = 60.0

#: the module run as the cycle process
CHILD_MODULE = 'sweetie_motion.host.cycle_process'

Listener = Callable[[CycleEvent], None]
#: what a component's command returns
R = TypeVar('R')


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
        #: controller name -> the listeners of the events addressed to it
        self._addressed: Dict[str, List[Callable[[ControllerEvent], None]]] = {}
        self._events: 'queue.SimpleQueue[Optional[CycleEvent]]' = queue.SimpleQueue()
        self._dispatcher = threading.Thread(target=self._dispatch_events,
                                            name='host_events', daemon=True)
        self._dispatcher.start()

    def run(self, command: ComponentCommand[Any, R], timeout: float = CALL_TIMEOUT) -> R:
        """
        Run a component's command on the cycle side and return its method's result.

        The command and the result are pickled; errors come back with their class and fields.
        :meth:`cast` sends one without waiting.

        :raises HostError: the host is gone or did not answer within ``timeout`` [s].
        """
        result: R = self.call(command, timeout)
        return result

    def cycle(self, timeout: float = CALL_TIMEOUT) -> 'CycleCalls':
        """Return the cycle host's own calls (its cycle, poses, statistics; create, destroy)."""
        return CycleCalls(self, timeout)

    @abstractmethod
    def call(self, command: HostCommand, timeout: float = CALL_TIMEOUT) -> Any:
        """
        Send ``command`` to the host and return its handler's result.

        :raises HostError: the host is gone or did not answer within ``timeout`` [s].
        :raises Exception: whatever the handler raised, same class and message.
        """

    def cast(self, command: HostCommand) -> None:
        """Send ``command`` without waiting for the result (a failure: a CallFailed event)."""
        self.call(command)

    @abstractmethod
    def close(self) -> None:
        """Stop the cycle and release the host."""

    @property
    def pid(self) -> int:
        """Return the process id of the cycle."""
        return os.getpid()

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(event)`` for every event addressed to no controller (events thread)."""
        self._listeners.append(listener)

    def add_controller_listener(self, controller: str,
                                listener: Callable[[ControllerEvent], None]) -> None:
        """Call ``listener(event)`` for every event addressed to ``controller`` (its node)."""
        self._addressed.setdefault(controller, []).append(listener)

    def remove_listener(self, listener: Callable[[ControllerEvent], None]) -> None:
        """Stop calling ``listener``, for every event and every controller."""
        self._listeners = [f for f in self._listeners if f != listener]
        self._addressed = {controller: kept for controller, kept in (
            (c, [f for f in listeners if f != listener])
            for c, listeners in self._addressed.items()) if kept}

    def _dispatch_events(self) -> None:
        while True:
            event = self._events.get()
            if event is None:
                return
            listeners: Sequence[Callable[[Any], None]] = (
                self._addressed.get(event.controller, ())
                if isinstance(event, ControllerEvent) else self._listeners)
            for listener in list(listeners):
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

    def call(self, command: HostCommand, timeout: float = CALL_TIMEOUT) -> Any:
        """Run the command directly, in the caller's thread."""
        return self.host.handle(command)

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

    def call(self, command: HostCommand, timeout: float = CALL_TIMEOUT) -> Any:
        """Send the command to the cycle process and wait for its answer."""
        request_id = next(self._ids)
        pending = _Pending()
        with self._pending_lock:
            self._pending[request_id] = pending
        try:
            self._requests.send(('call', request_id, command))
        except OSError:
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise HostError(f'the cycle process is gone (exit code {self.process.poll()})'
                            ) from None
        if not pending.done.wait(timeout):
            with self._pending_lock:
                self._pending.pop(request_id, None)
            raise HostError(f'the cycle process did not answer {command.label} of '
                            f'{command.target or "the host"} within {timeout:g} s')
        if pending.ok is None:
            raise HostError(f'the cycle process ended (exit code {pending.value}) during '
                            f'{command.label} of {command.target or "the host"}')
        if not pending.ok:
            raise decode_error(pending.value)
        return pending.value

    def cast(self, command: HostCommand) -> None:
        """Send the command without waiting; a failure comes back as a CallFailed event."""
        try:
            self._requests.send(('call', None, command))
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


class CycleCalls:
    """
    The cycle host's own calls, as the ROS side makes them: each sends its command.

    :param client: the client that sends them.
    :param timeout: how long each call may take [s] before :class:`HostError`.
    """

    def __init__(self, client: HostClient, timeout: float = CALL_TIMEOUT) -> None:
        self._client = client
        self._timeout = timeout

    def create(self, name: str, kind: Type[Component], spec: Any) -> None:
        """Create the component ``name`` from ``spec``: sends :class:`CreateComponent`."""
        self._client.call(CreateComponent(name, kind, spec), self._timeout)

    def destroy(self, name: str) -> None:
        """Deactivate and remove a component: sends :class:`DestroyComponent`."""
        self._client.call(DestroyComponent(name), self._timeout)

    def start_cycle(self, publish_rate: float = 100.0, priority: int = 0) -> str:
        """Start the cycle (sends :class:`StartCycle`); return how its thread is scheduled."""
        return self._client.call(StartCycle(publish_rate, priority), self._timeout)

    def stop_cycle(self) -> None:
        """Stop the cycle: sends :class:`StopCycle`."""
        self._client.call(StopCycle(), self._timeout)

    def statistics(self, reset: bool = False) -> CycleSnapshot:
        """Return the cycle's statistics: sends :class:`ReadStatistics`."""
        return self._client.call(ReadStatistics(reset), self._timeout)

    def stage_times(self) -> Dict[str, Tuple[float, float]]:
        """Return each stage's (mean, longest) compute time [s]: sends :class:`ReadStageTimes`."""
        return self._client.call(ReadStageTimes(), self._timeout)

    def safety(self) -> SafetyReport:
        """Return what the safety stage changed: sends :class:`ReadSafety`."""
        return self._client.call(ReadSafety(), self._timeout)

    def owners(self) -> Dict[str, str]:
        """Return resource -> owner name ('' when free): sends :class:`ReadOwners`."""
        return self._client.call(ReadOwners(), self._timeout)

    def poses(self) -> Poses:
        """Return the newest reference and measured full poses: sends :class:`ReadPoses`."""
        return self._client.call(ReadPoses(), self._timeout)

    def servo_joints(self) -> Sequence[str]:
        """Return the joints of the servo bus (none without): sends :class:`ReadServoJoints`."""
        return self._client.call(ReadServoJoints(), self._timeout)
