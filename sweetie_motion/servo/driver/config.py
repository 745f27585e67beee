"""
The serial driver's configuration (YAML ``servo_bus``) and its errors.

::

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

Every key is checked by :func:`load_bus_config`; an error names the key
(``servo_bus.buses.leg12.servos[3].id: ...``).
"""

from dataclasses import dataclass, field
import math
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.parameters import out_of_range
from sweetie_motion.paths import check_keys, load_yaml
from sweetie_motion.servo import herkulex as hx

#: what :meth:`SerialServoBus.disconnect` leaves: the torque-control value, or None (keep)
SHUTDOWN_TORQUE = {'brake': hx.TORQUE_BRAKE, 'off': hx.TORQUE_FREE, 'keep': None}


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

    :param missing: (joint, bus, ID) of each.
    :param reasons: what each did not answer (after the list: it is long).
    """

    def __init__(self, missing: Sequence[Tuple[str, str, int]],
                 reasons: Sequence[str] = ()) -> None:
        self.joints = [j for j, _, _ in missing]
        self.missing = list(missing)
        listed = ', '.join(f'{j} (bus {b}, ID {i})' for j, b, i in missing)
        why = f' ({"; ".join(reasons)})' if reasons else ''
        super().__init__(f'servos did not answer: {listed}{why}')


class ServoStatusError(SerialBusError):
    """
    A servo still reports error flags (e.g. after clearing them).

    :param joint: the servo's joint.
    :param servo_id: its ID.
    :param error: the status error byte.
    :param checked_after: how long after clearing the status was read again [s] (0: at once).
    """

    def __init__(self, joint: str, servo_id: int, error: int, checked_after: float = 0.0) -> None:
        self.joint = joint
        self.servo_id = servo_id
        self.error = error
        self.flags = hx.error_names(error)
        later = (f' {checked_after:.2f} s after clearing (its next error check): the condition '
                 'persists') if checked_after else ''
        super().__init__(f'servo {joint!r} (ID {servo_id}) still reports '
                         f'{", ".join(self.flags)} (status error 0x{error:02X}){later}')


class BusStoppedError(SerialBusError):
    """The bus is not connected (an operation after disconnect or before connect)."""


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
    :param connect_timeout: time :meth:`connect` waits for the servos [s]: one that does not
        answer is asked again until then.
    :param retries: tries of an operation's request.
    :param resume_speed: goal speed limit after a (re)connection [rad/s].
    :param ram_init: RAM registers written at connect and after a reboot.
    :param reply_gap: the least silence between two replies on a line [s]: servos share the
        reply wire and do not listen to it, so a request goes out only when its reply cannot
        start before the previous one has ended plus this gap.
    :param delivery_slack: how late the ports may hand over received bytes [s] (a USB
        adapter's latency timer): after a reply of which nothing came, the next request waits
        this long beyond the reply's expected end.
    :param status_led: each servo's LED shows its state (green: torque on, blue: torque off,
        red: a fault); a written LED value stays until the servo reboots.
    :param priority: SCHED_FIFO priority of the line threads where the system allows it (0:
        as the thread that connects).
    :param operations_age_cost: what operations (a scan, register reads, ``servo status``,
        clearing) may add to the time between two reads of a servo on a line whose reads fill
        its wire [cycles]; the smaller, the slower the operations there
        (:func:`~sweetie_motion.servo.driver.wire.operations_share`).
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
    reply_gap: float = 0.0002
    delivery_slack: float = 0.002
    status_led: bool = True
    priority: int = 0
    operations_age_cost: float = 0.5

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
    'reply_gap': (float, 0.0, 0.01), 'delivery_slack': (float, 0.0, 0.1),
    'priority': (int, 0, 99), 'operations_age_cost': (float, 0.05, 100.0),
}


def _typed(key: str, value: Any, kind: type, low: float, high: float) -> Any:
    """Return ``value`` as ``kind`` within low..high, or raise naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BusConfigError(key, f'{value!r} is not a number')
    if kind is int and value != int(value):
        raise BusConfigError(key, f'{value!r} is not an integer')
    value = kind(value)
    if out_of_range(value, low, high):
        raise BusConfigError(key, f'{value} is outside {low}..{high}')
    return value


def _load_servo(key: str, item: object) -> ServoConfig:
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
        'buses', 'shutdown_torque', 'torque_on_connect', 'require_all_servos', 'ram_init',
        'status_led'}, BusConfigError)
    values = _driver_settings(section)
    if 'ram_init' in section:
        values['ram_init'] = _ram_init(section['ram_init'])
    return DriverConfig(_load_buses(section.get('buses')), **values)


def _driver_settings(section: Mapping[str, Any]) -> Dict[str, Any]:
    """Return the driver's numbers, shutdown policy and switches that ``section`` sets."""
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
    for key in ('torque_on_connect', 'require_all_servos', 'status_led'):
        if key in section:
            if not isinstance(section[key], bool):
                raise BusConfigError(f'servo_bus.{key}', f'{section[key]!r} must be true/false')
            values[key] = section[key]
    return values


def _ram_init(init: object) -> Dict[str, Any]:
    """Return the RAM registers written at connect, each checked writable and in range."""
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
    return dict(init)


def _load_buses(buses: object) -> Tuple[BusConfig, ...]:
    """Return the buses of ``servo_bus.buses``: no port and no joint on two of them."""
    if not isinstance(buses, Mapping) or not buses:
        raise BusConfigError('servo_bus.buses', 'must be a mapping of bus name: '
                                                '{port, baud, servos}')
    joints: Dict[str, str] = {}   # joint -> its bus
    ports: Dict[str, str] = {}    # port -> its bus
    return tuple(_load_bus(str(name), bus, ports, joints) for name, bus in buses.items())


def _load_bus(name: str, bus: object, ports: Dict[str, str], joints: Dict[str, str]
              ) -> BusConfig:
    """Return one bus; ``ports`` and ``joints`` (those of the buses before) gain its own."""
    key = f'servo_bus.buses.{name}'
    if not isinstance(bus, Mapping):
        raise BusConfigError(key, 'must be a mapping with port, baud, servos')
    check_keys(key, bus, ('port', 'baud', 'servos', 'latency'), BusConfigError)
    port = bus.get('port')
    if not isinstance(port, str) or not port:
        raise BusConfigError(f'{key}.port', 'missing (a serial port path)')
    if port in ports:
        raise BusConfigError(f'{key}.port', f'{port} is also the port of bus {ports[port]}')
    ports[port] = name
    baud = bus.get('baud', 115200)
    try:
        hx.baud_code(baud)
    except hx.ValueRangeError:
        raise BusConfigError(f'{key}.baud', f'{baud!r} is not a servo baud rate '
                             f'({", ".join(str(b) for b in hx.BAUD_RATES.values())})') \
            from None
    latency = _typed(f'{key}.latency', bus.get('latency', 0.0003), float, 0.0, 0.1)
    servos = _load_servos(name, bus.get('servos'), joints)
    return BusConfig(name, port, int(baud), servos, latency)


def _load_servos(bus: str, items: object, joints: Dict[str, str]) -> Tuple[ServoConfig, ...]:
    """Return the servos of one bus: IDs unique on it, joints on no other bus (``joints``)."""
    key = f'servo_bus.buses.{bus}.servos'
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        raise BusConfigError(key, 'must be a non-empty list of servos')
    servos = []
    ids = set()
    for k, item in enumerate(items):
        servo = _load_servo(f'{key}[{k}]', item)
        if servo.servo_id in ids:
            raise BusConfigError(f'{key}[{k}].id',
                                 f'ID {servo.servo_id} appears twice on this bus')
        if servo.joint in joints:
            raise BusConfigError(f'{key}[{k}].joint', f'{servo.joint!r} is already driven on '
                                 f'bus {joints[servo.joint]}')
        ids.add(servo.servo_id)
        joints[servo.joint] = bus
        servos.append(servo)
    if len(servos) > hx.MAX_S_JOG_TAGS:
        raise BusConfigError(key, f'at most {hx.MAX_S_JOG_TAGS} servos per bus')
    return tuple(servos)


def load_bus_config_file(path: str) -> DriverConfig:
    """
    Read the driver configuration from a YAML file.

    :raises BusConfigError: the file cannot be read or is wrong.
    """
    return load_bus_config(load_yaml(path, lambda reason: BusConfigError('bus config', reason)))
