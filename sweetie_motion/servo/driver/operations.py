"""
Operations on the servos of one line: plain methods, each run on a thread of its own.

An operation (set up a servo, switch its torque, clear its errors, reboot it, switch its
control mode, read or write a register, scan IDs, the shutdown) is a sequence of requests: it
hands each to the line (:meth:`BusLine.submit`) and waits for the answer, so it reads top to
bottom like the fact sheet's procedure. :meth:`LineOperations.start` runs one on a thread and
returns a :class:`concurrent.futures.Future` of its result; the line thread never waits for
an operation.

Requests of *urgent* operations (a fault's torque off, the shutdown) go before every other
request of the line. A request without an answer is tried ``retries`` times, then the operation
fails with :class:`ServoTimeoutError` naming the servo and the request.
"""

import concurrent.futures
from concurrent.futures import Future
import math
import threading
import time
from typing import Callable, List, Optional, Sequence, Tuple

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.config import (
    BusStoppedError, SerialBusError, ServoStatusError, ServoTimeoutError,
)
from sweetie_motion.servo.driver.line import BusLine
from sweetie_motion.servo.driver.matching import Answer, FULL_READS, ReplySignature, Request
from sweetie_motion.servo.driver.servo_state import LineServo
from sweetie_motion.servo.driver.wire import SPACER, spacer_count

#: an operation waits at most this long for one answer of the line thread [s]
ANSWER_TIMEOUT = 30.0
#: after clearing, the status is read again this much after the servo's next error check [s]
CHECK_MARGIN = 2 * hx.TICK
#: a configured servo that did not answer a scan's sweep, and a servo that did not answer its
#: model read, is asked this many times more
SCAN_RETRIES_CONFIGURED = 3
#: what a scan lists as the model of a servo that answered STAT but not the model read
UNKNOWN_MODEL = 'unknown'
#: at most this many STATs of a scan in flight on a line
SCAN_WINDOW = 16


def gather(futures: Sequence[concurrent.futures.Future]) -> concurrent.futures.Future:
    """
    Return a future of the list of results of ``futures``.

    It fails with the first exception (in order) once every one is done.
    """
    out: concurrent.futures.Future = concurrent.futures.Future()
    out.set_running_or_notify_cancel()
    futures = list(futures)
    if not futures:
        out.set_result([])
        return out
    lock = threading.Lock()
    left = [len(futures)]

    def done(_: concurrent.futures.Future) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        for future in futures:
            if future.exception() is not None:
                out.set_exception(future.exception())
                return
        out.set_result([f.result() for f in futures])

    for future in futures:
        future.add_done_callback(done)
    return out


class LineOperations:
    """
    The operations of one line (see the module docstring).

    :param line: the line.
    """

    def __init__(self, line: BusLine) -> None:
        self.line = line
        self.driver = line.driver
        line.intake.on_fault = self._fault
        line.on_reopened = self._reopened

    # --- running -------------------------------------------------------------------------------

    def start(self, name: str, function: Callable[..., object], *args: object) -> Future:
        """Run ``function(*args)`` on a thread of its own; return the future of its result."""
        future: Future = Future()
        future.set_running_or_notify_cancel()

        def run() -> None:
            try:
                result = function(*args)
            except BaseException as error:  # noqa: B902 - the caller gets every failure
                future.set_exception(error)
            else:
                future.set_result(result)
        threading.Thread(target=run, name=f'servo-op-{self.line.config.name}-{name}',
                         daemon=True).start()
        return future

    def _fault(self, servo: LineServo) -> None:
        self.start('fault', self.torque, servo, False, None, 10, True)

    def _reopened(self) -> None:
        self.start('reconnect', self.init_all, None)

    # --- requests ------------------------------------------------------------------------------

    def exchange(self, frame: hx.Frame, servo_id: int, expect: ReplySignature, what: str,
                 retries: Optional[int] = None, urgent: bool = False) -> hx.Reply:
        """
        Send a request and return its reply (tried ``retries`` times).

        :raises ServoTimeoutError: no reply.
        :raises BusStoppedError: the line stopped.
        """
        for _ in range(self.driver.retries if retries is None else retries):
            answer = self._answer(Request(frame, servo_id, expect, urgent))
            if isinstance(answer, (hx.ReadReply, hx.AckReply)):
                return answer
        servo = self.line.by_id.get(servo_id)
        raise ServoTimeoutError(servo.joint if servo else '', servo_id, what)

    def send(self, frame: hx.Frame, servo_id: Optional[int] = None,
             urgent: bool = False) -> None:
        """Send a request that gets no reply; return once it is written."""
        self._answer(Request(frame, servo_id, None, urgent))

    def _answer(self, request: Request) -> Answer:
        self.line.submit(request)
        try:
            return request.future.result(ANSWER_TIMEOUT)
        except TimeoutError:
            raise BusStoppedError(f'bus {self.line.config.name}: no answer from its thread '
                                  f'in {ANSWER_TIMEOUT:.0f} s') from None

    def read_span(self, servo_id: int, memory: hx.Memory, address: int, length: int,
                  what: str, retries: Optional[int] = None) -> hx.ReadReply:
        """Read ``length`` bytes from ``address``; return the reply."""
        request = hx.ReadRequest(memory, address, length)
        reply = self.exchange(request.frame(servo_id), servo_id,
                              ReplySignature.read(memory, address, length), what, retries)
        assert isinstance(reply, hx.ReadReply)  # the signature matches only read replies
        return reply

    def write_register(self, servo: LineServo, name: str, value: int,
                       memory: hx.Memory = hx.Memory.RAM, retries: Optional[int] = None,
                       urgent: bool = False) -> None:
        """Write a register (acknowledged when the servo's ACK policy is 2)."""
        reg = hx.register(name)
        frame = hx.WriteRequest(memory, reg.address(memory), reg.encode(value)).frame(
            servo.servo_id)
        if servo.ack_policy >= 2:
            command = hx.Command.EEP_WRITE if memory is hx.Memory.EEP else hx.Command.RAM_WRITE
            self.exchange(frame, servo.servo_id, ReplySignature.ack(command),
                          f'write {name} = {value}', retries, urgent)
        else:
            self.send(frame, servo.servo_id, urgent)

    def stat(self, servo_id: int, what: str, retries: Optional[int] = None,
             urgent: bool = False) -> hx.Status:
        """Ask a servo for its status (STAT always answers)."""
        return self.exchange(hx.StatRequest().frame(servo_id), servo_id,
                             ReplySignature.ack(hx.Command.STAT), what, retries, urgent).status

    def read_position(self, servo: LineServo) -> hx.Status:
        """Read a servo's position (it becomes its measurement); return its status."""
        signature = FULL_READS[0]
        return self.read_span(servo.servo_id, hx.Memory.RAM, signature.address,
                              signature.length, 'a position read').status

    # --- operations ----------------------------------------------------------------------------

    def init(self, servo: LineServo, torque: Optional[bool]) -> hx.Status:
        """Read the position, set the init registers, optionally switch the torque."""
        self.read_position(servo)
        for name, value in self.driver.ram_init.items():
            if name != 'ack_policy':
                self.write_register(servo, name, value)
                continue
            # the policy in force decides about the reply: write blind, read back
            self.send(hx.write_register(servo.servo_id, name, value), servo.servo_id)
            reg = hx.register(name)
            reply = self.read_span(servo.servo_id, hx.Memory.RAM, reg.address(hx.Memory.RAM),
                                   1, 'the ACK policy read-back')
            servo.ack_policy = reply.data[0]
            if servo.ack_policy != value:
                raise SerialBusError(f'servo {servo.joint!r} keeps ACK policy '
                                     f'{servo.ack_policy} (wrote {value})')
        if torque is not None:
            self.torque(servo, torque)
        return self.read_position(servo)

    def init_all(self, torque: Optional[bool]) -> List[LineServo]:
        """Init every servo of the line (after a reconnection: torque untouched); the failed."""
        failed = []
        for servo in self.line.servos:
            servo.resume = True
            try:
                self.init(servo, torque)
            except SerialBusError:
                failed.append(servo)
        self.line.ready = True
        return failed

    def torque(self, servo: LineServo, on: bool, mode: Optional[int] = None,
               retries: Optional[int] = None, urgent: bool = False) -> bool:
        """Switch the torque on (hold where it is) or off; ``mode``: the register value."""
        value = (hx.TORQUE_ON if on else hx.TORQUE_FREE) if mode is None else mode
        with self.line.lock:
            servo.torque_pending += 1
        servo.torque_cmd = bool(on)
        try:
            if on:
                servo.resume = True
                servo.sent_goal = math.nan
            self.write_register(servo, 'torque_control', value, retries=retries, urgent=urgent)
            if servo.ack_policy < 2:
                self.stat(servo.servo_id, 'STAT after torque', retries, urgent)
        finally:
            with self.line.lock:
                servo.torque_pending -= 1
        servo.torque_on = value == hx.TORQUE_ON
        return servo.torque_on

    def clear(self, servo: LineServo) -> hx.Status:
        """
        Clear the servo's errors (fact sheet 10.1) and check that they stay cleared.

        A condition that lasts sets its flag again at the servo's next error check (its ADC
        check period, RAM 39): the status is read again after that, and the clearing is refused
        with the flags while they are back. The torque stays as it is.

        :raises ServoStatusError: the flags came back.
        """
        reg = hx.register('adc_fault_check_period')
        period = self.read_span(servo.servo_id, hx.Memory.RAM, reg.address(hx.Memory.RAM),
                                1, 'the error check period').data[0] * hx.TICK
        self.write_register_span(servo, 48, b'\x00\x00', 'clear errors')
        time.sleep(period + CHECK_MARGIN)
        status = self.stat(servo.servo_id, 'STAT after clear')
        remaining = status.error & self.driver.error_mask
        if remaining:
            raise ServoStatusError(servo.joint, servo.servo_id, remaining,
                                   period + CHECK_MARGIN)
        servo.health.cleared()
        self.line.board.clear_fault(servo.joint)
        return status

    def write_register_span(self, servo: LineServo, address: int, data: bytes,
                            what: str) -> None:
        """Write raw bytes to RAM from ``address`` (acknowledged with ACK policy 2)."""
        frame = hx.WriteRequest(hx.Memory.RAM, address, data).frame(servo.servo_id)
        if servo.ack_policy >= 2:
            self.exchange(frame, servo.servo_id, ReplySignature.ack(hx.Command.RAM_WRITE), what)
        else:
            self.send(frame, servo.servo_id)

    def reboot(self, servo: LineServo, reinit: bool) -> hx.Status:
        """Reboot (fact sheet 10.2): REBOOT, wait, re-init, restore the torque."""
        torque = servo.torque_cmd
        with self.line.lock:
            servo.paused += 1
        try:
            frame = hx.RebootRequest().frame(servo.servo_id)
            if servo.ack_policy >= 2:
                self.exchange(frame, servo.servo_id, ReplySignature.ack(hx.Command.REBOOT),
                              'REBOOT')
            else:
                self.send(frame, servo.servo_id)
            servo.ack_policy = 1
            servo.torque_on = False
            servo.led_written = None
            time.sleep(self.driver.reboot_delay)
            servo.health.cleared()
            self.line.board.clear_fault(servo.joint)
            return self.init(servo, torque) if reinit else self.read_position(servo)
        finally:
            with self.line.lock:
                servo.paused -= 1

    def switch_mode(self, servo: LineServo, speed: bool) -> str:
        """Switch the control mode (fact sheet 10.3): torque off, JOG-invalid tag, torque."""
        torque = servo.torque_cmd
        with self.line.lock:
            servo.paused += 1
        try:
            self.torque(servo, False)
            counts = int(servo.counts) if math.isfinite(servo.counts) else servo.kind.centre
            tag = hx.JogTag(servo.servo_id, 0 if speed else counts, speed, invalid=True)
            frame = hx.IJogRequest((tag,)).frame(servo.servo_id)
            if servo.ack_policy >= 2:
                self.exchange(frame, servo.servo_id, ReplySignature.ack(hx.Command.I_JOG),
                              'the mode I_JOG')
            else:
                self.send(frame, servo.servo_id)
            time.sleep(2 * hx.TICK)   # a JOG acts at the servo's next tick
            reg = hx.register('current_control_mode')
            reply = self.read_span(servo.servo_id, hx.Memory.RAM, reg.address(hx.Memory.RAM),
                                   1, 'the control mode read')
            if torque:
                self.torque(servo, True)
        finally:
            with self.line.lock:
                servo.paused -= 1
        return 'speed' if reply.data[0] & 1 else 'position'

    def read_register(self, servo_id: int, name: str, memory: hx.Memory) -> int:
        """Read a register; return its value."""
        reg = hx.register(name)
        reply = self.read_span(servo_id, memory, reg.address(memory), reg.size,
                               f'a read of {name}')
        return reg.decode(reply.data)

    def write_register_checked(self, servo: LineServo, name: str, value: int,
                               memory: hx.Memory) -> int:
        """
        Write a register a person asked for; return the value.

        The torque goes through :meth:`torque` (the driver keeps track of it); an LED value
        written to RAM stays: the goals carry it from then on (until the servo reboots).

        :raises HerkulexError: a read-only register.
        """
        reg = hx.register(name)
        if reg.read_only:
            raise hx.HerkulexError(f'register {name!r} is read-only')
        if name == 'torque_control' and memory is hx.Memory.RAM:
            self.torque(servo, value == hx.TORQUE_ON, mode=value)
            return value
        self.write_register(servo, name, value, memory)
        if memory is hx.Memory.RAM and name == 'ack_policy':
            servo.ack_policy = value
        if memory is hx.Memory.RAM and name == 'led_control':
            servo.led_written = value
        return value

    def scan(self, ids: Sequence[int], tries: int) -> List[Tuple[int, str]]:
        """
        STAT each ID; read the model byte of those that answer; return (ID, model) by ID.

        A servo of the line's configuration that did not answer the sweep is asked again after
        it, :data:`SCAN_RETRIES_CONFIGURED` times: a reply lost to a noisy line or to a moment
        the machine stood still would otherwise hide a servo the robot has (the sweep asks
        each ID only ``tries`` times, as most IDs are absent and each try waits a timeout).
        A servo that answered but whose model read got no reply is asked for it again last,
        as many times, for the same reason (a stall of the machine lost six model reads of
        two lines in a row once: the servos were listed as 'unknown').
        """
        found = {}
        for servo_id in self._stat_sweep(list(ids), tries):
            found[servo_id] = self._scan_model(servo_id, tries)
        asked = set(ids)
        for servo in self.line.servos:
            if servo.servo_id in asked and servo.servo_id not in found:
                model = self._scan_one(servo.servo_id, SCAN_RETRIES_CONFIGURED)
                if model is not None:
                    found[servo.servo_id] = model
        for servo_id in [i for i, model in found.items() if model == UNKNOWN_MODEL]:
            found[servo_id] = self._scan_model(servo_id, SCAN_RETRIES_CONFIGURED)
        return sorted(found.items())

    def scan_window(self) -> int:
        """
        Return how many STATs of a scan may be in flight at once on this line.

        The line writes them as the operations' share of its wire lets it
        (:attr:`BusLine.operations_share`); the window keeps twice what the share lets out
        while an absent ID's STAT waits for its timeout, so the share is used and the next
        window's STATs are queued while the last ones wait; at least one. One STAT per round
        trip made a full scan 254 round trips a line, each waiting for this thread to be
        scheduled (50 s on a busy machine); a larger window only holds up the requests of other
        operations queued behind it.
        """
        spacers = spacer_count(hx.StatRequest.reply_size, self.line.config.baud,
                               self.driver.reply_gap)
        wire = hx.StatRequest().frame(0).size + spacers * SPACER.size
        waited = (self.driver.timeout + self.driver.period) / self.driver.period
        return max(1, min(SCAN_WINDOW, math.ceil(2 * self.line.operations_share * waited / wire)))

    def _stat_sweep(self, ids: List[int], tries: int) -> List[int]:
        """Ask each ID with STAT, :meth:`scan_window` at a time; return those that answered."""
        answered: List[int] = []
        left = list(ids)
        window = self.scan_window()
        for _ in range(max(1, tries)):
            missed: List[int] = []
            for k in range(0, len(left), window):
                chunk = left[k:k + window]
                requests = [self.line.submit(Request(hx.StatRequest().frame(i), i,
                                                     ReplySignature.ack(hx.Command.STAT)))
                            for i in chunk]
                for servo_id, request in zip(chunk, requests):
                    try:
                        answer = request.future.result(ANSWER_TIMEOUT)
                    except TimeoutError:
                        raise BusStoppedError(f'bus {self.line.config.name}: no answer from '
                                              f'its thread in {ANSWER_TIMEOUT:.0f} s') from None
                    (answered if isinstance(answer, hx.AckReply) else missed).append(servo_id)
            left = missed
            if not left:
                break
        return sorted(answered)

    def _scan_model(self, servo_id: int, tries: int) -> str:
        """Return the model of a servo that answered STAT ('unknown': it did not say)."""
        try:
            model = self.read_span(servo_id, hx.Memory.EEP, 0, 1, 'the model', retries=tries)
        except ServoTimeoutError:
            return UNKNOWN_MODEL
        kind = hx.servo_type_of(model.data[0])
        return kind.name if kind else f'model 0x{model.data[0]:02X}'

    def _scan_one(self, servo_id: int, tries: int) -> Optional[str]:
        """Return the model of the servo that answers STAT at this ID (None: none answered)."""
        try:
            self.stat(servo_id, 'STAT', retries=tries)
        except ServoTimeoutError:
            return None
        try:
            model = self.read_span(servo_id, hx.Memory.EEP, 0, 1, 'the model', retries=tries)
        except ServoTimeoutError:
            return UNKNOWN_MODEL
        kind = hx.servo_type_of(model.data[0])
        return kind.name if kind else f'model 0x{model.data[0]:02X}'

    def shutdown(self, value: Optional[int]) -> List[str]:
        """Apply the shutdown torque to every servo that answers; return their joints."""
        done: List[str] = []
        if value is None:
            return done
        for servo in self.line.servos:
            try:
                self.torque(servo, value == hx.TORQUE_ON, mode=value, urgent=True)
                done.append(servo.joint)
            except SerialBusError:
                pass
        return done
