"""
The servo bus interface: what the cycle drives, whatever drives the servos.

A bus drives the servo joints of the robot (every joint but the virtual ones). The virtual robot
(:mod:`sweetie_motion.servo.virtual`) implements it in the process; the serial HerkuleX driver
implements it with its own I/O thread; the physics robot with a simulation. ``send`` and
``receive`` never block the cycle: a real driver queues the command and returns the newest
measurement it has. The cycle stages that connect a bus to the cycle are in
:mod:`sweetie_motion.servo.bus`.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np


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
