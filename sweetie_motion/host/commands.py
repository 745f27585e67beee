"""
The calls that cross the process seam: one dataclass per call.

The ROS side sends a command (:meth:`~sweetie_motion.host.client.HostClient.call`); the cycle
host answers it in :meth:`~sweetie_motion.host.host.CycleHost.handle`. The host's own calls
are here, each with its handler in :data:`~sweetie_motion.host.host.HANDLERS`; a component's
are declared beside the component
(:class:`~sweetie_motion.core.component.ComponentCommand`: ``StartGoal`` beside
``JointTrajectoryCore``) and run themselves on it. From a command, go-to-definition leads to
the code that runs it; nothing is called by name. Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import Any, ClassVar, Type, Union

from sweetie_motion.core.component import Component, ComponentCommand


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


#: every call the cycle host answers
HostCommand = Union[CreateComponent, DestroyComponent, StartCycle, StopCycle, ReadStatistics,
                    ReadStageTimes, ReadSafety, ReadOwners, ReadPoses, ReadServoJoints,
                    ComponentCommand[Any, Any]]
