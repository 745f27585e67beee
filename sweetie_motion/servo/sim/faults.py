"""
Fault injection of the bus simulator: what goes wrong on the line and in the servos.

``--fault`` specifications (reproducible with ``--seed``):

=============================  ============================================================
``corrupt=RATE``               each reply byte is corrupted with probability RATE (at 5 %,
                               62 % of the 19-byte position replies are lost)
``corrupt-reply=RATE``         a reply gets one corrupted byte with probability RATE (a
                               noisy cable: RATE of the replies lost)
``drop=RATE``                  a reply is not sent (the request was executed)
``late=RATE[:DELAY]``          a reply comes DELAY s late (default 0.05; the servo's later
                               replies wait behind it)
``error=ID:FLAG[@T][+D]``      FLAG (overload, overheat, voltage) on servo ID from T s after
                               the start for D s (default: for good); overheat and voltage
                               are physical conditions found at the next ADC check
``random-errors=RATE[@T]``     error flags on random servos, RATE per second from T on
``jam=ID[@T][+D]``             the servo's shaft is blocked (it overloads if driven)
``silent=ID[@T][+D]``          the servo stops listening and answering
``close=T[+REOPEN]``           the port closes at T; reopens REOPEN s later as a new pty
                               (use ``--link`` for a path that stays valid)
=============================  ============================================================

A corruption flips bits the checksums cover: a flip of bit 0 alone is undetectable by the
protocol (fact sheet 1.2), so a corruption the master's parser would accept is drawn again;
every corrupted reply is lost to the master. :class:`ReplyFaults` applies the reply-path
faults (corrupt, drop, late) and counts what it did.
"""

from dataclasses import dataclass
import math
import random
from typing import Iterable, Optional, Tuple

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.sim.config import number, SimulatorConfigError

#: the flags an ``error=`` fault can raise
ERROR_FLAGS = {'overload': hx.StatusError.OVERLOAD, 'overheat': hx.StatusError.TEMPERATURE,
               'voltage': hx.StatusError.VOLTAGE}


@dataclass(frozen=True)
class FaultEvent:
    """
    A fault that starts at a time.

    :param time: start, seconds after the simulator's start [s].
    :param kind: 'error', 'jam', 'silent', 'close' or 'random-errors'.
    :param servo_id: the servo (error, jam, silent).
    :param flag: 'overload', 'overheat' or 'voltage' (error).
    :param duration: how long [s] (inf: for good; close: the time until the port reopens).
    :param rate: events per second (random-errors).
    """

    time: float
    kind: str
    servo_id: Optional[int] = None
    flag: str = ''
    duration: float = math.inf
    rate: float = 0.0


@dataclass(frozen=True)
class FaultPlan:
    """
    The faults to inject.

    :param corrupt: probability per reply byte.
    :param drop: probability per reply.
    :param corrupt_reply: probability per reply of one corrupted byte.
    :param late: probability per reply.
    :param late_delay: how late a late reply is [s].
    :param events: faults that start at a time.
    """

    corrupt: float = 0.0
    drop: float = 0.0
    late: float = 0.0
    late_delay: float = 0.05
    events: Tuple[FaultEvent, ...] = ()
    corrupt_reply: float = 0.0

    def merged(self, other: 'FaultPlan') -> 'FaultPlan':
        """Return this plan with the rates ``other`` sets replaced and its events added."""
        return FaultPlan(other.corrupt or self.corrupt, other.drop or self.drop,
                         other.late or self.late,
                         other.late_delay if other.late else self.late_delay,
                         self.events + other.events, other.corrupt_reply or self.corrupt_reply)


def _parse_timing(where: str, text: str) -> Tuple[str, float, float]:
    """Split 'X[@T][+D]' into (X, T, D)."""
    duration = math.inf
    start = 0.0
    if '+' in text:
        text, d = text.split('+', 1)
        duration = number(where, d, 0.0)
    if '@' in text:
        text, t = text.split('@', 1)
        start = number(where, t, 0.0)
    return text, start, duration


def parse_fault(spec: str, offset: float = 0.0) -> FaultPlan:
    """
    Parse one ``--fault`` specification (grammar in the module docstring).

    :param spec: e.g. 'corrupt=0.05', 'error=11:overload@2+1', 'close=3+1'.
    :param offset: added to every start time [s].
    :raises SimulatorConfigError: naming the specification.
    """
    where = f'--fault {spec}'
    if '=' not in spec:
        raise SimulatorConfigError(where, 'expected KIND=VALUE')
    kind, value = (s.strip() for s in spec.split('=', 1))
    if kind in ('corrupt', 'drop', 'corrupt-reply'):
        probability = number(where, value, 0.0, 1.0)
        if kind == 'corrupt':
            return FaultPlan(corrupt=probability)
        if kind == 'drop':
            return FaultPlan(drop=probability)
        return FaultPlan(corrupt_reply=probability)
    if kind == 'late':
        rate, _, delay = value.partition(':')
        return FaultPlan(late=number(where, rate, 0.0, 1.0),
                         late_delay=number(where, delay, 0.0, 10.0) if delay else 0.05)
    if kind == 'random-errors':
        rate, start, _ = _parse_timing(where, value)
        return FaultPlan(events=(FaultEvent(start + offset, kind,
                                            rate=number(where, rate, 0.0, 1000.0)),))
    if kind == 'close':
        _, start, duration = _parse_timing(where, '@' + value)
        return FaultPlan(events=(FaultEvent(start + offset, kind, duration=duration),))
    if kind in ('error', 'jam', 'silent'):
        target, start, duration = _parse_timing(where, value)
        flag = ''
        if kind == 'error':
            target, _, flag = target.partition(':')
            if flag not in ERROR_FLAGS:
                raise SimulatorConfigError(where, f'flag must be one of {", ".join(ERROR_FLAGS)}')
        servo_id = int(number(where, target, 0, hx.MAX_ID))
        return FaultPlan(events=(FaultEvent(start + offset, kind, servo_id, flag, duration),))
    raise SimulatorConfigError(where, 'unknown fault (corrupt, corrupt-reply, drop, late, error, '
                                      'random-errors, jam, silent, close)')


def parse_faults(specs: Iterable[str]) -> FaultPlan:
    """Combine several ``--fault`` specifications into one plan."""
    plan = FaultPlan()
    for spec in specs:
        plan = plan.merged(parse_fault(spec))
    return plan


@dataclass
class ReplyOutcome:
    """
    What the reply-path faults did to one reply.

    :param data: the bytes to send (corrupted or not); None: dropped.
    :param delay: extra delay before it leaves [s].
    :param corrupted: bytes corrupted.
    """

    data: Optional[bytes]
    delay: float = 0.0
    corrupted: int = 0


class ReplyFaults:
    """
    Applies the reply-path faults of a plan: drop, late, corrupt, corrupt-reply.

    :param plan: the fault plan (its rates; :attr:`plan` may be replaced at run time).
    :param rng: the simulator's random source (one source keeps a run reproducible).
    """

    def __init__(self, plan: FaultPlan, rng: random.Random) -> None:
        self.plan = plan
        self.rng = rng
        self._parser_commands = hx.REPLY_COMMANDS

    def apply(self, data: bytes) -> ReplyOutcome:
        """Return what happens to a reply of these bytes."""
        plan, rng = self.plan, self.rng
        if plan.drop and rng.random() < plan.drop:
            return ReplyOutcome(None)
        if plan.late and rng.random() < plan.late:
            return ReplyOutcome(data, plan.late_delay)
        picks = []
        if plan.corrupt:
            picks = [k for k in range(len(data)) if rng.random() < plan.corrupt]
        if plan.corrupt_reply and not picks and rng.random() < plan.corrupt_reply:
            picks = [rng.randrange(len(data))]
        if not picks:
            return ReplyOutcome(data)
        return ReplyOutcome(self.garble(data, picks), 0.0, len(picks))

    def garble(self, data: bytes, picks: Iterable[int]) -> bytes:
        """Return ``data`` with the bytes at ``picks`` changed so that no frame survives."""
        picks = list(picks)
        out = bytearray(data)
        for _ in range(100):
            out = bytearray(data)
            for k in picks:
                out[k] ^= self.rng.randrange(2, 256)   # never bit 0 alone
            if not hx.FrameParser(self._parser_commands).feed(bytes(out)):
                break
        return bytes(out)
