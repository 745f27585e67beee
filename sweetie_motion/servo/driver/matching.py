"""
Which reply answers which request: requests in flight, losses, late replies; pure.

A request that expects a reply is *in flight* from the moment it is written until its reply is
matched or it is lost. At most one request per servo is in flight, so a reply is matched by its
servo ID and by its :class:`ReplySignature` (a read reply echoes the address and length it
was asked for; an ACK its command).

A request is **lost** when

* a reply to a request written *after* it arrives first: the servos answer in the order they
  were asked on the one reply wire, so its reply was dropped or garbled (*overtaken*, found at
  once, long before any timeout); or
* nothing of its reply has come by its expected end plus the port's delivery slack
  (*overdue*, :meth:`sweetie_motion.servo.driver.wire.LineTiming.overdue`): a position read
  is lost, an operation's request *released* (below); or
* its deadline passes (the expected end of its reply plus the timeout: a reply that began but
  never completed).

A lost request's signature stays *expired* for ``late_grace``: its reply may still come, and
it then counts as late instead of being taken for the answer to a newer request (it is still
the servo's answer to that request: a late position reply is a measurement of when its request
was executed, see :class:`~sweetie_motion.servo.driver.intake.ReplyIntake`). An operation's
request whose reply is overdue is *released* (:meth:`ReplyMatcher.release`): its servo may be
asked again at once, and a late reply still answers the operation until the request's
deadline. A newer
request to that servo uses another signature meanwhile: a position read has several
(:data:`POSITION_READS`, the same registers asked with one to seven bytes more), so a servo
whose replies are lost is asked again at once, up to :data:`SPANS` times, not after the grace.
"""

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.wire import FULL_LENGTH, POSITION_LENGTH, READ_ADDRESS


@dataclass(frozen=True)
class ReplySignature:
    """
    What a reply must look like to answer a request.

    :param command: the request's command (the reply's is command + 0x40).
    :param memory: a read's memory; :param address: its first register; :param length: bytes.
    """

    command: hx.Command
    memory: Optional[hx.Memory] = None
    address: int = 0
    length: int = 0

    @classmethod
    def read(cls, memory: hx.Memory, address: int, length: int) -> 'ReplySignature':
        """Return the signature of a read's reply."""
        command = hx.Command.EEP_READ if memory is hx.Memory.EEP else hx.Command.RAM_READ
        return cls(command, memory, address, length)

    @classmethod
    def ack(cls, command: hx.Command) -> 'ReplySignature':
        """Return the signature of an ACK."""
        return cls(command)

    @property
    def is_read(self) -> bool:
        """Return whether it is a read's reply."""
        return self.memory is not None

    @property
    def reply_size(self) -> int:
        """Return the reply's size [bytes]."""
        return 11 + self.length if self.is_read else 9

    def matches(self, reply: hx.Reply) -> bool:
        """Return whether ``reply`` answers a request of this signature."""
        if self.is_read:
            return (isinstance(reply, hx.ReadReply) and reply.memory is self.memory
                    and reply.address == self.address and len(reply.data) == self.length)
        return isinstance(reply, hx.AckReply) and reply.command == self.command


#: the spans of one read: with 6 % of the replies lost, four can run out within ``late_grace``
#: several times a minute on 24 servos (the servo then waits for the grace); the longest of
#: eight still ends within the RAM (58 + 8 + 7 <= 74)
SPANS = 8


def _position_reads(length: int) -> Tuple[ReplySignature, ...]:
    return tuple(ReplySignature.read(hx.Memory.RAM, READ_ADDRESS, length + k)
                 for k in range(SPANS))


#: the spans of a position read (calibrated position; a lost one is asked again with the next)
POSITION_READS = _position_reads(POSITION_LENGTH)
#: the spans of a full read (calibrated and absolute position, velocity, PWM)
FULL_READS = _position_reads(FULL_LENGTH)
#: every span of a position or full read: its reply is a measurement
MEASUREMENT_READS = frozenset(POSITION_READS + FULL_READS)

#: what a request gives its waiter when it was written and expects no reply
SENT = 'sent'
#: what a request's future holds: its reply, SENT, or None (lost)
Answer = Union[hx.Reply, str, None]


@dataclass
class Request:
    """
    A frame to write, who it is for and what it expects.

    :param frame: the frame.
    :param servo_id: the servo that answers (None: nobody, e.g. a broadcast).
    :param expect: the reply's signature (None: no reply).
    :param urgent: goes before every other request (a fault's torque off, the shutdown).
    :param future: resolved with the reply, :data:`SENT` (written, no reply expected) or None
        (no reply by its deadline, or overtaken); an error when the line stops.
    """

    frame: hx.Frame
    servo_id: Optional[int] = None
    expect: Optional[ReplySignature] = None
    urgent: bool = False
    future: 'Future[Answer]' = field(default_factory=Future)

    @property
    def reply_size(self) -> int:
        """Return the size of the expected reply [bytes] (0: none)."""
        return self.expect.reply_size if self.expect is not None else 0


@dataclass
class Pending:
    """
    A request on the wire.

    :param servo_id: who answers; :param expect: what.
    :param sequence: order of writing on the line.
    :param sent: when it was written [s]; :param sampled: when the servo executes it (its last
        byte on the wire) [s]; :param deadline: when it is lost without a reply [s].
    :param request: the operation's request, if it is one (None: a position read).
    """

    servo_id: int
    expect: ReplySignature
    sequence: int
    sent: float
    sampled: float
    deadline: float
    request: Optional[Request] = None


@dataclass
class Match:
    """
    What a reply turned out to be.

    :param answered: the request it answers (None: late or unexpected).
    :param lost: requests overtaken by it, oldest first.
    :param late: the request already lost that it answers (None: not late).
    """

    answered: Optional[Pending] = None
    lost: List[Pending] = field(default_factory=list)
    late: Optional[Pending] = None


class ReplyMatcher:
    """
    The requests in flight on one line and the signatures that may still get a late reply.

    :param late_grace: how long a lost request's reply still counts as late [s].
    """

    def __init__(self, late_grace: float) -> None:
        self.late_grace = float(late_grace)
        self.in_flight: Dict[int, Pending] = {}
        #: (servo, signature) of a lost request -> (end of its grace [s], the request)
        self._expired: Dict[Tuple[int, ReplySignature], Tuple[float, Pending]] = {}
        #: released operations' requests that a late reply may still answer, by sequence
        self._released: Dict[int, Pending] = {}
        self._sequence = 0

    def busy(self, servo_id: int, expect: Optional[ReplySignature] = None) -> bool:
        """
        Return whether a request (expecting ``expect``) cannot go to the servo now.

        One request per servo is in flight; a signature whose late reply may still come is
        not asked again until the grace is over.
        """
        if servo_id in self.in_flight:
            return True
        return expect is not None and (servo_id, expect) in self._expired

    def free_signature(self, servo_id: int,
                       choices: Tuple[ReplySignature, ...]) -> Optional[ReplySignature]:
        """Return the first of ``choices`` the servo may be asked now (None: none)."""
        if servo_id in self.in_flight:
            return None
        for signature in choices:
            if (servo_id, signature) not in self._expired:
                return signature
        return None

    def sent(self, servo_id: int, expect: ReplySignature, now: float, sampled: float,
             deadline: float, request: Optional[Request] = None) -> Pending:
        """Put a request written at ``now`` in flight; return it."""
        self._sequence += 1
        pending = Pending(servo_id, expect, self._sequence, now, sampled, deadline, request)
        self.in_flight[servo_id] = pending
        return pending

    def match(self, reply: hx.Reply, now: float) -> Match:
        """Match a reply read at ``now``: the answer (and what it overtook), late, or neither."""
        pending = self.in_flight.get(reply.servo_id)
        if pending is None or not pending.expect.matches(reply):
            key = next((k for k in self._expired
                        if k[0] == reply.servo_id and k[1].matches(reply)), None)
            if key is None:
                return Match()
            _, late = self._expired.pop(key)
            return Match(late=late)
        del self.in_flight[reply.servo_id]
        overtaken = sorted((p for p in self.in_flight.values() if p.sequence < pending.sequence),
                           key=lambda p: p.sequence)
        for lost in overtaken:
            self._lose(lost, now)
        return Match(pending, overtaken)

    def expire(self, now: float) -> List[Pending]:
        """Return the requests whose deadline has passed (now lost), oldest first."""
        lost = sorted((p for p in self.in_flight.values() if now > p.deadline),
                      key=lambda p: p.sequence)
        for pending in lost:
            self._lose(pending, now)
        for key, (until, _) in list(self._expired.items()):
            if now > until:
                del self._expired[key]
        return lost

    def release(self, sequence: int, now: float) -> Optional[Pending]:
        """
        Count the operation's request ``sequence`` lost now, but answerable until its deadline.

        Its servo is free for other requests; a reply of its signature that comes by its
        deadline is its late answer (:meth:`match`); one that does not come is given up
        (:meth:`given_up`).
        """
        pending = self.find(sequence)
        if pending is not None:
            del self.in_flight[pending.servo_id]
            until = max(now + self.late_grace, pending.deadline)
            self._expired[(pending.servo_id, pending.expect)] = (until, pending)
            self._released[pending.sequence] = pending
        return pending

    def given_up(self, now: float) -> List[Pending]:
        """Return the released requests whose deadline passed without an answer."""
        for sequence in [s for s, p in self._released.items()
                         if p.request is None or p.request.future.done()]:
            del self._released[sequence]      # answered late
        ended = [p for p in self._released.values() if now > p.deadline]
        for pending in ended:
            del self._released[pending.sequence]
        return ended

    def find(self, sequence: int) -> Optional[Pending]:
        """Return the request ``sequence`` if it is in flight."""
        return next((p for p in self.in_flight.values() if p.sequence == sequence), None)

    def lose(self, sequence: int, now: float) -> Optional[Pending]:
        """Count the request ``sequence`` lost now (its reply is overdue); return it."""
        pending = self.find(sequence)
        if pending is not None:
            self._lose(pending, now)
        return pending

    def _lose(self, pending: Pending, now: float) -> None:
        del self.in_flight[pending.servo_id]
        self._expired[(pending.servo_id, pending.expect)] = (now + self.late_grace, pending)

    def drop_all(self) -> List[Pending]:
        """Forget everything (the port is gone); return what was in flight."""
        pending = sorted(list(self.in_flight.values()) + list(self._released.values()),
                         key=lambda p: p.sequence)
        self.in_flight.clear()
        self._expired.clear()
        self._released.clear()
        return pending

    @property
    def awaited(self) -> bool:
        """Return whether a reply may still answer a request: one in flight or released."""
        return bool(self.in_flight or self._released)

    @property
    def idle(self) -> bool:
        """Return whether nothing is in flight and no late reply is awaited."""
        return not self.in_flight and not self._expired

    def next_deadline(self) -> float:
        """Return when the next request in flight or released is lost, or a grace ends [s]."""
        times = [p.deadline for p in self.in_flight.values()] + \
            [until for until, _ in self._expired.values()] + \
            [p.deadline for p in self._released.values()]
        return min(times) if times else float('inf')
