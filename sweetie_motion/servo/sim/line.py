"""
One simulated serial line: its servos, both wires, the faults, no I/O and no clock.

:class:`BusSimulator` paces both directions of the line at the baud rate (a byte takes
10 / baud s, 8N1, full duplex: requests and replies each have their own wire), executes a
request when its last byte has arrived, and lets the addressed servo start its reply
``latency`` after that. Servos on one line share the reply wire and do not listen to it: a
reply that starts while another is still on the wire **collides** with it, and both arrive
garbled (counted in :attr:`SimCounters.collisions`; every servo answering a broadcast STAT
collides the same way). The garbled bytes are sent one reply after the other.

The line records, per servo, the gaps between the intact position replies it sends (the time
from one measurement the master can use to the next): :meth:`BusSimulator.snapshot` gives their
p50 / p99 / max per line as ``sample_gaps``, the simulator's own view of how fresh the master's
measurements can be.
"""

from dataclasses import dataclass, field
import functools
import heapq
import math
import random
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.freshness import AgeHistogram
from sweetie_motion.servo.sim.config import SimConfig, SimulatorConfigError
from sweetie_motion.servo.sim.faults import ERROR_FLAGS, FaultEvent, FaultPlan, ReplyFaults
from sweetie_motion.servo.sim.servo import SimulatedServo

#: a position reply starts at this RAM address (the driver's reads; any length)
POSITION_ADDRESS = 58


@dataclass
class SimCounters:
    """
    What the simulator received, sent and injected.

    :param frames_received: valid frames that arrived.
    :param jog_frames: I_JOG and S_JOG frames among them.
    :param reads: EEP_READ and RAM_READ frames among them.
    :param replies: replies sent (corrupted and collided ones included).
    :param replies_corrupted: replies sent with corrupted bytes (corrupt, corrupt-reply).
    :param bytes_corrupted: bytes corrupted.
    :param replies_dropped: replies not sent (drop fault).
    :param replies_late: replies sent late (late fault).
    :param collisions: replies garbled because another servo's reply was on the wire.
    :param bytes_in: bytes received.
    :param bytes_out: bytes sent.
    :param errors_injected: (time, servo ID, flag) of every injected error flag.
    :param parser: the servos' receiver counters.
    """

    frames_received: int = 0
    jog_frames: int = 0
    reads: int = 0
    replies: int = 0
    replies_corrupted: int = 0
    bytes_corrupted: int = 0
    replies_dropped: int = 0
    replies_late: int = 0
    collisions: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    errors_injected: List[Tuple[float, int, str]] = field(default_factory=list)
    parser: hx.ParserCounters = field(default_factory=hx.ParserCounters)

    def as_dict(self) -> Dict[str, Any]:
        """Return the counters as plain values."""
        out = {k: v for k, v in self.__dict__.items() if k not in ('parser', 'errors_injected')}
        out['errors_injected'] = [list(e) for e in self.errors_injected]
        out['parser'] = dict(self.parser.__dict__)
        return out


@dataclass
class _Reply:
    """A reply on its way: its bytes and whether the master can still read it."""

    start: float            # when the servo starts talking [s]
    data: bytearray
    servo_id: int
    sampled: float          # when the servo executed the request [s]
    position: bool          # a position read's reply
    intact: bool = True
    sent: int = 0           # bytes handed to the master
    begin: float = math.nan  # when its first byte left in the byte stream to the master [s]

    @property
    def size(self) -> int:
        return len(self.data)


class BusSimulator:
    """
    Servos on one simulated line, bytes in and out with times (see the module docstring).

    Call :meth:`receive` with the bytes that came from the master and the time they were read,
    :meth:`advance` to run the servos and the scheduled requests up to a time, and
    :meth:`transmit` for the reply bytes whose wire time has passed.

    :param config: the line and its servos.
    :param faults: faults to inject.
    :param seed: seed of the fault draws and tick phases.
    :param start: simulation time of power-on [s].
    """

    def __init__(self, config: SimConfig, faults: Optional[FaultPlan] = None, seed: int = 0,
                 start: float = 0.0) -> None:
        self.config = config
        self.rng = random.Random(seed)
        self.reply_faults = ReplyFaults(faults or FaultPlan(), self.rng)
        self.start = float(start)
        self.byte_time = hx.byte_time(config.baud)
        self.servos: List[SimulatedServo] = [
            SimulatedServo(servo, config.voltage, start, self.rng.uniform(0.0, hx.TICK),
                           config.baud, config.reboot_time) for servo in config.servos]
        self.counters = SimCounters()
        self._parser = hx.FrameParser()
        self.counters.parser = self._parser.counters
        self._in_free = self.start
        self._events: List[Tuple[float, int, Callable[[float], None]]] = []
        self._seq = 0
        self._queued: List[Tuple[float, int, _Reply]] = []    # by start time
        self._on_wire: List[_Reply] = []                      # started, not all sent
        self._out_free = self.start     # when the byte stream to the master is free
        self._last_sample: Dict[int, float] = {}
        self.sample_gaps = AgeHistogram()
        self.now = self.start
        self.port_events: List[Tuple[float, float]] = []   # (close time, reopen after)
        for event in self.faults.events:
            self.schedule_fault(event)

    @property
    def faults(self) -> FaultPlan:
        """Return the fault plan in force."""
        return self.reply_faults.plan

    @faults.setter
    def faults(self, plan: FaultPlan) -> None:
        self.reply_faults.plan = plan

    def servo(self, servo_id: int) -> SimulatedServo:
        """
        Return the servo that has this ID now, run up to the line's time.

        :raises KeyError: no servo has it.
        """
        for servo in self.servos:
            if servo.servo_id == servo_id:
                servo.advance(self.now)
                return servo
        raise KeyError(f'no simulated servo has ID {servo_id}')

    # --- faults that start at a time -----------------------------------------------------------

    def _schedule(self, t: float, action: Callable[[float], None]) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, self._seq, action))

    def schedule_fault(self, event: FaultEvent, offset: float = 0.0) -> None:
        """
        Add a fault that starts ``event.time`` after the start (plus ``offset``).

        :raises SimulatorConfigError: the fault names a servo that is not on the line.
        """
        t = self.start + event.time + offset
        if event.kind == 'close':
            self.port_events.append((t, event.duration))
            self.port_events.sort()
            return
        if event.kind == 'random-errors':
            if event.rate > 0:
                self._schedule(t + self.rng.expovariate(event.rate),
                               lambda now: self._random_error(now, event.rate))
            return
        try:
            if event.servo_id is None:  # error, jam and silent name their servo
                raise KeyError(event.servo_id)
            servo = self.servo(event.servo_id)
        except KeyError:
            raise SimulatorConfigError(f'fault {event.kind}={event.servo_id}',
                                       'no servo with that ID on this line') from None
        self._schedule(t, functools.partial(self._condition, servo, event, True))
        if math.isfinite(event.duration):
            self._schedule(t + event.duration,
                           functools.partial(self._condition, servo, event, False))

    def _condition(self, servo: SimulatedServo, event: FaultEvent, active: bool,
                   now: float) -> None:
        servo.advance(now)
        if event.kind == 'error':
            servo.set_condition(event.flag, active)
            if active:
                self.counters.errors_injected.append((now, servo.servo_id, event.flag))
        elif event.kind == 'jam':
            servo.shaft.jammed = active
        elif event.kind == 'silent':
            servo.silent = active

    def _random_error(self, now: float, rate: float) -> None:
        servo = self.rng.choice(self.servos)
        flag = self.rng.choice(sorted(ERROR_FLAGS))
        servo.advance(now)
        servo.set_condition(flag, True)
        self.counters.errors_injected.append((now, servo.servo_id, flag))
        self._schedule(now + self.rng.expovariate(rate),
                       lambda t: self._random_error(t, rate))

    # --- requests ------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """
        Bytes from the master, read at ``now``; they arrive at the baud rate from then on.

        :param data: the bytes.
        :param now: time they were read [s].
        """
        if not data:
            return
        self.counters.bytes_in += len(data)
        start = max(now, self._in_free)
        counters = self._parser.counters
        before = (counters.checksum_errors, counters.size_errors)
        garbage = counters.garbage_bytes
        for frame, offset in self._parser.feed_with_offsets(data):
            self._schedule(start + offset * self.byte_time,
                           functools.partial(self._execute, frame))
        self._in_free = start + len(data) * self.byte_time
        if (counters.checksum_errors, counters.size_errors) != before:
            self._schedule(self._in_free, functools.partial(
                self._line_error, hx.StatusDetail.CHECKSUM_ERROR))
        elif counters.garbage_bytes != garbage:
            self._schedule(self._in_free, functools.partial(
                self._line_error, hx.StatusDetail.GARBAGE))

    def _line_error(self, detail: int, t: float) -> None:
        for servo in self.servos:
            if servo.listening(t):
                servo.advance(t)
                servo.raise_error(hx.StatusError.INVALID_PACKET, detail)

    def _execute(self, frame: hx.Frame, t: float) -> None:
        self.counters.frames_received += 1
        targets = [s for s in self.servos if s.listening(t)
                   and (frame.pid == hx.BROADCAST_ID or frame.pid == s.servo_id)]
        request: Optional[hx.Request] = None
        try:
            request = hx.decode_request(frame)
        except hx.UnknownCommandError:
            detail = hx.StatusDetail.UNKNOWN_COMMAND
        except hx.FrameError:
            detail = hx.StatusDetail.GARBAGE
        if isinstance(request, hx.ReadRequest) and frame.pid == hx.BROADCAST_ID and \
                request.address + request.length <= request.memory.size:
            self.counters.reads += 1
            return   # changes nothing and gets no reply: the driver's spacer
        for servo in targets:
            servo.advance(t)
        if request is None:
            for servo in targets:
                servo.raise_error(hx.StatusError.INVALID_PACKET, detail)
            return
        position = False
        if isinstance(request, (hx.IJogRequest, hx.SJogRequest)):
            self.counters.jog_frames += 1
        elif isinstance(request, hx.ReadRequest):
            self.counters.reads += 1
            position = request.memory is hx.Memory.RAM and request.address == POSITION_ADDRESS
        for servo in targets:
            reply = servo.handle(frame, request, t, frame.pid == servo.servo_id
                                 or (frame.pid == hx.BROADCAST_ID
                                     and isinstance(request, hx.StatRequest)))
            if reply is not None:
                self._reply(servo.servo_id, reply.encode(), t, position)

    # --- replies -------------------------------------------------------------------------------

    def _reply(self, servo_id: int, data: bytes, sampled: float, position: bool) -> None:
        outcome = self.reply_faults.apply(data)
        if outcome.data is None:
            self.counters.replies_dropped += 1
            return
        if outcome.delay:
            self.counters.replies_late += 1
        reply = _Reply(sampled + self.config.latency + outcome.delay, bytearray(outcome.data),
                       servo_id, sampled, position, intact=not outcome.corrupted)
        if outcome.corrupted:
            self.counters.replies_corrupted += 1
            self.counters.bytes_corrupted += outcome.corrupted
        self.counters.replies += 1
        self._seq += 1
        heapq.heappush(self._queued, (reply.start, self._seq, reply))

    def _start_on_wire(self, reply: _Reply) -> None:
        """Put a reply on the wire: a reply still on it collides with it."""
        bt = self.byte_time
        overlapping = [other for other in self._on_wire
                       if other.start + other.size * bt > reply.start]
        if overlapping:
            for other in overlapping + [reply]:
                self._garble(other)
        self._on_wire.append(reply)

    def _garble(self, reply: _Reply) -> None:
        """Garble the bytes of a reply not yet handed to the master."""
        if not reply.intact or reply.sent >= reply.size:
            return
        reply.intact = False
        self.counters.collisions += 1
        garbled = self.reply_faults.garble(bytes(reply.data), range(reply.sent, reply.size))
        reply.data[reply.sent:] = garbled[reply.sent:]

    def _sent(self, reply: _Reply) -> None:
        """Count a reply that has left: an intact position reply is a usable sample."""
        if not (reply.intact and reply.position):
            return
        last = self._last_sample.get(reply.servo_id)
        if last is not None:
            self.sample_gaps.add(reply.sampled - last)
        self._last_sample[reply.servo_id] = reply.sampled

    def transmit(self, now: float) -> bytes:
        """
        Return the reply bytes whose last bit has left by ``now``.

        :param now: time [s].
        """
        while self._queued and self._queued[0][0] <= now:
            self._start_on_wire(heapq.heappop(self._queued)[2])
        out = bytearray()
        bt = self.byte_time
        while self._on_wire:
            reply = self._on_wire[0]
            if math.isnan(reply.begin):
                reply.begin = max(reply.start, self._out_free)
            can = min(reply.size, int((now - reply.begin) / bt + 1e-9))
            if can > reply.sent:
                out += reply.data[reply.sent:can]
                reply.sent = can
            if reply.sent < reply.size:
                break
            self._out_free = reply.begin + reply.size * bt
            self._on_wire.pop(0)
            self._sent(reply)
        self.counters.bytes_out += len(out)
        return bytes(out)

    def has_output(self) -> bool:
        """Return whether replies wait for or are on the wire."""
        return bool(self._on_wire or self._queued)

    def discard_output(self) -> None:
        """Forget replies not sent yet (the port closed)."""
        self._queued.clear()
        self._on_wire.clear()

    # --- time ----------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """
        Run scheduled requests and faults up to ``now`` [s], and every servo's ticks.

        A servo's shaft between its ticks is run only when something looks at it (a request,
        a fault, :meth:`servo`, :meth:`snapshot`): its motion does not depend on when it is
        computed, and stepping every servo at every wake-up (845 a second) cost CPU at the
        simulator's real-time priority (22-26 % of a core then, 20-24 % now).
        """
        while self._events and self._events[0][0] <= now:
            t, _, action = heapq.heappop(self._events)
            action(t)
        for servo in self.servos:
            if servo.next_due() <= now:
                servo.advance(now)
        self.now = max(self.now, now)

    def _run_all(self) -> None:
        """Run every servo up to the line's time (before a change from outside or a look)."""
        for servo in self.servos:
            servo.advance(self.now)

    def next_event_time(self) -> float:
        """Return when something is due: a request, a fault or a reply byte [s]."""
        times = [math.inf]
        if self._events:
            times.append(self._events[0][0])
        if self._queued:
            times.append(self._queued[0][0])
        if self._on_wire:
            reply = self._on_wire[0]
            begin = reply.begin if not math.isnan(reply.begin) else \
                max(reply.start, self._out_free)
            times.append(begin + (reply.sent + 1) * self.byte_time)
        return min(times)

    # --- outside influences --------------------------------------------------------------------

    def move_by_hand(self, positions: Mapping[int, float]) -> List[int]:
        """
        Move servos whose torque is off (or braking), as a person posing the robot would.

        :param positions: servo angle by servo ID [rad].
        :return: the IDs that moved.
        """
        moved = []
        for servo_id, angle in positions.items():
            servo = self.servo(int(servo_id))
            if not servo.torque_on:
                servo.shaft.hand = float(angle)
                moved.append(servo.servo_id)
        return moved

    def set_external_torque(self, torques: Mapping[int, float]) -> None:
        """Set the external torque of servos [N*m] by ID."""
        for servo_id, torque in torques.items():
            self.servo(int(servo_id)).shaft.external_torque = float(torque)

    def snapshot(self) -> Dict[str, Any]:
        """Return the state of every servo, the counters and the sample gaps as plain values."""
        self._run_all()
        return {'time': self.now - self.start, 'now': self.now,
                'servos': {str(s.servo_id): s.snapshot() for s in self.servos},
                'counters': self.counters.as_dict(),
                'sample_gaps': self.sample_gaps.summary().as_dict()}
