"""
The bus simulator's configuration: the simulated line and its servos (YAML ``servo_sim``).

::

    servo_sim:
      baud: 115200          # optional, the --baud default
      voltage: 7.4          # supply [V]
      latency: 0.0003       # reply latency after a request's last byte [s]
      servos:
        - id: 11            # servo ID 0..253
          model: DRS-0101   # or DRS-0201
          joint: joint11    # optional: names the servo in messages
          position: 0.0     # initial servo angle from the centre count 512 [rad]
          external_torque: 0.0          # optional [N*m]
          params: {kp: 1.35, alpha: [0.18, 0.04, 0.03, 1.0], qs: 0.3}   # optional model
          lag: 0.0          # optional: a first-order lag of the shaft behind the model [s]
          eep: {ack_policy: 2}          # optional EEP values (as configured servos keep)

:func:`sim_config_from_bus` writes this mapping from the driver's bus configuration
(:mod:`sweetie_motion.servo.driver`); ``--servos`` also takes the driver's configuration file
itself with ``--bus NAME``.
"""

from dataclasses import dataclass, field
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, TYPE_CHECKING

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.parameters import out_of_range
from sweetie_motion.paths import check_keys, load_yaml
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.servo_model import NOMINAL_VOLTAGE, ServoModelParams

if TYPE_CHECKING:
    from sweetie_motion.servo.driver.config import BusConfig


class SimulatorConfigError(SweetieMotionError):
    """
    A bad simulator configuration or fault specification.

    :param where: the key or option that is wrong.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        super().__init__(f'{where}: {reason}')


# --- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimServoConfig:
    """
    One simulated servo.

    :param servo_id: its ID.
    :param servo_type: 'DRS-0101' or 'DRS-0201'.
    :param position: initial servo angle from the centre count [rad].
    :param params: the servo model (default: :func:`default_params` of the type).
    :param external_torque: torque of the environment on the shaft [N*m].
    :param joint: name used in messages.
    :param eep: EEP register values that differ from the factory's.
    :param lag: time constant of a first-order lag between what the servo model computes and
        the shaft [s] (0: none). A plant the identification's model does not contain: to the
        identification it looks like viscous friction kp * U * lag.
    """

    servo_id: int
    servo_type: str = 'DRS-0101'
    position: float = 0.0
    params: Optional[ServoModelParams] = None
    external_torque: float = 0.0
    joint: str = ''
    eep: Mapping[str, int] = field(default_factory=dict)
    lag: float = 0.0


@dataclass(frozen=True)
class SimConfig:
    """
    The simulated line.

    :param servos: the servos on it.
    :param baud: line speed [Bd].
    :param latency: reply latency after a request's last byte [s].
    :param voltage: supply [V].
    :param reboot_time: a rebooting servo does not listen for this long [s].
    """

    servos: Tuple[SimServoConfig, ...]
    baud: int = 115200
    latency: float = 0.0003
    voltage: float = NOMINAL_VOLTAGE
    reboot_time: float = 0.2


def number(where: str, value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    """Return ``value`` as a finite float within low..high, or raise naming ``where``."""
    if isinstance(value, bool):
        raise SimulatorConfigError(where, f'{value!r} is not a number')
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SimulatorConfigError(where, f'{value!r} is not a number') from None
    if out_of_range(number, low, high):
        raise SimulatorConfigError(where, f'{number} is outside {low}..{high}')
    return number


def load_sim_config(data: Mapping[str, Any], bus: Optional[str] = None) -> SimConfig:
    """
    Read a simulator configuration mapping (or a driver configuration with ``bus``).

    :param data: the parsed YAML (top key ``servo_sim``, or ``servo_bus`` of the driver).
    :param bus: the bus of a driver configuration to simulate.
    :raises SimulatorConfigError: naming the key that is wrong.
    """
    if not isinstance(data, Mapping):
        raise SimulatorConfigError('configuration', 'must be a mapping')
    if 'servo_bus' in data and 'servo_sim' not in data:
        data = _from_driver_config(data, bus)
    section = data.get('servo_sim', data)
    if not isinstance(section, Mapping):
        raise SimulatorConfigError('servo_sim', 'must be a mapping')
    check_keys('servo_sim', section, ('servos', 'baud', 'latency', 'voltage', 'reboot_time'),
               SimulatorConfigError)
    items = section.get('servos')
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)) or not items:
        raise SimulatorConfigError('servo_sim.servos', 'must be a non-empty list of servos')
    servos: List[SimServoConfig] = []
    for k, item in enumerate(items):
        servos.append(_load_sim_servo(f'servo_sim.servos[{k}]', item,
                                      {s.servo_id for s in servos}))
    baud = int(number('servo_sim.baud', section.get('baud', 115200), 1200, 4_000_000))
    latency = number('servo_sim.latency', section.get('latency', 0.0003), 0.0, 1.0)
    voltage = number('servo_sim.voltage', section.get('voltage', NOMINAL_VOLTAGE), 0.0, 18.0)
    reboot = number('servo_sim.reboot_time', section.get('reboot_time', 0.2), 0.0, 10.0)
    return SimConfig(tuple(servos), baud, latency, voltage, reboot)


def _from_driver_config(data: Mapping[str, Any], bus: Optional[str]) -> Mapping[str, Any]:
    """Return the simulator configuration of one bus of a driver configuration."""
    from sweetie_motion.servo.driver.config import BusConfigError, load_bus_config
    try:
        driver = load_bus_config(data)
    except BusConfigError as error:
        raise SimulatorConfigError('servo_bus', str(error)) from None
    names = [b.name for b in driver.buses]
    if bus is None:
        if len(names) != 1:
            raise SimulatorConfigError('--bus', f'name one of the buses: {", ".join(names)}')
        bus = names[0]
    chosen = [b for b in driver.buses if b.name == bus]
    if not chosen:
        raise SimulatorConfigError('--bus', f'unknown bus {bus!r} (known: {", ".join(names)})')
    return sim_config_from_bus(chosen[0])


def _load_sim_servo(where: str, item: object, seen: Set[int]) -> SimServoConfig:
    """Return one simulated servo of the list; its ID must not be one of ``seen``."""
    if not isinstance(item, Mapping):
        raise SimulatorConfigError(where, 'must be a mapping')
    check_keys(where, item, ('id', 'model', 'joint', 'position', 'external_torque',
                             'params', 'eep', 'lag'), SimulatorConfigError)
    if 'id' not in item:
        raise SimulatorConfigError(f'{where}.id', 'missing')
    servo_id = int(number(f'{where}.id', item['id'], 0, hx.MAX_ID))
    if servo_id != item['id']:
        raise SimulatorConfigError(f'{where}.id', f'{item["id"]!r} is not an integer')
    if servo_id in seen:
        raise SimulatorConfigError(f'{where}.id', f'servo ID {servo_id} appears twice')
    kind = str(item.get('model', 'DRS-0101'))
    try:
        servo_kind = hx.servo_type(kind)
    except hx.UnknownServoTypeError as error:
        raise SimulatorConfigError(f'{where}.model', str(error)) from None
    low, high = servo_kind.angle_range
    position = number(f'{where}.position', item.get('position', 0.0), low, high)
    torque = number(f'{where}.external_torque', item.get('external_torque', 0.0))
    params = None
    if item.get('params') is not None:
        try:
            params = ServoModelParams.from_fields(item['params'],
                                                  str(item.get('joint', servo_id)))
        except SweetieMotionError as error:
            raise SimulatorConfigError(f'{where}.params', str(error)) from None
    eep = _eep_values(where, item.get('eep', {}) or {})
    lag = number(f'{where}.lag', item.get('lag', 0.0), 0.0, 1.0)
    return SimServoConfig(servo_id, servo_kind.name, position, params, torque,
                          str(item.get('joint', '')), eep, lag)


def _eep_values(where: str, eep: object) -> Dict[str, Any]:
    """Return a servo's EEP register values, each a register of the EEP and in range."""
    if not isinstance(eep, Mapping):
        raise SimulatorConfigError(f'{where}.eep', 'must be a mapping of register: value')
    for name, value in eep.items():
        try:
            reg = hx.register(str(name))
            reg.address(hx.Memory.EEP)
            reg.encode(value)
        except hx.HerkulexError as error:
            raise SimulatorConfigError(f'{where}.eep.{name}', str(error)) from None
    return dict(eep)


def load_sim_config_file(path: str, bus: Optional[str] = None) -> SimConfig:
    """
    Read a simulator (or driver) configuration file.

    :raises SimulatorConfigError: the file cannot be read or is wrong.
    """
    data = load_yaml(path, lambda reason: SimulatorConfigError('simulator config', reason))
    return load_sim_config(data, bus)


def sim_config_from_bus(bus: 'BusConfig', pose: Optional[Mapping[str, float]] = None,
                        params: Optional[Mapping[str, ServoModelParams]] = None,
                        eep: Optional[Mapping[str, int]] = None) -> Dict[str, Any]:
    """
    Write the simulator configuration of one bus of the driver's configuration.

    :param bus: a :class:`sweetie_motion.servo.driver.config.BusConfig`.
    :param pose: initial joint positions by joint name [rad] (default 0).
    :param params: servo models by joint name.
    :param eep: EEP values for every servo (e.g. ``{'ack_policy': 2}``).
    :return: the ``servo_sim`` mapping (dump it as YAML for ``--servos``).
    """
    pose = pose or {}
    params = params or {}
    servos = []
    for servo in bus.servos:
        entry: Dict[str, Any] = {
            'id': servo.servo_id, 'model': servo.servo_type, 'joint': servo.joint,
            'position': float(servo.joint_to_servo(pose.get(servo.joint, 0.0)))}
        if servo.joint in params:
            entry['params'] = params[servo.joint].to_fields()
        if eep:
            entry['eep'] = dict(eep)
        servos.append(entry)
    return {'servo_sim': {'baud': bus.baud, 'servos': servos}}
