"""
The sync cycle: one periodic driver that calls the active components in a fixed order (R-SYS-1).

Order of one tick, by :class:`StageRole`: ``INPUT`` stages (read the robot state) ->
``CONTROLLER`` stages (compute references, smoothing included) -> ``AGGREGATOR`` (merge the
owners' references into one full pose) -> ``SAFETY`` (the last word on the reference) ->
``OUTPUT`` stages (send to the servo bus) -> ``OBSERVER`` stages (hand data to the publishers,
which run in their own threads). Stages exchange data through the :class:`Tick`.

The driver is a dedicated thread with absolute deadlines: rclpy timers drop ticks and cost CPU
(see the README), and a cycle must not wait for a slow ROS client. The cycle measures itself:
compute time, period error (jitter) and lost ticks.

GIL reservation: a Python thread that wakes up at its deadline must first get the GIL, which
another thread (the executor rebuilding its wait set, a publisher) may hold for up to the
interpreter's switch interval. So the cycle wakes ``gil_margin`` early, takes the GIL, and
sleeps the rest until the deadline in ``clock_nanosleep`` called *without* releasing the GIL.
The other threads lose at most ``gil_margin`` per period; the tick starts on time.

The last ``spin_margin`` before the deadline is spent polling the clock (GIL still held): a
timer wake-up of a real-time thread is usually 30-60 us late on these VMs but, in episodes,
150-400 us late; a short busy wait absorbs those episodes for a few percent of one CPU.
"""

from collections import deque
import ctypes
import ctypes.util
from dataclasses import dataclass, field
from enum import IntEnum
import os
import threading
import time
from typing import Callable, Dict, List, Optional, Protocol, Tuple

import numpy as np

from sweetie_motion.core.ports import ControllerOutput, JointVector


class StageRole(IntEnum):
    """What a stage does in a tick; a tick calls the roles in the order of their values."""

    #: read the robot state into the tick
    INPUT = 1
    #: compute the controllers' references (smoothing included)
    CONTROLLER = 2
    #: merge the owners' references into one full pose
    AGGREGATOR = 3
    #: the last word on the reference before the bus (the safety stage)
    SAFETY = 4
    #: send the reference to the servo bus
    OUTPUT = 5
    #: hand the tick's data to the publishers and reporters
    OBSERVER = 6


class _Timespec(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_nsec', ctypes.c_long)]


def _gil_holding_sleeper() -> Optional[Callable[[float], None]]:
    """Return f(deadline) sleeping until a time.monotonic() deadline, holding the GIL."""
    name = ctypes.util.find_library('c')
    if not name or not hasattr(time, 'CLOCK_MONOTONIC'):
        return None
    try:
        libc = ctypes.PyDLL(name)  # PyDLL: the call does not release the GIL
        nanosleep = libc.clock_nanosleep
    except (OSError, AttributeError):
        return None
    nanosleep.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Timespec),
                          ctypes.c_void_p]
    clock, absolute = time.CLOCK_MONOTONIC, 1  # TIMER_ABSTIME

    def sleep_until(deadline: float) -> None:
        seconds = int(deadline)
        spec = _Timespec(seconds, int((deadline - seconds) * 1e9))
        nanosleep(clock, absolute, ctypes.byref(spec), None)
    return sleep_until


def set_realtime_priority(priority: int) -> str:
    """
    Give the calling thread the SCHED_FIFO real-time ``priority`` (1..99); 0 leaves it alone.

    A real-time thread runs as soon as it wakes up, whatever else the machine does: what a
    control loop needs on a loaded machine (ros2_control's controller manager does the same).
    Without the permission (not root, no CAP_SYS_NICE or RLIMIT_RTPRIO) the thread keeps the
    normal policy.

    :return: how the thread is scheduled now, for diagnostics.
    """
    if priority <= 0:
        return 'normal'
    if not hasattr(os, 'sched_setscheduler'):
        return 'normal (no SCHED_FIFO on this system)'
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(priority)))
    except (OSError, ValueError) as error:
        # A ValueError (a priority int() refuses, e.g. NaN) has no strerror.
        reason = getattr(error, 'strerror', None) or error
        return f'normal (SCHED_FIFO {priority} refused: {reason})'
    return f'SCHED_FIFO {priority}'


@dataclass
class Tick:
    """
    The data of one cycle, shared by its stages.

    :param now: nominal time of this tick (monotonic clock) [s].
    :param period: cycle period [s].
    :param index: tick counter since start.
    :param measured: the measured full pose (filled by the input stage).
    :param reference: the full reference pose: the previous tick's until the aggregator writes
        this tick's.

    Both poses are fresh copies for each tick and are never written after the tick ends, so
    observers may keep references to them.
    :param outputs: controller name -> its output this tick.
    :param held: joints no controller drove this tick (set by the aggregator; None before).
    """

    now: float
    period: float
    index: int
    measured: JointVector
    reference: JointVector
    outputs: Dict[str, ControllerOutput] = field(default_factory=dict)
    held: Optional[np.ndarray] = None


class Stage(Protocol):
    """A component the cycle calls."""

    name: str

    def update(self, tick: Tick) -> None:
        """Do this component's work for the tick."""


@dataclass(frozen=True)
class CycleSnapshot:
    """
    The cycle's statistics at one moment: totals and copies of the newest samples.

    Taking one costs two array copies; :meth:`summary` (the percentiles, milliseconds of numpy
    on 10 000 samples) runs wherever the snapshot is read, so the process of the cycle does
    not hold its GIL for it while the cycle waits.

    :param ticks: ticks run; :param lost: ticks skipped; :param overruns: ticks longer than
        a period; :param stage_errors: stage calls that raised.
    :param elapsed: time since the statistics started [s].
    :param compute: compute time of the newest ticks [s].
    :param period_error: start time minus deadline of the newest ticks [s].
    :param scheduling: how the cycle thread is scheduled ('SCHED_FIFO 50', 'normal', ...).
    :param running: whether the cycle thread runs.
    :param late_ticks: the newest ticks that came a period or more late, as (deadline
        [monotonic clock, s], how late [s], ticks skipped): when the cycle lost time, to match
        against what else happened on the machine then.
    """

    ticks: int
    lost: int
    overruns: int
    stage_errors: int
    elapsed: float
    compute: np.ndarray
    period_error: np.ndarray
    scheduling: str = ''
    running: bool = False
    late_ticks: Tuple[Tuple[float, float, int], ...] = ()

    def summary(self) -> Dict[str, float]:
        """Return p50/p99/max of compute time and period error [s], rate [Hz], totals."""
        if len(self.compute) == 0:
            return {'ticks': 0}
        compute = self.compute
        error = np.abs(self.period_error)
        c50, c99 = np.percentile(compute, (50, 99))
        e50, e99 = np.percentile(error, (50, 99))
        return {
            'ticks': self.ticks, 'lost': self.lost, 'overruns': self.overruns,
            'stage_errors': self.stage_errors, 'rate': self.ticks / max(self.elapsed, 1e-9),
            'compute_p50': float(c50), 'compute_p99': float(c99),
            'compute_max': float(compute.max()),
            'jitter_p50': float(e50), 'jitter_p99': float(e99), 'jitter_max': float(error.max()),
        }


class CycleStatistics:
    """
    Rolling statistics of the cycle (the last ``window`` ticks) plus totals.

    Written by the cycle thread only; read by anyone (a snapshot may mix two ticks, which is
    harmless for monitoring).
    """

    def __init__(self, window: int = 10000) -> None:
        self.window = window
        self.compute = np.zeros(window)
        self.period_error = np.zeros(window)
        self.count = 0
        self.lost = 0
        self.overruns = 0
        self.stage_errors = 0
        self.started = time.monotonic()
        #: stage name -> mean compute time [s] (exponential average over ~100 ticks)
        self.stage_time: Dict[str, float] = {}
        #: stage name -> longest compute time [s] since the statistics started
        self.stage_max: Dict[str, float] = {}
        #: the newest ticks that lost time: (deadline [s], how late [s], ticks skipped)
        self.late: 'deque[Tuple[float, float, int]]' = deque(maxlen=100)

    def record(self, compute: float, period_error: float, lost: int, overrun: bool,
               deadline: float = 0.0, period: float = 0.0) -> None:
        """Add one tick (``deadline``, ``period`` [s]: to describe a tick that lost time)."""
        slot = self.count % self.window
        self.compute[slot] = compute
        self.period_error[slot] = period_error
        self.count += 1
        if lost:
            self.lost += lost
            self.late.append((deadline, period_error + lost * period, lost))
        self.overruns += int(overrun)

    def snapshot(self, scheduling: str = '', running: bool = False) -> CycleSnapshot:
        """Return the totals and copies of the newest samples (cheap: no percentiles)."""
        n = min(self.count, self.window)
        return CycleSnapshot(self.count, self.lost, self.overruns, self.stage_errors,
                             time.monotonic() - self.started, self.compute[:n].copy(),
                             self.period_error[:n].copy(), scheduling, running,
                             tuple(self.late))

    def summary(self) -> Dict[str, float]:
        """Return p50/p99/max of compute time and period error [s], rate [Hz], totals."""
        return self.snapshot().summary()


class SyncCycle:
    """
    Calls registered stages in role order once per period, in its own thread.

    :param period: cycle period [s].
    :param size: number of joints of the full pose.
    :param on_error: called with (stage name, exception) when a stage raises; the stage's work
        for that tick is dropped, the cycle goes on.
    :param clock: monotonic clock [s] (injectable for tests).
    :param gil_margin: how long before a deadline the thread takes the GIL [s]; default
        min(1 ms, 20 % of the period); 0 disables the GIL reservation.
    :param spin_margin: how long before a deadline the thread stops sleeping and polls the
        clock [s]; default min(200 us, 5 % of the period); 0 disables the busy wait. Only
        with the GIL reservation.
    """

    def __init__(self, period: float, size: int,
                 on_error: Optional[Callable[[str, BaseException], None]] = None,
                 clock: Callable[[], float] = time.monotonic,
                 gil_margin: Optional[float] = None,
                 spin_margin: Optional[float] = None) -> None:
        if not period > 0:
            raise ValueError(f'cycle period must be > 0, got {period}')
        self.period = float(period)
        self.gil_margin = min(0.001, 0.2 * period) if gil_margin is None else gil_margin
        spin = min(0.0002, 0.05 * period) if spin_margin is None else spin_margin
        self.spin_margin = max(0.0, min(spin, self.gil_margin))
        self.size = size
        self.clock = clock
        self.on_error = on_error
        self.statistics = CycleStatistics()
        self._stages: Tuple[Tuple[str, Stage], ...] = ()
        self._entries: List[Tuple[int, int, Stage]] = []
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._running = threading.Event()
        self._index = 0
        self._reference = JointVector.zeros(size)
        self._measured = JointVector.zeros(size)
        #: how the cycle thread is scheduled ('SCHED_FIFO 50', 'normal', ...)
        self.scheduling = 'not started'

    # --- stage registry (copy-on-write: the cycle reads the tuple once per tick) --------------

    def add_stage(self, role: StageRole, stage: Stage, order: int = 0) -> None:
        """Register ``stage`` with ``role``; within a role, lower ``order`` runs first."""
        if not isinstance(role, StageRole):
            raise ValueError(f'unknown stage role {role!r} (roles: '
                             f'{", ".join(r.name for r in StageRole)})')
        with self._lock:
            entries = [e for e in self._entries if e[2] is not stage]
            entries.append((role, order, stage))
            self._set(entries)

    def remove_stage(self, stage: Stage) -> None:
        """Unregister ``stage`` (it is not called from the next tick on)."""
        with self._lock:
            self._set([e for e in self._entries if e[2] is not stage])

    def stages(self) -> List[str]:
        """Return the names of the registered stages in execution order."""
        return [name for name, _ in self._stages]

    def _set(self, entries: List[Tuple[int, int, Stage]]) -> None:
        entries.sort(key=lambda e: (e[0], e[1]))
        self._entries = entries
        self._stages = tuple((e[2].name, e[2]) for e in entries)

    # --- running -------------------------------------------------------------------------------

    @property
    def reference(self) -> JointVector:
        """Return a copy of the latest aggregated reference."""
        return self._reference.copy()

    @property
    def measured(self) -> JointVector:
        """Return a copy of the latest measured pose."""
        return self._measured.copy()

    def seed(self, measured: JointVector, reference: Optional[JointVector] = None) -> None:
        """Set the pose the first tick starts from (before start())."""
        self._measured = measured.copy()
        self._reference = (reference or measured).copy()

    def step(self, now: float) -> Tick:
        """Run one tick at time ``now`` in the calling thread (tests, benchmarks)."""
        tick = Tick(now, self.period, self._index, self._measured.copy(),
                    self._reference.copy())
        self._index += 1
        clock = time.perf_counter
        stage_time = self.statistics.stage_time
        stage_max = self.statistics.stage_max
        for name, stage in self._stages:
            start = clock()
            try:
                stage.update(tick)
            except Exception as error:  # noqa: B902 -- a stage must never stop the cycle
                self.statistics.stage_errors += 1
                if self.on_error is not None:
                    self.on_error(name, error)
            spent = clock() - start
            stage_time[name] = stage_time.get(name, spent) * 0.99 + spent * 0.01
            if spent > stage_max.get(name, 0.0):
                stage_max[name] = spent
        self._measured = tick.measured
        self._reference = tick.reference
        return tick

    def start(self, priority: int = 0) -> None:
        """
        Start the cycle thread.

        :param priority: SCHED_FIFO priority of the thread (1..99) where the system permits
            it, 0 for normal scheduling; see :func:`set_realtime_priority`.
        """
        if self._thread is not None and self._thread.is_alive():
            return
        self._running.set()
        self.statistics = CycleStatistics()
        started = threading.Event()

        def run() -> None:
            self.scheduling = set_realtime_priority(priority)
            started.set()
            self._run()
        self._thread = threading.Thread(target=run, name='sync_cycle', daemon=True)
        self._thread.start()
        started.wait(1.0)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the cycle thread after its current tick."""
        self._running.clear()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def reset_statistics(self) -> None:
        """Start the statistics afresh (e.g. after a warm-up)."""
        self.statistics = CycleStatistics(self.statistics.window)

    @property
    def running(self) -> bool:
        """Return whether the cycle thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        period = self.period
        margin = self.gil_margin
        spin = self.spin_margin
        clock = self.clock
        hold_until = _gil_holding_sleeper() if margin > 0 else None
        if clock is not time.monotonic:
            hold_until = None  # the GIL-holding sleep uses CLOCK_MONOTONIC itself
        deadline = clock() + period
        while self._running.is_set():
            delay = deadline - clock()
            if hold_until is not None:
                if delay > margin:
                    time.sleep(delay - margin)
                if deadline - spin > clock():
                    hold_until(deadline - spin)
                while clock() < deadline:
                    pass
            elif delay > 0:
                time.sleep(delay)
            start = clock()
            lost = 0
            missed = deadline
            if start - deadline >= period:  # ticks that cannot be made up are skipped
                lost = int((start - deadline) // period)
                deadline += lost * period
            self.step(deadline)
            compute = clock() - start
            self.statistics.record(compute, start - deadline, lost, compute > period,
                                   missed, period)
            deadline += period
