"""
Fault soak: the driver at 100 Hz over two simulated lines for 30 s (SERVO_SOAK_SECONDS: longer).

The lines corrupt 5 % of the reply bytes and drop 1 % of the replies; the first one raises random
error flags too.

What must hold: no exception; no send/receive call that waits (their longest duration against
the cycle period); the driver's fault counters equal what the simulators injected; every servo
that got an error flag is torque-off and reported with that flag, and no other.
"""

import gc
import math
import os
import time

import numpy as np
import pytest

from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.servo import driver as sb
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.sim import SimulatorProcess
from waiting import poll_until

SOAK_SECONDS = float(os.environ.get('SERVO_SOAK_SECONDS', '30'))
PERIOD = 0.01
FAULTS = ['corrupt=0.05', 'drop=0.01']
#: error flags on random servos of the first line only, 0.25 a second from 2 s on: none in the
#: 28 s that leaves has a chance of 1e-3 (at 0.08 a second over 43 s it was 3 %); the second
#: line's servos keep their torque, to show "and no other" (with flags on both lines, a run
#: flagged all ten servos and left none to show it)
FLAGGED_LINE_FAULTS = ['random-errors=0.25@2']


@pytest.mark.slow
@pytest.mark.serial
def test_fault_soak(tmp_path):
    sims, buses = [], []
    for k, ids in enumerate(((11, 12, 13, 14, 15), (31, 32, 33, 34, 35))):
        servos = [{'id': i, 'model': 'DRS-0101', 'position': 0.0} for i in ids]
        sim = SimulatorProcess({'servo_sim': {'servos': servos}}, str(tmp_path), f'line{k}',
                               ['--seed', str(7 + k)])
        sim.start()
        sims.append(sim)
        buses.append(sb.BusConfig(f'line{k}', sim.port, 115200,
                                  tuple(sb.ServoConfig(i, f'joint{i}') for i in ids)))
    config = sb.DriverConfig(tuple(buses), timeout=0.03, late_grace=0.15, lost_after=8,
                             connect_timeout=5.0, shutdown_torque='keep', retries=10,
                             priority=49)
    bus = sb.SerialServoBus(config)
    # this thread plays the cycle: real-time where the system allows it, as the cycle is
    scheduling = set_realtime_priority(50)
    try:
        bus.connect()
        for k, sim in enumerate(sims):        # the faults start once the servos are set up
            for fault in FAULTS + (FLAGGED_LINE_FAULTS if k == 0 else []):
                sim.control.fault(fault)
        gc.freeze()     # as the motion process does after its start-up: short collections
        n = len(bus.joints)
        phase = np.linspace(0, math.pi, n)
        durations = []
        start = time.monotonic()
        deadline = start
        cycles = 0
        while deadline - start < SOAK_SECONDS:
            t = deadline - start
            position = 0.4 * np.sin(1.3 * t + phase)
            velocity = 0.52 * np.cos(1.3 * t + phase)
            begin = time.perf_counter()
            bus.receive(time.monotonic())
            bus.send(time.monotonic(), position, velocity)
            durations.append(time.perf_counter() - begin)
            cycles += 1
            deadline += PERIOD
            time.sleep(max(0.0, deadline - time.monotonic()))
        # the flags injected near the end are found by the idle polling
        injected = {}
        for k, sim in enumerate(sims):
            for _, servo_id, flag in sim.control.state()['counters']['errors_injected']:
                injected.setdefault(f'joint{servo_id}', set()).add(flag)
        assert injected, 'the soak injected no error flag'

        def reported():
            faults = bus.active_faults()
            return all(j in faults and flags <= set(faults[j].flags)
                       for j, flags in injected.items())
        assert poll_until(reported, 10.0), (injected, bus.active_faults())
        statuses = {s.joint: s for s in bus.status()}
        torque = dict(zip(bus.joints, bus.torque()))
        for joint, flags in injected.items():
            assert not torque[joint] and not statuses[joint].ok
            assert all(flag in statuses[joint].message for flag in flags)
        bus.disconnect()     # stops the threads once every request is answered or timed out
        bus_stats, servo_stats = bus.statistics()
        events = bus.events()
        states = [sim.control.state() for sim in sims]
    finally:
        if scheduling.startswith('SCHED_FIFO'):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        gc.unfreeze()
        bus.disconnect()
        for sim in sims:
            sim.stop()
    assert not [e for e in events if 'internal error' in e]
    # a call that waited for the line would take at least a wire time, and one that waited
    # for a reply the timeout (3 periods), and it would do so in most calls (a lost reply is
    # several in a hundred here). What is left is the GIL (send() wakes the bus threads without
    # releasing it) and the OS scheduler, which on a busy 2-core machine now and then preempts
    # this thread for tens of milliseconds: counted as shares, not as absolute times
    durations = np.array(durations)
    over = float(np.mean(durations > PERIOD))
    assert over < 0.01, \
        f'{over:.1%} of {len(durations)} calls took longer than the period ' \
        f'(longest {durations.max() * 1e3:.1f} ms)'
    # a send that waited for its goal broadcast to leave would take the frame's wire time
    # (S_JOG of the line's 5 servos: 7 + 4 * 5 bytes) every time
    goal_wire_time = hx.byte_time(115200) * (7 + 4 * 5)
    typical, slow = float(np.median(durations)), float(np.mean(durations > goal_wire_time))
    assert typical < goal_wire_time / 4 and slow < 0.05, \
        f'send/receive took {typical * 1e3:.2f} ms (median), {slow:.1%} longer than the ' \
        f'{goal_wire_time * 1e3:.2f} ms the goal frame takes on the wire'
    # every reply the driver asked for was answered or lost, and a lost one was damaged
    # (corrupted: bytes came) or missing (dropped: nothing came): the counts add up to what the
    # simulator injected. No two replies may overlap on the shared wire: the simulator only
    # knows when a request arrived from when it read it, and on this VM its wake-ups come late
    # by milliseconds now and then (it reports how often): a stall longer than the driver's
    # delivery slack (5 ms) makes a reply look later than it was and may make two collide (at
    # most two replies per stall). A driver that pipelined replies would garble a third of them.
    for stats, state in zip(bus_stats, states):
        counters = state['counters']
        assert counters['replies_corrupted'] > 100 and counters['replies_dropped'] > 10
        stalls = state['lateness']['over_5ms']
        assert counters['collisions'] <= 2 * stalls, state['lateness']
        assert stats.timeouts == stats.damaged + stats.missing
        lost_injected = counters['replies_corrupted'] + counters['replies_dropped'] + \
            counters['collisions']
        # exact, but for a reply the simulator answered only after a stall of its own longer
        # than the driver waits for it, even late (seen once in the serial phase beside a busy
        # loop: one in 5 773); at most one such reply per stall it reports
        excess = stats.timeouts - stats.late_replies - lost_injected
        assert 0 <= excess <= stalls, (excess, stats, counters, state['lateness'])
        # bytes came of every corrupted reply, none of a dropped one; a reply of which nothing
        # had come 2 ms after its expected end counts as missing, and this VM delays the
        # simulator that much now and then: the split holds to a few percent, the sum exactly
        assert abs(stats.damaged - counters['replies_corrupted'] - counters['collisions']) <= \
            max(2, lost_injected // 20), (stats, counters)
        # a corrupted reply may trip several candidate headers while the parser rescans it
        assert stats.checksum_errors + stats.size_errors + stats.command_errors > 0
        assert stats.garbage_bytes > 0 and stats.cycles >= 0.9 * cycles
        assert stats.goals >= 0.9 * cycles
    # every servo answered all along (with 60 % of the replies lost)
    assert all(state.replies > 2 * SOAK_SECONDS for state in servo_stats)
    torque_on = [j for j in bus.joints if j not in injected]
    for state in states:
        for servo in state['servos'].values():
            joint = f'joint{servo["id"]}'
            expected = hx.TORQUE_FREE if joint in injected else hx.TORQUE_ON
            assert servo['torque_control'] == expected, joint
    assert torque_on
