"""
The wire time of a servo line: what one cycle can carry, and how requests are spaced.

A HerkuleX line is full duplex at 10 bits a byte (8N1): the master's requests have one wire,
the servos' replies another. The servos share the reply wire and do not listen to it: a servo
starts its reply ``latency`` after the last byte of its request, whatever is on the wire, so
two replies that overlap garble each other.

The driver keeps them apart on the request wire itself: every request that expects a reply
is followed, in the same write, by enough bytes that no reply asked for after it can begin
before it has ended plus ``reply_gap`` (:func:`spacer_count`). The fill is the goal broadcast
(S_JOG) where one follows, else *spacers*: a broadcast RAM read, which every servo executes
and none answers (fact sheet 2.3). The UART sends a write's bytes back to back, and an OS or a
USB adapter that holds bytes up only makes later replies later: the spacing holds whenever
the bytes go out, with no timing of the driver's own.

:func:`wire_budget` computes from the frame sizes what that leaves per cycle: the goal every
k-th cycle (the smallest k that reads every servo at ``min_refresh_rate``, keeping at least
25 goals a second), and the reads a second the wire allows.
"""

from dataclasses import dataclass
import math
from typing import Dict, List, Optional, Tuple

from sweetie_motion.servo import herkulex as hx

#: A position read asks for the calibrated position (RAM 58, 2 bytes: a 13-byte reply); every
#: FULL_READ_EVERY-th read of a servo for the calibrated and absolute position, the velocity and
#: the PWM too (8 bytes: a 19-byte reply)
READ_ADDRESS = 58
POSITION_LENGTH = 2
FULL_LENGTH = 8
FULL_READ_EVERY = 4
#: goals go at least this often when the refresh would want them rarer [Hz]
MIN_GOAL_RATE = 25.0
#: the fill between a request and the next: a broadcast read that no servo answers
SPACER = hx.ReadRequest(hx.Memory.RAM, 0, 1).frame(hx.BROADCAST_ID)
#: the shortest request that expects a reply (STAT) [bytes]
SHORTEST_REQUEST = hx.StatRequest().frame(0).size
#: the most of a cycle's request wire that operations (a scan, register reads) may take, where
#: the reads leave it free
OPERATIONS_SHARE = 1 / 3
#: the least they may take, where the reads fill the wire: they always progress
MIN_OPERATIONS_SHARE = 0.02


@dataclass(frozen=True)
class WireBudget:
    """
    What one line can carry per cycle, from the frame sizes.

    :param servos: servos on the line.
    :param baud: [Bd]; :param period: cycle [s].
    :param jog_bytes: the S_JOG of every servo; :param request_bytes: a position read;
        :param read_bytes: what a read costs the request wire with its spacers, and
        :param reply_bytes: its reply (each the mean of position and full reads).
    :param goal_every: a goal every this many cycles.
    :param goal_rate: goals per second [Hz].
    :param read_rate: position reads per second the wire allows (at most one per servo and
        cycle) [Hz].
    :param refresh_rate: reads per servo per second [Hz].
    """

    servos: int
    baud: int
    period: float
    jog_bytes: int
    request_bytes: int
    read_bytes: float
    reply_bytes: float
    goal_every: int
    goal_rate: float
    read_rate: float
    refresh_rate: float

    @property
    def byte_time(self) -> float:
        """Return the wire time of a byte [s]."""
        return hx.byte_time(self.baud)


def jog_frame_size(servos: int) -> int:
    """Return the size of an S_JOG with ``servos`` tags [bytes]."""
    tags = tuple(hx.JogTag(k, 512) for k in range(servos))
    return hx.SJogRequest(0, tags).frame().size


def read_frame_sizes(baud: int = 115200, reply_gap: float = 0.0002) -> Tuple[int, float]:
    """Return a position read's size and its mean wire cost with its spacers [bytes]."""
    position = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, POSITION_LENGTH)
    full = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, FULL_LENGTH)
    cost = [r.frame(0).size + spacer_count(r.reply_size, baud, reply_gap) * SPACER.size
            for r in (position, full)]
    mean = (cost[0] * (FULL_READ_EVERY - 1) + cost[1]) / FULL_READ_EVERY
    return position.frame(0).size, mean


def spacer_count(reply_bytes: int, baud: int = 115200, reply_gap: float = 0.0002) -> int:
    """
    Return how many spacers must follow a request whose reply has ``reply_bytes``.

    The next reply starts the next request's wire time after the spacers, so the spacers
    and the shortest request together must last the reply and the gap.

    :param reply_bytes: the reply's size (0: no reply, no spacer).
    :param baud: [Bd]; :param reply_gap: the silence between replies [s].
    """
    if not reply_bytes:
        return 0
    fill = reply_bytes + reply_gap / hx.byte_time(baud) - SHORTEST_REQUEST
    return max(0, math.ceil(fill / SPACER.size))


def reads_per_cycle(servos: int, baud: int, period: float, goal_every: int,
                    reply_gap: float = 0.0002) -> float:
    """
    Return the position reads one cycle can carry with a goal every ``goal_every`` cycles.

    Over k cycles the request wire carries one S_JOG and n reads with their spacers (the
    S_JOG stands for one read's spacer). At most one read per servo and cycle.

    :param servos: servos on the line.
    :param baud: line speed [Bd].
    :param period: cycle period [s].
    :param goal_every: k.
    :param reply_gap: silence between replies [s].
    """
    bt = hx.byte_time(baud)
    _, cost = read_frame_sizes(baud, reply_gap)
    span = goal_every * period / bt
    n = (span - jog_frame_size(servos) + SPACER.size) / cost
    return max(0.0, min(n / goal_every, float(servos)))


def wire_budget(servos: int, baud: int, period: float, min_refresh_rate: float = 20.0,
                reply_gap: float = 0.0002) -> WireBudget:
    """
    Return the goal and read rates one line allows, and the goal divider the driver uses.

    The goal goes every k-th cycle with the smallest k that reads every servo at
    ``min_refresh_rate`` (k = 1 when it fits), but at least :data:`MIN_GOAL_RATE` times a
    second: the goals are what moves the robot.

    :param servos: servos on the line.
    :param baud: line speed [Bd].
    :param period: cycle period [s].
    :param min_refresh_rate: [Hz].
    :param reply_gap: silence between replies [s].
    """
    request, cost = read_frame_sizes(baud, reply_gap)
    jog = jog_frame_size(servos)
    bt = hx.byte_time(baud)
    longest = max(1, int(1.0 / (MIN_GOAL_RATE * period)))
    k = 1
    while k < longest and (jog * bt / k > period or reads_per_cycle(
            servos, baud, period, k, reply_gap) < min(servos, min_refresh_rate * servos * period)):
        k += 1
    reads = reads_per_cycle(servos, baud, period, k, reply_gap)
    position, full = (hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, n).reply_size
                      for n in (POSITION_LENGTH, FULL_LENGTH))
    reply = (position * (FULL_READ_EVERY - 1) + full) / FULL_READ_EVERY
    return WireBudget(servos, baud, period, jog, request, cost, reply, k, 1.0 / (k * period),
                      reads / period, reads / period / servos)


def operations_share(budget: WireBudget, age_cost: float) -> float:
    """
    Return the request wire's bytes per cycle that operations (a scan, register reads) may take.

    The reads take what the goals leave of a cycle's wire, at most one per servo and cycle, in
    whole reads (half a read a cycle is left unused, on average). Where the reads fill it (10
    servos at 115200 Bd: a servo is read every 2.9 cycles), each byte an operation takes is a
    read less, and every servo is read that much later: the share keeps the time between two
    reads of a servo within ``age_cost`` cycles of what it is without operations. Where the
    reads leave wire free (4 servos at 115200 Bd, 10 at 666666 Bd), operations take at most
    :data:`OPERATIONS_SHARE` of it.

    :param budget: the line's wire budget.
    :param age_cost: what operations may add to the time between two reads of a servo
        [cycles].
    """
    capacity = budget.period / budget.byte_time
    # a cycle's wire for reads: the goal's share of it gone, the S_JOG being the first read's
    # fill (as in reads_per_cycle), less the half read a cycle that whole reads leave unused
    reads_wire = capacity - (budget.jog_bytes - SPACER.size) / budget.goal_every \
        - budget.read_bytes / 2
    every_servo = budget.servos * budget.read_bytes
    between_reads = max(1.0, every_servo / reads_wire) if reads_wire > 0 else math.inf
    share = reads_wire - every_servo / (between_reads + age_cost)
    return min(OPERATIONS_SHARE, max(MIN_OPERATIONS_SHARE, share / capacity)) * capacity


def goal_playtime(interval: float) -> Tuple[int, float]:
    """
    Return the playtime and the lead of goals sent every ``interval``.

    The playtime is the interval rounded to whole ticks plus one tick (ServoInvLead: playtime =
    period + lead, lead about one tick).

    :param interval: time between goals [s].
    :return: (playtime [ticks], lead [s]).
    """
    ticks = min(hx.MAX_PLAYTIME, max(1, round(interval / hx.TICK)) + 1)
    return ticks, ticks * hx.TICK - interval


@dataclass
class _Expected:
    """
    A reply the line waits for.

    :param sequence: its request's place in the line's order.
    :param size: [bytes].
    :param end: when it should end on the wire [s].
    """

    sequence: int
    size: int
    end: float


class LineTiming:
    """
    Where the two wires of a line stand, as far as the driver can know.

    The line tells it what it wrote (:meth:`sent`), every byte it read (:meth:`received`) and
    when a reply was settled: answered at a byte position, or lost (:meth:`settled`). It says
    when each request's last byte leaves (the servo executes it then), when each reply should
    end, which reply is overdue (nothing of it came by its end plus ``delivery_slack``), and
    how many bytes of a lost reply came (damaged) or none (missing).

    :param baud: line speed [Bd].
    :param latency: the servos' reply latency [s].
    :param reply_gap: the least silence between two replies [s].
    :param delivery_slack: how late the port may hand over received bytes [s].
    """

    def __init__(self, baud: int, latency: float, reply_gap: float,
                 delivery_slack: float = 0.002) -> None:
        self.byte_time = hx.byte_time(baud)
        self.latency = float(latency)
        self.reply_gap = float(reply_gap)
        self.delivery_slack = float(delivery_slack)
        self.tx_free = -math.inf     # the request wire is busy until then [s]
        self._expected: List[_Expected] = []
        self._total = 0              # bytes read since the port opened
        self._mark = 0               # where the oldest expected reply's bytes begin

    def overdue(self, now: float) -> Optional[int]:
        """
        Return the request whose reply is overdue: not answered by its end plus slack.

        Only the oldest expected reply can be: the replies come in order. It is overdue when
        nothing of it came (missing), or as many bytes as it has came without a valid frame
        (damaged); part of it only is waited for until its request's deadline (the rest may be
        on its way). Its request is lost; a late reply is still recognised by its signature.
        """
        if now <= self.overdue_at():
            return None
        return self._expected[0].sequence

    def oldest(self) -> Optional[int]:
        """Return the request whose reply is the oldest expected (None: none expected)."""
        return self._expected[0].sequence if self._expected else None

    def overdue_at(self) -> float:
        """Return when the oldest expected reply is overdue, as far as its bytes tell [s]."""
        if not self._expected:
            return math.inf
        oldest = self._expected[0]
        if 0 < self._total - self._mark < oldest.size:
            return math.inf
        return oldest.end + self.reply_gap + self.delivery_slack

    def slot(self, now: float, request_bytes: int, reply_bytes: int) -> Tuple[float, float]:
        """
        Return when a request written at ``now`` ends and when its reply ends [s].

        :return: (request's last byte, reply's last byte); without reply both are the first.
        """
        tx_end = max(now, self.tx_free) + request_bytes * self.byte_time
        if not reply_bytes:
            return tx_end, tx_end
        return tx_end, tx_end + self.latency + reply_bytes * self.byte_time

    def sent(self, now: float, request_bytes: int, reply_bytes: int,
             sequence: int = 0) -> Tuple[float, float]:
        """Account a request written at ``now`` (``sequence``: its place); return :meth:`slot`."""
        tx_end, rx_end = self.slot(now, request_bytes, reply_bytes)
        self.tx_free = tx_end
        if reply_bytes:
            self._expected.append(_Expected(sequence, reply_bytes, rx_end))
        return tx_end, rx_end

    def skip(self, count: int) -> None:
        """
        Take ``count`` bytes just read as a valid frame that answers no expected reply.

        A late or unexpected reply is not the oldest expected reply's bytes: counted as such, it
        would make that reply look damaged while it is still on its way.
        """
        self._mark = min(self._total, self._mark + count)

    def received(self, count: int) -> int:
        """Account ``count`` bytes read; return the position after them (bytes since open)."""
        self._total += count
        return self._total

    def settled(self, sequence: int, end: Optional[int] = None) -> Dict[int, int]:
        """
        Settle the reply of request ``sequence`` (and of every older one).

        :param sequence: the request.
        :param end: the byte position where its reply ended (a valid frame); None: it was lost.
        :return: how many bytes of each settled reply came, by request (a lost reply of which
            bytes came was damaged, one of which none came was missing).
        """
        arrived: Dict[int, int] = {}
        answered = next((e for e in self._expected if e.sequence == sequence), None) \
            if end is not None else None
        start = end - answered.size if end is not None and answered is not None else None
        while self._expected and self._expected[0].sequence <= sequence:
            head = self._expected.pop(0)
            if head is answered:
                arrived[head.sequence] = head.size
                continue
            limit = start if start is not None else self._total
            came = max(0, min(head.size, limit - self._mark))
            arrived[head.sequence] = came
            self._mark += came
        if end is not None:
            self._mark = max(self._mark, end)
        return arrived

    def reset(self, now: float) -> None:
        """Both wires are free from ``now`` (a port opened)."""
        self.tx_free = now
        self._expected.clear()
        self._mark = self._total
