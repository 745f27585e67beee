"""
The HerkuleX serial driver: :class:`SerialServoBus` drives servos on one or several serial lines.

It implements :class:`sweetie_motion.servo.bus.ServoBus` (the original robot used three UARTs
of at most 10 servos: legs 1-2, legs 3-4, head). Each line has its own I/O thread
(:class:`BusWorker`, pyserial, ``select`` on the port and a wake-up pipe), paced by the cycle:

1. :meth:`SerialServoBus.send` converts the reference into goal counts and wakes the threads;
   it never blocks. Each thread writes one S_JOG broadcast with the goals of its servos. The
   goal leads the reference as the original robot's ServoInvLead did: the playtime is the goal
   interval rounded up to whole 11.2 ms ticks plus one tick, the goal is
   ``position + velocity * lead`` with ``lead = playtime - goal interval``, and the servos'
   acceleration ratio is set to 0 (rectangular speed profile), so that the servo's desired
   position follows the reference one goal interval late. When the S_JOG of all servos does
   not leave the line enough time to refresh every servo at ``min_refresh_rate``, the goals
   go every k-th cycle (:func:`wire_budget`; e.g. 26 servos on one 115200 Bd line: every 2nd).
2. Then pipelined RAM_READ of the calibrated position, velocity and PWM (RAM 58, 8 bytes, a
   19-byte reply) of as many servos as the wire time of the period allows, round-robin, at
   most one per servo and cycle, at most one request in flight per servo, and as many in
   flight as keep the reply wire busy while the S_JOG takes the request wire. The thread keeps
   a model of both wires (full duplex, 10 bits per byte) to know what still fits before the
   next S_JOG. ``send`` wakes the threads with a write(2) that keeps the GIL, so the woken
   thread runs when the cycle thread next sleeps, not in the middle of ``send``.
3. Then queued operations (configuration, diagnostics); at least one of their requests goes
   out per cycle, so they progress even when the reads fill the wire.

When no cycle sends (the motion process is not running), the threads run idle cycles at the
configured period: reads and operations, no goals.

:meth:`SerialServoBus.receive` returns the newest measurement (never blocks); a servo that does
not answer keeps its last one.

Operations are thread-safe and return :class:`concurrent.futures.Future` objects (call
``.result(timeout)`` to wait): torque on/off, clear errors (fact sheet 10.1), reboot and
re-init (10.2), change the control mode (10.3), read/write a register, scan IDs.

Safety:

* :meth:`SerialServoBus.connect` opens the ports and reads every servo's position before
  anything else (so :meth:`receive` starts from the measured pose), then sets the RAM init
  registers (ACK policy 2, acceleration ratio 0, ...) and, with ``torque_on_connect``, switches
  the torque on (the servo holds where it is). Servos that do not answer make it raise
  :class:`ServoNotFoundError` (``require_all_servos``) or are marked lost.
* Replies are matched to requests by servo and request; a reply that does not come within the
  wire time plus ``timeout`` is a timeout. For ``late_grace`` after a timeout the servo gets no
  request that expects the same kind of reply (a position read asks for a span one byte longer
  instead), so a late reply is counted as late and never taken for the answer to a newer
  request. ``lost_after`` consecutive timeouts mark the servo lost (its status says so,
  its joints keep the last measurement); a reply makes it found again.
* Error flags (status error AND ``error_mask``, default 0x77: everything but 'invalid packet',
  a line problem) seen in ``error_persistence`` consecutive replies switch that servo's torque
  off; the fault (which servo, which flags, when) is kept in :meth:`SerialServoBus.faults` and
  in its status until the errors are cleared.
* A port that disappears never raises into the caller: the bus reports 'port lost', drops its
  requests and reopens the port every ``reconnect_interval``. When it is back, the thread reads
  every servo's position again and re-applies the RAM init registers before the next goal; the
  torque state is taken from the servos (never switched on by the reconnection). After a
  (re)connection or a reboot the goals move from the measured position towards the reference at
  most ``resume_speed``, so a reference that went on while the line was gone makes no jump.
* :meth:`SerialServoBus.disconnect` stops the goals, then applies ``shutdown_torque`` to every
  servo that answers: ``brake`` (default: the servos stop driving, which ends the heating under
  load, but resist, so the robot sinks instead of collapsing), ``off`` (free) or ``keep`` (they
  keep holding the last goal); then each thread waits for the replies (or timeouts) of the
  requests still on the wire, stops and closes its port. Afterwards ``send`` does nothing and
  every status says 'disconnected'.

Configuration (YAML; :func:`load_bus_config`)::

    servo_bus:
      period: 0.01              # the cycle period [s]
      timeout: 0.02             # reply timeout beyond the wire time [s]
      shutdown_torque: brake    # brake | off | keep
      buses:
        leg12:
          port: /dev/ttyUSB0
          baud: 115200
          servos:
            - {id: 11, joint: joint11, model: DRS-0101, offset: 0.0, direction: 1}
"""

from collections import deque
import concurrent.futures
import ctypes
import ctypes.util
from dataclasses import dataclass, field, replace
import math
import os
import select
import threading
import time
from typing import (Any, Callable, Deque, Dict, Generator, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, TypeVar, Union)

import numpy as np
import serial

from sweetie_motion.errors import SweetieMotionError, UnknownJointError
from sweetie_motion.paths import check_keys, load_yaml
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.bus import BusState, ServoBus, ServoStatus

#: What a position read asks for: calibrated position, absolute position, velocity, PWM.
READ_ADDRESS = 58
READ_LENGTH = 8
#: The expected replies of the two spans a position read uses (the second, one byte longer,
#: only right after the first was lost, so that its late reply cannot be taken for the new one).
READ_SPANS = (('read', hx.Memory.RAM, READ_ADDRESS, READ_LENGTH),
              ('read', hx.Memory.RAM, READ_ADDRESS, READ_LENGTH + 1))
SHUTDOWN_TORQUE = {'brake': hx.TORQUE_BRAKE, 'off': hx.TORQUE_FREE, 'keep': None}
#: How late the port may hand over a reply after its last byte [s] (USB packets, scheduling).
DELIVERY_SLACK = 0.0015


def _gil_keeping_write() -> Callable[[int, bytes], Any]:
    """
    Return write(fd, data) that does not release the GIL (libc through ctypes.PyDLL).

    os.write releases the GIL: the bus thread it wakes takes the GIL and the cycle's send()
    waits for that thread's whole turn to get it back. Keeping the GIL, the woken thread runs
    when the cycle thread next sleeps, as the cycle's own sleeper does
    (:mod:`sweetie_motion.core.cycle`).
    """
    name = ctypes.util.find_library('c')
    try:
        libc = ctypes.PyDLL(name) if name else None
        function = libc.write if libc is not None else None
    except (OSError, AttributeError):
        function = None
    if function is None:
        return os.write
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    function.restype = ctypes.c_ssize_t
    return lambda fd, data: function(fd, data, len(data))


_write_keeping_gil = _gil_keeping_write()


# --- errors -------------------------------------------------------------------------------------


class SerialBusError(SweetieMotionError):
    """A problem of the serial servo driver."""


class BusConfigError(SerialBusError):
    """
    A bad driver configuration.

    :param key: where in the configuration (e.g. 'servo_bus.buses.leg12.servos[3].id').
    """

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        super().__init__(f'{key}: {reason}')


class BusPortError(SerialBusError):
    """
    A serial port cannot be opened.

    :param bus: the bus name.
    :param port: the port path.
    """

    def __init__(self, bus: str, port: str, reason: str) -> None:
        self.bus = bus
        self.port = port
        super().__init__(f'bus {bus!r}: cannot open {port}: {reason}')


class ServoTimeoutError(SerialBusError):
    """
    A servo did not answer a request.

    :param joint: the servo's joint ('' for a scanned ID).
    :param servo_id: its ID.
    :param request: what was asked.
    """

    def __init__(self, joint: str, servo_id: int, request: str) -> None:
        self.joint = joint
        self.servo_id = servo_id
        self.request = request
        name = f'{joint!r} (ID {servo_id})' if joint else f'ID {servo_id}'
        super().__init__(f'servo {name} did not answer {request}')


class ServoNotFoundError(SerialBusError):
    """
    Servos did not answer at connect.

    :param joints: their joints.
    """

    def __init__(self, missing: Sequence[Tuple[str, str, int]]) -> None:
        self.joints = [j for j, _, _ in missing]
        self.missing = list(missing)
        listed = ', '.join(f'{j} (bus {b}, ID {i})' for j, b, i in missing)
        super().__init__(f'servos did not answer: {listed}')


class ServoStatusError(SerialBusError):
    """
    A servo still reports error flags (e.g. after clearing them).

    :param joint: the servo's joint.
    :param servo_id: its ID.
    :param error: the status error byte.
    """

    def __init__(self, joint: str, servo_id: int, error: int) -> None:
        self.joint = joint
        self.servo_id = servo_id
        self.error = error
        super().__init__(f'servo {joint!r} (ID {servo_id}) still reports '
                         f'{", ".join(hx.error_names(error))} (status error 0x{error:02X})')


class BusStoppedError(SerialBusError):
    """The bus is not connected (an operation after disconnect or before connect)."""


# --- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServoConfig:
    """
    One servo of a bus.

    The servo angle (from the centre count) is ``offset + direction * joint position``.

    :param servo_id: its ID (0..253).
    :param joint: the joint it drives.
    :param servo_type: 'DRS-0101' or 'DRS-0201'.
    :param offset: servo angle of the joint's zero [rad].
    :param direction: +1 or -1.
    :param min_position: lowest goal [counts] (the servo's RAM 20 default: 21).
    :param max_position: highest goal [counts] (RAM 22 default: 1002).
    """

    servo_id: int
    joint: str
    servo_type: str = 'DRS-0101'
    offset: float = 0.0
    direction: int = 1
    min_position: int = 21
    max_position: int = 1002

    @property
    def kind(self) -> hx.ServoType:
        """Return the servo type."""
        return hx.servo_type(self.servo_type)

    def joint_to_servo(self, position: float) -> float:
        """Return the servo angle of a joint position [rad]."""
        return self.offset + self.direction * position

    def servo_to_joint(self, angle: float) -> float:
        """Return the joint position of a servo angle [rad]."""
        return self.direction * (angle - self.offset)


@dataclass(frozen=True)
class BusConfig:
    """
    One serial line.

    :param name: the bus name.
    :param port: the serial port path.
    :param baud: line speed [Bd].
    :param servos: its servos.
    :param latency: expected reply latency of the servos [s] (for the wire model).
    """

    name: str
    port: str
    baud: int
    servos: Tuple[ServoConfig, ...]
    latency: float = 0.0003


@dataclass(frozen=True)
class DriverConfig:
    """
    The driver's configuration (every key of ``servo_bus``).

    :param buses: the lines.
    :param period: the cycle period [s].
    :param timeout: reply timeout after the reply's expected end [s].
    :param late_grace: after a timeout, how long a reply still counts as late [s].
    :param lost_after: consecutive timeouts that mark a servo lost.
    :param error_persistence: consecutive replies with error flags that switch the torque off.
    :param error_mask: the status error bits that count as errors.
    :param shutdown_torque: 'brake', 'off' or 'keep' (what :meth:`disconnect` leaves).
    :param torque_on_connect: switch the torque on at connect.
    :param require_all_servos: connect fails if a servo does not answer.
    :param min_refresh_rate: state refresh per servo that the goal rate must leave room for
        [Hz].
    :param reboot_delay: wait after REBOOT before talking to the servo [s].
    :param reconnect_interval: pause between attempts to reopen a lost port [s].
    :param connect_timeout: time :meth:`connect` waits for the servos [s].
    :param retries: tries of an operation's request.
    :param resume_speed: goal speed limit after a (re)connection [rad/s].
    :param ram_init: RAM registers written at connect and after a reboot.
    """

    buses: Tuple[BusConfig, ...]
    period: float = 0.01
    timeout: float = 0.02
    late_grace: float = 0.1
    lost_after: int = 3
    error_persistence: int = 2
    error_mask: int = hx.ERROR_MASK
    shutdown_torque: str = 'brake'
    torque_on_connect: bool = True
    require_all_servos: bool = True
    min_refresh_rate: float = 20.0
    reboot_delay: float = 0.3
    reconnect_interval: float = 0.2
    connect_timeout: float = 2.0
    retries: int = 3
    resume_speed: float = 1.0
    ram_init: Mapping[str, int] = field(
        default_factory=lambda: {'ack_policy': 2, 'acceleration_ratio': 0})

    @property
    def servos(self) -> List[Tuple[BusConfig, ServoConfig]]:
        """Return (bus, servo) of every servo."""
        return [(bus, servo) for bus in self.buses for servo in bus.servos]

    @property
    def joints(self) -> List[str]:
        """Return the joints of every bus, in configuration order."""
        return [servo.joint for _, servo in self.servos]


_DRIVER_KEYS = {
    'period': (float, 1e-3, 1.0), 'timeout': (float, 1e-4, 1.0),
    'late_grace': (float, 0.0, 10.0), 'lost_after': (int, 1, 1000),
    'error_persistence': (int, 1, 1000), 'error_mask': (int, 0, 0xFF),
    'min_refresh_rate': (float, 0.0, 1000.0), 'reboot_delay': (float, 0.0, 10.0),
    'reconnect_interval': (float, 0.01, 60.0), 'connect_timeout': (float, 0.01, 60.0),
    'retries': (int, 1, 100), 'resume_speed': (float, 1e-3, 100.0),
}


def _typed(key: str, value: Any, kind: type, low: float, high: float) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BusConfigError(key, f'{value!r} is not a number')
    if kind is int and value != int(value):
        raise BusConfigError(key, f'{value!r} is not an integer')
    value = kind(value)
    if not (math.isfinite(value) and low <= value <= high):
        raise BusConfigError(key, f'{value} is outside {low}..{high}')
    return value


def _load_servo(key: str, item: Any) -> ServoConfig:
    if not isinstance(item, Mapping):
        raise BusConfigError(key, 'must be a mapping with id, joint, model, offset, direction')
    check_keys(key, item, ('id', 'joint', 'model', 'offset', 'direction', 'min_position',
                           'max_position'), BusConfigError)
    for required in ('id', 'joint'):
        if required not in item:
            raise BusConfigError(f'{key}.{required}', 'missing')
    servo_id = _typed(f'{key}.id', item['id'], int, 0, hx.MAX_ID)
    joint = item['joint']
    if not isinstance(joint, str) or not joint:
        raise BusConfigError(f'{key}.joint', f'{joint!r} is not a joint name')
    model = str(item.get('model', 'DRS-0101'))
    try:
        kind = hx.servo_type(model)
    except hx.UnknownServoTypeError as error:
        raise BusConfigError(f'{key}.model', str(error)) from None
    offset = _typed(f'{key}.offset', item.get('offset', 0.0), float, -math.pi, math.pi)
    direction = item.get('direction', 1)
    if direction not in (1, -1) or isinstance(direction, bool):
        raise BusConfigError(f'{key}.direction', f'{direction!r} must be 1 or -1')
    low = _typed(f'{key}.min_position', item.get('min_position', 21), int, 0, kind.max_count)
    high = _typed(f'{key}.max_position', item.get('max_position', 1002), int, 0, kind.max_count)
    if low >= high:
        raise BusConfigError(f'{key}.min_position', f'{low} must be below max_position {high}')
    return ServoConfig(servo_id, joint, kind.name, offset, int(direction), low, high)


def load_bus_config(data: Mapping[str, Any]) -> DriverConfig:
    """
    Read the driver configuration from a mapping (parsed YAML).

    :param data: a mapping with the key ``servo_bus`` (or its content).
    :return: the configuration.
    :raises BusConfigError: naming the key that is wrong.
    """
    if not isinstance(data, Mapping):
        raise BusConfigError('servo_bus', 'the configuration must be a mapping')
    section = data.get('servo_bus', data)
    if not isinstance(section, Mapping):
        raise BusConfigError('servo_bus', 'must be a mapping')
    check_keys('servo_bus', section, set(_DRIVER_KEYS) | {
        'buses', 'shutdown_torque', 'torque_on_connect', 'require_all_servos', 'ram_init'},
        BusConfigError)
    values: Dict[str, Any] = {}
    for key, (kind, low, high) in _DRIVER_KEYS.items():
        if key in section:
            values[key] = _typed(f'servo_bus.{key}', section[key], kind, low, high)
    if 'shutdown_torque' in section:
        policy = section['shutdown_torque']
        if policy not in SHUTDOWN_TORQUE:
            raise BusConfigError('servo_bus.shutdown_torque',
                                 f'{policy!r} must be one of {", ".join(SHUTDOWN_TORQUE)}')
        values['shutdown_torque'] = policy
    for key in ('torque_on_connect', 'require_all_servos'):
        if key in section:
            if not isinstance(section[key], bool):
                raise BusConfigError(f'servo_bus.{key}', f'{section[key]!r} must be true/false')
            values[key] = section[key]
    if 'ram_init' in section:
        init = section['ram_init']
        if not isinstance(init, Mapping):
            raise BusConfigError('servo_bus.ram_init', 'must be a mapping register: value')
        for name, value in init.items():
            try:
                reg = hx.register(str(name))
                reg.address(hx.Memory.RAM)
                if reg.read_only or reg.name in ('id', 'torque_control', 'status_error',
                                                 'status_detail'):
                    raise hx.HerkulexError(f'register {name!r} cannot be an init register')
                reg.encode(value)
            except hx.HerkulexError as error:
                raise BusConfigError(f'servo_bus.ram_init.{name}', str(error)) from None
        values['ram_init'] = dict(init)
    buses = section.get('buses')
    if not isinstance(buses, Mapping) or not buses:
        raise BusConfigError('servo_bus.buses', 'must be a mapping of bus name: '
                                                '{port, baud, servos}')
    out = []
    joints: Dict[str, str] = {}
    ports: Dict[str, str] = {}
    for name, bus in buses.items():
        key = f'servo_bus.buses.{name}'
        if not isinstance(bus, Mapping):
            raise BusConfigError(key, 'must be a mapping with port, baud, servos')
        check_keys(key, bus, ('port', 'baud', 'servos', 'latency'), BusConfigError)
        port = bus.get('port')
        if not isinstance(port, str) or not port:
            raise BusConfigError(f'{key}.port', 'missing (a serial port path)')
        if port in ports:
            raise BusConfigError(f'{key}.port', f'{port} is also the port of bus {ports[port]}')
        ports[port] = str(name)
        baud = bus.get('baud', 115200)
        try:
            hx.baud_code(baud)
        except hx.ValueRangeError:
            raise BusConfigError(f'{key}.baud', f'{baud!r} is not a servo baud rate '
                                 f'({", ".join(str(b) for b in hx.BAUD_RATES.values())})') \
                from None
        latency = _typed(f'{key}.latency', bus.get('latency', 0.0003), float, 0.0, 0.1)
        items = bus.get('servos')
        if not isinstance(items, Sequence) or isinstance(items, str) or not items:
            raise BusConfigError(f'{key}.servos', 'must be a non-empty list of servos')
        servos = []
        ids = set()
        for k, item in enumerate(items):
            servo = _load_servo(f'{key}.servos[{k}]', item)
            if servo.servo_id in ids:
                raise BusConfigError(f'{key}.servos[{k}].id',
                                     f'ID {servo.servo_id} appears twice on this bus')
            if servo.joint in joints:
                raise BusConfigError(f'{key}.servos[{k}].joint',
                                     f'{servo.joint!r} is already driven on bus '
                                     f'{joints[servo.joint]}')
            ids.add(servo.servo_id)
            joints[servo.joint] = str(name)
            servos.append(servo)
        if len(servos) > hx.MAX_S_JOG_TAGS:
            raise BusConfigError(f'{key}.servos', f'at most {hx.MAX_S_JOG_TAGS} servos per bus')
        out.append(BusConfig(str(name), port, int(baud), tuple(servos), latency))
    return DriverConfig(tuple(out), **values)


def load_bus_config_file(path: str) -> DriverConfig:
    """
    Read the driver configuration from a YAML file.

    :raises BusConfigError: the file cannot be read or is wrong.
    """
    return load_bus_config(load_yaml(path, lambda reason: BusConfigError('bus config', reason)))


# --- the wire budget ----------------------------------------------------------------------------


@dataclass(frozen=True)
class WireBudget:
    """
    What one line can carry per cycle (8N1, full duplex), from the frame sizes.

    :param servos: servos on the line.
    :param baud: [Bd]; :param period: cycle [s].
    :param jog_bytes: the S_JOG of every servo; :param request_bytes: a position read;
        :param reply_bytes: its reply.
    :param goal_every: a goal every this many cycles.
    :param goal_rate: goals per second [Hz].
    :param read_rate: position reads per second the wire allows (at most one per servo and
        cycle) [Hz].
    :param refresh_rate: reads per servo per second [Hz].
    """

    servos: int
    baud: int
    period: float
    jog_bytes: int
    request_bytes: int
    reply_bytes: int
    goal_every: int
    goal_rate: float
    read_rate: float
    refresh_rate: float

    @property
    def byte_time(self) -> float:
        """Return the wire time of a byte [s]."""
        return hx.byte_time(self.baud)


def jog_frame_size(servos: int) -> int:
    """Return the size of an S_JOG with ``servos`` tags [bytes]."""
    tags = tuple(hx.JogTag(k, 512) for k in range(servos))
    return hx.SJogRequest(0, tags).frame().size


def read_frame_sizes() -> Tuple[int, int]:
    """Return the sizes of a position read and of its reply [bytes]."""
    request = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, READ_LENGTH)
    return request.frame(0).size, request.reply_size


def wire_budget(servos: int, baud: int, period: float,
                min_refresh_rate: float = 20.0) -> WireBudget:
    """
    Return the goal and read rates one line allows, and the goal divider the driver uses.

    The goal goes every k-th cycle with the smallest k that leaves the request wire enough
    time to read every servo at ``min_refresh_rate`` (k = 1 when it fits); reads are limited by
    both wires: requests share theirs with the S_JOG, replies have theirs alone.

    :param servos: servos on the line.
    :param baud: line speed [Bd].
    :param period: cycle period [s].
    :param min_refresh_rate: [Hz].
    """
    bt = hx.byte_time(baud)
    jog = jog_frame_size(servos)
    request, reply = read_frame_sizes()

    def reads_per_cycle(k: int) -> float:
        tx = period - jog * bt / k
        return max(0.0, min(tx / (request * bt), period / (reply * bt), float(servos)))

    k = 1
    while k < 16 and (jog * bt / k > period
                      or reads_per_cycle(k) < min(servos, min_refresh_rate * servos * period)):
        k += 1
    reads = reads_per_cycle(k)
    return WireBudget(servos, baud, period, jog, request, reply, k, 1.0 / (k * period),
                      reads / period, reads / period / servos)


def goal_playtime(interval: float) -> Tuple[int, float]:
    """
    Return the playtime and the lead of goals sent every ``interval``.

    The playtime is the interval rounded to whole ticks plus one tick (ServoInvLead: playtime =
    period + lead, lead about one tick).

    :param interval: time between goals [s].
    :return: (playtime [ticks], lead [s]).
    """
    ticks = min(hx.MAX_PLAYTIME, max(1, round(interval / hx.TICK)) + 1)
    return ticks, ticks * hx.TICK - interval


# --- statistics ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServoFault:
    """
    Error flags that switched a servo's torque off.

    :param time: when [s, monotonic].
    :param joint: the servo's joint.
    :param servo_id: its ID.
    :param bus: its bus.
    :param error: the status error byte.
    """

    time: float
    joint: str
    servo_id: int
    bus: str
    error: int

    @property
    def flags(self) -> List[str]:
        """Return the flag names: 'overload', 'overheat', 'voltage', ..."""
        return hx.error_names(self.error)

    def describe(self) -> str:
        """Return e.g. 'joint11 (ID 11): overload (status error 0x10), torque off'."""
        return (f'{self.joint} (ID {self.servo_id}): {", ".join(self.flags)} '
                f'(status error 0x{self.error:02X}), torque off')


@dataclass
class ServoStatistics:
    """
    Counters of one servo.

    :param joint: its joint; :param servo_id: its ID; :param bus: its bus.
    :param reads: position reads answered.
    :param replies: replies received in time.
    :param timeouts: requests not answered in time.
    :param late_replies: replies that came after their timeout.
    :param latency_mean: mean time from request written to reply parsed [s].
    :param latency_max: the longest [s].
    :param last_error: last status error byte; :param last_detail: last status detail byte.
    :param lost: no answer (lost_after timeouts in a row).
    :param last_reply: when the last reply came [s, monotonic].
    """

    joint: str
    servo_id: int
    bus: str
    reads: int = 0
    replies: int = 0
    timeouts: int = 0
    late_replies: int = 0
    latency_mean: float = 0.0
    latency_max: float = 0.0
    last_error: int = 0
    last_detail: int = 0
    lost: bool = False
    last_reply: float = -math.inf


@dataclass
class BusStatistics:
    """
    Counters of one line.

    :param name: the bus; :param port: its port; :param connected: port open.
    :param cycles: cycles run; :param goals: S_JOG sent; :param reads: position reads sent.
    :param replies: replies in time; :param timeouts: requests not answered in time.
    :param late_replies: replies after their timeout; :param unexpected_replies: replies that
        match no request.
    :param checksum_errors, size_errors, command_errors, garbage_bytes: the parser's.
    :param bytes_out: bytes written; :param bytes_in: bytes read.
    :param reconnects: ports reopened.
    :param cpu_time: CPU time of the bus thread [s].
    :param elapsed: time since connect [s].
    :param tx_utilisation: share of the request wire in use.
    :param rx_utilisation: share of the reply wire in use.
    :param budget: the wire budget the thread works with.
    """

    name: str
    port: str
    connected: bool = False
    cycles: int = 0
    goals: int = 0
    reads: int = 0
    replies: int = 0
    timeouts: int = 0
    late_replies: int = 0
    unexpected_replies: int = 0
    checksum_errors: int = 0
    size_errors: int = 0
    command_errors: int = 0
    garbage_bytes: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    reconnects: int = 0
    cpu_time: float = 0.0
    elapsed: float = 0.0
    tx_utilisation: float = 0.0
    rx_utilisation: float = 0.0
    budget: Optional[WireBudget] = None


# --- the bus thread -----------------------------------------------------------------------------


@dataclass
class _Req:
    """A request an operation wants sent (expect: None, ('ack', cmd) or ('read', addr, len))."""

    frame: hx.Frame
    servo_id: Optional[int]
    expect: Optional[Tuple]
    reply_size: int = 0


@dataclass
class _Wait:
    """An operation pauses [s]."""

    seconds: float


_SENT = object()   # what a request without reply gives back to its operation

_T = TypeVar('_T')
#: an operation: yields what it wants sent (or a pause), is sent back the reply (None: none in
#: time, _SENT: sent, no reply expected) and returns the operation's result
_Steps = Generator[Union[_Req, _Wait], Any, _T]


@dataclass
class _Pending:
    """A request on the wire."""

    servo_id: int
    expect: Tuple
    sent: float
    deadline: float
    reply_size: int
    op: Optional['_Op'] = None
    until: float = 0.0

    def matches(self, reply: hx.Reply) -> bool:
        if self.expect[0] == 'read':
            return (isinstance(reply, hx.ReadReply) and reply.memory is self.expect[1]
                    and reply.address == self.expect[2] and len(reply.data) == self.expect[3])
        return isinstance(reply, hx.AckReply) and reply.command == self.expect[1]


class _Op:
    """A running operation: a generator yielding _Req/_Wait, its future, its priority."""

    def __init__(self, gen: _Steps[Any], future: concurrent.futures.Future, urgent: bool,
                 name: str) -> None:
        self.gen = gen
        self.future = future
        self.urgent = urgent
        self.name = name
        self.request: Optional[_Req] = None
        self.wake_at = -math.inf
        self.started = False


class _Servo:
    """What a bus thread knows of one servo."""

    def __init__(self, config: ServoConfig, index: int, slot: int, bus: str) -> None:
        self.config = config
        self.index = index      # in the bus joint arrays
        self.slot = slot        # in this line's goal array
        self.kind = config.kind
        self.stats = ServoStatistics(config.joint, config.servo_id, bus)
        self.status = hx.Status()
        self.torque_on = False
        self.torque_ops = 0
        self.torque_queued = 0
        self.torque_cmd = False
        self.consecutive_timeouts = 0
        self.lost = False
        self.read_cycle = -1
        self.error_streak = 0
        self.error_bits = 0
        self.fault: Optional[ServoFault] = None
        self.ack_policy = 1
        self.paused = 0
        self.measured = False
        self.counts = float('nan')
        self.resume = True
        self.sent_goal = float('nan')

    @property
    def servo_id(self) -> int:
        return self.config.servo_id


class BusWorker(threading.Thread):
    """
    The I/O thread of one line (see the module docstring for what it does each cycle).

    :param config: the line.
    :param driver: the driver's configuration.
    :param indices: index of each of the line's servos in the bus joint arrays.
    :param state: the shared measurement arrays (position, velocity, effort, stamp) and lock.
    :param clock: the time source.
    :param serial_factory: opens a port (default: ``serial.Serial``).
    """

    def __init__(self, config: BusConfig, driver: DriverConfig, indices: Sequence[int],
                 state: '_Shared', clock: Callable[[], float] = time.monotonic,
                 serial_factory: Optional[Callable[..., Any]] = None) -> None:
        super().__init__(name=f'servo-bus-{config.name}', daemon=True)
        self.config = config
        self.driver = driver
        self.clock = clock
        self.shared = state
        self.serial_factory = serial_factory or self._open_serial
        self.servos = [_Servo(s, i, k, config.name)
                       for k, (s, i) in enumerate(zip(config.servos, indices))]
        self.by_id = {s.servo_id: s for s in self.servos}
        self.stats = BusStatistics(config.name, config.port)
        self.budget = wire_budget(len(self.servos), config.baud, driver.period,
                                  driver.min_refresh_rate)
        self.stats.budget = self.budget
        self.byte_time = hx.byte_time(config.baud)
        request, reply = read_frame_sizes()
        self.read_request = hx.ReadRequest(hx.Memory.RAM, READ_ADDRESS, READ_LENGTH)
        self.read_sizes = (request, reply)
        # replies need request + latency + reaction before the next can be asked for
        cover = request * self.byte_time + config.latency + 0.0015
        # and while an S_JOG takes the request wire, the requests sent before it keep the
        # reply wire busy: as many in flight as replies fit in the S_JOG's time
        jog = self.budget.jog_bytes * self.byte_time
        replies = math.ceil((cover + jog) / (reply * self.byte_time))
        self.max_in_flight = int(min(32, max(3, replies + 1)))
        self.port: Any = None
        self.parser = hx.FrameParser(hx.REPLY_COMMANDS)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._lock = threading.Lock()
        self._ops_in: Deque[_Op] = deque()
        self._ops: List[_Op] = []
        self._goals: Optional[np.ndarray] = None
        self._goal_new = False
        self._playtime = goal_playtime(driver.period * self.budget.goal_every)[0]
        self._stopping = False
        self._stopping_goals = False
        self._ready = False          # positions known: goals may go out
        self._in_flight: Dict[int, _Pending] = {}
        # timed-out requests whose reply may still come, by (servo, expected reply)
        self._expired: Dict[Tuple[int, Tuple], _Pending] = {}
        self._tx_free = 0.0
        self._rx_free = 0.0
        self._cycle = 0
        self._cycle_start = -math.inf
        self._last_send = -math.inf
        self._op_issued_cycle = -1
        self._rr = 0
        self._reconnect_at = math.inf
        self._connected_at = clock()
        self.port_error = ''
        self.events: Deque[str] = deque(maxlen=100)

    # --- port ----------------------------------------------------------------------------------

    def _open_serial(self, port: str, baud: int) -> Any:
        handle = serial.Serial(port=port, baudrate=baud, timeout=0, write_timeout=0.5)
        try:
            handle.set_low_latency_mode(True)   # a pty has no such flag: the error is fine
        except (OSError, ValueError, AttributeError, serial.SerialException):
            pass
        return handle

    def open_port(self) -> None:
        """
        Open the port (called by connect: a failure is the caller's).

        :raises BusPortError: the port cannot be opened.
        """
        try:
            self.port = self.serial_factory(self.config.port, self.config.baud)
        except (serial.SerialException, OSError, ValueError) as error:
            raise BusPortError(self.config.name, self.config.port, str(error)) from None
        self.stats.connected = True
        self._connected_at = self.clock()

    def _port_lost(self, now: float, error: Exception) -> None:
        self.port_error = str(error) or type(error).__name__
        self.events.append(f'{now:.3f} port lost: {self.port_error}')
        try:
            self.port.close()
        except Exception:   # noqa: B902 - a dead port may fail in any way while closing
            pass
        self.port = None
        self.stats.connected = False
        self._ready = False
        self.parser.reset()
        in_flight, self._in_flight = self._in_flight, {}
        self._expired.clear()
        for pending in in_flight.values():
            if pending.op is not None:
                self._resume(pending.op, None, now)
        self._reconnect_at = now + self.driver.reconnect_interval

    def _try_reconnect(self, now: float) -> None:
        if now < self._reconnect_at:
            return
        try:
            self.port = self.serial_factory(self.config.port, self.config.baud)
        except (serial.SerialException, OSError, ValueError) as error:
            self.port_error = str(error)
            self._reconnect_at = now + self.driver.reconnect_interval
            return
        self._reconnect_at = math.inf
        self.stats.connected = True
        self.stats.reconnects += 1
        self.port_error = ''
        self._tx_free = self._rx_free = now
        self.events.append(f'{now:.3f} port reopened')
        for servo in self.servos:
            servo.resume = True
        self.submit(self._op_init_all(None), urgent=True, name='reconnect')

    # --- the caller's side ---------------------------------------------------------------------

    def wake(self) -> None:
        """Wake the thread up (never blocks; a full pipe already wakes it)."""
        try:
            _write_keeping_gil(self._wake_w, b'\0')
        except (BlockingIOError, OSError):
            pass

    def set_goals(self, counts: np.ndarray) -> None:
        """Hand over the goals of this line's servos [counts] (NaN: no goal)."""
        with self._lock:
            self._goals = counts
            self._goal_new = True
        self.wake()

    def submit(self, gen: _Steps[Any], urgent: bool = False,
               name: str = '') -> concurrent.futures.Future:
        """Queue an operation; return its future."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        op = _Op(gen, future, urgent, name)
        with self._lock:
            if self._stopping:
                future.set_exception(BusStoppedError(f'bus {self.config.name} is stopped'))
                return future
            self._ops_in.append(op)
        self.wake()
        return future

    def torque_done(self, servo: '_Servo') -> None:
        """Count a queued torque switch of ``servo`` as over (its future is done)."""
        with self._lock:
            servo.torque_queued -= 1

    def stop(self) -> None:
        """Ask the thread to end."""
        with self._lock:
            self._stopping = True
        self.wake()

    def stop_goals(self) -> None:
        """No more goals (disconnect)."""
        with self._lock:
            self._stopping_goals = True
            self._goals = None

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Serve the line until :meth:`stop`."""
        try:
            while True:
                with self._lock:
                    if self._stopping:
                        break
                try:
                    self._once()
                except Exception as error:   # noqa: B902 - the I/O thread must never die
                    self.events.append(f'{self.clock():.3f} internal error: {error!r}')
                    time.sleep(0.01)
                self.stats.cpu_time = time.thread_time()
        finally:
            self._finish()

    def _drain(self) -> None:
        """Wait for the replies (or timeouts) of the requests on the wire, a late grace too."""
        deadline = self.clock() + 1.0 + self.driver.late_grace
        while (self._in_flight or self._expired) and self.port is not None \
                and self.clock() < deadline:
            now = self.clock()
            try:
                ready, _, _ = select.select([self.port.fileno()], [], [],
                                            max(0.0, min(0.01, self._wake_time(now) - now)))
            except (OSError, ValueError) as error:
                self._port_lost(self.clock(), error)
                return
            now = self.clock()
            if ready:
                self._read(now)
            self._expire(now)

    def _finish(self) -> None:
        try:
            self._drain()
        except Exception as error:   # noqa: B902 - the thread ends anyway
            self.events.append(f'{self.clock():.3f} internal error: {error!r}')
        with self._lock:
            ops = list(self._ops_in) + self._ops
            self._ops_in.clear()
            self._ops = []
        for op in ops:
            if not op.future.done():
                op.future.set_exception(BusStoppedError(f'bus {self.config.name} stopped'))
        if self.port is not None:
            try:
                self.port.close()
            except Exception:   # noqa: B902 - closing a dead port may fail in any way
                pass
            self.port = None
        self.stats.connected = False
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _wake_time(self, now: float) -> float:
        times = [now + 0.05]
        for pending in self._in_flight.values():
            times.append(pending.deadline)
        for pending in self._expired.values():
            times.append(pending.until)
        for op in self._ops:
            if op.request is None and op.wake_at > -math.inf:   # a pause, not a reply wait
                times.append(op.wake_at)
        if self.port is None:
            times.append(self._reconnect_at)
        if self._last_send < now - 2 * self.driver.period:
            times.append(self._cycle_start + self.driver.period)   # idle cycles
        return min(times)

    def _once(self) -> None:
        now = self.clock()
        timeout = max(0.0, min(0.05, self._wake_time(now) - now))
        readers = [self._wake_r]
        if self.port is not None:
            readers.append(self.port.fileno())
        try:
            ready, _, _ = select.select(readers, [], [], timeout)
        except (OSError, ValueError) as error:
            if self.port is not None:
                self._port_lost(self.clock(), error)
            return
        now = self.clock()
        if self._wake_r in ready:
            try:
                while os.read(self._wake_r, 4096):
                    pass
            except BlockingIOError:
                pass
        if self.port is not None and self.port.fileno() in ready:
            self._read(now)
        if self.port is None:
            self._try_reconnect(now)
        self._take_ops(now)
        self._expire(now)
        self._start_cycle(now)
        self._run_ops(now)
        self._issue(self.clock())

    def _read(self, now: float) -> None:
        try:
            data = self.port.read(max(1, self.port.in_waiting))
        except (serial.SerialException, OSError, TypeError) as error:
            self._port_lost(now, error)
            return
        if not data:
            return
        self.stats.bytes_in += len(data)
        for frame in self.parser.feed(data):
            self._on_frame(frame, now)
        counters = self.parser.counters
        self.stats.checksum_errors = counters.checksum_errors
        self.stats.size_errors = counters.size_errors
        self.stats.command_errors = counters.command_errors
        self.stats.garbage_bytes = counters.garbage_bytes

    def _write(self, data: bytes, now: float) -> bool:
        try:
            self.port.write(data)
        except (serial.SerialException, OSError) as error:
            self._port_lost(now, error)
            return False
        self.stats.bytes_out += len(data)
        self._tx_free = max(now, self._tx_free) + len(data) * self.byte_time
        return True

    # --- cycles and goals ----------------------------------------------------------------------

    def _start_cycle(self, now: float) -> None:
        with self._lock:
            goals = self._goals if self._goal_new else None
            self._goal_new = False
            stopping = self._stopping_goals
        period = self.driver.period
        if goals is None:
            if now - self._last_send < 2 * period or now < self._cycle_start + period:
                return
            self._cycle += 1          # idle cycle: reads and operations only
            self._cycle_start = now
            self.stats.cycles += 1
            return
        self._last_send = now
        self._cycle += 1
        self._cycle_start = now
        self.stats.cycles += 1
        if stopping or self.port is None or not self._ready:
            return
        if self._cycle % self.budget.goal_every:
            return
        tags = []
        step = self.driver.resume_speed * period * self.budget.goal_every
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
            counts = int(round(goal))
            tags.append(hx.JogTag(servo.servo_id, counts))
        if not tags:
            return
        frame = hx.SJogRequest(self._playtime, tuple(tags)).frame(hx.BROADCAST_ID)
        if self._write(frame.encode(), now):
            self.stats.goals += 1

    def _next_jog(self) -> float:
        """Return when the next S_JOG will want the request wire."""
        period = self.driver.period
        k = self.budget.goal_every
        cycles = k - (self._cycle % k) if k > 1 else 1
        return self._cycle_start + cycles * period

    # --- requests ------------------------------------------------------------------------------

    def _issue(self, now: float) -> None:
        if self.port is None:
            return
        while len(self._in_flight) < self.max_in_flight:
            if not self._issue_one(now):
                break
            now = self.clock()

    def _line_slot(self, now: float, request: int, reply: int) -> Tuple[float, float]:
        bt = self.byte_time
        tx_end = max(now, self._tx_free) + request * bt
        if not reply:
            return tx_end, tx_end
        rx_start = max(tx_end + self.config.latency, self._rx_free, now)
        return tx_end, rx_start + reply * bt

    def _busy(self, servo_id: int, expect: Optional[Tuple] = None) -> bool:
        """
        Return whether a request (expecting ``expect``) cannot go to the servo now.

        One request per servo on the wire; after a timeout, no request that expects the same
        kind of reply until the late grace is over (its late reply would be taken for the new
        answer). Any other kind of request may go.
        """
        if servo_id in self._in_flight:
            return True
        return expect is not None and (servo_id, expect) in self._expired

    def _issue_one(self, now: float) -> bool:
        op = self._ready_op(urgent=True)
        if op is not None:
            return self._send_op(op, now)
        next_jog = self._next_jog()
        bt = self.byte_time
        request, reply = self.read_sizes
        op = self._ready_op(urgent=False)
        # one operation request per cycle goes out whatever the reads take
        if op is not None and self._op_issued_cycle != self._cycle:
            self._op_issued_cycle = self._cycle
            return self._send_op(op, now)
        reserve = 0.0
        if op is not None and op.request is not None:
            reserve = (op.request.frame.size + op.request.reply_size) * bt
        jog_bytes = self.budget.jog_bytes if (self._cycle + 1) % self.budget.goal_every == 0 \
            else 0
        spill = (jog_bytes + request) * bt + self.config.latency
        if self._cycle_start > -math.inf:
            n = len(self.servos)
            for k in range(n):
                servo = self.servos[(self._rr + k) % n]
                if servo.read_cycle == self._cycle or servo.paused \
                        or servo.servo_id in self._in_flight:
                    continue
                # after a lost read the other span (one byte more) asks again at once
                span = READ_SPANS[0] if not self._busy(servo.servo_id, READ_SPANS[0]) \
                    else READ_SPANS[1]
                if self._busy(servo.servo_id, span):
                    continue
                size = 11 + span[3]
                tx_end, rx_end = self._line_slot(now, request, size)
                if tx_end > next_jog - reserve or rx_end > next_jog + spill - reserve:
                    break
                self._rr = (self._rr + k + 1) % n
                servo.read_cycle = self._cycle
                frame = hx.ReadRequest(hx.Memory.RAM, span[2], span[3]).frame(servo.servo_id)
                self.stats.reads += 1
                return self._send(frame, servo.servo_id, span, size, now)
        # _ready_op returns only an operation with a request
        if op is not None and op.request is not None:
            tx_end, _ = self._line_slot(now, op.request.frame.size, op.request.reply_size)
            if tx_end <= next_jog:
                return self._send_op(op, now)
        return False

    def _ready_op(self, urgent: bool) -> Optional[_Op]:
        for op in self._ops:
            if op.urgent == urgent and op.request is not None and \
                    (op.request.servo_id is None
                     or not self._busy(op.request.servo_id, op.request.expect)):
                return op
        return None

    def _send(self, frame: hx.Frame, servo_id: Optional[int], expect: Optional[Tuple],
              reply_size: int, now: float, op: Optional[_Op] = None) -> bool:
        tx_end, rx_end = self._line_slot(now, frame.size, reply_size if expect else 0)
        if not self._write(frame.encode(), now):
            return False
        if expect is not None:
            assert servo_id is not None  # only a request to one servo expects a reply
            self._rx_free = rx_end
            self._in_flight[servo_id] = _Pending(servo_id, expect, now,
                                                 rx_end + self.driver.timeout, reply_size, op)
        return True

    def _send_op(self, op: _Op, now: float) -> bool:
        request = op.request
        assert request is not None  # _ready_op returns only an operation with a request
        op.request = None
        if not self._send(request.frame, request.servo_id, request.expect, request.reply_size,
                          now, op):
            op.request = request if self.port is not None else None
            if self.port is None:
                self._resume(op, None, now)
            return False
        if request.expect is None:
            self._resume(op, _SENT, now)
        return True

    def _expire(self, now: float) -> None:
        for servo_id, pending in list(self._in_flight.items()):
            if now > pending.deadline:
                del self._in_flight[servo_id]
                pending.until = now + self.driver.late_grace
                self._expired[(servo_id, pending.expect)] = pending
                self.stats.timeouts += 1
                servo = self.by_id.get(servo_id)
                if servo is not None:
                    servo.stats.timeouts += 1
                    servo.consecutive_timeouts += 1
                    if servo.consecutive_timeouts >= self.driver.lost_after and not servo.lost:
                        servo.lost = True
                        servo.stats.lost = True
                        self.events.append(f'{now:.3f} {servo.config.joint} (ID {servo_id}) lost')
                if pending.op is not None:
                    self._resume(pending.op, None, now)
        for key, pending in list(self._expired.items()):
            if now > pending.until:
                del self._expired[key]

    # --- replies -------------------------------------------------------------------------------

    def _on_frame(self, frame: hx.Frame, now: float) -> None:
        try:
            reply = hx.decode_reply(frame)
        except hx.FrameError:
            self.stats.unexpected_replies += 1
            return
        servo_id = reply.servo_id
        pending = self._in_flight.get(servo_id)
        servo = self.by_id.get(servo_id)
        if pending is None or not pending.matches(reply):
            expired = [key for key, p in self._expired.items()
                       if key[0] == servo_id and p.matches(reply)]
            if expired:
                del self._expired[expired[0]]
                self.stats.late_replies += 1
                if servo is not None:
                    servo.stats.late_replies += 1
            else:
                self.stats.unexpected_replies += 1
            return
        del self._in_flight[servo_id]
        # the reply wire is at least this late: later replies will be too
        # (less the delivery delay of the port: a USB adapter hands bytes over in packets)
        backlog = sum(p.reply_size for p in self._in_flight.values()) * self.byte_time
        self._rx_free = max(self._rx_free, now - DELIVERY_SLACK + backlog)
        self.stats.replies += 1
        if servo is not None:
            self._servo_reply(servo, reply, now, now - pending.sent, pending.expect in READ_SPANS)
        if pending.op is not None:
            self._resume(pending.op, reply, now)

    def _servo_reply(self, servo: _Servo, reply: hx.Reply, now: float, latency: float,
                     position_read: bool) -> None:
        stats = servo.stats
        stats.replies += 1
        stats.latency_mean += (latency - stats.latency_mean) / stats.replies
        stats.latency_max = max(stats.latency_max, latency)
        stats.last_reply = now
        if servo.lost:
            self.events.append(f'{now:.3f} {servo.config.joint} (ID {servo.servo_id}) answers '
                               'again')
        servo.lost = stats.lost = False
        servo.consecutive_timeouts = 0
        if position_read and isinstance(reply, hx.ReadReply):
            stats.reads += 1
            self._measurement(servo, reply, now)
        self._status(servo, reply.status, now)

    def _measurement(self, servo: _Servo, reply: hx.ReadReply, now: float) -> None:
        try:
            counts = reply.value('calibrated_position') & 0x3FF
            differential = reply.value('differential_position')
            pwm = reply.value('pwm')
        except hx.UnknownRegisterError:
            return
        kind = servo.kind
        config = servo.config
        servo.counts = float(counts)
        servo.measured = True
        position = config.servo_to_joint(kind.position_to_rad(counts))
        velocity = config.direction * kind.velocity_to_rad_s(differential)
        effort = config.direction * kind.pwm_to_torque(pwm)
        self.shared.store(servo.index, position, velocity, effort, now)

    def _status(self, servo: _Servo, status: hx.Status, now: float) -> None:
        servo.status = status
        servo.stats.last_error = status.error
        servo.stats.last_detail = status.detail
        if not servo.torque_ops and not servo.torque_queued:
            servo.torque_on = status.motor_on
        faults = status.error & self.driver.error_mask
        if not faults:
            servo.error_streak = 0
            return
        # the same flags in consecutive replies (a single reply could be a line accident)
        servo.error_streak = servo.error_streak + 1 if faults == servo.error_bits else 1
        servo.error_bits = faults
        latched = servo.fault.error if servo.fault is not None else 0
        if servo.error_streak >= self.driver.error_persistence and faults & ~latched:
            fault = ServoFault(now, servo.config.joint, servo.servo_id, self.config.name,
                               faults | latched)
            servo.fault = fault
            self.shared.add_fault(fault)
            self.events.append(f'{now:.3f} {fault.describe()}')
            servo.torque_cmd = False
            self.submit(self._op_torque(servo, False, retries=10), urgent=True,
                        name='fault torque off')

    # --- operations ----------------------------------------------------------------------------

    def _take_ops(self, now: float) -> None:
        with self._lock:
            while self._ops_in:
                op = self._ops_in.popleft()
                if op.urgent:
                    self._ops.insert(0, op)
                else:
                    self._ops.append(op)
        for op in self._ops:
            if not op.started:
                op.started = True
                self._resume(op, None, now, first=True)

    def _run_ops(self, now: float) -> None:
        for op in list(self._ops):
            if op.request is None and not op.future.done() and op.wake_at <= now \
                    and op.wake_at > -math.inf:
                op.wake_at = -math.inf
                self._resume(op, None, now)

    def _resume(self, op: _Op, value: Any, now: float, first: bool = False) -> None:
        try:
            item = op.gen.send(None if first else value)
        except StopIteration as stop:
            self._done(op)
            op.future.set_result(stop.value)
            return
        except Exception as error:   # noqa: B902 - an operation's error goes to its future
            self._done(op)
            op.future.set_exception(error)
            return
        if isinstance(item, _Wait):
            op.request = None
            op.wake_at = now + item.seconds
        else:
            op.request = item
            op.wake_at = -math.inf

    def _done(self, op: _Op) -> None:
        if op in self._ops:
            self._ops.remove(op)

    def _transact(self, frame: hx.Frame, servo_id: int, expect: Tuple, reply_size: int,
                  what: str, retries: Optional[int] = None) -> _Steps[hx.Reply]:
        tries = self.driver.retries if retries is None else retries
        for _ in range(tries):
            reply = yield _Req(frame, servo_id, expect, reply_size)
            if reply is not None:
                return reply
        servo = self.by_id.get(servo_id)
        raise ServoTimeoutError(servo.config.joint if servo else '', servo_id, what)

    def _read_span(self, servo_id: int, memory: hx.Memory, address: int, length: int,
                   what: str, retries: Optional[int] = None) -> _Steps[hx.ReadReply]:
        request = hx.ReadRequest(memory, address, length)
        reply = yield from self._transact(request.frame(servo_id), servo_id,
                                          ('read', memory, address, length),
                                          request.reply_size, what, retries)
        assert isinstance(reply, hx.ReadReply)  # a read's pending request takes only these
        return reply

    def _write_span(self, servo: _Servo, memory: hx.Memory, address: int, data: bytes,
                    what: str, retries: Optional[int] = None) -> _Steps[Optional[hx.Reply]]:
        frame = hx.WriteRequest(memory, address, data).frame(servo.servo_id)
        if servo.ack_policy >= 2:
            command = hx.Command.EEP_WRITE if memory is hx.Memory.EEP else hx.Command.RAM_WRITE
            return (yield from self._transact(frame, servo.servo_id, ('ack', command), 9, what,
                                              retries))
        yield _Req(frame, servo.servo_id, None)
        return None

    def _write_reg(self, servo: _Servo, name: str, value: int,
                   memory: hx.Memory = hx.Memory.RAM, retries: Optional[int] = None
                   ) -> _Steps[Optional[hx.Reply]]:
        reg = hx.register(name)
        return (yield from self._write_span(servo, memory, reg.address(memory),
                                            reg.encode(value), f'write {name} = {value}',
                                            retries))

    def _read_position(self, servo: _Servo) -> _Steps[hx.ReadReply]:
        reply = yield from self._read_span(servo.servo_id, hx.Memory.RAM, READ_ADDRESS,
                                           READ_LENGTH, 'a position read')
        return reply

    def _op_init(self, servo: _Servo, torque: Optional[bool]) -> _Steps[hx.Status]:
        """Read the position, set the init registers, optionally switch the torque."""
        yield from self._read_position(servo)
        for name, value in self.driver.ram_init.items():
            if name == 'ack_policy':
                # the policy in force decides about the reply: write blind, read back
                frame = hx.write_register(servo.servo_id, name, value)
                yield _Req(frame, servo.servo_id, None)
                reg = hx.register(name)
                reply = yield from self._read_span(servo.servo_id, hx.Memory.RAM,
                                                   reg.address(hx.Memory.RAM), 1,
                                                   'the ACK policy read-back')
                servo.ack_policy = reply.data[0]
                if servo.ack_policy != value:
                    raise SerialBusError(f'servo {servo.config.joint!r} keeps ACK policy '
                                         f'{servo.ack_policy} (wrote {value})')
            else:
                yield from self._write_reg(servo, name, value)
        if torque is not None:
            yield from self._op_torque(servo, torque)
        reply = yield from self._read_position(servo)
        return reply.status

    def _op_init_all(self, torque: Optional[bool]) -> _Steps[List[_Servo]]:
        """Init every servo of the line (after a reconnection: torque untouched)."""
        failed = []
        for servo in self.servos:
            servo.resume = True
            try:
                yield from self._op_init(servo, torque)
            except SerialBusError:
                failed.append(servo)
        self._ready = True
        return failed

    def _op_torque(self, servo: _Servo, on: bool, mode: Optional[int] = None,
                   retries: Optional[int] = None) -> _Steps[bool]:
        value = (hx.TORQUE_ON if on else hx.TORQUE_FREE) if mode is None else mode
        servo.torque_ops += 1
        servo.torque_cmd = bool(on)
        try:
            if on:
                servo.resume = True
                servo.sent_goal = float('nan')
            yield from self._write_reg(servo, 'torque_control', value, retries=retries)
            if servo.ack_policy < 2:
                yield from self._transact(hx.StatRequest().frame(servo.servo_id),
                                          servo.servo_id, ('ack', hx.Command.STAT), 9,
                                          'STAT after torque', retries)
        finally:
            servo.torque_ops -= 1
        servo.torque_on = value == hx.TORQUE_ON
        return servo.torque_on

    def _op_clear(self, servo: _Servo) -> _Steps[hx.Status]:
        """Clear errors (fact sheet 10.1); the torque stays as it is."""
        yield from self._write_span(servo, hx.Memory.RAM, 48, b'\x00\x00', 'clear errors')
        reply = yield from self._transact(hx.StatRequest().frame(servo.servo_id), servo.servo_id,
                                          ('ack', hx.Command.STAT), 9, 'STAT after clear')
        servo.error_streak = 0
        servo.error_bits = 0
        remaining = reply.status.error & self.driver.error_mask
        if remaining:
            raise ServoStatusError(servo.config.joint, servo.servo_id, remaining)
        servo.fault = None
        self.shared.clear_fault(servo.config.joint)
        return reply.status

    def _op_reboot(self, servo: _Servo, reinit: bool) -> _Steps[hx.Status]:
        """Reboot (fact sheet 10.2): REBOOT, wait, re-init, restore the torque."""
        torque = servo.torque_cmd
        servo.paused += 1
        try:
            frame = hx.RebootRequest().frame(servo.servo_id)
            if servo.ack_policy >= 2:
                yield from self._transact(frame, servo.servo_id, ('ack', hx.Command.REBOOT), 9,
                                          'REBOOT')
            else:
                yield _Req(frame, servo.servo_id, None)
            servo.ack_policy = 1
            servo.torque_on = False
            yield _Wait(self.driver.reboot_delay)
            servo.fault = None
            servo.error_streak = 0
            self.shared.clear_fault(servo.config.joint)
            if reinit:
                status = yield from self._op_init(servo, torque)
            else:
                reply = yield from self._read_position(servo)
                status = reply.status
        finally:
            servo.paused -= 1
        return status

    def _op_mode(self, servo: _Servo, speed: bool) -> _Steps[str]:
        """Switch the control mode (fact sheet 10.3): torque off, JOG-invalid tag, torque."""
        torque = servo.torque_cmd
        servo.paused += 1
        try:
            yield from self._op_torque(servo, False)
            counts = int(servo.counts) if math.isfinite(servo.counts) else servo.kind.centre
            tag = hx.JogTag(servo.servo_id, 0 if speed else counts, speed, invalid=True)
            frame = hx.IJogRequest((tag,)).frame(servo.servo_id)
            if servo.ack_policy >= 2:
                yield from self._transact(frame, servo.servo_id, ('ack', hx.Command.I_JOG), 9,
                                          'the mode I_JOG')
            else:
                yield _Req(frame, servo.servo_id, None)
            yield _Wait(2 * hx.TICK)   # a JOG acts at the servo's next tick
            reg = hx.register('current_control_mode')
            reply = yield from self._read_span(servo.servo_id, hx.Memory.RAM,
                                               reg.address(hx.Memory.RAM), 1,
                                               'the control mode read')
            if torque:
                yield from self._op_torque(servo, True)
        finally:
            servo.paused -= 1
        return 'speed' if reply.data[0] & 1 else 'position'

    def _op_read_register(self, servo_id: int, name: str, memory: hx.Memory) -> _Steps[int]:
        reg = hx.register(name)
        reply = yield from self._read_span(servo_id, memory, reg.address(memory), reg.size,
                                           f'a read of {name}')
        return reg.decode(reply.data)

    def _op_write_register(self, servo: _Servo, name: str, value: int,
                           memory: hx.Memory) -> _Steps[int]:
        reg = hx.register(name)
        if reg.read_only:
            raise hx.HerkulexError(f'register {name!r} is read-only')
        if name == 'torque_control' and memory is hx.Memory.RAM:
            return (yield from self._op_torque(servo, value == hx.TORQUE_ON, mode=value))
        yield from self._write_reg(servo, name, value, memory)
        if name == 'ack_policy' and memory is hx.Memory.RAM:
            servo.ack_policy = value
        return value

    def _op_scan(self, ids: Sequence[int], tries: int) -> _Steps[List[Tuple[int, str]]]:
        """STAT each ID; read the model byte of those that answer."""
        found = []
        for servo_id in ids:
            try:
                yield from self._transact(hx.StatRequest().frame(servo_id), servo_id,
                                          ('ack', hx.Command.STAT), 9, 'STAT', retries=tries)
            except ServoTimeoutError:
                continue
            try:
                model = yield from self._read_span(servo_id, hx.Memory.EEP, 0, 1, 'the model',
                                                   retries=tries)
                kind = hx.servo_type_of(model.data[0])
                found.append((servo_id, kind.name if kind else f'model 0x{model.data[0]:02X}'))
            except ServoTimeoutError:
                found.append((servo_id, 'unknown'))
        return found

    def _op_shutdown(self, value: Optional[int]) -> _Steps[List[str]]:
        """Apply the shutdown torque to every servo that answers."""
        done: List[str] = []
        if value is None:
            return done
        for servo in self.servos:
            try:
                yield from self._op_torque(servo, value == hx.TORQUE_ON, mode=value)
                done.append(servo.config.joint)
            except SerialBusError:
                pass
        return done


# --- shared state -------------------------------------------------------------------------------


class _Shared:
    """The measurement arrays and fault log that the bus threads fill and the caller reads."""

    def __init__(self, n: int) -> None:
        self.lock = threading.Lock()
        self.position = np.zeros(n)
        self.velocity = np.zeros(n)
        self.effort = np.zeros(n)
        self.stamp = 0.0
        self.stamps = np.zeros(n)
        self.faults: List[ServoFault] = []
        self.active_faults: Dict[str, ServoFault] = {}

    def store(self, index: int, position: float, velocity: float, effort: float,
              stamp: float) -> None:
        with self.lock:
            self.position[index] = position
            self.velocity[index] = velocity
            self.effort[index] = effort
            self.stamps[index] = stamp
            self.stamp = max(self.stamp, stamp)

    def add_fault(self, fault: ServoFault) -> None:
        with self.lock:
            self.faults.append(fault)
            self.active_faults[fault.joint] = fault

    def clear_fault(self, joint: str) -> None:
        with self.lock:
            self.active_faults.pop(joint, None)


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


def _torque_done(worker: BusWorker, servo: _Servo
                 ) -> Callable[[concurrent.futures.Future], None]:
    """Return the callback that counts a torque switch of ``servo`` as over once it is done."""
    return lambda _: worker.torque_done(servo)


# --- the driver ---------------------------------------------------------------------------------


class SerialServoBus(ServoBus):
    """
    HerkuleX servos on serial lines, one I/O thread per line (see the module docstring).

    :param config: the driver configuration.
    :param joints: the bus joints in the order of the arrays of send/receive (default: the
        configuration's order); each must have exactly one servo.
    :param clock: the time source of the threads.
    :param serial_factory: ``f(port, baud)`` opening a port (default: ``serial.Serial``).
    :raises BusConfigError: joints without servo or servos without joint.
    """

    def __init__(self, config: DriverConfig, joints: Optional[Sequence[str]] = None,
                 clock: Callable[[], float] = time.monotonic,
                 serial_factory: Optional[Callable[..., Any]] = None) -> None:
        configured = config.joints
        joints = list(configured if joints is None else joints)
        missing = [j for j in joints if j not in configured]
        if missing:
            raise BusConfigError('servo_bus.buses', f'no servo drives joint(s) '
                                                    f'{", ".join(missing)}')
        extra = [j for j in configured if j not in joints]
        if extra:
            raise BusConfigError('servo_bus.buses', f'servos of joint(s) {", ".join(extra)} '
                                                    'are not joints of this bus')
        super().__init__(joints)
        self.config = config
        self.clock = clock
        self.serial_factory = serial_factory
        self._index = {j: i for i, j in enumerate(self.joints)}
        n = len(self.joints)
        self._shared = _Shared(n)
        self._workers: List[BusWorker] = []
        self._servo_of: Dict[str, Tuple[BusWorker, _Servo]] = {}
        self._connected = False
        self._bus_arrays: List[Tuple[Any, ...]] = []

    # --- lifecycle -----------------------------------------------------------------------------

    def _make_workers(self) -> None:
        self._workers = []
        self._servo_of = {}
        self._bus_arrays = []
        for bus in self.config.buses:
            indices = [self._index[s.joint] for s in bus.servos]
            worker = BusWorker(bus, self.config, indices, self._shared, self.clock,
                               self.serial_factory)
            self._workers.append(worker)
            for servo in worker.servos:
                self._servo_of[servo.config.joint] = (worker, servo)
            interval = self.config.period * worker.budget.goal_every
            lead = goal_playtime(interval)[1]
            idx = np.array(indices, dtype=np.intp)
            scale = np.array([s.kind.rad_per_count for s in bus.servos])
            base = np.array([s.kind.centre + s.offset / s.kind.rad_per_count
                             for s in bus.servos])
            gain = np.array([float(s.direction) for s in bus.servos]) / scale
            low = np.array([float(s.min_position) for s in bus.servos])
            high = np.array([float(s.max_position) for s in bus.servos])
            self._bus_arrays.append((worker, idx, base, gain, low, high,
                                     np.full(len(indices), lead)))

    def connect(self) -> None:
        """
        Open the ports, read every servo's position, init the servos, start the cycle.

        :raises BusPortError: a port cannot be opened.
        :raises ServoNotFoundError: servos did not answer (with ``require_all_servos``).
        """
        if self._connected:
            return
        self._make_workers()
        opened = []
        try:
            for worker in self._workers:
                worker.open_port()
                opened.append(worker)
        except BusPortError:
            for worker in opened:
                worker.port.close()
            raise
        for worker in self._workers:
            worker.start()
        torque = self.config.torque_on_connect
        futures = []
        for worker in self._workers:
            for servo in worker.servos:
                servo.torque_cmd = torque
                futures.append((worker, servo, worker.submit(worker._op_init(servo, torque),
                                                             name='connect')))
        deadline = self.clock() + self.config.connect_timeout
        missing = []
        for worker, servo, future in futures:
            try:
                future.result(timeout=max(0.0, deadline - self.clock()))
            except (SerialBusError, concurrent.futures.TimeoutError, hx.HerkulexError):
                missing.append((servo.config.joint, worker.config.name, servo.servo_id))
                servo.lost = servo.stats.lost = True
        if missing and self.config.require_all_servos:
            self._shutdown(self.config.shutdown_torque)
            raise ServoNotFoundError(missing)
        for worker in self._workers:
            worker._ready = True
        self._connected = True

    def disconnect(self) -> None:
        """
        Stop the goals, apply ``shutdown_torque`` to the servos, stop the threads, close ports.

        Waits at most about a second for the torque writes. Servos that do not answer keep
        whatever they had.
        """
        if not self._workers:
            return
        self._shutdown(self.config.shutdown_torque)
        self._connected = False

    def _shutdown(self, policy: str) -> None:
        value = SHUTDOWN_TORQUE[policy]
        for worker in self._workers:
            worker.stop_goals()
        futures = [w.submit(w._op_shutdown(value), urgent=True, name='shutdown')
                   for w in self._workers if w.is_alive()]
        for future in futures:
            try:
                future.result(timeout=1.0)
            except (SerialBusError, concurrent.futures.TimeoutError):
                pass
        for worker in self._workers:
            worker.stop()
        for worker in self._workers:
            if worker.is_alive():
                worker.join(timeout=2.0)

    @property
    def connected(self) -> bool:
        """Return whether connect() succeeded and disconnect() was not called."""
        return self._connected

    # --- the cycle -----------------------------------------------------------------------------

    def send(self, now: float, position: np.ndarray, velocity: np.ndarray) -> None:
        """
        Hand the goals to the bus threads (arrays in :attr:`joints` order); never blocks.

        :param now: cycle time [s].
        :param position: [rad]; :param velocity: [rad/s] (for the goal lead).
        """
        if not self._connected:
            return
        position = np.asarray(position, dtype=float)
        velocity = np.asarray(velocity, dtype=float)
        for worker, idx, base, gain, low, high, lead in self._bus_arrays:
            counts = base + gain * (position[idx] + velocity[idx] * lead)
            np.clip(counts, low, high, out=counts)   # NaN stays NaN: no goal for that servo
            worker.set_goals(counts)

    def receive(self, now: float) -> BusState:
        """Return the newest measurement (lost servos keep their last); never blocks."""
        shared = self._shared
        with shared.lock:
            return BusState(shared.position.copy(), shared.velocity.copy(),
                            shared.effort.copy(), shared.stamp, shared.stamps.copy())

    def set_torque(self, joints: Iterable[str], on: bool) -> None:
        """
        Switch servos on (hold where they are) or off (free); never blocks.

        The writes are queued; :meth:`torque` reports the commanded state meanwhile.

        :raises UnknownJointError: joints that are not on this bus.
        """
        self.set_torque_async(joints, on)

    def set_torque_async(self, joints: Iterable[str], on: bool) -> concurrent.futures.Future:
        """
        Switch servos on or off; return a future of the list of new torque states.

        :raises UnknownJointError: joints that are not on this bus.
        """
        targets = self._targets(joints)
        futures = []
        for worker, servo in targets:
            servo.torque_cmd = bool(on)
            with worker._lock:
                servo.torque_queued += 1     # torque() reports the command until it is done
            future = worker.submit(worker._op_torque(servo, bool(on)), name='torque')
            future.add_done_callback(_torque_done(worker, servo))
            futures.append(future)
        return gather(futures)

    def torque(self) -> np.ndarray:
        """Return torque on per joint (commanded while a switch is pending, else reported)."""
        out = np.zeros(len(self.joints), dtype=bool)
        for joint, (_, servo) in self._servo_of.items():
            on = servo.torque_cmd if servo.torque_ops or servo.torque_queued \
                else servo.torque_on
            out[self._index[joint]] = on and not servo.lost
        return out

    def status(self) -> List[ServoStatus]:
        """Return the status of every servo (lost, port lost, faults, packet problems)."""
        out = []
        for joint in self.joints:
            if joint not in self._servo_of:
                out.append(ServoStatus(joint, False, False, 'not connected'))
                continue
            worker, servo = self._servo_of[joint]
            torque = (servo.torque_cmd if servo.torque_ops or servo.torque_queued
                      else servo.torque_on) and not servo.lost
            if not self._connected:
                out.append(ServoStatus(joint, False, False, 'disconnected (shutdown torque: '
                                       f'{self.config.shutdown_torque})'))
            elif worker.port is None:
                out.append(ServoStatus(joint, torque, False,
                                       f'port lost: {worker.port_error or "closed"}'))
            elif servo.lost or servo.fault is not None:
                parts = []
                if servo.lost:
                    ago = self.clock() - servo.stats.last_reply
                    since = f', last answer {ago:.1f} s ago' if math.isfinite(ago) else ''
                    parts.append(f'no answer (lost, ID {servo.servo_id}{since})')
                if servo.fault is not None:
                    parts.append(servo.fault.describe())
                out.append(ServoStatus(joint, torque, False, '; '.join(parts)))
            elif servo.status.error:
                out.append(ServoStatus(joint, torque, True, servo.status.describe()))
            else:
                out.append(ServoStatus(joint, torque, True, 'ok'))
        return out

    # --- operations ----------------------------------------------------------------------------

    def _targets(self, joints: Optional[Iterable[str]]) -> List[Tuple[BusWorker, _Servo]]:
        if not self._servo_of:
            raise BusStoppedError('the serial bus is not connected')
        if joints is None:
            return [self._servo_of[j] for j in self.joints]
        joints = list(joints)
        unknown = [j for j in joints if j not in self._servo_of]
        if unknown:
            raise UnknownJointError(unknown, 'serial servo bus')
        return [self._servo_of[j] for j in joints]

    def _one(self, joint: str) -> Tuple[BusWorker, _Servo]:
        return self._targets([joint])[0]

    def clear_errors(self, joints: Optional[Iterable[str]] = None) -> concurrent.futures.Future:
        """
        Clear the status of servos (all by default); future of their statuses.

        Fails with :class:`ServoStatusError` if a servo still reports errors. The torque stays
        off where the torque policy or a fault released it: switch it on after clearing.
        """
        return gather([w.submit(w._op_clear(s), name='clear') for w, s in self._targets(joints)])

    def reboot(self, joints: Optional[Iterable[str]] = None,
               reinit: bool = True) -> concurrent.futures.Future:
        """
        Reboot servos (all by default), wait, re-init and restore the commanded torque.

        :return: future of their statuses.
        """
        return gather([w.submit(w._op_reboot(s, reinit), name='reboot')
                       for w, s in self._targets(joints)])

    def set_control_mode(self, joint: str, mode: str) -> concurrent.futures.Future:
        """
        Switch a servo to 'position' or 'speed' control; future of the mode read back.

        :raises ValueError: another mode name.
        """
        if mode not in ('position', 'speed'):
            raise ValueError(f'mode {mode!r} must be position or speed')
        worker, servo = self._one(joint)
        return worker.submit(worker._op_mode(servo, mode == 'speed'), name='mode')

    def read_register(self, joint: str, name: str,
                      memory: hx.Memory = hx.Memory.RAM) -> concurrent.futures.Future:
        """
        Read a register of a servo; future of its value.

        :raises UnknownRegisterError: unknown name (at once).
        """
        reg = hx.register(name)
        reg.address(memory)
        worker, servo = self._one(joint)
        return worker.submit(worker._op_read_register(servo.servo_id, name, memory),
                             name='read')

    def write_register(self, joint: str, name: str, value: int,
                       memory: hx.Memory = hx.Memory.RAM) -> concurrent.futures.Future:
        """
        Write a register of a servo (EEP values act after a reboot); future of the value.

        :raises UnknownRegisterError, ValueRangeError: at once.
        """
        reg = hx.register(name)
        reg.address(memory)
        reg.encode(value)
        worker, servo = self._one(joint)
        return worker.submit(worker._op_write_register(servo, name, value, memory),
                             name='write')

    def scan(self, bus: Optional[str] = None, ids: Optional[Iterable[int]] = None,
             tries: int = 1) -> concurrent.futures.Future:
        """
        Ask IDs (default 0..253) on a bus (default: each) with STAT; future of (id, model).

        :raises BusConfigError: unknown bus name.
        """
        workers = self._workers if bus is None else [w for w in self._workers
                                                     if w.config.name == bus]
        if not workers:
            raise BusConfigError('bus', f'unknown bus {bus!r}')
        id_list = list(range(hx.MAX_ID + 1) if ids is None else ids)
        return gather([w.submit(w._op_scan(id_list, tries), name='scan') for w in workers])

    # --- reports -------------------------------------------------------------------------------

    def faults(self) -> List[ServoFault]:
        """Return every fault that switched a servo off, oldest first."""
        with self._shared.lock:
            return list(self._shared.faults)

    def active_faults(self) -> Dict[str, ServoFault]:
        """Return the faults not cleared yet, by joint."""
        with self._shared.lock:
            return dict(self._shared.active_faults)

    def statistics(self) -> Tuple[List[BusStatistics], List[ServoStatistics]]:
        """Return snapshots of the counters of every bus and every servo."""
        buses, servos = [], []
        now = self.clock()
        for worker in self._workers:
            stats = replace(worker.stats)
            stats.elapsed = now - worker._connected_at
            if stats.elapsed > 0:
                bt = worker.byte_time
                stats.tx_utilisation = stats.bytes_out * bt / stats.elapsed
                stats.rx_utilisation = stats.bytes_in * bt / stats.elapsed
            buses.append(stats)
            servos += [replace(s.stats) for s in worker.servos]
        return buses, servos

    def events(self) -> List[str]:
        """Return the recent events of every bus (port lost, servo lost, faults)."""
        return [e for w in self._workers for e in w.events]

    def bus_names(self) -> List[str]:
        """Return the names of the lines."""
        return [b.name for b in self.config.buses]
