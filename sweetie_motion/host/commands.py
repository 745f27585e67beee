"""
The calls that cross the process seam: one dataclass per kind, each with one handler.

The ROS side sends a command (:meth:`~sweetie_motion.host.client.HostClient.call`); the cycle
host answers it in :meth:`~sweetie_motion.host.host.CycleHost.handle`, which looks its type up
in :data:`~sweetie_motion.host.host.HANDLERS`: from a command, go-to-definition leads to the
method that runs it. The host's own calls each have a command of their own; a call of a
component's method is one :class:`CallComponent` that carries the method itself (the
function its class declares, pickled by reference), never its name. Pure: no rclpy.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Dict, Optional, Tuple, Type, Union

from sweetie_motion.core.component import Component


class HostCall:
    """A call of the cycle host's own (not of a component); ``label`` names it in messages."""

    #: what messages call it: the host's method that answers it
    label: ClassVar[str] = ''
    #: the target name messages give the host ('' : "the host")
    target: ClassVar[str] = ''


@dataclass(frozen=True)
class CreateComponent(HostCall):
    """Create the component ``name``: an instance of ``kind`` made from ``spec``."""

    label: ClassVar[str] = 'create'

    name: str
    kind: Type[Component]
    spec: Any


@dataclass(frozen=True)
class DestroyComponent(HostCall):
    """Deactivate (if needed) and remove the component ``name``."""

    label: ClassVar[str] = 'destroy'

    name: str


@dataclass(frozen=True)
class StartCycle(HostCall):
    """Start the cycle and the joint_states publisher (rate [Hz], SCHED_FIFO priority)."""

    label: ClassVar[str] = 'start_cycle'

    publish_rate: float = 100.0
    priority: int = 0


@dataclass(frozen=True)
class StopCycle(HostCall):
    """Stop the cycle after its current tick, then the publisher."""

    label: ClassVar[str] = 'stop_cycle'


@dataclass(frozen=True)
class ReadStatistics(HostCall):
    """Read the cycle's statistics; ``reset``: start them afresh after."""

    label: ClassVar[str] = 'statistics'

    reset: bool = False


@dataclass(frozen=True)
class ReadStageTimes(HostCall):
    """Read each stage's (mean, longest) compute time [s]."""

    label: ClassVar[str] = 'stage_times'


@dataclass(frozen=True)
class ReadSafety(HostCall):
    """Read what the safety stage changed since the start."""

    label: ClassVar[str] = 'safety'


@dataclass(frozen=True)
class ReadOwners(HostCall):
    """Read resource -> owner name."""

    label: ClassVar[str] = 'owners'


@dataclass(frozen=True)
class ReadPoses(HostCall):
    """Read the newest reference and measured full poses."""

    label: ClassVar[str] = 'poses'


@dataclass(frozen=True)
class ReadServoJoints(HostCall):
    """Read the joints of the servo bus."""

    label: ClassVar[str] = 'servo_joints'


@dataclass(frozen=True)
class CallComponent:
    """
    Call a public method of the component ``target``.

    :param target: the component's name.
    :param kind: the class the caller knows the component as; the component must be one.
    :param method: the method as ``kind`` declares it (``JointTrajectoryCore.start_goal``);
        it runs as the component's own class overrides it.
    """

    target: str
    kind: Type[Component]
    method: Callable[..., Any]
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Return the method's name, for messages (``set_targets``)."""
        return self.method.__name__


#: every call the cycle host answers
HostCommand = Union[CreateComponent, DestroyComponent, StartCycle, StopCycle, ReadStatistics,
                    ReadStageTimes, ReadSafety, ReadOwners, ReadPoses, ReadServoJoints,
                    CallComponent]


def offered_method(kind: Type[Component], name: str) -> Optional[Callable[..., Any]]:
    """
    Return the method ``name`` of ``kind`` that the ROS side may call, None if it may not.

    Private methods, attributes and the cycle side's own methods (:attr:`Component.LOCAL`)
    are not offered.
    """
    if name.startswith('_') or name in kind.LOCAL:
        return None
    function = getattr(kind, name, None)
    return function if callable(function) and not isinstance(function, type) else None
