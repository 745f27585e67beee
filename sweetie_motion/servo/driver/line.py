"""
The I/O thread of one servo line: goals out, replies in, paced by the cycle.

Each :class:`BusLine` owns its port (:mod:`~sweetie_motion.servo.driver.port`), its servos
(:class:`~sweetie_motion.servo.driver.servo_state.LineServo`), the requests in flight
(:mod:`~sweetie_motion.servo.driver.matching`) and the wire scheduler
(:mod:`~sweetie_motion.servo.driver.scheduler`). It waits in ``select`` on the port and a
wake-up pipe, and each time it wakes:

1. reads what arrived: each reply is matched to its request; a position reply becomes the
   servo's measurement, stamped with the time the servo sampled it (when the request's last
   byte reached it), every status goes to the fault policy
   (:mod:`~sweetie_motion.servo.driver.health`);
2. counts the requests whose deadline passed as lost;
3. starts a cycle when the cycle handed over goals (:meth:`BusLine.set_goals`): one S_JOG
   broadcast with every servo's goal and LED bits (every k-th cycle when the wire needs it);
   without goals it runs idle cycles at the period, reads and operations only;
4. writes what the scheduler picks, for as long as the wires allow.

Operations (:mod:`~sweetie_motion.servo.driver.operations`) run on threads of their own and
hand their requests over with :meth:`BusLine.submit`, each a future the thread resolves.
"""

from collections import deque
from dataclasses import replace
import math
import select
import threading
import time
from typing import Callable, Deque, List, Optional

import numpy as np

from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.config import BusConfig, BusStoppedError, DriverConfig
from sweetie_motion.servo.driver.health import BusStatistics
from sweetie_motion.servo.driver.intake import ReplyIntake
from sweetie_motion.servo.driver.matching import ReplyMatcher, Request, SENT
from sweetie_motion.servo.driver.port import LinePort, SerialFactory, Waker
from sweetie_motion.servo.driver.scheduler import Outgoing, WireScheduler
from sweetie_motion.servo.driver.servo_state import LineServo, MeasurementBoard
from sweetie_motion.servo.driver.wire import (
    goal_playtime, jog_frame_size, LineTiming, operations_share, read_frame_sizes, SPACER,
    wire_budget,
)
from sweetie_motion.servo.freshness import AgeHistogram


#: weight of each cycle in the average S_JOG lag (about the last 100 cycles; the first 100
#: are averaged evenly, so that the schedule's guess it starts from is gone after the first)
JOG_LAG_WEIGHT = 0.01


class BusLine(threading.Thread):
    """
    The I/O thread of one line (see the module docstring).

    :param config: the line.
    :param driver: the driver's configuration.
    :param indices: index of each of the line's servos in the bus joint arrays.
    :param board: where measurements and faults go.
    :param clock: the time source.
    :param serial_factory: opens a port (default: pyserial).
    """

    def __init__(self, config: BusConfig, driver: DriverConfig, indices: np.ndarray,
                 board: MeasurementBoard, clock: Callable[[], float] = time.monotonic,
                 serial_factory: Optional[SerialFactory] = None) -> None:
        super().__init__(name=f'servo-bus-{config.name}', daemon=True)
        self.config = config
        self.driver = driver
        self.clock = clock
        self.board = board
        self.servos = [LineServo(s, i, k, config.name, driver)
                       for k, (s, i) in enumerate(zip(config.servos, indices))]
        self.by_id = {s.servo_id: s for s in self.servos}
        self.port = LinePort(config.name, config.port, config.baud, driver.reconnect_interval,
                             serial_factory)
        self.stats = BusStatistics(config.name, config.port)
        self.budget = wire_budget(len(self.servos), config.baud, driver.period,
                                  driver.min_refresh_rate, driver.reply_gap)
        self.stats.budget = self.budget
        self.timing = LineTiming(config.baud, config.latency, driver.reply_gap,
                                 driver.delivery_slack)
        self.matcher = ReplyMatcher(driver.late_grace)
        #: the request wire's bytes per cycle that operations may take
        self.operations_share = operations_share(self.budget, driver.operations_age_cost)
        byte_time = self.timing.byte_time
        self.scheduler = WireScheduler(self.servos, self.matcher, driver.reply_gap / byte_time,
                                       self.operations_share, driver.period / byte_time)
        self.parser = hx.FrameParser(hx.REPLY_COMMANDS)
        self.ages = AgeHistogram()
        #: how long after set_goals the thread ran (scheduling, the interpreter lock) [s]
        self.wakes = AgeHistogram(0.0001, 1.0)
        self._handed = math.nan
        #: guards what callers hand over and the servos' counters
        self.lock = threading.Lock()
        self.waker = Waker()
        self._incoming: Deque[Request] = deque()
        self._goals: Optional[np.ndarray] = None
        self._goal_new = False
        self._goal_stamp = math.nan
        #: how long after its cycle's time an S_JOG's last byte reaches the servos, averaged
        #: [s] (the thread's wake-up, what goes before it in the batch, its wire time)
        self.jog_lag = self._scheduled_jog_lag()
        self._jog_lags_taken = 0
        self._playtime = goal_playtime(driver.period * self.budget.goal_every)[0]
        self._stopping = False
        self._goals_stopped = False
        #: positions known and servos set up: goals may go out
        self.ready = False
        self._cycle_start = -math.inf
        self._jog_end = math.nan
        self._last_goals = -math.inf
        self.connected_at = clock()
        self.intake = ReplyIntake(config.name, self.by_id, self.matcher, self.timing, board,
                                  self.stats, self.event)
        #: what happened (port lost, servo lost, faults), newest last
        self.events: Deque[str] = deque(maxlen=100)
        #: called when the port came back (set by the operations: re-init the servos)
        self.on_reopened: Callable[[], None] = lambda: None

    # --- the callers' side ---------------------------------------------------------------------

    def wake(self) -> None:
        """Wake the thread up (never blocks)."""
        self.waker.wake()

    def set_goals(self, counts: np.ndarray, stamp: float = math.nan) -> None:
        """
        Hand over the goals of this line's servos [counts] (NaN: no goal).

        :param stamp: the time of the cycle they come from [s] (for :attr:`jog_lag`).
        """
        with self.lock:
            self._goals = counts
            self._goal_new = True
            self._goal_stamp = stamp
            self._handed = self.clock()
        self.wake()

    def _scheduled_jog_lag(self) -> float:
        """Return the S_JOG's lag as the schedule has it: the first read, then the S_JOG [s]."""
        read, _ = read_frame_sizes(self.config.baud, self.driver.reply_gap)
        jog = jog_frame_size(len(self.servos))
        return (read + jog) * self.timing.byte_time

    def control_delay(self) -> float:
        """
        Return the delay from a cycle's reference to the servos' desired position [s].

        The goal leads the reference by the playtime minus the goal interval I (see
        :mod:`~sweetie_motion.servo.driver.bus`), so the servo's desired position follows the
        reference I after the servo takes the S_JOG: at its next 11.2 ms tick, which finds the
        newest S_JOG on average min(I, tick) / 2 old. The S_JOG reached it :attr:`jog_lag`
        after the cycle. Measurements are stamped when the servo sampled them: this is the
        delay they see.
        """
        interval = self.driver.period * self.budget.goal_every
        return interval + self.jog_lag + min(interval, hx.TICK) / 2

    def submit(self, request: Request) -> Request:
        """Queue an operation's request; its future says what came of it."""
        request.future.set_running_or_notify_cancel()
        with self.lock:
            if self._stopping:
                request.future.set_exception(BusStoppedError(
                    f'bus {self.config.name} is stopped'))
                return request
            self._incoming.append(request)
        self.wake()
        return request

    def stop_goals(self) -> None:
        """Send no more goals (disconnect)."""
        with self.lock:
            self._goals_stopped = True
            self._goals = None

    def stop(self) -> None:
        """Ask the thread to end (after the requests on the wire are answered)."""
        with self.lock:
            self._stopping = True
        self.wake()

    def event(self, text: str) -> None:
        """Record what happened: a port lost, a servo lost, a fault."""
        self.events.append(f'{self.clock():.3f} {text}')

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Serve the line until it is stopped."""
        if self.driver.priority:
            set_realtime_priority(self.driver.priority)
        try:
            while True:
                with self.lock:
                    if self._stopping:
                        break
                try:
                    self._once()
                except Exception as error:   # noqa: B902 - the I/O thread must never die
                    self.event(f'internal error: {error!r}')
                    time.sleep(0.01)
                self.stats.cpu_time = time.thread_time()
        finally:
            self._finish()

    def _once(self) -> None:
        now = self.clock()
        readers = [self.waker.fileno()] + ([self.port.fileno()] if self.port.is_open else [])
        try:
            ready, _, _ = select.select(readers, [], [], max(0.0, min(0.05, self._wake_time(now)
                                                                      - now)))
        except (OSError, ValueError) as error:
            if self.port.is_open:
                self._port_lost(self.clock(), error)
            return
        now = self.clock()
        if self.waker.fileno() in ready:
            self.waker.drain()
            with self.lock:
                handed, self._handed = self._handed, math.nan
            if math.isfinite(handed):
                self.wakes.add(max(0.0, now - handed))
        if self.port.is_open:
            # whatever select said: bytes that came since decide what is overdue
            self._read(now)
        if not self.port.is_open and self.port.reopen(now):
            self._port_reopened(now)
        with self.lock:
            incoming, self._incoming = self._incoming, deque()
        for request in incoming:
            self.scheduler.add(request)
        self.intake.expire(now)
        self._start_cycle(now)
        self._issue(self.clock())

    def _wake_time(self, now: float) -> float:
        times = [now + 0.05, self.matcher.next_deadline(),
                 self.intake.overdue_at()]
        if not self.port.is_open:
            times.append(self.port.reopen_at)
        if self._last_goals < now - 2 * self.driver.period:
            times.append(self._cycle_start + self.driver.period)   # idle cycles
        return min(times)

    def _finish(self) -> None:
        """Wait for the replies of the requests on the wire, then close everything."""
        deadline = self.clock() + 1.0
        while self.matcher.awaited and self.port.is_open and self.clock() < deadline:
            now = self.clock()
            try:
                select.select([self.port.fileno()], [], [], 0.01)
            except (OSError, ValueError) as error:
                self._port_lost(now, error)
                break
            self._read(self.clock())
            self.intake.expire(self.clock())
        with self.lock:
            requests = list(self._incoming) + self.scheduler.take_all()
            self._incoming.clear()
        requests += [p.request for p in self.matcher.drop_all() if p.request is not None]
        for request in requests:
            if not request.future.done():
                request.future.set_exception(BusStoppedError(f'bus {self.config.name} '
                                                             'stopped'))
        self.port.close()
        self.stats.connected = False
        self.waker.close()

    # --- the port ------------------------------------------------------------------------------

    def _port_lost(self, now: float, error: BaseException) -> None:
        self.port.lose(now, error)
        self.event(f'port lost: {self.port.error}')
        self.ready = False
        self.parser.reset()
        lost = self.matcher.drop_all()
        for request in [p.request for p in lost if p.request is not None] + \
                self.scheduler.take_all():
            if not request.future.done():
                request.future.set_result(None)

    def _port_reopened(self, now: float) -> None:
        self.event('port reopened')
        self.timing.reset(now)
        for servo in self.servos:
            servo.resume = True
        self.on_reopened()

    def _read(self, now: float) -> None:
        data = self.port.read(now)
        if not self.port.is_open:
            self._port_lost(now, OSError(self.port.error))
            return
        if not data:
            return
        start = self.timing.received(len(data)) - len(data)
        for frame, consumed in self.parser.feed_with_offsets(data):
            self.intake.frame(frame, now, start + consumed)

    def _write(self, data: bytes) -> Optional[float]:
        """
        Write ``data``; return when the write returned (None: the port is lost).

        The time is taken after the write: the bytes went out no earlier, so the wire model
        built on it is never ahead of the wire (a thread waiting for the GIL between reading
        the clock and writing would make it so).
        """
        now = self.clock()
        if self.port.write(data, now):
            return self.clock()
        self._port_lost(now, OSError(self.port.error))
        return None

    # --- cycles and goals ----------------------------------------------------------------------

    def _start_cycle(self, now: float) -> None:
        with self.lock:
            goals = self._goals if self._goal_new else None
            self._goal_new = False
            stopped = self._goals_stopped
            stamp = self._goal_stamp
        period = self.driver.period
        if goals is None and (now - self._last_goals < 2 * period
                              or now < self._cycle_start + period):
            return
        self._cycle_start = now
        self.stats.cycles += 1
        self._sample_ages(now)
        jog = None
        if goals is not None:
            self._last_goals = now
            goal_cycle = (self.scheduler.cycle + 1) % self.budget.goal_every == 0
            if goal_cycle and not stopped and self.port.is_open and self.ready:
                tags = self._goal_tags(goals)
                if tags:
                    jog = hx.SJogRequest(self._playtime, tuple(tags)).frame(hx.BROADCAST_ID)
        # what the request wire can take before the next cycle, less what it still carries
        backlog = max(0.0, self.timing.tx_free - now)
        budget = (period - backlog) / self.timing.byte_time
        batch = self.scheduler.cycle_batch(jog, budget)
        self._jog_end = math.nan
        if self.port.is_open and self._write_batch(batch) and jog is not None:
            self.stats.goals += 1
            lag = self._jog_end - stamp
            if 0.0 <= lag < 10 * period:    # (a stamp-less caller, or a stale one: not taken)
                self._jog_lags_taken += 1
                weight = max(JOG_LAG_WEIGHT, 1.0 / self._jog_lags_taken)
                self.jog_lag += weight * (lag - self.jog_lag)

    def _goal_tags(self, goals: np.ndarray) -> List[hx.JogTag]:
        """Return the S_JOG tags: each servo's goal (ramped after a reconnection) and LED."""
        tags = []
        step = self.driver.resume_speed * self.driver.period * self.budget.goal_every
        for servo in self.servos:
            goal = goals[servo.slot]
            if not math.isfinite(goal) or servo.paused:
                continue
            if servo.resume:
                base = servo.sent_goal if math.isfinite(servo.sent_goal) else servo.counts
                if not math.isfinite(base):
                    continue
                limit = step / servo.kind.rad_per_count
                if abs(goal - base) <= limit:
                    servo.resume = False
                else:
                    goal = base + math.copysign(limit, goal - base)
            servo.sent_goal = goal
            tags.append(hx.JogTag(servo.servo_id, int(round(goal)),
                                  led=servo.led(self.driver.status_led)))
        return tags

    def _sample_ages(self, now: float) -> None:
        ages = [now - s.sampled for s in self.servos if not s.paused]
        self.ages.add_many(np.array(ages))

    # --- requests ------------------------------------------------------------------------------

    def _issue(self, now: float) -> None:
        """Write the operation requests that came between cycles, and the reads lost in it."""
        if not self.port.is_open:
            return
        scheduler = self.scheduler
        reask = self.ready and any(s.reask for s in self.servos)
        if not (scheduler.urgent or scheduler.normal or reask):
            return
        # only what the request wire carries before the next cycle: its batch is not delayed
        free_from = max(now, self.timing.tx_free)
        budget = (self._cycle_start + self.driver.period - free_from) / self.timing.byte_time
        batch = scheduler.between(max(0.0, budget), shared=self.ready)
        if batch:
            self._write_batch(batch)

    def _write_batch(self, batch: List[Outgoing]) -> bool:
        """
        Write a batch in one write (its spacing then holds whenever the bytes go out).

        Each request's last byte leaves the wire model's time after the write began: the
        servo samples then (the stamp of a position read), and its reply should end a latency
        and its bytes later.
        """
        if not batch:
            return True
        data = b''.join(o.frame.encode() + SPACER.encode() * o.spacers for o in batch)
        now = self.clock()
        if self._write(data) is None:
            return False
        self.scheduler.written(batch)
        for outgoing in batch:
            request = outgoing.request
            replier, expect = outgoing.replier, outgoing.expect
            if replier is None or expect is None:
                tx_end, _ = self.timing.sent(now, outgoing.size, 0)
                if request is None:      # the scheduler's own frame without reply: the S_JOG
                    self._jog_end = tx_end - outgoing.spacers * SPACER.size \
                        * self.timing.byte_time
                if request is not None:
                    request.future.set_result(SENT)
                continue
            if request is None:
                self.stats.reads += 1
            tx_end, rx_end = self.timing.slot(now, outgoing.frame.size, outgoing.reply_size)
            pending = self.matcher.sent(replier, expect, now, tx_end,
                                        rx_end + self.driver.timeout, request)
            # the wire model expects only the line's servos' replies: an ID not on the line
            # (a scan's, most often absent) expected there would take the bytes of the replies
            # after it for its own and delay knowing their losses; it is lost when a later
            # reply overtakes it, or at its deadline
            expected = outgoing.reply_size if outgoing.servo is not None else 0
            self.timing.sent(now, outgoing.frame.size, expected, pending.sequence)
            self.timing.sent(now, outgoing.spacers * SPACER.size, 0)
        return True

    def statistics(self) -> BusStatistics:
        """Return a snapshot of the line's counters."""
        stats = replace(self.stats)
        counters = self.parser.counters
        stats.checksum_errors = counters.checksum_errors
        stats.size_errors = counters.size_errors
        stats.command_errors = counters.command_errors
        stats.garbage_bytes = counters.garbage_bytes
        stats.bytes_in, stats.bytes_out = self.port.bytes_in, self.port.bytes_out
        stats.reconnects = self.port.reopened
        stats.connected = self.port.is_open
        stats.elapsed = self.clock() - self.connected_at
        if stats.elapsed > 0:
            bt = self.timing.byte_time
            stats.tx_utilisation = stats.bytes_out * bt / stats.elapsed
            stats.rx_utilisation = stats.bytes_in * bt / stats.elapsed
        ages = self.ages.summary()
        stats.age_p50, stats.age_p99, stats.age_max = ages.p50, ages.p99, ages.largest
        wakes = self.wakes.summary()
        stats.wake_p99, stats.wake_max = wakes.p99, wakes.largest
        return stats
