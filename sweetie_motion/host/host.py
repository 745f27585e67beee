"""
The cycle host: the shared objects and components of the cycle side, and the calls they accept.

The host runs wherever the sync cycle runs: in a child process of its own (the default, see
:mod:`sweetie_motion.host.cycle_process`), or inside the ROS process. The ROS side reaches
it only through commands sent by :meth:`~sweetie_motion.host.client.HostClient.call`: the
host's own (:mod:`sweetie_motion.host.commands`) go to their handler in :data:`HANDLERS`, a
component's (:class:`~sweetie_motion.core.component.ComponentCommand`) run on it; both arrive
at :meth:`CycleHost.handle` with picklable arguments, so both places behave the same. Events
for the ROS side (:mod:`sweetie_motion.core.events`) go out through ``emit``.
"""

import threading
from typing import Any, Callable, Dict, NamedTuple, Sequence, Tuple

from sweetie_motion.core.component import (
    Component, ComponentCommand, ComponentError, CycleResources,
)
from sweetie_motion.core.cycle import CycleSnapshot, StageRole
from sweetie_motion.core.events import (
    CallFailed, OwnersChanged, SafetyLimited, SendEvent, StageFailed,
)
from sweetie_motion.core.ports import JointVector
from sweetie_motion.core.safety import SafetyReport
from sweetie_motion.host.commands import (
    CreateComponent, DestroyComponent, HostCommand, ReadOwners, ReadPoses, ReadSafety,
    ReadServoJoints, ReadStageTimes, ReadStatistics, StartCycle, StopCycle,
)
from sweetie_motion.host.state_board import BoardWriter
from sweetie_motion.host.transport import Channel, encode_error
from sweetie_motion.model.robot_model import RobotModel


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

    def handle(self, command: HostCommand) -> Any:
        """
        Run one command of the ROS side: a component's on it, the host's own by its handler.

        The host's own commands find their handler in :data:`HANDLERS` by their type.

        :raises ComponentError: a command the host does not answer, an unknown component, or
            one of another class than the command needs.
        """
        if isinstance(command, ComponentCommand):
            return self.call_component(command)
        handler = HANDLERS.get(type(command))
        if handler is None:
            raise ComponentError(f'the cycle host answers no {type(command).__name__}')
        return handler(self, command)

    def call_component(self, command: ComponentCommand[Any, Any]) -> Any:
        """
        Run a :class:`~sweetie_motion.core.component.ComponentCommand` on its component.

        It calls the method as the component's own class defines it (an override of
        :meth:`Component.activate`, say).

        :raises ComponentError: no such component, or not of the class the command needs.
        """
        component = self.components.get(command.target)
        if component is None:
            raise ComponentError(f'no component {command.target!r} in the cycle process')
        if not isinstance(component, command.KIND):
            raise ComponentError(f'{command.target} is a {type(component).__name__}, not a '
                                 f'{command.KIND.__name__}: it takes no {command.label}')
        return command.run(component)

    def create(self, command: CreateComponent) -> None:
        """
        Create the component ``name``: an instance of ``kind`` made from ``spec``.

        ``kind`` travels as its import path (pickle), so any component class the cycle
        process can import works: no registry.

        :raises ComponentError: not a component class, a wrong spec, or a name already taken.
        """
        name, kind, spec = command.name, command.kind, command.spec
        if not (isinstance(kind, type) and issubclass(kind, Component)):
            raise ComponentError(f'{kind!r} is not a component class')
        if not isinstance(spec, kind.SPEC):
            raise ComponentError(f'{kind.__name__} {name!r} needs a {kind.SPEC.__name__}, '
                                 f'got {type(spec).__name__}')
        with self._lock:
            if name in self.components:
                raise ComponentError(f'component {name!r} exists already')
            self.components[name] = kind.create(self.resources, name, self.emit, spec)

    def destroy(self, command: DestroyComponent) -> None:
        """Deactivate (if needed) and remove a component; unknown names are ignored."""
        with self._lock:
            component = self.components.pop(command.name, None)
        if component is not None:
            component.destroy()

    def start_cycle(self, command: StartCycle) -> str:
        """
        Start the cycle from the robot's pose (no jump at the first tick) and the publisher.

        The command's ``publish_rate`` is the joint_states rate [Hz], at most the cycle rate;
        its ``priority`` the SCHED_FIFO priority of the cycle thread, 0 = normal scheduling.

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
        cycle.add_stage(StageRole.AGGREGATOR, resources.aggregator)
        cycle.add_stage(StageRole.SAFETY, resources.safety)
        self.board_writer.set_rate(min(command.publish_rate, 1.0 / cycle.period))
        cycle.add_stage(StageRole.OBSERVER, self.board_writer)
        cycle.start(command.priority)
        return cycle.scheduling

    def stop_cycle(self, command: StopCycle) -> None:
        """Stop the cycle after its current tick, then the publisher."""
        cycle = self.resources.cycle
        cycle.stop()
        cycle.remove_stage(self.resources.aggregator)
        cycle.remove_stage(self.resources.safety)
        cycle.remove_stage(self.board_writer)

    def statistics(self, command: ReadStatistics) -> CycleSnapshot:
        """
        Return the cycle's statistics; their percentiles come from the snapshot's summary.

        The command's ``reset`` starts the statistics afresh after reading them.
        """
        cycle = self.resources.cycle
        snapshot = cycle.statistics.snapshot(cycle.scheduling, cycle.running)
        if command.reset:
            cycle.reset_statistics()
        return snapshot

    def stage_times(self, command: ReadStageTimes) -> Dict[str, Tuple[float, float]]:
        """Return each stage's (mean, longest) compute time [s] (mean over ~100 ticks)."""
        statistics = self.resources.cycle.statistics
        return {name: (mean, statistics.stage_max.get(name, mean))
                for name, mean in statistics.stage_time.items()}

    def safety(self, command: ReadSafety) -> SafetyReport:
        """Return what the safety stage changed since the start, per joint and controller."""
        return self.resources.safety.report()

    def owners(self, command: ReadOwners) -> Dict[str, str]:
        """Return resource -> owner name ('' when free)."""
        return self.resources.arbiter.owners()

    def poses(self, command: ReadPoses) -> Poses:
        """Return copies of the newest reference and measured full poses."""
        cycle = self.resources.cycle
        return Poses(cycle.reference, cycle.measured)

    def servo_joints(self, command: ReadServoJoints) -> Sequence[str]:
        """Return the joints of the servo bus (empty without a bus)."""
        bus = self.resources.bus
        return list(bus.joints) if bus is not None else []

    # --- shutting down -------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the cycle, release every component and the bus hardware."""
        self.stop_cycle(StopCycle())
        for name in list(self.components):
            component = self.components[name]
            try:
                component.deactivate()
            except Exception:  # noqa: B902 -- shutting down: release the rest regardless
                pass
            self.destroy(DestroyComponent(name))
        if self.resources.bus is not None:
            self.resources.bus.disconnect()
        self.board_writer.close()

    def _stage_error(self, stage: str, error: BaseException) -> None:
        count = self._error_counts.get(stage, 0) + 1
        self._error_counts[stage] = count
        if count <= 3 or count % 1000 == 0:
            self.emit(StageFailed(stage, count, f'{type(error).__name__}: {error}'))


#: the handler of each of the host's own commands: what runs on the cycle side when the ROS side
#: sends it (a component's command runs itself: :meth:`CycleHost.call_component`)
HANDLERS: Dict[type, Callable[[CycleHost, Any], Any]] = {
    CreateComponent: CycleHost.create,
    DestroyComponent: CycleHost.destroy,
    StartCycle: CycleHost.start_cycle,
    StopCycle: CycleHost.stop_cycle,
    ReadStatistics: CycleHost.statistics,
    ReadStageTimes: CycleHost.stage_times,
    ReadSafety: CycleHost.safety,
    ReadOwners: CycleHost.owners,
    ReadPoses: CycleHost.poses,
    ReadServoJoints: CycleHost.servo_joints,
}


def serve(host: CycleHost, requests: Channel, replies: Channel,
          on_close: Callable[[], None] = lambda: None) -> None:
    """
    Answer the commands of the ROS side until it says ``close`` or goes away (end of file).

    Requests are ``('call', id, command)`` (``id`` None: no reply wanted) and ``('close',)``;
    replies are ``('reply', id, ok, value or encoded error)``.
    """
    while True:
        try:
            message = requests.recv()
        except (EOFError, OSError):
            break
        if message[0] == 'close':
            break
        _, request_id, command = message
        try:
            reply = ('reply', request_id, True, host.handle(command))
        except Exception as error:  # noqa: B902 -- every failure goes back to the caller
            reply = ('reply', request_id, False, encode_error(error))
        if request_id is None:
            if not reply[2]:
                host.emit(CallFailed(command.target, command.label, reply[3][2]))
            continue
        try:
            replies.send(reply)
        except OSError:
            break
        except Exception as error:  # noqa: B902 -- a result that cannot be pickled
            replies.send(('reply', request_id, False, encode_error(error)))
    on_close()
