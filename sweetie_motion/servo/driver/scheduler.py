"""
The wire scheduler of one line: which request goes out next, and when; pure.

Each time the line thread can write, :meth:`WireScheduler.choose` picks, in this order:

1. an *urgent* operation request (a fault's torque off, the shutdown);
2. one ordinary operation request per cycle, whatever the reads take (configuration and
   diagnostics always progress);
3. a **position read** of the servo whose newest measurement is the oldest (a servo whose
   reply was lost is therefore asked again first), at most one per servo and cycle; a lost
   servo only every :data:`LOST_READ_EVERY` cycles (its replies would take the wire from the
   others); every :data:`FULL_READ_EVERY`-th read of a servo also asks for its velocity and
   PWM, the others only for its position (13 instead of 19 bytes on the reply wire);
4. further operation requests.

A request that expects a reply may only be written when its reply cannot overlap the previous
one (:meth:`sweetie_motion.servo.driver.wire.LineTiming.earliest`): the choice then says when.
Requests to a servo wait while another to it is in flight, or while their signature may still
get a late reply (:class:`~sweetie_motion.servo.driver.matching.ReplyMatcher`).
"""

from collections import deque
from dataclasses import dataclass
from typing import Deque, List, Optional, Sequence

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.matching import (
    FULL_READS, POSITION_READS, ReplyMatcher, ReplySignature, Request,
)
from sweetie_motion.servo.driver.servo_state import LineServo
from sweetie_motion.servo.driver.wire import FULL_READ_EVERY, LineTiming

#: a lost servo is asked at most every this many cycles
LOST_READ_EVERY = 10


@dataclass
class Outgoing:
    """
    What to write next.

    :param frame: the frame.
    :param servo: the servo that answers (None: no reply).
    :param expect: the reply's signature (None: no reply).
    :param at: the earliest time it may be written [s].
    :param request: the operation's request (None: a position read of the scheduler's own).
    """

    frame: hx.Frame
    servo: Optional[LineServo]
    expect: Optional[ReplySignature]
    at: float
    request: Optional[Request] = None

    @property
    def reply_size(self) -> int:
        """Return the expected reply's size [bytes] (0: none)."""
        return self.expect.reply_size if self.expect is not None else 0


class WireScheduler:
    """
    Picks what a line writes next (see the module docstring).

    :param servos: the line's servos.
    :param matcher: the requests in flight.
    :param timing: the wires' model.
    """

    def __init__(self, servos: Sequence[LineServo], matcher: ReplyMatcher,
                 timing: LineTiming) -> None:
        self.servos = list(servos)
        self.by_id = {s.servo_id: s for s in self.servos}
        self.matcher = matcher
        self.timing = timing
        self.urgent: Deque[Request] = deque()
        self.normal: Deque[Request] = deque()
        #: the cycle the line is in (counted by the line thread)
        self.cycle = 0
        self._operation_cycle = -1

    def add(self, request: Request) -> None:
        """Queue an operation's request."""
        (self.urgent if request.urgent else self.normal).append(request)

    def take_all(self) -> List[Request]:
        """Remove and return every queued request (the port is gone, the line stops)."""
        requests = list(self.urgent) + list(self.normal)
        self.urgent.clear()
        self.normal.clear()
        return requests

    def choose(self, now: float) -> Optional[Outgoing]:
        """Return what to write next, and when; None: nothing to write."""
        request = self._ready(self.urgent)
        if request is not None:
            return self._outgoing(request, now)
        request = self._ready(self.normal)
        if request is not None and self._operation_cycle != self.cycle:
            return self._outgoing(request, now)
        read = self._read(now)
        if read is not None:
            return read
        return self._outgoing(request, now) if request is not None else None

    def written(self, outgoing: Outgoing) -> None:
        """Account an outgoing frame that was written."""
        if outgoing.request is not None:
            queue = self.urgent if outgoing.request.urgent else self.normal
            queue.remove(outgoing.request)
            if not outgoing.request.urgent:
                self._operation_cycle = self.cycle
        elif outgoing.servo is not None:
            outgoing.servo.read_cycle = self.cycle
            outgoing.servo.reads_sent += 1

    def _ready(self, queue: Deque[Request]) -> Optional[Request]:
        for request in queue:
            if request.servo_id is None or not self.matcher.busy(request.servo_id,
                                                                 request.expect):
                return request
        return None

    def _outgoing(self, request: Request, now: float) -> Outgoing:
        servo = self.by_id.get(request.servo_id) if request.servo_id is not None else None
        at = self.timing.earliest(now, request.frame.size, request.reply_size)
        return Outgoing(request.frame, servo if request.expect else None, request.expect, at,
                        request)

    def _read(self, now: float) -> Optional[Outgoing]:
        best: Optional[LineServo] = None
        signature: Optional[ReplySignature] = None
        for servo in self.servos:
            if servo.paused or servo.read_cycle == self.cycle:
                continue
            if servo.health.lost and self.cycle - servo.read_cycle < LOST_READ_EVERY:
                continue
            if best is not None and servo.sampled >= best.sampled:
                continue
            full = servo.reads_sent % FULL_READ_EVERY == 0
            free = self.matcher.free_signature(servo.servo_id,
                                               FULL_READS if full else POSITION_READS)
            if free is not None:
                best, signature = servo, free
        if best is None or signature is None:
            return None
        assert signature.memory is not None  # position reads are reads
        frame = hx.ReadRequest(signature.memory, signature.address,
                               signature.length).frame(best.servo_id)
        at = self.timing.earliest(now, frame.size, signature.reply_size)
        return Outgoing(frame, best, signature, at)

    def next_cycle(self) -> None:
        """Start the next cycle (at most one read per servo and cycle)."""
        self.cycle += 1
