"""
The servo bus interface, and the cycle stages that connect a bus to the motion process.

A bus drives the servo joints of the robot (every joint but the virtual ones). The virtual robot
(:mod:`sweetie_motion.servo.virtual`) implements it in the process; the serial HerkuleX driver
implements it with its own I/O thread. ``send`` and ``receive`` never block the cycle: a real
driver queues the command and returns the newest measurement it has.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.core.cycle import Tick


@dataclass(frozen=True)
class ServoStatus:
    """
    Health of one servo as the bus last saw it.

    :param joint: the joint the servo drives.
    :param torque: True when the servo holds its position (torque on).
    :param ok: False when the servo reports an error or does not answer.
    :param message: human-readable status ('ok', the error, 'no answer', ...).
    """

    joint: str
    torque: bool
    ok: bool
    message: str = 'ok'


@dataclass
class BusState:
    """
    A measurement of the bus joints, in the order of :attr:`ServoBus.joints`.

    :param position: [rad]; :param velocity: [rad/s]; :param effort: [N*m] (may be zeros).
    :param stamp: monotonic time of the measurement [s] (the newest, on a bus that measures
        its servos one after another).
    :param stamps: per joint, when it was measured [s]; None: all at ``stamp``.
    """

    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    stamp: float
    stamps: Optional[np.ndarray] = None


class ServoBus(ABC):
    """
    A set of position servos, driven each cycle.

    :param joints: names of the joints on this bus.
    """

    def __init__(self, joints: Sequence[str]) -> None:
        self.joints: List[str] = list(joints)

    def connect(self) -> None:
        """Acquire the hardware (port, threads). Called at configure."""

    def disconnect(self) -> None:
        """Release the hardware. Called at cleanup and shutdown."""

    @abstractmethod
    def send(self, now: float, position: np.ndarray, velocity: np.ndarray) -> None:
        """Command the servos (arrays in :attr:`joints` order); must not block."""

    @abstractmethod
    def receive(self, now: float) -> BusState:
        """Return the newest measurement; must not block."""

    @abstractmethod
    def set_torque(self, joints: Iterable[str], on: bool) -> None:
        """Switch the torque of the given servos on (hold) or off (free)."""

    @abstractmethod
    def torque(self) -> np.ndarray:
        """Return a boolean array: torque on, per joint of :attr:`joints`."""

    @abstractmethod
    def status(self) -> List[ServoStatus]:
        """Return the status of every servo."""

    def control_delays(self) -> Dict[str, Tuple[str, float]]:
        """
        Return, per joint, its line and the delay from a cycle's reference to the servo [s].

        The delay is from the cycle time given to :meth:`send` to when the servo's desired
        position is that reference, as seen by measurements stamped when the servo sampled
        them. Empty: the bus does not know (the identification then takes its configured one).
        """
        return {}


class BusInput:
    """
    Cycle stage 'input': fills ``tick.measured`` from the bus.

    Virtual joints have no servo: their measured state is their reference.

    :param bus: the servo bus.
    :param bus_indices: canonical index of each bus joint.
    :param virtual_indices: canonical indices of the joints not on the bus.
    """

    name = 'servo_input'

    def __init__(self, bus: ServoBus, bus_indices: np.ndarray,
                 virtual_indices: np.ndarray) -> None:
        self.bus = bus
        self.bus_indices = np.asarray(bus_indices, dtype=np.intp)
        self.virtual_indices = np.asarray(virtual_indices, dtype=np.intp)

    def update(self, tick: Tick) -> None:
        """Read the bus into the tick's measured pose."""
        state = self.bus.receive(tick.now)
        measured = tick.measured
        measured.position[self.bus_indices] = state.position
        measured.velocity[self.bus_indices] = state.velocity
        measured.effort[self.bus_indices] = state.effort
        measured.position[self.virtual_indices] = tick.reference.position[self.virtual_indices]
        measured.velocity[self.virtual_indices] = tick.reference.velocity[self.virtual_indices]
        measured.stamp = state.stamp


class BusOutput:
    """Cycle stage 'output': sends the tick's aggregated reference to the bus."""

    name = 'servo_output'

    def __init__(self, bus: ServoBus, bus_indices: np.ndarray) -> None:
        self.bus = bus
        self.bus_indices = np.asarray(bus_indices, dtype=np.intp)

    def update(self, tick: Tick) -> None:
        """Send the reference of the bus joints."""
        self.bus.send(tick.now, tick.reference.position[self.bus_indices],
                      tick.reference.velocity[self.bus_indices])
