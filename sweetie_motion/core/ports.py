"""
In-process ports: how components of the motion process pass data to each other.

Everything inside the process is a full pose in RobotModel (canonical) order held in numpy
arrays; no ROS message crosses a port. rclpy has no intra-process transport, and a serialize /
deserialize hop per cycle would dominate the cycle's budget.
"""

from dataclasses import dataclass, field
import threading
from typing import FrozenSet, Generic, Optional, Tuple, TypeVar

import numpy as np


@dataclass
class JointVector:
    """
    A full pose in canonical order.

    :param position: joint positions [rad or m], shape (n,).
    :param velocity: joint velocities [rad/s or m/s], shape (n,).
    :param effort: joint efforts [N*m or N], shape (n,).
    :param stamp: monotonic time the values refer to [s].
    """

    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    stamp: float = 0.0

    @classmethod
    def zeros(cls, size: int, stamp: float = 0.0) -> 'JointVector':
        """Return a pose of ``size`` joints, all zero."""
        return cls(np.zeros(size), np.zeros(size), np.zeros(size), stamp)

    def copy(self) -> 'JointVector':
        """Return a deep copy: ports never share arrays between writers and readers."""
        return JointVector(self.position.copy(), self.velocity.copy(), self.effort.copy(),
                           self.stamp)

    def __len__(self) -> int:
        return len(self.position)


@dataclass
class ControllerOutput:
    """
    What a controller asks for in one cycle.

    :param position: reference positions of the full pose; only the joints of ``resources``
        are taken by the aggregator.
    :param velocity: reference velocities of the full pose.
    :param resources: the resource groups this output drives.
    """

    position: np.ndarray
    velocity: np.ndarray
    resources: FrozenSet[str] = field(default_factory=frozenset)


T = TypeVar('T')


class LatestValue(Generic[T]):
    """
    A single-slot buffer: writers replace the value, the reader sees the newest one.

    Used where a ROS callback thread hands data to the cycle thread (an incoming JointState, a
    new trajectory): the writer builds an immutable object and swaps it in under a short lock;
    the reader takes it once per cycle. The version tells the reader whether anything is new.
    """

    def __init__(self, value: Optional[T] = None) -> None:
        self._lock = threading.Lock()
        self._value = value
        self._version = 0

    def write(self, value: T) -> None:
        """Replace the stored value."""
        with self._lock:
            self._value = value
            self._version += 1

    def read(self) -> Tuple[Optional[T], int]:
        """Return (value, version)."""
        with self._lock:
            return self._value, self._version

    @property
    def value(self) -> Optional[T]:
        """Return the newest value, None if nothing was written."""
        with self._lock:
            return self._value
