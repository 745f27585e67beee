"""
The driver's fault policy and its counters: when a servo is lost, when a fault turns it off.

Pure: :class:`ServoHealth` is told of each answer, loss and status of one servo and decides:

* ``lost_after`` losses in a row make the servo *lost* (its joints keep their last measurement;
  its status says so); any reply makes it found again;
* error flags (status error AND ``error_mask``, default 0x77: everything but 'invalid packet',
  a line problem) seen in ``error_persistence`` consecutive replies are a **fault**: the driver
  switches that servo's torque off and keeps the fault (which servo, which flags, when) until
  the flags are cleared.

The counters (:class:`ServoStatistics`, :class:`BusStatistics`) say what happened on a line:
every reply asked for ends as exactly one of *answered* or *lost*, and a lost one is *damaged*
(bytes came, but no valid frame: corrupted, collided) or *missing* (nothing came: dropped,
silent, late); a late reply is counted again as *late* when it comes within the grace.
"""

from dataclasses import dataclass
import math
from typing import List, Optional

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.wire import WireBudget


@dataclass(frozen=True)
class ServoFault:
    """
    Error flags that switched a servo's torque off.

    :param time: when [s, monotonic].
    :param joint: the servo's joint.
    :param servo_id: its ID.
    :param bus: its bus.
    :param error: the status error byte.
    """

    time: float
    joint: str
    servo_id: int
    bus: str
    error: int

    @property
    def flags(self) -> List[str]:
        """Return the flag names: 'overload', 'overheat', 'voltage', ..."""
        return hx.error_names(self.error)

    def describe(self) -> str:
        """Return e.g. 'joint11 (ID 11): overload (status error 0x10), torque off'."""
        return (f'{self.joint} (ID {self.servo_id}): {", ".join(self.flags)} '
                f'(status error 0x{self.error:02X}), torque off')


@dataclass
class ServoStatistics:
    """
    Counters of one servo.

    :param joint: its joint; :param servo_id: its ID; :param bus: its bus.
    :param reads: position reads answered.
    :param replies: replies received in time.
    :param timeouts: requests lost (no valid reply in time).
    :param late_replies: replies that came after their request was lost.
    :param latency_mean: mean time from request written to reply parsed [s].
    :param latency_max: the longest [s].
    :param last_error: last status error byte; :param last_detail: last status detail byte.
    :param lost: no answer (lost_after losses in a row).
    :param last_reply: when the last reply came [s, monotonic].
    """

    joint: str
    servo_id: int
    bus: str
    reads: int = 0
    replies: int = 0
    timeouts: int = 0
    late_replies: int = 0
    latency_mean: float = 0.0
    latency_max: float = 0.0
    last_error: int = 0
    last_detail: int = 0
    lost: bool = False
    last_reply: float = -math.inf


@dataclass
class BusStatistics:
    """
    Counters of one line.

    :param name: the bus; :param port: its port; :param connected: port open.
    :param cycles: cycles run; :param goals: S_JOG sent; :param reads: position reads sent.
    :param replies: replies in time; :param timeouts: requests lost (damaged + missing).
    :param damaged: lost requests whose reply came garbled (corrupted, collided).
    :param missing: lost requests of which nothing came (dropped, silent, late).
    :param late_replies: replies after their request was lost; :param unexpected_replies:
        valid replies that match no request.
    :param checksum_errors, size_errors, command_errors, garbage_bytes: the parser's.
    :param bytes_out: bytes written; :param bytes_in: bytes read.
    :param reconnects: ports reopened.
    :param cpu_time: CPU time of the bus thread [s].
    :param elapsed: time since connect [s].
    :param tx_utilisation: share of the request wire in use.
    :param rx_utilisation: share of the reply wire in use.
    :param age_p50, age_p99, age_max: age of the servos' measurements, sampled every cycle
        [s] (now minus when the servo sampled its newest measurement).
    :param wake_p99, wake_max: how long after the cycle handed over its goals the line thread
        ran [s] (its scheduling and the interpreter lock: where a line thread waits).
    :param budget: the wire budget the thread works with.
    """

    name: str
    port: str
    connected: bool = False
    cycles: int = 0
    goals: int = 0
    reads: int = 0
    replies: int = 0
    timeouts: int = 0
    damaged: int = 0
    missing: int = 0
    late_replies: int = 0
    unexpected_replies: int = 0
    checksum_errors: int = 0
    size_errors: int = 0
    command_errors: int = 0
    garbage_bytes: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    reconnects: int = 0
    cpu_time: float = 0.0
    elapsed: float = 0.0
    tx_utilisation: float = 0.0
    rx_utilisation: float = 0.0
    age_p50: float = math.nan
    age_p99: float = math.nan
    age_max: float = math.nan
    wake_p99: float = math.nan
    wake_max: float = math.nan
    budget: Optional[WireBudget] = None


class ServoHealth:
    """
    The fault policy of one servo (see the module docstring).

    :param lost_after: losses in a row that make it lost.
    :param error_persistence: replies in a row with the same error flags that make a fault.
    :param error_mask: the status error bits that count.
    """

    def __init__(self, lost_after: int, error_persistence: int, error_mask: int) -> None:
        self.lost_after = lost_after
        self.error_persistence = error_persistence
        self.error_mask = error_mask
        self.losses_in_a_row = 0
        self.lost = False
        self._streak = 0
        self._flags = 0
        #: the fault that switched the torque off, until cleared
        self.fault: Optional[ServoFault] = None

    def answered(self) -> bool:
        """Count a reply; return whether the servo was lost until now."""
        was_lost = self.lost
        self.losses_in_a_row = 0
        self.lost = False
        return was_lost

    def missed(self) -> bool:
        """Count a lost request; return whether the servo became lost by it."""
        self.losses_in_a_row += 1
        if self.losses_in_a_row >= self.lost_after and not self.lost:
            self.lost = True
            return True
        return False

    def status(self, error: int, now: float, joint: str, servo_id: int,
               bus: str) -> Optional[ServoFault]:
        """
        Take a reply's status error byte; return a new fault to act on (torque off), or None.

        The same flags in consecutive replies count (a single reply could be a line accident);
        a fault is new when it has flags the kept one does not.
        """
        flags = error & self.error_mask
        if not flags:
            self._streak = 0
            return None
        self._streak = self._streak + 1 if flags == self._flags else 1
        self._flags = flags
        kept = self.fault.error if self.fault is not None else 0
        if self._streak < self.error_persistence or not flags & ~kept:
            return None
        self.fault = ServoFault(now, joint, servo_id, bus, flags | kept)
        return self.fault

    def cleared(self) -> None:
        """Forget the fault and the streak: the servo's flags were cleared."""
        self.fault = None
        self._streak = 0
        self._flags = 0
