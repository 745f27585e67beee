"""
The motion process configuration file (pure: no rclpy).

```yaml
sweetie_motion:
  namespace: sweetie_bot          # robot namespace of every node, topic, service, action
  robot: sweetie_bot.yaml         # robot description (URDF + chains + groups)
  robot_description: file         # the URDF: file (robot's) | parameter | topic (as
                                  # robot_state_publisher has it); chains etc. from robot
  bus: virtual                    # the servos: virtual (in-process) | sim-serial | serial
  servos: sweetie_bot_servos.yaml # servo config of sim-serial and serial (ports, IDs)
  period: 0.01                    # sync cycle period [s]
  isolated_cycle: true            # the cycle in a child process of its own (default)
  autostart: true                 # configure and activate every component at start
  motion: {publish_rate: 100.0}   # parameters of the motion core node
  components:                     # in this order; controllers run in this order each tick
    - {name: virtual_robot, type: virtual_robot, parameters: {lag: 0.05}}
    - {name: follow_joint_state, type: follow_joint_state, parameters: {...}}
```
"""

from dataclasses import dataclass, field
from pathlib import Path
import re
from typing import Any, Dict, List, Mapping, Optional, Union

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.paths import config_path, load_yaml

_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
_NAMESPACE = re.compile(r'^/?([A-Za-z][A-Za-z0-9_]*)(/[A-Za-z][A-Za-z0-9_]*)*$')


#: where the URDF may come from (``robot_description`` of the process config)
DESCRIPTION_SOURCES = ('file', 'parameter', 'topic')
#: the servo buses (``bus`` of the process config, ``bringup --bus``)
BUS_CHOICES = ('virtual', 'sim-serial', 'serial')


class ConfigError(SweetieMotionError):
    """The process configuration is invalid."""


@dataclass
class ComponentConfig:
    """One component node: its name, type (see the bringup's registry) and parameters."""

    name: str
    type_name: str
    parameters: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ProcessConfig:
    """A validated process configuration."""

    path: Path
    namespace: str
    robot: Path
    period: float
    autostart: bool
    motion: Dict[str, Any]
    components: List[ComponentConfig]
    #: run the sync cycle in a child process of its own (False: in the ROS process)
    isolated_cycle: bool = True
    #: where the URDF comes from: 'file' (the robot description's), 'parameter' (the
    #: bringup's robot_description parameter) or 'topic' (the latched robot_description topic)
    robot_description: str = 'file'
    #: the servo bus: None = as the components say, else 'virtual', 'sim-serial' or 'serial'
    bus: Optional[str] = None
    #: the servo configuration of the serial buses
    servos: str = 'sweetie_bot_servos.yaml'

    def select_bus(self, bus: str, servos: Optional[str] = None) -> None:
        """
        Make the servo bus ``bus``: the bus component becomes a virtual robot or a serial bus.

        A serial bus (real or simulated) also gets a ``servo_ident`` component if the
        configuration has none.

        :param bus: 'virtual', 'sim-serial' or 'serial'.
        :param servos: the servo configuration file of the serial buses (default: servos).
        :raises ConfigError: an unknown bus.
        """
        if bus not in BUS_CHOICES:
            raise ConfigError(f'{self.path}: bus must be one of {", ".join(BUS_CHOICES)}, '
                              f'got {bus!r}')
        self.bus = bus
        self.servos = servos or self.servos
        wanted = (ComponentConfig('virtual_robot', 'virtual_robot') if bus == 'virtual' else
                  ComponentConfig('servo_bus', 'herkulex_bus',
                                  {'mode': bus, 'config': self.servos}))
        if bus != 'virtual' and not any(c.type_name == 'servo_ident' for c in self.components):
            # real (or simulated) HerkuleX servos: their identification comes with them
            self.components.append(ComponentConfig('servo_ident', 'servo_ident',
                                                   {'servos': self.servos}))
        for index, component in enumerate(self.components):
            if component.type_name in ('virtual_robot', 'herkulex_bus'):
                if component.type_name != wanted.type_name or bus != 'virtual':
                    self.components[index] = wanted
                return
        self.components.insert(0, wanted)

    def component(self, name: str) -> Optional[ComponentConfig]:
        """Return the component called ``name`` (None if absent)."""
        return next((c for c in self.components if c.name == name), None)


def flatten(parameters: Mapping[str, Any], prefix: str = '') -> Dict[str, Any]:
    """Turn nested mappings into dotted ROS parameter names ({a: {b: 1}} -> {'a.b': 1})."""
    flat: Dict[str, Any] = {}
    for key, value in parameters.items():
        name = f'{prefix}{key}'
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + '.'))
        else:
            flat[name] = value
    return flat


def load_process_config(path: Union[str, Path], known_types=None) -> ProcessConfig:
    """
    Read and validate a process configuration file.

    :param path: the YAML file; a bare name is looked up in the package's config/.
    :param known_types: component type names the bringup can create (checked when given).
    :raises ConfigError: with the file name and what is wrong.
    """
    path = config_path(str(path))
    document = load_yaml(path, ConfigError)
    section = document.get('sweetie_motion') if isinstance(document, Mapping) else None
    if not isinstance(section, Mapping):
        raise ConfigError(f'{path}: expected a top-level "sweetie_motion:" mapping')
    where = f'{path}: '
    namespace = str(section.get('namespace', 'sweetie_bot'))
    if namespace and not _NAMESPACE.match(namespace):
        raise ConfigError(f'{where}invalid namespace {namespace!r}')
    robot = section.get('robot')
    if not robot:
        raise ConfigError(f'{where}"robot" (a robot description file) is required')
    robot_path = Path(robot)
    if not robot_path.is_absolute():
        candidate = path.parent / robot_path
        robot_path = candidate if candidate.exists() else config_path(str(robot))
    try:
        period = float(section.get('period', 0.01))
    except (TypeError, ValueError):
        raise ConfigError(f'{where}period must be a number of seconds') from None
    if not 0.0005 <= period <= 1.0:
        raise ConfigError(f'{where}period must be within 0.0005..1 s, got {period}')
    components: List[ComponentConfig] = []
    for index, entry in enumerate(section.get('components') or []):
        if not isinstance(entry, Mapping) or 'name' not in entry or 'type' not in entry:
            raise ConfigError(f'{where}component #{index + 1} needs "name" and "type"')
        name, type_name = str(entry['name']), str(entry['type'])
        if not _NAME.match(name):
            raise ConfigError(f'{where}invalid component name {name!r}')
        if known_types is not None and type_name not in known_types:
            raise ConfigError(f'{where}component {name!r}: unknown type {type_name!r} '
                              f'(known: {", ".join(sorted(known_types))})')
        if any(c.name == name for c in components) or name == 'motion':
            raise ConfigError(f'{where}duplicate component name {name!r}')
        parameters = entry.get('parameters') or {}
        if not isinstance(parameters, Mapping):
            raise ConfigError(f'{where}component {name!r}: parameters must be a mapping')
        components.append(ComponentConfig(name, type_name, flatten(parameters)))
    motion = section.get('motion') or {}
    if not isinstance(motion, Mapping):
        raise ConfigError(f'{where}"motion" must be a mapping of parameters')
    isolated = section.get('isolated_cycle', True)
    if not isinstance(isolated, bool):
        raise ConfigError(f'{where}isolated_cycle must be true or false, got {isolated!r}')
    source = section.get('robot_description', 'file')
    if source not in DESCRIPTION_SOURCES:
        raise ConfigError(f'{where}robot_description must be one of '
                          f'{", ".join(DESCRIPTION_SOURCES)}, got {source!r}')
    config = ProcessConfig(path, namespace.strip('/'), robot_path, period,
                           bool(section.get('autostart', True)), flatten(motion), components,
                           isolated, source)
    if section.get('bus') is not None:
        config.select_bus(str(section['bus']), section.get('servos'))
    return config
