"""
The driver's parts on byte streams, without a pty.

The wire scheduler's batches on the simulated line, reply matching, the wire model's losses,
measurement ages.
"""

import math
import random

import numpy as np
import pytest

from sweetie_motion.servo import driver as sb
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo import sim as sm
from sweetie_motion.servo.driver.intake import ReplyIntake
from sweetie_motion.servo.driver.matching import (
    FULL_READS, POSITION_READS, ReplyMatcher, ReplySignature, Request, SPANS,
)
from sweetie_motion.servo.driver.scheduler import Outgoing, SILENT_AFTER, WireScheduler
from sweetie_motion.servo.driver.servo_state import LineServo, MeasurementBoard
from sweetie_motion.servo.driver.wire import (
    LineTiming, operations_share, SPACER, spacer_count, wire_budget,
)
from sweetie_motion.servo.freshness import AgeHistogram

BT = 10 / 115200
GAP = 0.0002 / BT


def line_servos(ids, baud=115200):
    driver = sb.DriverConfig((sb.BusConfig('b', 'p', baud, tuple(
        sb.ServoConfig(i, f'j{i}') for i in ids)),))
    return [LineServo(sb.ServoConfig(i, f'j{i}'), k, k, 'b', driver) for k, i in enumerate(ids)]


def encode(batch):
    return b''.join(o.frame.encode() + SPACER.encode() * o.spacers for o in batch)


def jog(ids):
    return hx.SJogRequest(2, tuple(hx.JogTag(i, 512) for i in ids)).frame(hx.BROADCAST_ID)


def simulated(ids, latency=0.0003):
    return sm.BusSimulator(sm.SimConfig(tuple(sm.SimServoConfig(i, eep={'ack_policy': 2})
                                              for i in ids), latency=latency))


def replay(sim, writes):
    """Feed (time, bytes) writes to the simulated line; return the valid replies."""
    parser = hx.FrameParser(hx.REPLY_COMMANDS)
    replies = []
    for t, data in writes:
        sim.advance(t)
        sim.receive(data, t)
    end = writes[-1][0] + sum(len(d) for _, d in writes) * BT + 0.1
    for t in np.arange(writes[0][0], end, 0.0005):
        sim.advance(t)
        replies += [hx.decode_reply(f) for f in parser.feed(sim.transmit(t))]
    return replies


def test_a_spacer_is_a_broadcast_read_that_no_servo_answers():
    assert SPACER.pid == hx.BROADCAST_ID and SPACER.cmd == hx.Command.RAM_READ
    # the fill after a reply of n bytes: n + the gap, less the shortest next request (7)
    assert [spacer_count(n) for n in (9, 13, 19, 22)] == [1, 1, 2, 2]
    sim = simulated([1, 2])
    assert replay(sim, [(0.0, SPACER.encode() * 3)]) == []
    assert sim.counters.replies == 0 and sim.counters.reads == 3


@pytest.mark.parametrize('delays', ['back to back', 'random'])
def test_batches_never_let_two_replies_overlap_whenever_they_are_written(delays):
    ids = list(range(1, 11))
    servos = line_servos(ids)
    scheduler = WireScheduler(servos, ReplyMatcher(0.1), GAP)
    sim = simulated(ids)
    rng = random.Random(3)
    writes, t, reads = [], 0.0, 0
    for cycle in range(40):
        batch = scheduler.cycle_batch(jog(ids), 115.2)
        scheduler.written(batch)
        for outgoing in batch:
            if outgoing.servo is not None:
                outgoing.servo.sampled = t + outgoing.servo.servo_id * 1e-6
                reads += 1
        writes.append((t, encode(batch)))
        # an OS or a USB adapter may hold the bytes up or let them go together: the fill
        # goes with them, so the spacing holds
        t += 0.0 if delays == 'back to back' else rng.uniform(0.0, 0.02)
    replies = replay(sim, writes)
    assert sim.counters.collisions == 0
    assert len(replies) == reads and reads >= 40 * 3
    # without the fill, the same requests back to back garble each other
    pipelined = b''.join(hx.ReadRequest(hx.Memory.RAM, 58, 2).frame(i).encode() for i in ids)
    control = simulated(ids)
    replay(control, [(0.0, pipelined)])
    assert control.counters.collisions >= 8


def test_the_cycle_batch_reads_the_oldest_measurement_first_and_fits_the_cycle():
    ids = list(range(1, 11))
    servos = line_servos(ids)
    for k, servo in enumerate(servos):
        servo.sampled = 10.0 - k        # servo 10 is the oldest
    scheduler = WireScheduler(servos, ReplyMatcher(0.1), GAP)
    batch = scheduler.cycle_batch(jog(ids), 115.2)
    read = [o.servo.servo_id for o in batch if o.servo is not None]
    assert read == [10, 9, 8, 7][:len(read)] and len(read) >= 3
    assert sum(o.size for o in batch) <= 115.2
    # the goals go right after the first read, as its fill
    assert batch[1].frame.cmd == hx.Command.S_JOG and batch[0].spacers == 0
    # at most one read per servo and cycle
    scheduler.written(batch)
    again = scheduler.cycle_batch(None, 1000.0)
    assert not {o.servo.servo_id for o in again if o.servo} & set(read) or \
        len(again) > len(ids) - len(read)


def test_a_servo_whose_read_was_lost_is_asked_again_first_with_another_span():
    servos = line_servos([1, 2, 3])
    for servo in servos:
        servo.sampled = 1.0
    servos[1].sampled = 0.5                 # servo 2: its last read was lost
    matcher = ReplyMatcher(late_grace=0.1)
    matcher.sent(2, FULL_READS[0], 0.0, 0.001, 0.003)
    matcher.expire(0.004)                   # lost: its late reply may still come
    scheduler = WireScheduler(servos, matcher, GAP)
    servos[1].reads_sent = 1                # a position read is due
    matcher.sent(1, POSITION_READS[0], 0.0, 0.001, 1.0)
    batch = scheduler.cycle_batch(None, 1000.0)
    first = batch[0]
    assert first.servo is servos[1] and first.expect == POSITION_READS[0]
    # its full-read span stays blocked for the grace: a late reply is not taken for a new one
    servos[1].reads_sent = 0
    assert matcher.free_signature(2, FULL_READS) == FULL_READS[1]


def test_a_read_lost_in_a_cycle_is_asked_again_before_the_next_if_the_wire_has_room():
    servos = line_servos([1, 2, 3])
    matcher = ReplyMatcher(late_grace=0.1)
    scheduler = WireScheduler(servos, matcher, GAP)
    batch = scheduler.cycle_batch(None, 1000.0)
    scheduler.written(batch)
    assert [o.servo.servo_id for o in batch if o.servo] == [1, 2, 3]
    assert scheduler.between(1000.0) == []      # nothing lost: nothing between cycles
    # servo 2's reply came damaged (overtaken by servo 3's): lost, to be asked again now
    for outgoing in batch:
        matcher.sent(outgoing.servo.servo_id, outgoing.expect, 0.0, 0.001, 1.0)

    def reply(outgoing):
        expect = outgoing.expect
        return hx.ReadReply(outgoing.servo.servo_id, expect.memory, expect.address,
                            bytes(expect.length), hx.Status())
    assert matcher.match(reply(batch[0]), 0.004).answered is not None
    assert [p.servo_id for p in matcher.match(reply(batch[2]), 0.005).lost] == [2]
    servos[1].reask = True                       # as the intake marks a lost read
    # not when the wire cannot carry it before the next cycle (the cycle's batch keeps its time)
    assert scheduler.between(10.0) == []
    again = scheduler.between(1000.0)
    assert [o.servo.servo_id for o in again] == [2]
    assert again[0].expect != batch[1].expect   # another span: a late reply stays late
    scheduler.written(again)
    assert not servos[1].reask and servos[1].reads_sent == 2
    # a servo silent for SILENT_AFTER reads is not asked between cycles
    servos[2].reask = True
    servos[2].health.losses_in_a_row = SILENT_AFTER
    assert scheduler.between(1000.0) == []


def test_a_servo_held_by_an_operation_is_read_between_cycles_once_it_is_free():
    # a scan's STAT or model read of a line's servo, in flight when the cycle's batch is
    # composed, kept that servo unread for the whole cycle (at 666666 Bd during a scan, one
    # servo-cycle in 25 on a leg line)
    servos = line_servos([1, 2, 3])
    matcher = ReplyMatcher(late_grace=0.1)
    scheduler = WireScheduler(servos, matcher, GAP)
    stat = ReplySignature.ack(hx.Command.STAT)
    matcher.sent(2, stat, 0.0, 0.001, 1.0, Request(hx.StatRequest().frame(2), 2, stat))
    batch = scheduler.cycle_batch(None, 1000.0)
    scheduler.written(batch)
    assert [o.servo.servo_id for o in batch if o.servo] == [1, 3]
    assert scheduler.between(1000.0) == []          # not while the STAT is in flight
    matcher.match(hx.AckReply(2, hx.Command.STAT, hx.Status()), 0.002)
    again = scheduler.between(1000.0)
    assert [o.servo.servo_id for o in again] == [2] and again[0].expect in POSITION_READS


@pytest.mark.parametrize('baud, servos, takes_a_read', [(666666, 10, False), (115200, 10, True)])
def test_an_operation_takes_a_reads_place_only_where_the_reads_fill_the_cycle(
        baud, servos, takes_a_read):
    # At 666666 Bd the reads of 10 servos leave a third of the cycle free. A cycle that starts
    # while the wire still carries the last one's requests has less: judged on that, a scan's
    # request took a read's place in 3 % of a leg line's cycles. It waits instead (between
    # cycles, or the next cycle). At 115200 Bd the reads fill every cycle: there it takes one.
    ids = list(range(1, servos + 1))
    line = line_servos(ids, baud)
    byte_time = hx.byte_time(baud)
    capacity = 0.01 / byte_time
    share = operations_share(wire_budget(servos, baud, 0.01), 0.5)
    scheduler = WireScheduler(line, ReplyMatcher(0.1), 0.0002 / byte_time, share, capacity)
    reads = [o for o in scheduler.cycle_batch(None, capacity) if o.servo is not None]
    reads_wire = sum(o.size for o in reads)
    scheduler = WireScheduler(line, ReplyMatcher(0.1), 0.0002 / byte_time, share, capacity)
    scheduler.add(Request(hx.StatRequest().frame(100), 100, ReplySignature.ack(hx.Command.STAT)))
    budget = reads_wire + 2.0       # the reads fit; the STAT and its fill do not
    batch = scheduler.cycle_batch(None, budget)
    assert sum(o.size for o in batch) <= budget
    read = [o for o in batch if o.servo is not None and o.request is None]
    operations = [o for o in batch if o.request is not None]
    assert (len(read) < len(reads)) == takes_a_read
    assert len(operations) == int(takes_a_read)


def test_a_batch_whose_operation_waits_keeps_the_spacers_its_replies_need():
    # an urgent STAT, then an ordinary write without reply that waits (this cycle is short):
    # the STAT's fill had been counted with the write's bytes after it, and the batch written
    # without the write left too few spacers between its reply and the first read's
    ids = list(range(1, 11))
    line = line_servos(ids, 666666)
    byte_time = hx.byte_time(666666)
    share = operations_share(wire_budget(10, 666666, 0.01), 0.5)
    scheduler = WireScheduler(line, ReplyMatcher(0.1), 0.0002 / byte_time, share,
                              0.01 / byte_time)
    stat = ReplySignature.ack(hx.Command.STAT)
    scheduler.add(Request(hx.StatRequest().frame(3), 3, stat, urgent=True))
    write = hx.WriteRequest(hx.Memory.RAM, 30, bytes(20)).frame(5)   # longer than the fill
    scheduler.add(Request(write, 5))
    reads = [o for o in WireScheduler(line, ReplyMatcher(0.1), 0.0002 / byte_time, share,
                                      0.01 / byte_time).cycle_batch(None, 1000.0)
             if o.servo is not None and o.servo.servo_id != 3]
    alone = hx.StatRequest().frame(3).size + spacer_count(stat.reply_size, 666666) * SPACER.size
    budget = sum(o.size for o in reads) + alone + 1.0   # the STAT fits, the write does not
    batch = scheduler.cycle_batch(None, budget)
    assert batch[0].replier == 3 and all(o.request is None for o in batch[1:])
    assert batch[0].spacers == spacer_count(stat.reply_size, 666666)


def test_a_servo_is_asked_again_after_seven_losses_within_the_grace():
    # every span asks registers the servo has
    assert all(s.address + s.length <= hx.RAM_SIZE for s in POSITION_READS + FULL_READS)
    for family in (POSITION_READS, FULL_READS):
        matcher = ReplyMatcher(late_grace=0.1)
        t = 0.0
        for lost in range(SPANS):
            signature = matcher.free_signature(1, family)
            assert signature is not None, f'no span free after {lost} losses'
            matcher.sent(1, signature, t, t, t + 0.001)
            t += 0.002
            matcher.expire(t)
        assert matcher.free_signature(1, family) is None    # all still within the grace
        matcher.expire(t + 0.1)
        assert matcher.free_signature(1, family) == family[0]


def test_a_reply_that_overtakes_an_older_request_loses_it_at_once():
    matcher = ReplyMatcher(late_grace=0.1)
    older = matcher.sent(1, POSITION_READS[0], 0.0, 0.001, 1.0)
    newer = matcher.sent(2, POSITION_READS[0], 0.002, 0.003, 1.0)
    reply = hx.ReadReply(2, hx.Memory.RAM, 58, b'\x00\x02', hx.Status())
    match = matcher.match(reply, 0.005)
    assert match.answered is newer and match.lost == [older]
    # the older one's reply, if it comes after all, is late, not an answer
    late = hx.ReadReply(1, hx.Memory.RAM, 58, b'\x00\x02', hx.Status())
    assert matcher.match(late, 0.006).late
    # a reply nobody asked for is neither
    stranger = hx.AckReply(1, hx.Command.STAT, hx.Status())
    assert matcher.match(stranger, 0.007) == type(match)()


def test_the_wire_model_counts_a_lost_reply_damaged_or_missing_and_finds_it_overdue():
    timing = LineTiming(115200, 0.0003, 0.0002, delivery_slack=0.005)
    read = ReplySignature.read(hx.Memory.RAM, 58, 2)
    timing.sent(0.0, 9, read.reply_size, sequence=1)
    timing.sent(0.0, 9, 0)
    timing.sent(0.0, 9, read.reply_size, sequence=2)
    timing.sent(0.0, 9, 0)
    end1 = 9 * BT + 0.0003 + 13 * BT
    assert timing.overdue(end1) is None
    assert timing.overdue(end1 + 0.006) == 1      # nothing of it came: missing
    assert timing.settled(1) == {1: 0}
    # six garbled bytes of the second, then a valid reply of a third request
    timing.sent(0.001, 9, read.reply_size, sequence=3)
    timing.received(6)
    position = timing.received(13)
    assert timing.settled(3, position) == {2: 6, 3: 13}
    # the last reply of a batch came whole but damaged (no valid frame): overdue at its end
    # plus slack, as a missing one, not at its deadline; a part of it only is waited for
    start = 0.1
    timing.sent(start, 9, read.reply_size, sequence=4)
    end4 = start + 9 * BT + 0.0003 + 13 * BT
    timing.received(7)
    assert timing.overdue(end4 + 0.006) is None       # the rest may still come
    timing.received(6)
    assert timing.overdue(end4) is None
    assert timing.overdue(end4 + 0.006) == 4
    assert timing.settled(4) == {4: 13}                # damaged: all its bytes came


def test_age_histogram_percentiles_and_what_is_above():
    ages = AgeHistogram()
    ages.add_many(np.linspace(0.001, 0.1, 100))
    ages.add(math.inf)                        # never measured: not an age
    summary = ages.summary()
    assert summary.count == 100
    assert summary.p50 == pytest.approx(0.050, abs=0.001)
    assert summary.p99 == pytest.approx(0.099, abs=0.001)
    assert summary.largest == pytest.approx(0.1)
    assert ages.count_above(0.0904) == 10
    assert 'p99 99.' in summary.describe()


def test_an_outgoing_without_reply_needs_no_fill():
    plain = Outgoing(jog([1, 2]))
    assert plain.reply_size == 0 and plain.size == plain.frame.size


def test_the_led_a_servo_shows():
    servo = line_servos([1])[0]
    assert servo.led(status_led=True) == 2            # torque off: blue
    servo.torque_on = True
    assert servo.led(status_led=True) == 1            # torque on: green
    assert servo.led(status_led=False) == 0
    assert servo.health.status(0x10, 1.0, 'j1', 1, 'b') is None
    assert servo.health.status(0x10, 1.01, 'j1', 1, 'b') is not None   # two replies: a fault
    assert servo.led(status_led=True) == 4            # red
    servo.led_written = 6
    assert servo.led(status_led=True) == 6            # a written value wins


def line_intake(ids):
    """Return (servos, matcher, timing, stats, intake) of a 115200 Bd line with ``ids``."""
    servos = line_servos(ids)
    matcher = ReplyMatcher(late_grace=0.1)
    timing = LineTiming(115200, 0.0003, 0.0002, delivery_slack=0.002)
    stats = sb.BusStatistics('b', 'p')
    intake = ReplyIntake('b', {s.servo_id: s for s in servos}, matcher, timing,
                         MeasurementBoard(len(ids)), stats, lambda text: None)
    return servos, matcher, timing, stats, intake


def test_a_scans_stat_to_an_id_not_on_the_line_is_awaited_until_overtaken_or_its_deadline():
    # A STAT to an ID not in the line's configuration was taken as needing no reply: a scan
    # found none of the servos missing from the configuration. It is in flight now, but the
    # wire model does not expect its reply (most such IDs are absent: expected, it made the
    # replies after it look like its own and their losses known late). A later reply overtakes
    # it; else it is lost at its deadline; either way in none of the line's lost replies.
    servos, matcher, timing, stats, intake = line_intake([1, 2])
    stat = ReplySignature.ack(hx.Command.STAT)
    scheduler = WireScheduler(servos, matcher, GAP)
    first = Request(hx.StatRequest().frame(77), 77, stat)
    scheduler.add(first)
    batch = scheduler.between(1000.0)
    assert [o.replier for o in batch] == [77] and batch[0].servo is None
    assert batch[0].spacers > 0                         # its reply still gets its room
    tx_end, rx_end = timing.sent(0.0, 7, 0, sequence=1)
    matcher.sent(77, stat, 0.0, tx_end, rx_end + 0.02, first)
    assert matcher.busy(77, stat) and intake.overdue_at() == math.inf
    assert matcher.next_deadline() == rx_end + 0.02
    intake.expire(rx_end + 0.021)
    assert first.future.result(0) is None               # lost at its deadline
    # overtaken: servo 1's read asked after it is answered first
    second = Request(hx.StatRequest().frame(78), 78, stat)
    tx_end, _ = timing.sent(1.0, 7, 0, sequence=2)
    matcher.sent(78, stat, 1.0, tx_end, 1.1, second)
    read = ReplySignature.read(hx.Memory.RAM, 58, 2)
    tx_end, rx_end = timing.sent(1.0, 9, read.reply_size, sequence=3)
    matcher.sent(1, read, 1.0, tx_end, rx_end + 0.02)
    reply = hx.Frame(1, hx.Command.RAM_READ | hx.REPLY_FLAG, bytes([58, 2, 0, 2, 0, 0]))
    intake.frame(reply, rx_end, timing.received(reply.size))
    assert second.future.result(0) is None and not matcher.in_flight
    assert stats.timeouts == stats.missing == 0 and stats.replies == 1


@pytest.mark.parametrize('answered', [True, False])
def test_an_operations_overdue_reply_frees_its_servo_and_a_late_one_still_answers(answered):
    # An operation's request to a servo of the line held that servo until its deadline when its
    # reply was lost: no read of it for two cycles (at 666666 Bd during a scan, one cycle in 30
    # of a leg line had a servo so held). Once overdue it is released: the servo may be read at
    # once, and a reply that comes late (a servo slower than the wire model) still answers the
    # operation until the deadline.
    servos, matcher, timing, stats, intake = line_intake([1, 2])
    read = ReplySignature.read(hx.Memory.RAM, 58, 2)
    operation = Request(hx.ReadRequest(hx.Memory.RAM, 58, 2).frame(1), 1, read)
    tx_end, rx_end = timing.sent(0.0, 9, read.reply_size, sequence=1)
    matcher.sent(1, read, 0.0, tx_end, rx_end + 0.02, operation)
    assert intake.overdue_at() == timing.overdue_at() < rx_end + 0.02
    intake.expire(intake.overdue_at() + 1e-6)
    assert not matcher.busy(1) and not operation.future.done()
    assert stats.missing == 1 and matcher.next_deadline() <= rx_end + 0.02
    # the servo is asked for its position meanwhile, with another span
    position = matcher.free_signature(1, POSITION_READS)
    assert position is not None and position != read
    if answered:
        reply = hx.Frame(1, hx.Command.RAM_READ | hx.REPLY_FLAG, bytes([58, 2, 0x20, 0x01, 0, 0]))
        intake.frame(reply, rx_end + 0.01, timing.received(reply.size))
        assert operation.future.result(0).data == bytes([0x20, 0x01])
        assert stats.late_replies == 1
    else:
        intake.expire(rx_end + 0.019)
        assert not operation.future.done()
        intake.expire(rx_end + 0.021)
        assert operation.future.result(0) is None     # given up at its deadline
    intake.expire(rx_end + 0.5)
    assert matcher.idle


def test_a_position_reply_held_back_past_its_loss_still_becomes_the_measurement():
    # A stall of the machine holds a line's bytes back for tens of milliseconds: the reads in
    # flight are counted lost, then their replies come all at once. Each is still the servo's
    # answer, sampled when its request was executed: dropping them left the measurement older
    # than the stall (and a run of losses had the servo read once in ten cycles after it).
    servos = line_servos([1])
    servo = servos[0]
    matcher = ReplyMatcher(late_grace=0.1)
    timing = LineTiming(115200, 0.0003, 0.0002, delivery_slack=0.002)
    stats = sb.BusStatistics('b', 'p')
    board = MeasurementBoard(1)
    intake = ReplyIntake('b', {1: servo}, matcher, timing, board, stats, lambda text: None)
    sampled = []
    for k, signature in enumerate(POSITION_READS[:3]):   # each asked when the one before is lost
        now = 0.003 * k
        tx_end, rx_end = timing.sent(now, 9, signature.reply_size, sequence=k + 1)
        matcher.sent(1, signature, now, tx_end, rx_end + 0.02)
        sampled.append(tx_end)
        intake.expire(timing.overdue_at() + 1e-6)
    assert stats.missing == 3 and servo.health.losses_in_a_row == 3 and servo.stats.lost
    servo.health.losses_in_a_row = SILENT_AFTER   # and more on the way: read once in ten cycles

    def reply(signature, counts):
        data = bytes([signature.address, signature.length]) + \
            counts.to_bytes(2, 'little') + bytes(signature.length - 2) + b'\x00\x00'
        return hx.Frame(1, hx.Command.RAM_READ | hx.REPLY_FLAG, data)
    # the replies come late, the newest first: it becomes the measurement, an older one does
    # not replace it
    intake.frame(reply(POSITION_READS[2], 600), 0.04, 0)
    assert servo.sampled == sampled[-1] and servo.counts == 600
    assert servo.health.losses_in_a_row == 0 and not servo.stats.lost
    intake.frame(reply(POSITION_READS[0], 500), 0.041, 0)
    assert servo.sampled == sampled[-1] and servo.counts == 600
    assert stats.late_replies == 2 and stats.replies == 0   # counted late, not answers
    # a late reply's span is free again at once
    assert matcher.free_signature(1, POSITION_READS) == POSITION_READS[0]


def run_line(baud, servos, share, operations, cycles=400):
    """
    Run a line's scheduler for ``cycles`` with ``operations`` STATs queued, every reply answered.

    :return: (cycles between two reads of a servo, averaged; operation requests written; the
        request wire's bytes written; the wire's capacity over the run [bytes]).
    """
    ids = list(range(1, servos + 1))
    line = line_servos(ids, baud)
    byte_time = hx.byte_time(baud)
    period = 0.01
    scheduler = WireScheduler(line, ReplyMatcher(0.1), 0.0002 / byte_time, share,
                              period / byte_time)
    goal_every = wire_budget(servos, baud, period).goal_every
    for k in range(operations):
        absent = 100 + k % 100
        scheduler.add(Request(hx.StatRequest().frame(absent), absent,
                              ReplySignature.ack(hx.Command.STAT)))
    tx_free, written, done, reads = 0.0, 0.0, 0, 0
    for cycle in range(cycles):
        now = cycle * period
        budget = (period - max(0.0, tx_free - now)) / byte_time
        goals = jog(ids) if cycle % goal_every == 0 else None
        for between in (False, True):
            # between cycles, what the request wire carries before the next one (as the line)
            left = (now + period - max(now, tx_free)) / byte_time
            batch = scheduler.between(max(0.0, left)) if between else \
                scheduler.cycle_batch(goals, budget)
            scheduler.written(batch)
            size = sum(o.size for o in batch)
            tx_free = max(now, tx_free) + size * byte_time
            written += size
            done += sum(1 for o in batch if o.request is not None)
            for outgoing in batch:
                if outgoing.servo is not None and outgoing.request is None:
                    outgoing.servo.sampled = now
                    reads += 1
    return servos * cycles / reads, done, written, cycles * period / byte_time


@pytest.mark.parametrize('baud, servos', [(115200, 10), (115200, 24), (115200, 6), (115200, 4),
                                          (666666, 10), (666666, 24)])
@pytest.mark.parametrize('age_cost', [0.25, 0.5, 2.0])
def test_operations_cost_the_reads_at_most_their_age_cost_and_always_progress(
        baud, servos, age_cost):
    # a third of a 115200 Bd line's wire for a scan's STATs made every servo of a 10-servo line
    # read about every 5 cycles instead of every 2.9 (its measurements much older)
    share = operations_share(wire_budget(servos, baud, 0.01), age_cost)
    quiet, _, _, capacity = run_line(baud, servos, share, operations=0, cycles=400)
    between, done, written, _ = run_line(baud, servos, share, operations=10000, cycles=400)
    assert between <= quiet + age_cost + 0.05, (quiet, between)
    # they take the share they are given (nearly all of it: a cycle whose reads leave more wire
    # than the share sends one and leaves the others for after the reads' replies, within the
    # wire left before the next cycle), at most a third of the wire, at least 2 %
    stat = hx.StatRequest().frame(0).size + spacer_count(9, baud) * SPACER.size
    assert 0.95 * share * 400 - stat <= done * stat <= share * 400 + 2 * stat, (done, share)
    assert 0.02 * capacity / 400 <= share <= capacity / 400 / 3
    # and the wire is never asked for more than it carries
    assert written <= capacity + 200
