"""
The HerkuleX DRS-0101 / DRS-0201 serial protocol: frames, commands, registers, units (pure).

Everything here is bytes in, values out: no I/O, no clock. The facts come from the project's
fact sheet (``../shared/herkulex.md``, the manual's pages cited there as M-pNN).

Frame (requests and replies alike, M-p18)::

    FF FF | size | pID | CMD | checksum1 | checksum2 | data[0..n-1]      size = 7 + n, 7..223

* checksum1 = XOR of size, pID, CMD and every data byte, bit 0 cleared; checksum2 = NOT
  checksum1, bit 0 cleared (M-p42). So both are even and checksum1 XOR checksum2 = 0xFE, which
  lets a receiver reject a header before the data arrive. **Bit 0 of the XOR is not protected**:
  a flip of bit 0 (alone) in one byte of size, pID, CMD or data passes both checksums.
* A reply has CMD | 0x40 and its data end with the two status bytes (status error, status
  detail). Read replies echo address and length before the values: 11 + len bytes; every other
  reply is 9 bytes.
* Multi-byte register values are little-endian.

Register addresses (fact sheet section 4.4): the manual's detail table (M-p29) puts the
position registers 2 bytes lower than its RAM map (M-p25) and clashes with the control-mode
register at 56. The RAM map is trusted here - calibrated position 58, absolute position 60,
differential position 62, PWM 64, goal 68, desired position 70, desired velocity 72 - as every
driver that was checked on hardware does (SB commit 6f1c5e0, mjbots' legtool comments).

Units: position 0.325 degree per count around count 512 (the manual text and the drivers; the
reference angle table suggests 0.3258, at most 0.4 degree apart at the ends); velocity is the
position change per 11.2 ms servo tick (so 1 count/tick = 29.02 degree/s with this scale); the
playtime counts ticks of 11.2 ms (0..255).
"""

from dataclasses import dataclass
import enum
import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from sweetie_motion.errors import did_you_mean, SweetieMotionError

#: The two header bytes of every frame.
HEADER = b'\xff\xff'
#: pID that addresses every servo on the line (no servo replies, except to STAT).
BROADCAST_ID = 0xFE
#: Largest assignable servo ID (factory ID is 253 = 0xFD as well).
MAX_ID = 0xFD
#: Frame size bounds [bytes] (header included).
MIN_FRAME_SIZE = 7
MAX_FRAME_SIZE = 223
#: what a frame parser's look at a header found: a whole intact frame, or too few bytes yet
_FRAME = 'frame'
_MORE = 'more'
MAX_DATA_SIZE = MAX_FRAME_SIZE - MIN_FRAME_SIZE
#: A reply's CMD is the request's CMD with this bit set.
REPLY_FLAG = 0x40
#: The servo tick: control update, playtime unit and velocity sample [s].
TICK = 0.0112
#: Largest playtime [ticks].
MAX_PLAYTIME = 255
#: JOG tags per packet (M-p40/41): 7 + 43 * 5 = 222 and 8 + 53 * 4 = 220 bytes.
MAX_I_JOG_TAGS = 43
MAX_S_JOG_TAGS = 53
#: Sizes of the two register memories [bytes].
EEP_SIZE = 54
RAM_SIZE = 74
#: RAM 0..47 mirrors EEP 6..53 (loaded at boot and at REBOOT).
EEP_RAM_OFFSET = 6
MIRRORED_RAM_SIZE = 48
#: Torque-control register values (RAM 52).
TORQUE_FREE = 0x00
TORQUE_BRAKE = 0x40
TORQUE_ON = 0x60
#: Volts per count of the voltage registers.
VOLTS_PER_COUNT = 0.074
#: Status-error bits that mean trouble (SB's mask: 'invalid packet' is a line problem).
ERROR_MASK = 0x77


class Command(enum.IntEnum):
    """Request commands (M-p40)."""

    EEP_WRITE = 0x01
    EEP_READ = 0x02
    RAM_WRITE = 0x03
    RAM_READ = 0x04
    I_JOG = 0x05
    S_JOG = 0x06
    STAT = 0x07
    ROLLBACK = 0x08
    REBOOT = 0x09

    @property
    def ack(self) -> int:
        """Return the CMD byte of this command's reply."""
        return int(self) | REPLY_FLAG


REQUEST_COMMANDS = frozenset(int(c) for c in Command)
REPLY_COMMANDS = frozenset(c.ack for c in Command)


class Memory(enum.Enum):
    """The two register memories of a servo."""

    EEP = 'eep'
    RAM = 'ram'

    @property
    def size(self) -> int:
        """Return the number of bytes of this memory."""
        return EEP_SIZE if self is Memory.EEP else RAM_SIZE


# --- errors -------------------------------------------------------------------------------------


class HerkulexError(SweetieMotionError):
    """A HerkuleX protocol problem."""


class FrameError(HerkulexError):
    """
    Bytes that are not a valid frame, or a frame that is not a valid command or reply.

    :param reason: what is wrong.
    :param raw: the offending bytes.
    """

    def __init__(self, reason: str, raw: bytes = b'') -> None:
        self.reason = reason
        self.raw = bytes(raw)
        shown = f' ({self.raw.hex(" ")})' if raw else ''
        super().__init__(f'{reason}{shown}')


class ChecksumError(FrameError):
    """The checksums of a frame do not match its content."""

    def __init__(self, expected: Tuple[int, int], found: Tuple[int, int], raw: bytes) -> None:
        self.expected = expected
        self.found = found
        super().__init__(f'checksum mismatch: expected {expected[0]:02X} {expected[1]:02X}, '
                         f'found {found[0]:02X} {found[1]:02X}', raw)


class UnknownCommandError(FrameError):
    """A frame carries a CMD byte that is no command of the protocol."""

    def __init__(self, cmd: int, raw: bytes = b'') -> None:
        self.cmd = cmd
        super().__init__(f'unknown command 0x{cmd:02X}', raw)


class ValueRangeError(HerkulexError):
    """
    A value outside what the protocol, a register or a servo type can carry.

    :param name: the quantity (field or register name).
    :param value: the value given.
    :param limit: the allowed range, as (low, high).
    """

    def __init__(self, name: str, value: float, limit: Tuple[float, float],
                 unit: str = '') -> None:
        self.name = name
        self.value = value
        self.limit = limit
        unit = f' {unit}' if unit else ''
        super().__init__(f'{name} = {value}{unit} is outside {limit[0]}..{limit[1]}{unit}')


class UnknownRegisterError(HerkulexError):
    """A register name or address that the register map does not have."""

    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        self.name = name
        known = list(known)
        # a part of the name ('position': absolute_position, ...), else a misspelling
        close = [k for k in known if name.lower() in k or k in name.lower()][:5]
        hint = f' (did you mean {", ".join(close)}?)' if close else did_you_mean(name, known)
        super().__init__(f'unknown register {name!r}{hint}')


class UnknownServoTypeError(HerkulexError):
    """A servo type name (model) that this package does not know."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f'unknown servo model {name!r} (known: {", ".join(SERVO_TYPES)})')


def _check_int(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            as_int = int(value)
        except (TypeError, ValueError):
            raise ValueRangeError(name, value, (low, high)) from None
        if as_int != value:
            raise ValueRangeError(name, value, (low, high))
        value = as_int
    if not low <= value <= high:
        raise ValueRangeError(name, value, (low, high))
    return value


# --- frames -------------------------------------------------------------------------------------


def checksums(size: int, pid: int, cmd: int, data: bytes) -> Tuple[int, int]:
    """
    Return the two checksum bytes of a frame.

    :param size: the frame size byte [bytes].
    :param pid: the servo ID byte.
    :param cmd: the command byte.
    :param data: the data bytes.
    :return: (checksum1, checksum2).
    """
    x = size ^ pid ^ cmd
    for byte in data:
        x ^= byte
    return x & 0xFE, (~x) & 0xFE


@dataclass(frozen=True)
class Frame:
    """
    One frame of the protocol (request or reply).

    :param pid: servo ID 0..253, or 254 (broadcast).
    :param cmd: command byte (request 0x01..0x09, reply 0x41..0x49; others are representable so
        that a servo can answer 'unknown command').
    :param data: the data bytes (at most 216).
    """

    pid: int
    cmd: int
    data: bytes = b''

    def __post_init__(self) -> None:
        _check_int('pID', self.pid, 0, BROADCAST_ID)
        _check_int('CMD', self.cmd, 0, 0xFF)
        if not isinstance(self.data, bytes):
            object.__setattr__(self, 'data', bytes(self.data))
        if len(self.data) > MAX_DATA_SIZE:
            raise ValueRangeError('frame data length', len(self.data), (0, MAX_DATA_SIZE),
                                  'bytes')

    @property
    def size(self) -> int:
        """Return the size of the encoded frame [bytes]."""
        return MIN_FRAME_SIZE + len(self.data)

    @property
    def is_reply(self) -> bool:
        """Return whether the CMD byte is a reply's."""
        return self.cmd in REPLY_COMMANDS

    def encode(self) -> bytes:
        """Return the frame's bytes, header and checksums included."""
        size = self.size
        c1, c2 = checksums(size, self.pid, self.cmd, self.data)
        return bytes((0xFF, 0xFF, size, self.pid, self.cmd, c1, c2)) + self.data

    def __bytes__(self) -> bytes:
        return self.encode()

    @classmethod
    def decode(cls, raw: bytes) -> 'Frame':
        """
        Decode exactly one frame.

        :param raw: the frame's bytes.
        :return: the frame.
        :raises FrameError: bad header, size or ID.
        :raises ChecksumError: the checksums do not match.
        """
        raw = bytes(raw)
        if len(raw) < MIN_FRAME_SIZE or raw[:2] != HEADER:
            raise FrameError('not a frame: needs FF FF and at least 7 bytes', raw)
        size = raw[2]
        if size != len(raw) or not MIN_FRAME_SIZE <= size <= MAX_FRAME_SIZE:
            raise FrameError(f'size byte {size} does not match the {len(raw)} bytes given', raw)
        expected = checksums(size, raw[3], raw[4], raw[7:])
        if (raw[5], raw[6]) != expected:
            raise ChecksumError(expected, (raw[5], raw[6]), raw)
        if raw[3] > BROADCAST_ID:
            raise FrameError(f'pID {raw[3]} is no servo ID (0..253, 254 broadcast)', raw)
        return cls(raw[3], raw[4], raw[7:])


def _expected_size(cmd: int, buf: bytearray, start: int, available: int) -> Optional[int]:
    """
    Return the frame size that a known command implies, -1 if the buffer does not tell yet.

    None: no rule for this command (unknown commands, JOG sizes are checked by modulo).
    """
    if cmd in (Command.EEP_READ, Command.RAM_READ, Command.ROLLBACK):
        return 9
    if cmd in (Command.STAT, Command.REBOOT):
        return 7
    if cmd in (Command.EEP_WRITE, Command.RAM_WRITE):
        return 9 + buf[start + 8] if available >= 9 else -1
    if cmd in (Command.EEP_READ.ack, Command.RAM_READ.ack):
        return 11 + buf[start + 8] if available >= 9 else -1
    if cmd in REPLY_COMMANDS:
        return 9
    return None


def _size_fits(cmd: int, size: int) -> bool:
    if cmd == Command.I_JOG:
        return size > MIN_FRAME_SIZE and (size - MIN_FRAME_SIZE) % 5 == 0
    if cmd == Command.S_JOG:
        return size > 8 and (size - 8) % 4 == 0
    return True


@dataclass
class ParserCounters:
    """
    What a :class:`FrameParser` delivered and dropped.

    :param frames: valid frames delivered.
    :param checksum_errors: candidate frames rejected by a checksum.
    :param size_errors: candidate frames with a size byte outside 7..223 or one that does not
        fit their command.
    :param command_errors: candidate frames whose CMD the parser does not accept.
    :param garbage_bytes: every byte that was not delivered inside a valid frame.
    """

    frames: int = 0
    checksum_errors: int = 0
    size_errors: int = 0
    command_errors: int = 0
    garbage_bytes: int = 0


class FrameParser:
    """
    Incremental frame parser: feed it bytes as they come, get the complete valid frames.

    It hunts the header (FF FF), checks the size byte (7..223, and the size the command
    implies when it is known: 7 for STAT, 9 for a write ACK, 11 + len for a read ACK, ...), the
    checksum pair as soon as it arrives (both even, XOR = 0xFE), then the checksums over the
    data and the ID (0xFF is none). A candidate that fails any check loses only its first byte
    and the scan restarts one byte later, so a frame that starts inside rejected bytes (two
    0xFF in data, a truncated frame followed by a good one) is still found. Every dropped byte
    is counted.

    :param commands: the CMD bytes to accept (e.g. :data:`REPLY_COMMANDS` on the master's side,
        which rejects a false header at once); None accepts any CMD (a servo must see unknown
        commands to report them).
    """

    def __init__(self, commands: Optional[Iterable[int]] = None) -> None:
        self.commands = None if commands is None else frozenset(commands)
        self.counters = ParserCounters()
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        """Return the number of bytes buffered (an incomplete frame or a possible header)."""
        return len(self._buf)

    def feed(self, data: bytes) -> List[Frame]:
        """
        Add received bytes.

        :param data: the bytes received since the last call.
        :return: the frames completed by these bytes, in order.
        """
        return [frame for frame, _ in self.feed_with_offsets(data)]

    def feed_with_offsets(self, data: bytes) -> List[Tuple[Frame, int]]:
        """
        Add received bytes; tell where in them each frame ended.

        :param data: the bytes received since the last call.
        :return: (frame, n) pairs: the frame was complete after the first n bytes of ``data``
            (0 for a frame found in older bytes after a rejected candidate).
        """
        old = len(self._buf)
        self._buf += data
        return self._scan(old)

    def flush(self) -> List[Tuple[Frame, int]]:
        """
        Drop the head candidate: the line went quiet, so it can never complete.

        Drops its first byte and rescans the rest (frames inside it are still delivered).

        :return: (frame, 0) pairs found in the buffered bytes.
        """
        if not self._buf:
            return []
        if len(self._buf) >= 2 and self._buf[0] == 0xFF and self._buf[1] == 0xFF:
            self.counters.size_errors += 1
        del self._buf[0]
        self.counters.garbage_bytes += 1
        return self._scan(len(self._buf))

    def reset(self) -> None:
        """Forget buffered bytes (counted as garbage), e.g. after the port was reopened."""
        self.counters.garbage_bytes += len(self._buf)
        self._buf.clear()

    def _reject(self, kind: str) -> None:
        setattr(self.counters, kind, getattr(self.counters, kind) + 1)
        self.counters.garbage_bytes += 1

    def _judge(self, pos: int, available: int) -> Tuple[str, int]:
        """
        Judge the bytes at ``pos`` of the buffer (a header starts there).

        :return: (:data:`_FRAME`, its size) for a whole intact frame; (:data:`_MORE`, 0) when
            more bytes must come to tell; else (the error counter it counts in, 0).
        """
        buf = self._buf
        if available < 3:
            return _MORE, 0
        size = buf[pos + 2]
        if not MIN_FRAME_SIZE <= size <= MAX_FRAME_SIZE:
            return 'size_errors', 0
        if available < 5:
            return _MORE, 0
        cmd = buf[pos + 4]
        if self.commands is not None and cmd not in self.commands:
            return 'command_errors', 0
        if available < 7:
            return _MORE, 0
        c1, c2 = buf[pos + 5], buf[pos + 6]
        if c1 ^ c2 != 0xFE or c1 & 1:
            return 'checksum_errors', 0
        expected = _expected_size(cmd, buf, pos, available)
        if expected == -1 and size >= 9:
            return _MORE, 0
        if (expected is not None and expected != -1 and expected != size) \
                or not _size_fits(cmd, size) or (expected == -1 and size < 9):
            return 'size_errors', 0
        if available < size:
            return _MORE, 0
        x = size ^ buf[pos + 3] ^ cmd
        for k in range(pos + 7, pos + size):
            x ^= buf[k]
        if (x & 0xFE) != c1:
            return 'checksum_errors', 0
        if buf[pos + 3] > BROADCAST_ID:
            # ID 0xFF is no servo's: bit 0 of the ID flipped past the checksums (fact
            # sheet 1.2's blind spot) on a broadcast frame
            return 'command_errors', 0
        return _FRAME, size

    def _scan(self, old: int) -> List[Tuple[Frame, int]]:
        buf = self._buf
        out: List[Tuple[Frame, int]] = []
        counters = self.counters
        pos = 0
        n = len(buf)
        while True:
            i = buf.find(HEADER, pos)
            if i < 0:
                keep = n - 1 if n > pos and buf[n - 1] == 0xFF else n
                counters.garbage_bytes += keep - pos
                pos = keep
                break
            counters.garbage_bytes += i - pos
            pos = i
            verdict, size = self._judge(pos, n - pos)
            if verdict is _MORE:
                break
            if verdict is not _FRAME:
                self._reject(verdict)
                pos += 1
                continue
            cmd = buf[pos + 4]
            frame = Frame(buf[pos + 3], cmd, bytes(buf[pos + 7:pos + size]))
            counters.frames += 1
            pos += size
            out.append((frame, max(0, pos - old)))
        del buf[:pos]
        return out


# --- registers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Register:
    """
    One register of the map (fact sheet section 4; DRS-0101 and DRS-0201 share it).

    :param name: snake_case name.
    :param size: bytes (1 or 2, little-endian).
    :param eep: EEP address, or None (RAM only).
    :param ram: RAM address, or None (EEP only).
    :param factory: factory value, None when unknown (firmware version).
    :param read_only: writes are refused.
    :param signed: two's complement value.
    :param doc: meaning and unit.
    """

    name: str
    size: int
    eep: Optional[int]
    ram: Optional[int]
    factory: Optional[int] = 0
    read_only: bool = False
    signed: bool = False
    doc: str = ''

    def address(self, memory: Memory) -> int:
        """
        Return the register's address in ``memory``.

        :raises UnknownRegisterError: the register is not in that memory.
        """
        address = self.eep if memory is Memory.EEP else self.ram
        if address is None:
            raise UnknownRegisterError(f'{self.name} in {memory.value.upper()}')
        return address

    @property
    def limits(self) -> Tuple[int, int]:
        """Return the representable range of the value."""
        bits = 8 * self.size
        return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if self.signed else (0, (1 << bits) - 1)

    def encode(self, value: int) -> bytes:
        """
        Return the value's bytes.

        :raises ValueRangeError: the value does not fit the register.
        """
        low, high = self.limits
        value = _check_int(self.name, value, low, high)
        return (value & ((1 << (8 * self.size)) - 1)).to_bytes(self.size, 'little')

    def decode(self, data: bytes) -> int:
        """Return the value of the register's bytes."""
        return int.from_bytes(bytes(data[:self.size]), 'little', signed=self.signed)


def _mirrored(name: str, eep: int, size: int, factory: Optional[int], doc: str,
              signed: bool = False) -> Register:
    return Register(name, size, eep, eep - EEP_RAM_OFFSET, factory, False, signed, doc)


REGISTER_LIST: Tuple[Register, ...] = (
    Register('model_no1', 1, 0, None, None, True, False, '0x01 DRS-0101, 0x02 DRS-0201'),
    Register('model_no2', 1, 1, None, 0x01, True),
    Register('version1', 1, 2, None, None, True, False, 'firmware version'),
    Register('version2', 1, 3, None, None, True, False, 'firmware version'),
    Register('baud_rate', 1, 4, None, 0x10, False, False, 'code, see BAUD_RATES'),
    _mirrored('id', 6, 1, 0xFD, 'servo ID 0..253'),
    _mirrored('ack_policy', 7, 1, 0x01, '0 no reply, 1 reads only, 2 every request'),
    _mirrored('alarm_led_policy', 8, 1, 0x7F, 'status-error bits that blink the LED'),
    _mirrored('torque_policy', 9, 1, 0x35, 'status-error bits that release the torque'),
    _mirrored('max_temperature', 11, 1, 0xDE, 'raw ADC'),
    _mirrored('min_voltage', 12, 1, 0x5B, '0.074 V per count'),
    _mirrored('max_voltage', 13, 1, 0x89, '0.074 V per count'),
    _mirrored('acceleration_ratio', 14, 1, 0x19, 'ramp share of the playtime [%], 0..50'),
    _mirrored('max_acceleration_time', 15, 1, 0x2D, 'upper bound of a ramp [ticks]'),
    _mirrored('dead_zone', 16, 1, 0, 'counts'),
    _mirrored('saturator_offset', 17, 1, 0, ''),
    _mirrored('saturator_slope', 18, 2, 0, '0..0x7FFF'),
    _mirrored('pwm_offset', 20, 1, 0, '', signed=True),
    _mirrored('min_pwm', 21, 1, 0, ''),
    _mirrored('max_pwm', 22, 2, 0x03FF, ''),
    _mirrored('overload_pwm_threshold', 24, 2, 0x03FE, ''),
    _mirrored('min_position', 26, 2, 0x0015, 'calibrated counts'),
    _mirrored('max_position', 28, 2, 0x03EA, 'calibrated counts'),
    _mirrored('position_kp', 30, 2, 0x01B8, ''),
    _mirrored('position_kd', 32, 2, 0x1F40, ''),
    _mirrored('position_ki', 34, 2, 0, ''),
    _mirrored('position_ff1', 36, 2, 0, 'feed-forward 1st gain'),
    _mirrored('position_ff2', 38, 2, 0, 'feed-forward 2nd gain'),
    _mirrored('led_blink_period', 44, 1, 0x2D, 'ticks'),
    _mirrored('adc_fault_check_period', 45, 1, 0x2D, 'ticks (temperature and voltage checks)'),
    _mirrored('packet_garbage_check_period', 46, 1, 0x12, 'ticks'),
    _mirrored('stop_detection_period', 47, 1, 0x1B, 'ticks'),
    _mirrored('overload_detection_period', 48, 1, 0x96, 'ticks'),
    _mirrored('stop_threshold', 49, 1, 3, 'counts'),
    _mirrored('inposition_margin', 50, 1, 3, 'counts'),
    _mirrored('calibration_difference', 53, 1, 0, 'absolute - calibrated [counts]',
              signed=True),
    Register('status_error', 1, None, 48, 0, False, False, 'StatusError bits, write 0 to clear'),
    Register('status_detail', 1, None, 49, 0, False, False, 'StatusDetail bits'),
    Register('torque_control', 1, None, 52, 0, False, False, '0x00 free, 0x40 brake, 0x60 on'),
    Register('led_control', 1, None, 53, 0, False, False, '1 green, 2 blue, 4 red'),
    Register('voltage', 1, None, 54, 0, True, False, '0.074 V per count'),
    Register('temperature', 1, None, 55, 0, True, False, 'raw ADC'),
    Register('current_control_mode', 1, None, 56, 0, True, False, '0 position, 1 speed'),
    Register('tick', 1, None, 57, 0, True, False, '11.2 ms counter'),
    Register('calibrated_position', 2, None, 58, 0, True, False, 'counts'),
    Register('absolute_position', 2, None, 60, 0, True, False, 'counts'),
    Register('differential_position', 2, None, 62, 0, True, True, 'counts per tick'),
    Register('pwm', 2, None, 64, 0, True, True, '+-1023 = full torque'),
    Register('absolute_goal_position', 2, None, 68, 0, True, False, 'counts'),
    Register('absolute_desired_trajectory_position', 2, None, 70, 0, True, False, 'counts'),
    Register('desired_velocity', 2, None, 72, 0, True, True, 'counts per tick'),
)

#: The register map by name.
REGISTERS: Mapping[str, Register] = {r.name: r for r in REGISTER_LIST}
#: The first RAM address that is read-only (voltage, temperature, positions, ...).
RAM_READ_ONLY_FROM = 54
#: Status-detail bits a write cannot change (moving, in position, motor on).
DETAIL_READ_ONLY = 0x43


def register(name: str) -> Register:
    """
    Return the register of that name.

    :raises UnknownRegisterError: no such register.
    """
    try:
        return REGISTERS[name]
    except KeyError:
        raise UnknownRegisterError(name, REGISTERS) from None


def register_at(memory: Memory, address: int) -> Optional[Register]:
    """Return the register that starts at ``address`` of ``memory``, or None."""
    for reg in REGISTER_LIST:
        if (reg.eep if memory is Memory.EEP else reg.ram) == address:
            return reg
    return None


def factory_eep(model_no: int = 0x01, version: Tuple[int, int] = (0x01, 0x00)) -> bytearray:
    """
    Return the 54 EEP bytes of a servo as it leaves the factory.

    :param model_no: the Model No1 byte (0x01 DRS-0101, 0x02 DRS-0201).
    :param version: firmware version bytes (not documented; any value).
    """
    eep = bytearray(EEP_SIZE)
    for reg in REGISTER_LIST:
        if reg.eep is not None and reg.factory is not None:
            eep[reg.eep:reg.eep + reg.size] = reg.encode(reg.factory)
    eep[0] = model_no
    eep[2], eep[3] = version
    return eep


def ram_from_eep(eep: Union[bytes, bytearray]) -> bytearray:
    """Return the RAM of a servo that just booted from ``eep`` (RAM 0..47 = EEP 6..53)."""
    ram = bytearray(RAM_SIZE)
    ram[:MIRRORED_RAM_SIZE] = eep[EEP_RAM_OFFSET:EEP_RAM_OFFSET + MIRRORED_RAM_SIZE]
    return ram


# --- status -------------------------------------------------------------------------------------


class StatusError(enum.IntFlag):
    """Status error bits (RAM 48, M-p39)."""

    VOLTAGE = 0x01
    POT_LIMIT = 0x02
    TEMPERATURE = 0x04
    INVALID_PACKET = 0x08
    OVERLOAD = 0x10
    DRIVER_FAULT = 0x20
    EEP_DISTORTED = 0x40


class StatusDetail(enum.IntFlag):
    """Status detail bits (RAM 49, M-p39)."""

    MOVING = 0x01
    IN_POSITION = 0x02
    CHECKSUM_ERROR = 0x04
    UNKNOWN_COMMAND = 0x08
    REGISTER_RANGE = 0x10
    GARBAGE = 0x20
    MOTOR_ON = 0x40


_ERROR_NAMES = {StatusError.VOLTAGE: 'voltage', StatusError.POT_LIMIT: 'position limit',
                StatusError.TEMPERATURE: 'overheat', StatusError.INVALID_PACKET: 'invalid packet',
                StatusError.OVERLOAD: 'overload', StatusError.DRIVER_FAULT: 'driver fault',
                StatusError.EEP_DISTORTED: 'EEP distorted'}
_DETAIL_NAMES = {StatusDetail.CHECKSUM_ERROR: 'checksum error',
                 StatusDetail.UNKNOWN_COMMAND: 'unknown command',
                 StatusDetail.REGISTER_RANGE: 'register range exceeded',
                 StatusDetail.GARBAGE: 'garbage detected'}


def error_names(error: int) -> List[str]:
    """Return the names of the set status-error bits ('overload', 'overheat', ...)."""
    return [name for flag, name in _ERROR_NAMES.items() if error & flag]


@dataclass(frozen=True)
class Status:
    """
    The two status bytes that end every reply (RAM 48 and 49).

    :param error: status error byte (:class:`StatusError` bits).
    :param detail: status detail byte (:class:`StatusDetail` bits).
    """

    error: int = 0
    detail: int = 0

    @property
    def errors(self) -> StatusError:
        """Return the error bits as flags (the reserved bit 7 dropped)."""
        return StatusError(self.error & 0x7F)

    @property
    def details(self) -> StatusDetail:
        """Return the detail bits as flags (the reserved bit 7 dropped)."""
        return StatusDetail(self.detail & 0x7F)

    @property
    def motor_on(self) -> bool:
        """Return whether the torque is on."""
        return bool(self.detail & StatusDetail.MOTOR_ON)

    @property
    def moving(self) -> bool:
        """Return whether the servo moves."""
        return bool(self.detail & StatusDetail.MOVING)

    @property
    def in_position(self) -> bool:
        """Return whether the servo is within the in-position margin of its goal."""
        return bool(self.detail & StatusDetail.IN_POSITION)

    def faults(self, mask: int = ERROR_MASK) -> int:
        """Return the error bits within ``mask`` (default: everything but invalid packet)."""
        return self.error & mask

    def names(self) -> List[str]:
        """Return the names of every error and packet-problem bit set."""
        return error_names(self.error) + [n for f, n in _DETAIL_NAMES.items() if self.detail & f]

    def describe(self) -> str:
        """Return a one-line description ('ok', or the problems and the bytes)."""
        problems = self.names()
        if not problems:
            return 'ok'
        return f'{", ".join(problems)} (status 0x{self.error:02X}/0x{self.detail:02X})'


# --- requests -----------------------------------------------------------------------------------


def _check_id(servo_id: int, broadcast: bool = True) -> int:
    return _check_int('servo ID', servo_id, 0, BROADCAST_ID if broadcast else MAX_ID)


def _check_span(memory: Memory, address: int, length: int) -> None:
    _check_int('address', address, 0, memory.size - 1)
    _check_int('length', length, 1, memory.size - address)


@dataclass(frozen=True)
class ReadRequest:
    """
    EEP_READ or RAM_READ of ``length`` bytes from ``address``.

    :param memory: EEP or RAM.
    :param address: first byte.
    :param length: bytes to read.
    """

    memory: Memory
    address: int
    length: int

    @property
    def command(self) -> Command:
        """Return the request's command."""
        return Command.EEP_READ if self.memory is Memory.EEP else Command.RAM_READ

    @property
    def reply_size(self) -> int:
        """Return the size of the reply [bytes]."""
        return 11 + self.length

    def frame(self, pid: int, check: bool = True) -> Frame:
        """
        Build the request frame.

        :param pid: the servo ID.
        :param check: refuse spans beyond the memory (off to provoke 'register range').
        :raises ValueRangeError: bad ID, address or length.
        """
        _check_id(pid)
        if check:
            _check_span(self.memory, self.address, self.length)
        return Frame(pid, self.command, bytes((self.address, self.length)))


@dataclass(frozen=True)
class WriteRequest:
    """
    EEP_WRITE or RAM_WRITE of ``data`` from ``address`` (several registers in one go).

    :param memory: EEP or RAM.
    :param address: first byte.
    :param data: the bytes.
    """

    memory: Memory
    address: int
    data: bytes

    @property
    def command(self) -> Command:
        """Return the request's command."""
        return Command.EEP_WRITE if self.memory is Memory.EEP else Command.RAM_WRITE

    reply_size = 9

    def frame(self, pid: int, check: bool = True) -> Frame:
        """
        Build the request frame.

        :param pid: the servo ID or broadcast.
        :param check: refuse spans beyond the memory.
        :raises ValueRangeError: bad ID, address or length.
        """
        _check_id(pid)
        data = bytes(self.data)
        if check:
            _check_span(self.memory, self.address, len(data))
        return Frame(pid, self.command, bytes((self.address, len(data))) + data)


@dataclass(frozen=True)
class JogTag:
    """
    One servo's part of an I_JOG or S_JOG (M-p46..48).

    :param servo_id: the servo (0..254; 254 = every servo, fact sheet section 2.3).
    :param value: position mode: goal in calibrated counts (0..0x7FFF, 0..1023 on DRS-0101/0201);
        speed mode: signed speed -16383..16383 (sent as magnitude + sign bit 0x4000).
    :param speed_mode: infinite-turn (speed) mode instead of position control.
    :param led: LED bits (1 green, 2 blue, 4 red).
    :param stop: the stop flag.
    :param invalid: the JOG-invalid flag (the tag moves nothing).
    :param playtime: I_JOG only: time to reach the goal [ticks of 11.2 ms].
    """

    servo_id: int
    value: int
    speed_mode: bool = False
    led: int = 0
    stop: bool = False
    invalid: bool = False
    playtime: int = 0

    def __post_init__(self) -> None:
        _check_id(self.servo_id)
        if self.speed_mode:
            _check_int('JOG speed', self.value, -0x3FFF, 0x3FFF)
        else:
            _check_int('JOG position', self.value, 0, 0x7FFF)
        _check_int('LED', self.led, 0, 7)
        _check_int('playtime', self.playtime, 0, MAX_PLAYTIME)

    @property
    def jog_word(self) -> int:
        """Return the 16-bit JOG word."""
        if self.speed_mode:
            return abs(self.value) | (0x4000 if self.value < 0 else 0)
        return self.value

    @property
    def set_byte(self) -> int:
        """Return the SET byte."""
        return (int(self.stop) | (int(self.speed_mode) << 1) | (self.led << 2)
                | (int(self.invalid) << 5))

    @classmethod
    def from_wire(cls, word: int, set_byte: int, servo_id: int, playtime: int = 0) -> 'JogTag':
        """Decode a tag from its JOG word, SET byte, ID and playtime."""
        speed = bool(set_byte & 0x02)
        if speed:
            value = -(word & 0x3FFF) if word & 0x4000 else word & 0x3FFF
        else:
            value = word & 0x7FFF
        return cls(servo_id, value, speed, (set_byte >> 2) & 0x07, bool(set_byte & 0x01),
                   bool(set_byte & 0x20), playtime)


@dataclass(frozen=True)
class IJogRequest:
    """I_JOG: each tag with its own playtime (up to 43 tags)."""

    tags: Tuple[JogTag, ...]

    command = Command.I_JOG
    reply_size = 9

    def frame(self, pid: Optional[int] = None) -> Frame:
        """
        Build the frame; pID defaults to the tag's ID for one tag, broadcast for several.

        :raises ValueRangeError: no tags or too many.
        """
        tags = tuple(self.tags)
        _check_int('I_JOG tag count', len(tags), 1, MAX_I_JOG_TAGS)
        pid = _default_pid(tags) if pid is None else _check_id(pid)
        data = bytearray()
        for tag in tags:
            word = tag.jog_word
            data += bytes((word & 0xFF, word >> 8, tag.set_byte, tag.servo_id, tag.playtime))
        return Frame(pid, self.command, bytes(data))


@dataclass(frozen=True)
class SJogRequest:
    """S_JOG: one playtime shared by every tag (up to 53 tags)."""

    playtime: int
    tags: Tuple[JogTag, ...]

    command = Command.S_JOG
    reply_size = 9

    def frame(self, pid: Optional[int] = None) -> Frame:
        """
        Build the frame; pID defaults to the tag's ID for one tag, broadcast for several.

        :raises ValueRangeError: bad playtime, no tags or too many.
        """
        _check_int('playtime', self.playtime, 0, MAX_PLAYTIME)
        tags = tuple(self.tags)
        _check_int('S_JOG tag count', len(tags), 1, MAX_S_JOG_TAGS)
        pid = _default_pid(tags) if pid is None else _check_id(pid)
        data = bytearray((self.playtime,))
        for tag in tags:
            word = tag.jog_word
            data += bytes((word & 0xFF, word >> 8, tag.set_byte, tag.servo_id))
        return Frame(pid, self.command, bytes(data))


def _default_pid(tags: Sequence[JogTag]) -> int:
    return tags[0].servo_id if len(tags) == 1 else BROADCAST_ID


@dataclass(frozen=True)
class StatRequest:
    """STAT: the status bytes (always answered)."""

    command = Command.STAT
    reply_size = 9

    def frame(self, pid: int) -> Frame:
        """Build the frame."""
        return Frame(_check_id(pid), self.command)


@dataclass(frozen=True)
class RollbackRequest:
    """
    ROLLBACK: factory EEP values (effective after a reboot).

    :param keep_id: keep the current ID.
    :param keep_baud: keep the current baud rate.
    """

    keep_id: bool = True
    keep_baud: bool = True

    command = Command.ROLLBACK
    reply_size = 9

    def frame(self, pid: int) -> Frame:
        """Build the frame."""
        return Frame(_check_id(pid), self.command, bytes((int(self.keep_id),
                                                          int(self.keep_baud))))


@dataclass(frozen=True)
class RebootRequest:
    """REBOOT: restart; RAM reverts to the EEP values."""

    command = Command.REBOOT
    reply_size = 9

    def frame(self, pid: int) -> Frame:
        """Build the frame."""
        return Frame(_check_id(pid), self.command)


Request = Union[ReadRequest, WriteRequest, IJogRequest, SJogRequest, StatRequest,
                RollbackRequest, RebootRequest]


def decode_request(frame: Frame) -> Request:
    """
    Decode a request frame.

    :param frame: a frame with a request CMD.
    :return: the request.
    :raises UnknownCommandError: the CMD is no request.
    :raises FrameError: the data do not fit the command.
    """
    cmd, data = frame.cmd, frame.data
    if cmd not in REQUEST_COMMANDS:
        raise UnknownCommandError(cmd, frame.encode())
    command = Command(cmd)
    if command in (Command.EEP_READ, Command.RAM_READ):
        if len(data) != 2:
            raise FrameError(f'{command.name} needs 2 data bytes, got {len(data)}')
        memory = Memory.EEP if command is Command.EEP_READ else Memory.RAM
        return ReadRequest(memory, data[0], data[1])
    if command in (Command.EEP_WRITE, Command.RAM_WRITE):
        if len(data) < 3 or data[1] != len(data) - 2:
            raise FrameError(f'{command.name}: length byte does not match the data')
        memory = Memory.EEP if command is Command.EEP_WRITE else Memory.RAM
        return WriteRequest(memory, data[0], data[2:])
    if command is Command.I_JOG:
        if not data or len(data) % 5:
            raise FrameError(f'I_JOG data of {len(data)} bytes is not a list of 5-byte tags')
        return IJogRequest(tuple(
            JogTag.from_wire(data[k] | data[k + 1] << 8, data[k + 2], data[k + 3], data[k + 4])
            for k in range(0, len(data), 5)))
    if command is Command.S_JOG:
        if len(data) < 5 or (len(data) - 1) % 4:
            raise FrameError(f'S_JOG data of {len(data)} bytes is not playtime + 4-byte tags')
        return SJogRequest(data[0], tuple(
            JogTag.from_wire(data[k] | data[k + 1] << 8, data[k + 2], data[k + 3])
            for k in range(1, len(data), 4)))
    if command is Command.ROLLBACK:
        if len(data) != 2:
            raise FrameError(f'ROLLBACK needs 2 data bytes, got {len(data)}')
        return RollbackRequest(bool(data[0]), bool(data[1]))
    if data:
        raise FrameError(f'{command.name} carries no data, got {len(data)} bytes')
    return StatRequest() if command is Command.STAT else RebootRequest()


def read_register(servo_id: int, name: str, memory: Memory = Memory.RAM) -> Frame:
    """
    Build a read of one register.

    :param servo_id: the servo.
    :param name: the register name.
    :param memory: EEP or RAM.
    """
    reg = register(name)
    return ReadRequest(memory, reg.address(memory), reg.size).frame(servo_id)


def write_register(servo_id: int, name: str, value: int, memory: Memory = Memory.RAM) -> Frame:
    """
    Build a write of one register.

    :param servo_id: the servo or broadcast.
    :param name: the register name.
    :param value: the value (range-checked against the register).
    :param memory: EEP or RAM.
    :raises ValueRangeError: the value does not fit.
    :raises HerkulexError: the register is read-only.
    """
    reg = register(name)
    if reg.read_only:
        raise HerkulexError(f'register {name!r} is read-only')
    return WriteRequest(memory, reg.address(memory), reg.encode(value)).frame(servo_id)


def clear_errors(servo_id: int) -> Frame:
    """Build the clear-status request (RAM 48, 2 bytes of 0; M-p44)."""
    return WriteRequest(Memory.RAM, 48, b'\x00\x00').frame(servo_id)


# --- replies ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadReply:
    """
    The reply to a read: the values and the status.

    :param servo_id: the servo that answered.
    :param memory: EEP or RAM.
    :param address: first byte read.
    :param data: the bytes read.
    :param status: the status bytes.
    """

    servo_id: int
    memory: Memory
    address: int
    data: bytes
    status: Status

    def value(self, name: str) -> int:
        """
        Return a register's value from the bytes read.

        :raises UnknownRegisterError: the register is not inside this reply.
        """
        reg = register(name)
        start = reg.address(self.memory) - self.address
        if start < 0 or start + reg.size > len(self.data):
            raise UnknownRegisterError(f'{name} (not inside this reply)')
        return reg.decode(self.data[start:start + reg.size])

    def frame(self) -> Frame:
        """Build the reply frame."""
        command = Command.EEP_READ if self.memory is Memory.EEP else Command.RAM_READ
        return Frame(self.servo_id, command.ack,
                     bytes((self.address, len(self.data))) + bytes(self.data)
                     + bytes((self.status.error, self.status.detail)))


@dataclass(frozen=True)
class AckReply:
    """
    The reply to any request but a read (only the status).

    :param servo_id: the servo that answered.
    :param command: the request's command.
    :param status: the status bytes.
    """

    servo_id: int
    command: Command
    status: Status

    def frame(self) -> Frame:
        """Build the reply frame."""
        return Frame(self.servo_id, self.command.ack, bytes((self.status.error,
                                                             self.status.detail)))


Reply = Union[ReadReply, AckReply]


def decode_reply(frame: Frame) -> Reply:
    """
    Decode a reply frame.

    :raises UnknownCommandError: the CMD is no reply.
    :raises FrameError: the data do not fit the reply.
    """
    if frame.cmd not in REPLY_COMMANDS:
        raise UnknownCommandError(frame.cmd, frame.encode())
    command = Command(frame.cmd & ~REPLY_FLAG)
    data = frame.data
    if command in (Command.EEP_READ, Command.RAM_READ):
        if len(data) < 4 or data[1] != len(data) - 4:
            raise FrameError(f'{command.name} reply: length byte does not match the data',
                             frame.encode())
        memory = Memory.EEP if command is Command.EEP_READ else Memory.RAM
        return ReadReply(frame.pid, memory, data[0], data[2:-2], Status(data[-2], data[-1]))
    if len(data) != 2:
        raise FrameError(f'{command.name} reply needs 2 status bytes, got {len(data)}',
                         frame.encode())
    return AckReply(frame.pid, command, Status(data[0], data[1]))


# --- units --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServoType:
    """
    A servo model's units and mechanics.

    :param name: 'DRS-0101' or 'DRS-0201'.
    :param model_no: the Model No1 byte (EEP 0).
    :param stall_torque: torque at full PWM and stand-still at 7.4 V [N*m] (product sheet).
    :param rated_torque: the torque it may hold for long [N*m]: the product sheet gives none;
        half the stall torque (see :data:`SERVO_TYPES`).
    :param max_speed: no-load speed at 7.4 V [rad/s] (product sheet).
    :param degrees_per_count: position scale [degree].
    :param centre: count of the zero angle.
    :param max_count: largest position count.
    """

    name: str
    model_no: int
    stall_torque: float
    max_speed: float
    rated_torque: float = 0.0
    degrees_per_count: float = 0.325
    centre: int = 512
    max_count: int = 1023

    @property
    def rad_per_count(self) -> float:
        """Return the position scale [rad per count]."""
        return math.radians(self.degrees_per_count)

    @property
    def angle_range(self) -> Tuple[float, float]:
        """Return the angles of counts 0 and max_count [rad]."""
        return (self.position_to_rad(0), self.position_to_rad(self.max_count))

    def position_to_rad(self, counts: float) -> float:
        """
        Return the angle of a position count.

        :param counts: position [counts].
        :return: angle from the centre [rad].
        """
        return (counts - self.centre) * self.rad_per_count

    def rad_to_position(self, angle: float, clamp: bool = False) -> int:
        """
        Return the nearest position count of an angle.

        :param angle: angle from the centre [rad].
        :param clamp: clamp into 0..max_count instead of raising.
        :raises ValueRangeError: outside the count range (and not clamping), or not finite.
        """
        if not math.isfinite(angle):
            raise ValueRangeError('position', angle, self.angle_range, 'rad')
        counts = round(self.centre + angle / self.rad_per_count)
        if 0 <= counts <= self.max_count:
            return counts
        if clamp:
            return min(max(counts, 0), self.max_count)
        raise ValueRangeError('position', angle, self.angle_range, 'rad')

    def velocity_to_rad_s(self, counts_per_tick: float) -> float:
        """
        Return the velocity of a differential-position value.

        :param counts_per_tick: position change per 11.2 ms tick [counts].
        :return: velocity [rad/s].
        """
        return counts_per_tick * self.rad_per_count / TICK

    def rad_s_to_velocity(self, velocity: float) -> float:
        """Return a velocity [rad/s] in counts per tick (not rounded)."""
        return velocity * TICK / self.rad_per_count

    def pwm_to_torque(self, pwm: float, voltage: float = 7.4) -> float:
        """
        Return the motor torque a PWM value means at stand-still (an estimate).

        :param pwm: PWM register value (+-1023 = full).
        :param voltage: supply [V].
        :return: torque [N*m].
        """
        return pwm / 1023.0 * self.stall_torque * voltage / 7.4


#: The servo types this package knows. Stall torques and speeds: the product sheets (12 and
#: 24 kgf*cm). Rated torques: the sheets give none; the servo's own protection switches it off
#: after 1.68 s at full PWM (overload detection period), so a load it holds for long must leave
#: the position loop room to correct: half the stall torque (the load check's threshold for
#: loads held longer than that period).
SERVO_TYPES: Mapping[str, ServoType] = {
    'DRS-0101': ServoType('DRS-0101', 0x01, stall_torque=1.18, max_speed=6.3,
                          rated_torque=0.59),
    'DRS-0201': ServoType('DRS-0201', 0x02, stall_torque=2.35, max_speed=7.1,
                          rated_torque=1.18),
}


def servo_type(name: str) -> ServoType:
    """
    Return a servo type by name.

    :raises UnknownServoTypeError: not a known model.
    """
    try:
        return SERVO_TYPES[str(name).upper()]
    except KeyError:
        raise UnknownServoTypeError(name) from None


def servo_type_of(model_no: int) -> Optional[ServoType]:
    """Return the servo type of a Model No1 byte, None if unknown."""
    for kind in SERVO_TYPES.values():
        if kind.model_no == model_no:
            return kind
    return None


def seconds_to_playtime(seconds: float, clamp: bool = False) -> int:
    """
    Return the playtime of a duration (rounded to the nearest tick).

    :param seconds: duration [s].
    :param clamp: clamp into 0..255 ticks instead of raising.
    :raises ValueRangeError: outside 0..2.856 s (and not clamping).
    """
    if not math.isfinite(seconds):
        raise ValueRangeError('playtime', seconds, (0.0, MAX_PLAYTIME * TICK), 's')
    ticks = round(seconds / TICK)
    if 0 <= ticks <= MAX_PLAYTIME:
        return ticks
    if clamp:
        return min(max(ticks, 0), MAX_PLAYTIME)
    raise ValueRangeError('playtime', seconds, (0.0, MAX_PLAYTIME * TICK), 's')


def playtime_to_seconds(ticks: int) -> float:
    """Return the duration of a playtime [s]."""
    return _check_int('playtime', ticks, 0, MAX_PLAYTIME) * TICK


def voltage_to_volts(counts: int) -> float:
    """Return the volts of a voltage register value."""
    return counts * VOLTS_PER_COUNT


def volts_to_voltage(volts: float) -> int:
    """Return the voltage register value of a supply voltage (clamped to 0..255)."""
    return min(max(round(volts / VOLTS_PER_COUNT), 0), 255)


#: Baud-rate codes of EEP 4 (M-p26).
BAUD_RATES: Mapping[int, int] = {0x02: 666666, 0x03: 500000, 0x04: 400000, 0x07: 250000,
                                 0x09: 200000, 0x10: 115200, 0x22: 57600}


def baud_code(baud: int) -> int:
    """
    Return the EEP code of a baud rate.

    :raises ValueRangeError: not a rate of the servos.
    """
    for code, rate in BAUD_RATES.items():
        if rate == baud:
            return code
    raise ValueRangeError('baud rate', baud, (min(BAUD_RATES.values()),
                                              max(BAUD_RATES.values())), 'Bd (one of the table)')


def byte_time(baud: float) -> float:
    """Return the wire time of one byte (8N1: 10 bits) [s]."""
    return 10.0 / baud


def register_values(reply: ReadReply) -> Dict[str, int]:
    """Return every whole register inside a read reply, by name."""
    out = {}
    for reg in REGISTER_LIST:
        address = reg.eep if reply.memory is Memory.EEP else reg.ram
        if address is not None and reply.address <= address \
                and address + reg.size <= reply.address + len(reply.data):
            out[reg.name] = reply.value(reg.name)
    return out
