"""
The wire time of a servo line: what one cycle can carry, and when a request may go out.

A HerkuleX line is full duplex at 10 bits a byte (8N1): the master's requests have one wire,
the servos' replies another. The servos share the reply wire and do not listen to it: a servo
starts its reply ``latency`` after the last byte of its request, whatever is on the wire, so
two replies that overlap garble each other. :class:`LineTiming` therefore lets a request go
only when its reply cannot start before the previous reply has ended plus ``reply_gap``, and it
judges that by what it *sees*: the bytes of the previous reply that have arrived. A request is
written once the bytes read of the previous reply prove that it ends before the new one can
start: a port that delivers late, a write that the OS or a USB adapter holds up, only make the
next reply later, never earlier. A reply of which nothing arrives lets the next request go
``delivery_slack`` after the time it should have ended. The request wire is
shared with the goal broadcast (S_JOG), during which no request can go and the reply wire idles
once the reply asked for before it is in.

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


@dataclass(frozen=True)
class WireBudget:
    """
    What one line can carry per cycle, from the frame sizes.

    :param servos: servos on the line.
    :param baud: [Bd]; :param period: cycle [s].
    :param jog_bytes: the S_JOG of every servo; :param request_bytes: a position read;
        :param reply_bytes: its reply (the mean of position and full reads).
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


def read_frame_sizes() -> Tuple[int, float]:
    """Return the size of a position read and the mean size of its reply [bytes]."""
    position = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, POSITION_LENGTH)
    full = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, FULL_LENGTH)
    mean = (position.reply_size * (FULL_READ_EVERY - 1) + full.reply_size) / FULL_READ_EVERY
    return position.frame(0).size, mean


def reads_per_cycle(servos: int, baud: int, period: float, goal_every: int,
                    reply_gap: float = 0.0002) -> float:
    """
    Return the position reads one cycle can carry with a goal every ``goal_every`` cycles.

    Over k cycles the request wire carries one S_JOG (J) and n requests (R each); the reply
    wire n replies plus their gaps (P each), and it idles while the S_JOG holds the request
    wire, less the reply asked for just before it: J + R - P. At most one read per servo and
    cycle.

    :param servos: servos on the line.
    :param baud: line speed [Bd].
    :param period: cycle period [s].
    :param goal_every: k.
    :param reply_gap: silence between replies [s].
    """
    bt = hx.byte_time(baud)
    request, reply = read_frame_sizes()
    jog = jog_frame_size(servos) * bt
    r, p = request * bt, reply * bt + reply_gap
    span = goal_every * period
    n = min((span - max(0.0, jog + r - p)) / p, (span - jog) / r)
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
    request, reply = read_frame_sizes()
    jog = jog_frame_size(servos)
    bt = hx.byte_time(baud)
    longest = max(1, int(1.0 / (MIN_GOAL_RATE * period)))
    k = 1
    while k < longest and (jog * bt / k > period or reads_per_cycle(
            servos, baud, period, k, reply_gap) < min(servos, min_refresh_rate * servos * period)):
        k += 1
    reads = reads_per_cycle(servos, baud, period, k, reply_gap)
    return WireBudget(servos, baud, period, jog, request, reply, k, 1.0 / (k * period),
                      reads / period, reads / period / servos)


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
    :param before: bytes read before it could begin (its request written, plus the request's
        wire time and the latency): none of them is its.
    """

    sequence: int
    size: int
    end: float
    before: int = 0


class LineTiming:
    """
    Where the two wires of a line stand, as far as the driver can know (see the module docstring).

    The line tells it what it wrote (:meth:`sent`), every byte it read (:meth:`received`) and
    when a reply was settled: answered at a byte position, or lost (:meth:`settled`).

    :param baud: line speed [Bd].
    :param latency: the servos' reply latency [s].
    :param reply_gap: the least silence between two replies [s].
    :param delivery_slack: how late the port may hand over received bytes [s].
    """

    def __init__(self, baud: int, latency: float, reply_gap: float,
                 delivery_slack: float = 0.005) -> None:
        self.byte_time = hx.byte_time(baud)
        self.latency = float(latency)
        self.reply_gap = float(reply_gap)
        self.delivery_slack = float(delivery_slack)
        self.tx_free = -math.inf     # the request wire is busy until then [s]
        self._expected: List[_Expected] = []
        self._total = 0              # bytes read since the port opened
        self._mark = 0               # where the oldest expected reply's bytes begin
        self._seen_at = -math.inf    # when the newest bytes were read [s]

    def earliest(self, now: float, request_bytes: int, reply_bytes: int) -> float:
        """
        Return when a request may be written so that its reply overlaps no other [s].

        Once k bytes of the previous reply have been read (the newest at t), that reply
        started before t - k byte times and ends before t plus the rest of its bytes: the new
        reply, which starts at least the request's wire time plus the latency after its
        write, may follow from then on (plus the gap). Of a reply that nothing was read of yet
        nothing is known but its expected end: the request waits until the port would have
        delivered it (``delivery_slack``).

        :param now: [s]; :param request_bytes: its size; :param reply_bytes: its reply's (0: no
            reply).
        """
        if not reply_bytes or not self._expected:
            return now
        last = self._expected[-1]
        # its bytes come after those of the older replies, and after it could begin at all
        seen = min(self._total - self._mark - sum(e.size for e in self._expected[:-1]),
                   self._total - last.before)
        if seen <= 0:
            return max(now, last.end + self.reply_gap + self.delivery_slack)
        rest = max(0, last.size - seen) * self.byte_time
        lead = request_bytes * self.byte_time + self.latency
        return max(now, self._seen_at + rest + self.reply_gap - lead)

    def overdue(self, now: float) -> Optional[int]:
        """
        Return the request whose reply is overdue: nothing of it read by its end plus slack.

        Only the oldest expected reply can be: the replies come in order. Its request is lost
        (the line counts it missing); a late reply is still recognised by its signature.
        """
        if now <= self.overdue_at():
            return None
        return self._expected[0].sequence

    def overdue_at(self) -> float:
        """Return when the oldest expected reply is overdue if nothing of it comes [s]."""
        if not self._expected or self._total > self._mark:
            return math.inf
        return self._expected[0].end + self.reply_gap + self.delivery_slack

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
            self._expected.append(_Expected(sequence, reply_bytes, rx_end, self._total))
        return tx_end, rx_end

    def received(self, count: int, now: float) -> int:
        """Account ``count`` bytes read at ``now``; return the position after them."""
        self._total += count
        if count:
            self._seen_at = now
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
