"""
What comes back on a line: replies matched to their requests, measurements, status, losses.

The line thread hands every valid frame to :meth:`ReplyIntake.frame` with the byte position
where it ended, and the requests it found lost to :meth:`ReplyIntake.lost`. A reply that
answers a request settles it on the wire model (:class:`~sweetie_motion.servo.driver.wire.
LineTiming`) and goes to its operation, if it is one's; a position reply becomes the servo's
measurement on the board, stamped with the time the servo sampled it; every status goes to the
servo's fault policy (:class:`~sweetie_motion.servo.driver.health.ServoHealth`), and a new
fault to :attr:`ReplyIntake.on_fault` (the operations switch the torque off). Each lost request
counts as *damaged* (bytes of its reply came) or *missing* (none came). A reply that comes
after its request was counted lost (late) still ends the servo's run of losses, and a late
position reply newer than the servo's measurement becomes it.
"""

from typing import Callable, Dict, List, Mapping, Optional

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.health import BusStatistics
from sweetie_motion.servo.driver.matching import (
    Match, MEASUREMENT_READS, Pending, ReplyMatcher,
)
from sweetie_motion.servo.driver.servo_state import LineServo, MeasurementBoard
from sweetie_motion.servo.driver.wire import LineTiming


class ReplyIntake:
    """
    Takes the replies of one line (see the module docstring).

    :param bus: the bus name (in faults).
    :param servos: the line's servos by ID.
    :param matcher: the requests in flight.
    :param timing: the wire model.
    :param board: where measurements and faults go.
    :param stats: the line's counters.
    :param event: records what happened (a servo lost, found, a fault).
    """

    def __init__(self, bus: str, servos: Mapping[int, LineServo], matcher: ReplyMatcher,
                 timing: LineTiming, board: MeasurementBoard, stats: BusStatistics,
                 event: Callable[[str], None]) -> None:
        self.bus = bus
        self.by_id = servos
        self.matcher = matcher
        self.timing = timing
        self.board = board
        self.stats = stats
        self.event = event
        #: called with a servo whose fault wants its torque off (set by the operations)
        self.on_fault: Callable[[LineServo], None] = lambda servo: None

    def frame(self, frame: hx.Frame, now: float, end: int) -> None:
        """Take a valid frame that ended at byte position ``end``."""
        try:
            reply = hx.decode_reply(frame)
        except hx.FrameError:
            self.stats.unexpected_replies += 1
            return
        match: Match = self.matcher.match(reply, now)
        if match.answered is not None:
            arrived = self.timing.settled(match.answered.sequence, end)
        else:
            arrived = {}
            self.timing.skip(frame.size)
        self.lost(match.lost, now, arrived)
        servo = self.by_id.get(reply.servo_id)
        if match.late is not None:
            self.stats.late_replies += 1
            if servo is not None:
                self._late_reply(servo, reply, match.late)
            request = match.late.request
            if request is not None and not request.future.done():
                if servo is not None:               # a released request's late answer
                    self._status(servo, reply.status, now)
                request.future.set_result(reply)
            return
        pending = match.answered
        if pending is None:
            self.stats.unexpected_replies += 1
            return
        self.stats.replies += 1
        if servo is not None:
            self._servo_reply(servo, reply, pending, now)
        if pending.request is not None:
            pending.request.future.set_result(reply)

    def _servo_reply(self, servo: LineServo, reply: hx.Reply, pending: Pending,
                     now: float) -> None:
        stats = servo.stats
        stats.replies += 1
        latency = now - pending.sent
        stats.latency_mean += (latency - stats.latency_mean) / stats.replies
        stats.latency_max = max(stats.latency_max, latency)
        stats.last_reply = now
        self._answered(servo)
        if isinstance(reply, hx.ReadReply) and pending.expect in MEASUREMENT_READS:
            stats.reads += 1
            self._measurement(servo, reply, pending.sampled)
        self._status(servo, reply.status, now)

    def _late_reply(self, servo: LineServo, reply: hx.Reply, late: Pending) -> None:
        """
        Take a reply that came after its request was counted lost.

        The servo answered: a run of losses ends (a stall of the machine that held the bytes
        back would otherwise leave it read once in ten cycles), and a position reply newer than
        the servo's measurement becomes it: it was sampled when its request was executed,
        however late it came (dropped, it left the joint's measurement older than it needed to
        be, by the length of the stall and the reads lost in it).
        """
        servo.stats.late_replies += 1
        self._answered(servo)
        if isinstance(reply, hx.ReadReply) and late.expect in MEASUREMENT_READS \
                and late.sampled > servo.sampled:
            self._measurement(servo, reply, late.sampled)

    def _answered(self, servo: LineServo) -> None:
        """End the servo's run of losses (in time or late, it answered)."""
        if servo.health.answered():
            self.event(f'{servo.describe()} answers again')
        servo.stats.lost = False

    def _measurement(self, servo: LineServo, reply: hx.ReadReply, sampled: float) -> None:
        kind, config = servo.kind, servo.config
        counts = reply.value('calibrated_position') & 0x3FF
        velocity = effort = None
        if len(reply.data) >= 8:
            velocity = config.direction * kind.velocity_to_rad_s(
                reply.value('differential_position'))
            effort = config.direction * kind.pwm_to_torque(reply.value('pwm'))
        velocity = servo.measured(counts, sampled, velocity)
        self.board.store(servo.index, servo.position, velocity, effort, sampled)

    def _status(self, servo: LineServo, status: hx.Status, now: float) -> None:
        servo.status = status
        servo.stats.last_error = status.error
        servo.stats.last_detail = status.detail
        if not servo.torque_pending:
            servo.torque_on = status.motor_on
        fault = servo.health.status(status.error, now, servo.joint, servo.servo_id,
                                    self.bus)
        if fault is not None:
            self.board.add_fault(fault)
            self.event(fault.describe())
            servo.torque_cmd = False
            self.on_fault(servo)

    def expire(self, now: float) -> None:
        """
        Count the requests whose deadline passed, or replies overdue, as lost.

        A position read is lost when its reply is overdue: nothing (or only a damaged frame)
        came by its expected end plus the slack. An operation's request is then *released*
        (:meth:`ReplyMatcher.release`): counted lost and its servo free for its reads, while a
        late reply still answers the operation until the request's deadline (the reply
        ``timeout``), when it is given up. It once held its servo until that deadline: the
        servo went unread for two cycles (at 666666 Bd during a scan, one cycle in 30 of a leg
        line), while a servo slower than the wire model (its latency larger than configured)
        must still get its operations done.
        """
        self.lost(self.matcher.expire(now), now)
        for given_up in self.matcher.given_up(now):
            if given_up.request is not None:
                given_up.request.future.set_result(None)
        overdue = self.timing.overdue(now)
        while overdue is not None:
            pending = self.matcher.find(overdue)
            if pending is not None and pending.request is None:
                self.matcher.lose(overdue, now)
            elif pending is not None:
                self.matcher.release(overdue, now)
            arrived = self.timing.settled(overdue)
            if pending is not None:
                self.lost([pending], now, arrived, answerable=pending.request is not None)
            overdue = self.timing.overdue(now)

    def overdue_at(self) -> float:
        """Return when :meth:`expire` has an overdue reply to settle [s] (inf: none)."""
        return self.timing.overdue_at()

    def lost(self, lost: List[Pending], now: float,
             arrived: Optional[Dict[int, int]] = None, answerable: bool = False) -> None:
        """
        Count the line's servos' lost requests: damaged if bytes of their reply came.

        :param arrived: bytes that came of each reply, by request (None: settle them here).
        :param answerable: released: a late reply may still answer their operations.
        """
        for pending in lost:
            came = arrived.get(pending.sequence, 0) if arrived is not None else \
                self.timing.settled(pending.sequence).get(pending.sequence, 0)
            servo = self.by_id.get(pending.servo_id)
            if servo is not None:
                # (an ID not on the line, a scan's absent one, loses no reply of the line's)
                self.stats.timeouts += 1
                if came:
                    self.stats.damaged += 1
                else:
                    self.stats.missing += 1
                servo.stats.timeouts += 1
                if pending.request is None and pending.expect in MEASUREMENT_READS:
                    servo.reask = True
                if servo.health.missed():
                    servo.stats.lost = True
                    self.event(f'{servo.describe()} lost')
            if pending.request is not None and not answerable:
                pending.request.future.set_result(None)
