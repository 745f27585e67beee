"""
The virtual robot: a simulated servo bus with servo-like dynamics (R-SYS-5).

Each servo is a position servo: after a command delay of ``delay`` cycles it moves towards the
commanded position as a first-order lag with time constant ``lag`` plus the commanded velocity
as feed-forward, never faster than its velocity limit. With torque off a servo is free: it
stays where it is unless a person moves it (:meth:`VirtualServoBus.move_by_hand`). A joint can
be blocked (:meth:`VirtualServoBus.block`) to make tolerance violations real in tests.
"""

from collections import deque
import threading
from typing import Deque, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.core.servo_bus import BusState, ServoBus, ServoStatus
from sweetie_motion.errors import UnknownJointError


class VirtualServoBus(ServoBus):
    """
    Simulated servos, thread-safe (commands from the cycle, torque and hand moves from ROS).

    :param joints: bus joint names.
    :param velocity_limits: per joint [rad/s].
    :param initial_position: per joint [rad] (default zeros).
    :param lag: time constant of the position loop [s].
    :param delay: command delay in cycles (the servo acts on the command of ``delay`` cycles ago).
    """

    def __init__(self, joints: Sequence[str], velocity_limits: Sequence[float],
                 initial_position: Optional[Sequence[float]] = None, lag: float = 0.05,
                 delay: int = 1) -> None:
        super().__init__(joints)
        n = len(self.joints)
        if len(velocity_limits) != n:
            raise ValueError('one velocity limit per joint is needed')
        if lag <= 0 or delay < 0:
            raise ValueError('lag must be > 0 and delay >= 0')
        self.lag = float(lag)
        self.delay = int(delay)
        self.velocity_limits = np.asarray(velocity_limits, dtype=float)
        self._index = {j: i for i, j in enumerate(self.joints)}
        self._lock = threading.Lock()
        self._position = (np.zeros(n) if initial_position is None
                          else np.array(initial_position, dtype=float))
        self._velocity = np.zeros(n)
        self._effort = np.zeros(n)  # no torque sensing in the simulation
        self._effort.setflags(write=False)
        self._command: Deque[Tuple[np.ndarray, np.ndarray]] = deque(maxlen=self.delay + 1)
        self._torque = np.ones(n, dtype=bool)
        self._blocked = np.zeros(n, dtype=bool)
        self._hand: Dict[int, float] = {}
        self._last: Optional[float] = None
        self._decay_dt, self._decay = 0.0, 1.0
        self._all_hold = True  # every servo has torque and none is blocked

    def _indices(self, joints: Iterable[str]) -> List[int]:
        joints = list(joints)
        unknown = [j for j in joints if j not in self._index]
        if unknown:
            raise UnknownJointError(unknown, 'virtual servo bus', self._index)
        return [self._index[j] for j in joints]

    def send(self, now: float, position: np.ndarray, velocity: np.ndarray) -> None:
        """Queue a command; it acts after ``delay`` cycles."""
        with self._lock:
            self._command.append((np.array(position, dtype=float),
                                  np.array(velocity, dtype=float)))

    def receive(self, now: float) -> BusState:
        """Advance the simulation to ``now`` and return the measured state."""
        with self._lock:
            if self._last is not None and now > self._last:
                self._advance(now - self._last)
            self._last = now
            # no copies: _advance replaces the arrays, it never writes into the ones returned
            return BusState(self._position, self._velocity, self._effort, now)

    def _advance(self, dt: float) -> None:
        start = self._position
        if len(self._command) > self.delay:
            target, feed_forward = self._command[0]
            if dt != self._decay_dt:
                self._decay_dt, self._decay = dt, float(np.exp(-dt / self.lag))
                self._reach = self.velocity_limits * dt
                self._neg_reach = -self._reach
            # exact first-order lag towards a target moving at the feed-forward velocity,
            # then the servo's velocity limit
            step = (target - start) * (1.0 - self._decay)
            step += feed_forward * dt
            np.minimum(step, self._reach, out=step)
            np.maximum(step, self._neg_reach, out=step)
            if self._all_hold:
                self._position = start + step
            else:
                self._position = np.where(self._torque & ~self._blocked, start + step, start)
        if self._hand:
            self._position = self._position.copy()
            for index, value in self._hand.items():
                if not self._torque[index] and not self._blocked[index]:
                    self._position[index] = value
            self._hand.clear()
        self._velocity = (self._position - start) / dt

    def set_torque(self, joints: Iterable[str], on: bool) -> None:
        """Switch servos on (hold the current position) or off (free)."""
        indices = self._indices(joints)
        with self._lock:
            self._torque[indices] = on
            self._all_hold = bool(self._torque.all() and not self._blocked.any())
            if on:
                # a servo switched on holds where it is: forget older commands
                self._command.clear()
                self._command.append((self._position.copy(), np.zeros(len(self.joints))))

    def torque(self) -> np.ndarray:
        """Return torque on/off per joint."""
        with self._lock:
            return self._torque.copy()

    def status(self) -> List[ServoStatus]:
        """Return each servo's status."""
        with self._lock:
            return [ServoStatus(j, bool(self._torque[i]), not self._blocked[i],
                                'blocked (simulated fault)' if self._blocked[i] else 'ok')
                    for i, j in enumerate(self.joints)]

    def move_by_hand(self, positions: Mapping[str, float]) -> List[str]:
        """
        Move free (torque off) servos, as a person posing the robot would.

        :return: the joints that moved; joints with torque on resist and are not moved.
        """
        known = {j: float(v) for j, v in positions.items() if j in self._index}
        with self._lock:
            moved = []
            for joint, value in known.items():
                index = self._index[joint]
                if not self._torque[index]:
                    self._hand[index] = value
                    moved.append(joint)
            return moved

    def block(self, joints: Iterable[str], blocked: bool = True) -> None:
        """Block servos (they stop moving, as if jammed) or release them."""
        indices = self._indices(joints)
        with self._lock:
            self._blocked[indices] = blocked
            self._all_hold = bool(self._torque.all() and not self._blocked.any())

    def blocked(self) -> List[str]:
        """Return the blocked joints."""
        with self._lock:
            return [j for i, j in enumerate(self.joints) if self._blocked[i]]
