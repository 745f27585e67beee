"""
The cycle host: the shared objects and components of the cycle side, and the calls they accept.

The host runs wherever the sync cycle runs: in a child process of its own (the default, see
:mod:`sweetie_motion.host.cycle_process`), or inside the ROS process. The ROS side reaches
it only through typed proxies (:meth:`~sweetie_motion.host.client.HostClient.cycle`,
:meth:`~sweetie_motion.host.client.HostClient.component`) whose calls arrive here at
:meth:`CycleHost.dispatch`, with picklable arguments, so both places behave the same. Events
for the ROS side (:mod:`sweetie_motion.core.events`) go out through ``emit``.
"""

import threading
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple, Type

from sweetie_motion.core.component import Component, ComponentError, CycleResources
from sweetie_motion.core.cycle import CycleSnapshot
from sweetie_motion.core.events import (
    CallFailed, OwnersChanged, SafetyLimited, SendEvent, StageFailed,
)
from sweetie_motion.core.ports import JointVector
from sweetie_motion.core.safety import SafetyReport
from sweetie_motion.host.state_board import BoardWriter
from sweetie_motion.host.transport import Channel, encode_error
from sweetie_motion.model.robot_model import RobotModel

#: the target name of the host's own methods in :meth:`CycleHost.dispatch`
HOST = ''


class Poses(NamedTuple):
    """The newest full poses of the cycle: the reference and the measured state."""

    reference: JointVector
    measured: JointVector


class CycleHost:
    """
    The cycle side of one motion process.

    :param model: the configured robot model.
    :param period: cycle period [s].
    :param emit: sends an event to the ROS side; must not block.
    """

    #: public methods the ROS side may not call (they run on the cycle side only)
    LOCAL = ('dispatch', 'shutdown')

    def __init__(self, model: RobotModel, period: float, emit: SendEvent) -> None:
        self.resources = CycleResources(model, period)
        self.emit = emit
        #: the cycle's poses for the joint_states publisher (another thread or process)
        self.board_writer = BoardWriter(len(model.list_all_joints()))
        self.components: Dict[str, Component] = {}
        self._lock = threading.Lock()
        self._error_counts: Dict[str, int] = {}
        self.resources.arbiter.add_listener(lambda owners: emit(OwnersChanged(owners)))
        self.resources.error_listeners.append(self._stage_error)
        self.resources.safety_listeners.append(lambda text: emit(SafetyLimited(text)))

    # --- calls from the ROS side ---------------------------------------------------------------

    def dispatch(self, target: str, method: str, args: Sequence[Any] = (),
                 kwargs: Optional[Mapping[str, Any]] = None) -> Any:
        """
        Call the public ``method`` of the host (target :data:`HOST`) or of a component.

        The typed proxies of the ROS side name the method (go-to-definition follows them to
        the component's class); this is where the name comes back to the method.

        :raises ComponentError: unknown target, or a method it does not offer.
        """
        if target == HOST:
            subject: Any = self
            local: Tuple[str, ...] = self.LOCAL
        else:
            subject = self.components.get(target)
            if subject is None:
                raise ComponentError(f'no component {target!r} in the cycle process')
            local = subject.LOCAL
        function = getattr(type(subject), method, None)
        if method.startswith('_') or method in local or not callable(function):
            raise ComponentError(f'{target or "the cycle host"} offers no {method!r}')
        return getattr(subject, method)(*args, **(kwargs or {}))

    def create(self, name: str, kind: Type[Component], spec: Any) -> None:
        """
        Create the component ``name``: an instance of ``kind`` made from ``spec``.

        ``kind`` travels as its import path (pickle), so any component class the cycle
        process can import works: no registry.

        :raises ComponentError: not a component class, a wrong spec, or a name already taken.
        """
        if not (isinstance(kind, type) and issubclass(kind, Component)):
            raise ComponentError(f'{kind!r} is not a component class')
        if not isinstance(spec, kind.SPEC):
            raise ComponentError(f'{kind.__name__} {name!r} needs a {kind.SPEC.__name__}, '
                                 f'got {type(spec).__name__}')
        with self._lock:
            if name in self.components:
                raise ComponentError(f'component {name!r} exists already')
            self.components[name] = kind.create(self.resources, name, self.emit, spec)

    def destroy(self, name: str) -> None:
        """Deactivate (if needed) and remove a component; unknown names are ignored."""
        with self._lock:
            component = self.components.pop(name, None)
        if component is not None:
            component.destroy()

    def start_cycle(self, publish_rate: float = 100.0, priority: int = 0) -> str:
        """
        Start the cycle from the robot's pose (no jump at the first tick) and the publisher.

        :param publish_rate: joint_states rate [Hz], at most the cycle rate.
        :param priority: SCHED_FIFO priority of the cycle thread, 0 = normal scheduling.
        :return: how the cycle thread is scheduled.
        """
        resources = self.resources
        cycle = resources.cycle
        bus = resources.bus
        if bus is not None and not cycle.running:
            measured = cycle.measured
            state = bus.receive(cycle.clock())
            indices = resources.view.get_joint_indices(bus.joints)
            measured.position[indices] = state.position
            cycle.seed(measured, JointVector(measured.position.copy(),
                                             measured.velocity * 0.0, measured.effort.copy()))
        if not cycle.running:
            reference = cycle.reference
            resources.safety.reset(reference.position, reference.velocity)
        cycle.add_stage('aggregator', resources.aggregator)
        cycle.add_stage('aggregator', resources.safety, order=100)
        self.board_writer.set_rate(min(publish_rate, 1.0 / cycle.period))
        cycle.add_stage('observer', self.board_writer)
        cycle.start(priority)
        return cycle.scheduling

    def stop_cycle(self) -> None:
        """Stop the cycle after its current tick, then the publisher."""
        cycle = self.resources.cycle
        cycle.stop()
        cycle.remove_stage(self.resources.aggregator)
        cycle.remove_stage(self.resources.safety)
        cycle.remove_stage(self.board_writer)

    def statistics(self, reset: bool = False) -> CycleSnapshot:
        """
        Return the cycle's statistics; their percentiles come from the snapshot's summary.

        :param reset: start the statistics afresh after reading them.
        """
        cycle = self.resources.cycle
        snapshot = cycle.statistics.snapshot(cycle.scheduling, cycle.running)
        if reset:
            cycle.reset_statistics()
        return snapshot

    def stage_times(self) -> Dict[str, Tuple[float, float]]:
        """Return each stage's (mean, longest) compute time [s] (mean over ~100 ticks)."""
        statistics = self.resources.cycle.statistics
        return {name: (mean, statistics.stage_max.get(name, mean))
                for name, mean in statistics.stage_time.items()}

    def safety(self) -> SafetyReport:
        """Return what the safety stage changed since the start, per joint and controller."""
        return self.resources.safety.report()

    def owners(self) -> Dict[str, str]:
        """Return resource -> owner name ('' when free)."""
        return self.resources.arbiter.owners()

    def poses(self) -> Poses:
        """Return copies of the newest reference and measured full poses."""
        cycle = self.resources.cycle
        return Poses(cycle.reference, cycle.measured)

    def servo_joints(self) -> Sequence[str]:
        """Return the joints of the servo bus (empty without a bus)."""
        bus = self.resources.bus
        return list(bus.joints) if bus is not None else []

    # --- shutting down -------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the cycle, release every component and the bus hardware."""
        self.stop_cycle()
        for name in list(self.components):
            component = self.components[name]
            try:
                component.deactivate()
            except Exception:  # noqa: B902 -- shutting down: release the rest regardless
                pass
            self.destroy(name)
        if self.resources.bus is not None:
            self.resources.bus.disconnect()
        self.board_writer.close()

    def _stage_error(self, stage: str, error: BaseException) -> None:
        count = self._error_counts.get(stage, 0) + 1
        self._error_counts[stage] = count
        if count <= 3 or count % 1000 == 0:
            self.emit(StageFailed(stage, count, f'{type(error).__name__}: {error}'))


def serve(host: CycleHost, requests: Channel, replies: Channel,
          on_close: Callable[[], None] = lambda: None) -> None:
    """
    Answer the calls of the ROS side until it says ``close`` or goes away (end of file).

    Requests are ``('call', id, target, method, args, kwargs)`` (``id`` None: no reply
    wanted) and ``('close',)``; replies are ``('reply', id, ok, value or encoded error)``.
    """
    while True:
        try:
            message = requests.recv()
        except (EOFError, OSError):
            break
        if message[0] == 'close':
            break
        _, request_id, target, method, args, kwargs = message
        try:
            reply = ('reply', request_id, True, host.dispatch(target, method, args, kwargs))
        except Exception as error:  # noqa: B902 -- every failure goes back to the caller
            reply = ('reply', request_id, False, encode_error(error))
        if request_id is None:
            if not reply[2]:
                host.emit(CallFailed(target, method, reply[3][2]))
            continue
        try:
            replies.send(reply)
        except OSError:
            break
        except Exception as error:  # noqa: B902 -- a result that cannot be pickled
            replies.send(('reply', request_id, False, encode_error(error)))
    on_close()
