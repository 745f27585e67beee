"""
The wire scheduler of one line: what goes on the line, in which order, with which fill; pure.

Once a cycle the line writes one batch (:meth:`WireScheduler.cycle_batch`), in this order:

1. every *urgent* operation request (a fault's torque off, the shutdown);
2. ordinary operation requests to servos the batch does not read, while the operations'
   credit lasts (below): one where the reads leave more of the cycle's wire free than the
   credit, else as many as it pays for;
3. the goal broadcast (S_JOG), after the first read (it is that read's fill);
4. **position reads**, the servo whose newest measurement is the oldest first (a servo whose
   reply was lost and who was not asked again between cycles comes first), at most one per
   servo and cycle, as many as the cycle's request wire holds; a servo silent for
   :data:`SILENT_AFTER` reads only every :data:`LOST_READ_EVERY` cycles (its reads would take
   the wire from the others); every :data:`~sweetie_motion.servo.driver.wire.FULL_READ_EVERY`-th
   read of a servo also asks for its velocity and PWM, the others only for its position.

Between cycles a position read of a servo whose read of this cycle was lost (damaged,
overtaken or overdue), or that the cycle did not read because an operation's request to it was
in flight, goes out at once (once it is free) if the request wire has room for it before the
next cycle: a lost reply then costs the measurement a millisecond or two instead of a period. An
operation's request goes out between cycles (:meth:`WireScheduler.between`) once no position
read is in flight (the wire it takes would be a lost read's), while the operations' credit
lasts.

The ordinary operations' credit is their share of the request wire (``operations_share``
bytes a cycle, :func:`~sweetie_motion.servo.driver.wire.operations_share`): each cycle adds
it, up to one cycle's share; what they write spends it. A request goes while any is left, so
one larger than the share still goes and the next ones wait until it is paid back: operations
always progress, and over any stretch of cycles take their share and no more (a scan's
hundreds of STATs, each window sent as soon as the one before was answered, once left a line
one read a cycle and its measurements 400 ms old; a third of the wire and one request every
cycle still had a line whose reads fill it read each servo every 5 cycles instead of every
2.9). Urgent requests and the line's set-up are not held to it.

Every request that expects a reply is followed by its fill (the frames after it that expect
none, then spacers: :func:`~sweetie_motion.servo.driver.wire.spacer_count`), so no two replies
can overlap whenever the bytes go out. A servo gets no request while another to it is in flight,
nor one whose signature may still get a late reply
(:class:`~sweetie_motion.servo.driver.matching.ReplyMatcher`).
"""

from collections import deque
from dataclasses import dataclass
import math
from typing import Deque, List, Optional, Sequence, Set

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.matching import (
    FULL_READS, POSITION_READS, ReplyMatcher, ReplySignature, Request,
)
from sweetie_motion.servo.driver.servo_state import LineServo
from sweetie_motion.servo.driver.wire import FULL_READ_EVERY, SHORTEST_REQUEST, SPACER

#: a servo that did not answer this many reads in a row is asked only every LOST_READ_EVERY
#: cycles (a noisy line loses a few in a row now and then: those servos are asked at once)
SILENT_AFTER = 10
LOST_READ_EVERY = 10


@dataclass
class Outgoing:
    """
    A frame to write, and the spacers that follow it.

    :param frame: the frame.
    :param servo: the line's servo that answers (None: no reply, or an ID not on the line:
        see :attr:`replier`).
    :param expect: the reply's signature (None: no reply).
    :param request: the operation's request (None: the scheduler's own: a read, the goals).
    :param spacers: spacers written right after it.
    :param charged: an ordinary operation's request that spends the operations' credit.
    """

    frame: hx.Frame
    servo: Optional[LineServo] = None
    expect: Optional[ReplySignature] = None
    request: Optional[Request] = None
    spacers: int = 0
    charged: bool = False

    @property
    def reply_size(self) -> int:
        """Return the expected reply's size [bytes] (0: none)."""
        return self.expect.reply_size if self.expect is not None else 0

    @property
    def size(self) -> int:
        """Return the bytes it takes on the request wire, spacers included."""
        return self.frame.size + self.spacers * SPACER.size

    @property
    def replier(self) -> Optional[int]:
        """
        Return the ID that answers (None: no reply expected).

        A scan's STAT to an ID not on the line expects a reply as one to the line's servos
        does: it is in flight until answered or lost (once it was taken as needing no reply,
        and a scan found none of the servos missing from the line's configuration).
        """
        if self.expect is None:
            return None
        if self.servo is not None:
            return self.servo.servo_id
        return self.request.servo_id if self.request is not None else None


class WireScheduler:
    """
    Picks what a line writes (see the module docstring).

    :param servos: the line's servos.
    :param matcher: the requests in flight.
    :param gap_bytes: the silence between two replies, in byte times.
    :param operations_share: the request wire's bytes per cycle that ordinary operation
        requests may take, their fill included (see the module docstring).
    :param cycle_bytes: the request wire's bytes in one cycle: whether the reads leave the
        operations' credit free is judged on it, and an operation's request that fits beside
        the reads in it waits rather than take a read's place (None: both judged on each
        cycle's budget). A cycle's budget is shorter by what the wire still carries when it
        starts, which at 666666 Bd was a quarter of the cycles during a scan; judged on that,
        operations took reads' places in 3 % of the cycles of a line whose reads leave a third
        of the wire free.
    """

    def __init__(self, servos: Sequence[LineServo], matcher: ReplyMatcher,
                 gap_bytes: float, operations_share: float = math.inf,
                 cycle_bytes: Optional[float] = None) -> None:
        self.servos = list(servos)
        self.by_id = {s.servo_id: s for s in self.servos}
        self.matcher = matcher
        self.gap_bytes = gap_bytes
        self.operations_share = operations_share
        self.cycle_bytes = cycle_bytes
        #: the bytes ordinary operation requests may still write (negative: owed)
        self.operation_credit = operations_share
        self.urgent: Deque[Request] = deque()
        self.normal: Deque[Request] = deque()
        #: the cycle the line is in (counted by the line thread)
        self.cycle = 0

    def add(self, request: Request) -> None:
        """Queue an operation's request."""
        (self.urgent if request.urgent else self.normal).append(request)

    def take_all(self) -> List[Request]:
        """Remove and return every queued request (the port is gone, the line stops)."""
        requests = list(self.urgent) + list(self.normal)
        self.urgent.clear()
        self.normal.clear()
        return requests

    # --- batches -------------------------------------------------------------------------------

    def cycle_batch(self, jog: Optional[hx.Frame], budget: float) -> List[Outgoing]:
        """
        Return the cycle's batch: urgent requests, one more request, the goals, the reads.

        :param jog: the S_JOG of the goals (None: no goals this cycle).
        :param budget: bytes the request wire can take this cycle.
        """
        self.cycle += 1
        self.operation_credit = min(self.operations_share,
                                    self.operation_credit + self.operations_share)
        busy: Set[int] = set()
        urgent = self._operations(busy, ordinary=0)
        reads: List[Outgoing] = []
        batch = self._compose(urgent, jog, reads)
        for servo in self._read_order():
            read = self._read(servo, busy)
            if read is None:
                # held by an operation's request: read between cycles once it is answered
                pending = self.matcher.in_flight.get(servo.servo_id)
                servo.reask = servo.reask or (pending is not None and pending.request is not None)
                continue
            longer = self._compose(urgent, jog, reads + [read])
            if reads and sum(o.size for o in longer) > budget:
                break
            reads.append(read)
            batch = longer
            busy.add(servo.servo_id)
        capacity = budget if self.cycle_bytes is None else self.cycle_bytes
        full = capacity - sum(o.size for o in batch) < self.operation_credit
        # The ordinary requests go to servos this batch does not read: taken first, one kept
        # its servo's read out of the batch (a scan's STAT or model read of a line's servo: a
        # servo read every cycle missed one in 25 during a scan at 666666 Bd). Where the reads
        # leave less wire than the operations' credit they take it here, in reads' place
        # (there is not enough between cycles); where they leave more, one goes here if it
        # fits beside the reads, and the others between cycles, after the reads' replies
        # (:meth:`between`).
        ordinary = self._operations(busy, ordinary=len(self.normal) if full else 1,
                                    room=self.operation_credit, charged=True, urgent=False)
        if ordinary:
            longer = self._compose(urgent + ordinary, jog, reads)
            # one that fits beside the reads in a whole cycle, but not in this one (the wire
            # still busy when it began) waits: it would take a read's place for nothing
            waits = not full and sum(o.size for o in longer) <= capacity
            while not waits and len(reads) > 1 and sum(o.size for o in longer) > budget:
                reads.pop()     # the newest measurement's read waits: the request takes it
                longer = self._compose(urgent + ordinary, jog, reads)
            # a batch without it is composed again: _filled set the spacers of the objects it
            # was given for the request after them
            fits = sum(o.size for o in longer) <= budget or not waits
            batch = longer if fits else self._compose(urgent, jog, reads)
        return batch

    def _compose(self, operations: List[Outgoing], jog: Optional[hx.Frame],
                 reads: List[Outgoing]) -> List[Outgoing]:
        """Return the batch: the operations, the first read, the goals, the other reads."""
        goals = [Outgoing(jog)] if jog is not None else []
        return self._filled(operations + reads[:1] + goals + reads[1:])

    def between(self, budget: float = 0.0, shared: bool = True) -> List[Outgoing]:
        """
        Return what to write now, between cycles: reads asked again, then operation requests.

        While a position read is in flight the ordinary operations wait: its reply may be
        lost, and its read asked again needs the wire before the next cycle. Written as soon
        as they came, a scan's requests took that wire at 666666 Bd (a third of it, right
        after the cycle's batch): a leg line asked 0.03 lost reads again a cycle instead of
        0.61.

        :param budget: bytes the request wire can take before the next cycle: the servos whose
            read was lost are asked again within it, and the operations take what is left of it
            (their requests that spilled into the next cycle delayed its reads, and with them
            the time their losses are known).
        :param shared: the operations keep to their credit, to the budget and wait for the
            reads (False while the line is set up: there are no reads to leave room for).
        """
        busy: Set[int] = set()
        batch: List[Outgoing] = []
        for servo in self.servos:
            if servo.paused or servo.health.losses_in_a_row >= SILENT_AFTER:
                # the cycles read it at their own pace; a flag left set would make the line
                # thread compose an empty batch at every wake-up while the servo is silent
                servo.reask = False
                continue
            if not servo.reask:
                continue
            read = self._read(servo, busy)
            if read is None:
                continue
            longer = self._filled(batch + [read])
            if sum(o.size for o in longer) > budget:
                break
            batch = longer
            busy.add(servo.servo_id)
        reading = shared and any(p.request is None for p in self.matcher.in_flight.values())
        if not shared:
            room, fit = math.inf, math.inf
        else:
            # an operation's request must end before the next cycle: one that ran into it kept
            # its servo (or, behind it, the cycle's batch) from being read in time
            room = 0.0 if reading else self.operation_credit
            fit = budget - sum(o.size for o in batch)
        return self._filled(batch + self._operations(busy, ordinary=len(self.normal),
                                                     room=room, charged=shared, fit=fit))

    def written(self, batch: Sequence[Outgoing]) -> None:
        """Account a batch that was written: its requests leave the queues."""
        for outgoing in batch:
            request = outgoing.request
            if request is not None:
                (self.urgent if request.urgent else self.normal).remove(request)
                if outgoing.charged:
                    self.operation_credit -= outgoing.size
            elif outgoing.servo is not None:
                outgoing.servo.read_cycle = self.cycle
                outgoing.servo.reads_sent += 1
                outgoing.servo.reask = False

    # --- the parts of a batch ------------------------------------------------------------------

    def _operations(self, busy: Set[int], ordinary: int, room: float = math.inf,
                    charged: bool = False, urgent: bool = True,
                    fit: float = math.inf) -> List[Outgoing]:
        """
        Return the urgent requests and up to ``ordinary`` other ones that may go now.

        :param room: the bytes the other ones may take, their fill included: one goes while
            any is left (the last one may overdraw it).
        :param charged: the other ones spend the operations' credit when written.
        :param urgent: the urgent requests too (False: only the other ones).
        :param fit: the bytes the other ones must fit in, their fill included (unlike ``room``,
            none may go beyond it).
        """
        out = []
        for queue, limit in ((self.urgent, len(self.urgent) if urgent else 0),
                             (self.normal, ordinary)):
            taken = 0
            for request in list(queue):
                if taken >= limit:
                    break
                servo_id = request.servo_id
                if servo_id is not None and request.expect is not None and (
                        servo_id in busy or self.matcher.busy(servo_id, request.expect)):
                    continue
                servo = self.by_id.get(servo_id) if servo_id is not None else None
                outgoing = Outgoing(request.frame, servo if request.expect else None,
                                    request.expect, request,
                                    charged=charged and queue is self.normal)
                if queue is self.normal:
                    size = outgoing.frame.size + self._fill(outgoing)
                    if room <= 0 or size > fit:
                        break
                    room -= size
                    fit -= size
                out.append(outgoing)
                taken += 1
                if servo_id is not None and request.expect is not None:
                    busy.add(servo_id)
        return out

    def _read_order(self) -> List[LineServo]:
        """Return the servos that may be read this cycle, the oldest measurement first."""
        due = [s for s in self.servos if not s.paused and s.read_cycle != self.cycle
               and not (s.health.losses_in_a_row >= SILENT_AFTER
                        and self.cycle - s.read_cycle < LOST_READ_EVERY)]
        return sorted(due, key=lambda s: s.sampled)

    def _read(self, servo: LineServo, busy: Set[int]) -> Optional[Outgoing]:
        if servo.servo_id in busy:
            return None
        full = servo.reads_sent % FULL_READ_EVERY == 0
        signature = self.matcher.free_signature(servo.servo_id,
                                                FULL_READS if full else POSITION_READS)
        if signature is None:
            return None
        assert signature.memory is not None  # position reads are reads
        frame = hx.ReadRequest(signature.memory, signature.address,
                               signature.length).frame(servo.servo_id)
        return Outgoing(frame, servo, signature)

    def _fill(self, outgoing: Outgoing) -> float:
        """Return the bytes that must follow a request before the next one [bytes]."""
        if not outgoing.reply_size:
            return 0.0
        return max(0.0, outgoing.reply_size + self.gap_bytes - SHORTEST_REQUEST)

    def _filled(self, batch: List[Outgoing]) -> List[Outgoing]:
        """Give each request the spacers its reply needs beyond the frames after it."""
        for k, outgoing in enumerate(batch):
            fill = self._fill(outgoing)
            for later in batch[k + 1:]:
                if fill <= 0 or later.reply_size:
                    break
                fill -= later.frame.size
            outgoing.spacers = max(0, math.ceil(fill / SPACER.size))
        return batch
