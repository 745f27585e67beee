#!/usr/bin/env python3
"""
Floor probes: what the machine itself does to real-time threads while something is measured.

One tiny real-time sleep loop per CPU, pinned to it, runs beside a measured run (the sync cycle
benchmark, the load test); its late wake-ups are stalls of that CPU, which nothing running on
it can avoid (the hypervisor took the virtual CPU, or the kernel did). A lost tick of the cycle
that falls into such a stall is the machine's floor, not the cycle's fault.

    python bench/floor.py CPU PERIOD THRESHOLD    (started by FloorProbe, prints JSON at SIGINT)
"""

import json
import os
import signal
import subprocess
import sys
import time

from sweetie_motion.core.cycle import set_realtime_priority

#: SCHED_FIFO priority of the probes: above every thread of the motion process (the cycle runs
#: at 50), so that nothing of ours can delay a probe and a late probe proves a stall of the CPU
#: (each wake-up costs the measured run some 10-20 us now and then)
PRIORITY = 60
#: a late tick due at most this many cycle periods after a stall ended is the stall's
#: aftermath (see :func:`_in_a_stall`)
AFTERMATH_PERIODS = 2
#: the shortest wake-up period of a probe [s]: denser probes would cost the measured run more
#: than they tell
MIN_WAKE = 0.001


class FloorProbe:
    """
    The machine's floor during a run: one tiny real-time sleep loop pinned to each CPU.

    Each probe process wakes every :attr:`wake` seconds at SCHED_FIFO :data:`PRIORITY` (above
    every thread of the motion process) and records every wake-up later than ``threshold``. A
    probe does almost nothing, so when one is late at the moment the cycle lost ticks, the CPU
    it is pinned to was not available to anyone (the hypervisor took it, or the kernel did):
    the machine's floor, not the cycle.

    A stall that costs the cycle a tick lasts at least one cycle ``period``; the probe sees it
    only if one of its wake-ups falls into the stall at least ``threshold`` before the stall
    ends. Waking once per cycle period left a gap (a stall of 10-11.5 ms could hold a single
    deadline, less than ``threshold`` before its end); waking at half of ``period -
    threshold`` puts two deadlines into every such stall (not below :data:`MIN_WAKE`).

    :param period: the measured cycle's period [s]; :param threshold: lateness counted as a
        stall [s].
    """

    def __init__(self, period, threshold):
        self.period, self.threshold = period, threshold
        self.wake = max(MIN_WAKE, (period - threshold) / 2)
        self.processes = []
        if not hasattr(os, 'sched_setaffinity'):
            return
        for cpu in sorted(os.sched_getaffinity(0)):
            self.processes.append(subprocess.Popen(
                [sys.executable, __file__, str(cpu), str(self.wake), str(threshold)],
                stdout=subprocess.PIPE, text=True))
        # a probe takes a second or more to start on a busy machine: the measured run begins
        # when every probe watches (a stall before that would be nobody's)
        for process in self.processes:
            process.stdout.readline()

    def stop(self):
        """Stop the probes; return their late wake-ups: [(cpu, expected, actual)] [s]."""
        events = []
        for process in self.processes:
            process.send_signal(signal.SIGINT)
        for process in self.processes:
            try:
                out = process.communicate(timeout=10)[0]
                events += [tuple(e) for e in json.loads(out.splitlines()[-1])]
            except (subprocess.TimeoutExpired, IndexError, ValueError):
                process.kill()
        return events


def probe_main(cpu, period, threshold, priority=PRIORITY):
    """Run one floor probe on ``cpu``, waking every ``period``; print late wake-ups at SIGINT."""
    os.sched_setaffinity(0, {cpu})
    set_realtime_priority(priority)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    print('watching', flush=True)
    late = []
    deadline = time.monotonic() + period
    while not stop:
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = time.monotonic()
        if now - deadline > threshold:
            late.append((cpu, deadline, now))
        deadline = max(deadline + period, now)
    print(json.dumps(late), flush=True)


def explained_by_floor(late_ticks, floor_events, period):
    """
    Return how many of the cycle's lost ticks a stall of the machine explains.

    A lost tick is explained when a floor probe was late across the tick's deadline (its CPU
    was taken from everyone at that moment), or when such a stall ended at most
    :data:`AFTERMATH_PERIODS` cycle periods (``period`` [s]) before the deadline: see
    :func:`_in_a_stall`.
    """
    return sum(lost for deadline, lateness, lost in late_ticks
               if _in_a_stall(deadline, lateness, floor_events, period))


def explained_lateness(late_ticks, floor_events, period):
    """Return the longest lateness [s] of the ticks that a stall of the machine explains."""
    return max((lateness for deadline, lateness, _ in late_ticks
                if _in_a_stall(deadline, lateness, floor_events, period)), default=0.0)


def _in_a_stall(deadline, lateness, floor_events, period):
    """
    Return whether a tick was late in a stall of a CPU, or in its aftermath.

    The aftermath (:data:`AFTERMATH_PERIODS` cycle periods): when both virtual
    CPUs come back after a stall, every thread the stall held up wants to run at once.
    Measured beside one busy loop, with no probe late: a tick due 8.5 ms after a 17-20 ms
    stall of both CPUs started 17.8 ms late, and one due 11.3 ms after a 6 ms stall of both
    started 14.8 ms late. Not traced: no garbage collection of the cycle process took over 2
    ms in the load window (checked with gc callbacks in six runs); the threads held up taking
    the cycle process's GIL first is the likely cause. A late tick due later than that after
    the last stall is never the machine's.
    """
    aftermath = AFTERMATH_PERIODS * period
    return any(expected <= deadline + lateness and actual >= deadline - aftermath
               for _, expected, actual in floor_events)


def gap_in_a_stall(gap_periods, lost, explained):
    """
    Return whether a joint_states gap [periods] is the machine's: made only of stalled ticks.

    joint_states is stamped with the tick, so a gap beyond two periods is lost ticks. It is the
    floor's when every lost tick fell into a stall (``explained`` >= ``lost`` > 0) and the gap
    is no longer than the ticks lost, plus the one period between two ticks and the lateness
    of the tick after the stall (a quarter period).
    """
    return 0 < lost <= explained and gap_periods <= lost + 1.25


def stall_note(result):
    """Describe the stalls of the machine a run's floor probes saw."""
    events = result.get('floor', [])
    if not events:
        return ''
    worst = max(actual - expected for _, expected, actual in events)
    return (f'  [floor probes: {len(events)} stalls of a CPU, the longest {worst * 1e3:.1f} ms; '
            f'{result["explained"]} of the {result["lost"]} lost ticks fall into them]')


if __name__ == '__main__':
    probe_main(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))
