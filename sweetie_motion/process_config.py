"""
The motion process configuration file (pure: no rclpy).

```yaml
sweetie_motion:
  namespace: sweetie_bot          # robot namespace of every node, topic, service, action
  robot: sweetie_bot.yaml         # robot description (URDF + chains + groups)
  robot_description: file         # the URDF: file (robot's) | parameter | topic (as
                                  # robot_state_publisher has it); chains etc. from robot
  bus: virtual                    # the servos: virtual (in-process) | physics (the robot on a
                                  # floor, MuJoCo) | sim-serial | serial
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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Union

from sweetie_motion.controllers.catalog import component_type, HARDWARE_TYPES, unknown_type
from sweetie_motion.errors import ConfigError, did_you_mean
from sweetie_motion.parameters import ParameterError
from sweetie_motion.paths import config_path, LineMap, load_yaml_lines
from sweetie_motion.ros_arguments import BUILTIN_GLOBALS, check_namespace, RosArguments

_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')


#: where the URDF may come from (``robot_description`` of the process config)
DESCRIPTION_SOURCES = ('file', 'parameter', 'topic')
#: the servo buses (``bus`` of the process config, ``bringup --bus``)
BUS_CHOICES = ('virtual', 'physics', 'sim-serial', 'serial')
#: the component type of each in-process bus (the serial buses: herkulex_bus)
BUS_COMPONENTS = {'virtual': 'virtual_robot', 'physics': 'physics_robot'}
#: every component type that installs the servo bus (the registry's hardware types)
BUS_TYPES = tuple(HARDWARE_TYPES)
#: the keys of the ``sweetie_motion`` section
SECTION_KEYS = ('namespace', 'robot', 'robot_description', 'bus', 'servos', 'period',
                'isolated_cycle', 'autostart', 'motion', 'components')
#: the keys of a component
COMPONENT_KEYS = ('name', 'type', 'parameters')
#: the cycle period's range [s]
PERIOD_RANGE = (0.0005, 1.0)


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
    #: the servo bus: None = as the components say, else one of :data:`BUS_CHOICES`
    bus: Optional[str] = None
    #: the servo configuration of the serial buses
    servos: str = 'sweetie_bot_servos.yaml'

    def select_bus(self, bus: str, servos: Optional[str] = None) -> None:
        """
        Make the servo bus ``bus``: a virtual robot (kinematic or with physics) or a serial bus.

        A serial bus (real or simulated) also gets a ``servo_ident`` component if the
        configuration has none. A bus component of the configuration keeps its place and, when
        it is already of the wanted type, its name and parameters.

        :param bus: one of :data:`BUS_CHOICES`.
        :param servos: the servo configuration file of the serial buses (default: servos).
        :raises ConfigError: an unknown bus.
        """
        if bus not in BUS_CHOICES:
            raise ConfigError(f'{self.path}: bus must be one of {", ".join(BUS_CHOICES)}, '
                              f'got {bus!r}')
        self.bus = bus
        self.servos = servos or self.servos
        serial = bus not in BUS_COMPONENTS
        wanted = (ComponentConfig('servo_bus', 'herkulex_bus',
                                  {'mode': bus, 'config': self.servos}) if serial else
                  ComponentConfig(BUS_COMPONENTS[bus], BUS_COMPONENTS[bus]))
        if serial and not any(c.type_name == 'servo_ident' for c in self.components):
            # real (or simulated) HerkuleX servos: their identification comes with them
            self.components.append(ComponentConfig('servo_ident', 'servo_ident',
                                                   {'servos': self.servos}))
        for index, component in enumerate(self.components):
            if component.type_name in BUS_TYPES:
                if component.type_name != wanted.type_name or serial:
                    self.components[index] = wanted
                return
        self.components.insert(0, wanted)

    def component(self, name: str) -> Optional[ComponentConfig]:
        """Return the component called ``name`` (None if absent)."""
        return next((c for c in self.components if c.name == name), None)


def flatten(parameters: Mapping[str, Any], prefix: str = '',
            lines: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """
    Turn nested mappings into dotted ROS parameter names ({a: {b: 1}} -> {'a.b': 1}).

    :param lines: filled with each name's line where the mappings know it (:class:`LineMap`).
    """
    flat: Dict[str, Any] = {}
    for key, value in parameters.items():
        name = f'{prefix}{key}'
        if lines is not None and isinstance(parameters, LineMap) and parameters.line(key):
            lines[name] = parameters.line(key) or 0
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + '.', lines))
        else:
            flat[name] = value
    return flat


def check_period(period: Any, where: str = 'period') -> float:
    """
    Return a cycle period [s] within :data:`PERIOD_RANGE`.

    :raises ConfigError: not a number or out of range, naming ``where``.
    """
    if isinstance(period, bool):
        raise ConfigError(f'{where} must be a number of seconds, got {period!r}')
    try:
        value = float(period)
    except (TypeError, ValueError):
        raise ConfigError(f'{where} must be a number of seconds, got {period!r}') from None
    low, high = PERIOD_RANGE
    if not low <= value <= high:
        raise ConfigError(f'{where} must be within {low:g}..{high:g} s (100 Hz: 0.01), '
                          f'got {value:g}')
    return value


def _check_parameters(at, component: str, node_type: type, parameters: Dict[str, Any],
                      lines: Dict[str, int]) -> None:
    """Check a component's parameters against its node type's table (names and values)."""
    table = {spec.name: spec for spec in getattr(node_type, 'PARAMETERS', ())}
    accepts = getattr(node_type, 'accepts_config_name', None)
    for name, value in parameters.items():
        spec = table.get(name)
        if spec is None:
            if name in ('use_sim_time',) or (accepts is not None and accepts(name, parameters)):
                continue
            raise ConfigError(f'{at(lines.get(name))}component {component!r}: unknown '
                              f'parameter {name!r}{did_you_mean(name, table)}')
        try:
            spec.validate(value)
        except ParameterError as error:
            raise ConfigError(f'{at(lines.get(name))}component {component!r}: {error}') \
                from None


def node_type(type_name: str, known_types: Mapping[str, type]) -> type:
    """
    Return the node class of a component type: a built-in name, or ``module:Class``.

    A ``module:Class`` is resolved by the registry of component types
    (:func:`~sweetie_motion.controllers.catalog.component_type`): a node class of your own.

    :param known_types: the node class of each built-in type, by name (the registry's
        ``node_classes()``).
    :raises ConfigError: an unknown name, a module that does not import, not a node class.
    """
    if type_name in known_types:
        return known_types[type_name]
    if ':' not in type_name:
        raise unknown_type(type_name, known_types)
    return component_type(type_name).node_class()


def load_process_config(path: Union[str, Path], known_types=None,
                        motion_type: Optional[type] = None) -> ProcessConfig:
    """
    Read and validate a process configuration file.

    Every key is checked (a misspelled one is refused with the closest known one), and every
    component parameter against its node type's table (name, type, range), each error one
    line ``FILE:LINE: ...``.

    :param path: the YAML file; a bare name is looked up in the package's config/.
    :param known_types: component type name -> node class (its ``PARAMETERS`` table) of the
        built-in types the bringup can create (the registry's ``node_classes()``; checked when
        given; ``module:Class`` types are imported, see :func:`node_type`).
    :param motion_type: the motion core node class (its table checks ``motion``).
    :raises ConfigError: with the file, the line and what is wrong.
    """
    path = config_path(str(path))
    document = load_yaml_lines(path, ConfigError)
    section = document.get('sweetie_motion') if isinstance(document, Mapping) else None
    if not isinstance(section, Mapping):
        raise ConfigError(f'{path}: expected a top-level "sweetie_motion:" mapping')
    origin = _Origin(path)
    for key in section:
        if key not in SECTION_KEYS:
            raise ConfigError(f'{origin.of(section, key)}unknown key {key!r}'
                              f'{did_you_mean(key, SECTION_KEYS)}')
    try:
        namespace = check_namespace(str(section.get('namespace', 'sweetie_bot')))
        period = check_period(section.get('period', 0.01))
    except ConfigError as error:
        key = 'namespace' if 'namespace' in str(error) else 'period'
        raise ConfigError(f'{origin.of(section, key)}{error}') from None
    robot_path = _robot_path(path, section.get('robot'))
    components = _read_components(origin, section, known_types)
    motion = _read_motion(origin, section, motion_type)
    for key in ('isolated_cycle', 'autostart'):
        if not isinstance(section.get(key, True), bool):
            raise ConfigError(f'{origin.of(section, key)}{key} must be true or false, got '
                              f'{section[key]!r}')
    source = section.get('robot_description', 'file')
    if source not in DESCRIPTION_SOURCES:
        raise ConfigError(f'{origin.of(section, "robot_description")}robot_description '
                          f'must be one of {", ".join(DESCRIPTION_SOURCES)}, got {source!r}')
    config = ProcessConfig(path, namespace, robot_path, period,
                           section.get('autostart', True), motion, components,
                           section.get('isolated_cycle', True), source)
    if section.get('bus') is not None:
        config.select_bus(str(section['bus']), section.get('servos'))
    return config


class _Origin:
    """Where in a process config file an error is: the ``FILE:LINE: `` its message starts with."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def at(self, line: Optional[int]) -> str:
        """Return ``FILE:LINE: `` (``FILE: `` when the line is not known)."""
        return f'{self.path}:{line}: ' if line else f'{self.path}: '

    def of(self, mapping: object, key: str) -> str:
        """Return where ``key`` of ``mapping`` is (a mapping read with its lines)."""
        return self.at(mapping.line(key) if isinstance(mapping, LineMap) else None)


def _robot_path(path: Path, robot: Any) -> Path:
    """Return the robot description's file: next to the config, else in the package's."""
    if not robot:
        raise ConfigError(f'{path}: "robot" (a robot description file) is required')
    robot_path = Path(robot)
    if not robot_path.is_absolute():
        candidate = path.parent / robot_path
        robot_path = candidate if candidate.exists() else config_path(str(robot))
    return robot_path


def _read_components(origin: _Origin, section: Mapping[str, Any],
                     known_types: Optional[Mapping[str, type]]) -> List[ComponentConfig]:
    """Return the components in order, each parameter checked when its type is known."""
    components: List[ComponentConfig] = []
    entries = section.get('components') or []
    if not isinstance(entries, list):
        raise ConfigError(f'{origin.of(section, "components")}components must be a list')
    for index, entry in enumerate(entries):
        taken = [c.name for c in components]
        components.append(_read_component(origin, index, entry, known_types, taken))
    return components


def _read_component(origin: _Origin, index: int, entry: object,
                    known_types: Optional[Mapping[str, type]],
                    taken: Sequence[str]) -> ComponentConfig:
    """Return component #``index + 1``: its keys, name (not one of ``taken``), type, parameters."""
    if not isinstance(entry, Mapping) or 'name' not in entry or 'type' not in entry:
        raise ConfigError(f'{origin.path}: component #{index + 1} needs "name" and "type"')
    for key in entry:
        if key not in COMPONENT_KEYS:
            raise ConfigError(f'{origin.of(entry, key)}component #{index + 1}: unknown '
                              f'key {key!r}{did_you_mean(key, COMPONENT_KEYS)}')
    name, type_name = str(entry['name']), str(entry['type'])
    if not _NAME.match(name):
        raise ConfigError(f'{origin.of(entry, "name")}invalid component name {name!r}')
    node_class = None
    if known_types is not None:
        try:
            node_class = node_type(type_name, known_types)
        except ConfigError as error:
            raise ConfigError(f'{origin.of(entry, "type")}component {name!r}: {error}'
                              ) from None
    if name in taken or name == 'motion':
        raise ConfigError(f'{origin.of(entry, "name")}duplicate component name {name!r}')
    parameters = entry.get('parameters') or {}
    if not isinstance(parameters, Mapping):
        raise ConfigError(f'{origin.of(entry, "parameters")}component {name!r}: '
                          'parameters must be a mapping')
    lines: Dict[str, int] = {}
    flat = flatten(parameters, lines=lines)
    if node_class is not None:
        _check_parameters(origin.at, name, node_class, flat, lines)
    return ComponentConfig(name, type_name, flat)


def _read_motion(origin: _Origin, section: Mapping[str, Any],
                 motion_type: Optional[type]) -> Dict[str, Any]:
    """Return the motion core node's parameters, checked against its table when given."""
    motion = section.get('motion') or {}
    if not isinstance(motion, Mapping):
        raise ConfigError(f'{origin.of(section, "motion")}"motion" must be a mapping of '
                          'parameters')
    lines: Dict[str, int] = {}
    motion = flatten(motion, lines=lines)
    if motion_type is not None:
        _check_parameters(origin.at, 'motion', motion_type, motion, lines)
    return motion


def _accepts(node_class: Optional[type], name: str, parameters: Mapping[str, Any]) -> bool:
    """Return whether a node class has the parameter ``name`` (its table or per-joint names)."""
    if any(spec.name == name for spec in getattr(node_class, 'PARAMETERS', ())):
        return True
    accepts = getattr(node_class, 'accepts_config_name', None)
    return name in ('use_sim_time',) or (accepts is not None and accepts(name, parameters))


def _override_value(node_class: Optional[type], name: str, value: object) -> object:
    """Return a command-line value for the node's table: an empty list of any type is empty."""
    spec = next((s for s in getattr(node_class, 'PARAMETERS', ()) if s.name == name), None)
    if spec is not None and spec.kind is list and value in (None, [], ['']):
        return []
    return value


def apply_parameter_rules(config: ProcessConfig, arguments: RosArguments,
                          known_types: Mapping[str, type], motion_type: Optional[type],
                          other_nodes: Sequence[str] = ()) -> None:
    """
    Give the process's nodes the parameters of ``--ros-args`` (``-p``, ``--params-file``).

    They win over the process config, and are checked as the config's values are: each value
    against its node's table (one line naming the rule, the node and the parameter), a rule
    for one node against that node's parameters, a node name against the process's nodes, and
    a global ``-p`` rule against every node (some node must have it). ``period`` of ``motion``
    is the cycle period (as ``--period``).

    :param arguments: the parameter rules of the command's ``--ros-args``.
    :param other_nodes: names of nodes without parameters of their own (controller_manager).
    :raises ConfigError: naming the rule (``-p ...`` or ``FILE:LINE``) and what is wrong.
    """
    space = f'/{config.namespace}' if config.namespace else ''
    nodes = [('motion', motion_type, config.motion)] + [
        (c.name, node_type(c.type_name, known_types), c.parameters) for c in config.components
    ] + [(name, None, {}) for name in other_nodes]
    names = [name for name, _, _ in nodes]
    for rule in arguments.rules:
        target = rule.target.strip('/')
        if rule.by_name and rule.target not in names:
            raise ConfigError(f'{rule.source}: no node named {rule.target!r}'
                              f'{did_you_mean(rule.target, names)} in this motion process '
                              f'(nodes: {", ".join(names)})')
        if not rule.is_global and not rule.by_name and '*' not in target and \
                f'/{target}'.rsplit('/', 1)[0] == space and \
                target.rsplit('/', 1)[-1] not in names:
            node = target.rsplit('/', 1)[-1]
            raise ConfigError(f'{rule.source}: no node {rule.target!r}{did_you_mean(node, names)}'
                              f' in this motion process (nodes: {", ".join(names)})')
    used: Set[int] = set()   # the global rules some node has the parameter of (their ids)
    for name, node_class, parameters in nodes:
        used.update(id(rule) for rule in arguments.rules
                    if rule.is_global and _accepts(node_class, rule.name, parameters))
        for parameter, rule in arguments.for_node(f'{space}/{name}').items():
            if not _accepts(node_class, parameter, parameters):
                if rule.is_global:
                    continue   # for the nodes that have it
                known = [spec.name for spec in getattr(node_class, 'PARAMETERS', ())]
                raise ConfigError(f'{rule.source}: node {name!r} has no parameter {parameter!r}'
                                  f'{did_you_mean(parameter, known)}')
            value = _override_value(node_class, parameter, rule.value)
            if name == 'motion' and parameter == 'period':
                config.period = check_period(value, f'{rule.source}: period')
                continue
            try:
                for spec in getattr(node_class, 'PARAMETERS', ()):
                    if spec.name == parameter:
                        spec.validate(value)
            except ParameterError as error:
                raise ConfigError(f'{rule.source}: node {name!r}: {error}') from None
            parameters[parameter] = value
    for rule in arguments.rules:
        if rule.source.startswith('-p') and rule.is_global and id(rule) not in used and \
                rule.name not in BUILTIN_GLOBALS:
            raise ConfigError(f'{rule.source}: no node of this motion process has a parameter '
                              f'{rule.name!r} (for one node: -p NODE:{rule.name}:=VALUE)')
