r"""
Parameter rules of ``--ros-args`` as ROS users write them (pure: no rclpy).

    sweetie-motion bringup --ros-args -p activation_delay:=2.5 \\
        -p follow_joint_state:activation_delay:=2.5 --params-file overrides.yaml

- ``-p name:=value`` (``--param``): every node of the process that has the parameter;
- ``-p node:name:=value``: the node of that name (the node prefix names a node as a remapping
  rule's does: by its name, whatever its namespace);
- ``--params-file FILE``: keys ``/**`` (every node), a node's full name
  (``/sweetie_bot/follow_joint_state``, the leading slash optional) or a pattern with ``*``
  (within a name) and ``**`` (any namespaces), each ``{ros__parameters: {...}}``; nested
  mappings are dotted names, as in the process config.

Values are read as ``ros2 param`` reads them (YAML: ``2.5`` a double, ``1`` an integer,
``true`` a bool, ``[a, b]`` a list, ``[]`` an empty list). Precedence, lowest first, as rclcpp
applies them: the parameter files in their order (in each, ``/**`` before the other keys), then
the global ``-p`` rules, then the node-specific ones. Everything malformed is one line naming
the rule or ``FILE:LINE``.
"""

from dataclasses import dataclass, field
import re
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from sweetie_motion.errors import ConfigError, SweetieMotionError
from sweetie_motion.paths import LineMap, load_yaml_lines

#: ROS arguments that take the next word as their value (besides -p and --params-file)
_WITH_VALUE = {'-r', '--remap', '-e', '--enclave', '--log-level', '--log-config-file',
               '--log-file-name'}
_NAME = r'[A-Za-z_][A-Za-z0-9_]*'
#: ``[node:]name:=value``; a parameter name is tokens joined by dots (as rcl's lexer has it)
_RULE = re.compile(rf'^(?:(?P<node>{_NAME}):)?(?P<name>{_NAME}(?:\.{_NAME})*):=(?P<value>.*)$',
                   re.S)
#: what a params file key may be: /**, a full node name, a pattern of names, * and **
_KEY = re.compile(r'^/?(\*\*|[A-Za-z_*][A-Za-z0-9_*]*)(/(\*\*|[A-Za-z_*][A-Za-z0-9_*]*))*$')
#: what ``-p`` rules and the files may give every node without any node declaring it
BUILTIN_GLOBALS = ('use_sim_time', 'robot_description', 'start_type_description_service')
_NAMESPACE = re.compile(r'^/?([A-Za-z][A-Za-z0-9_]*)(/[A-Za-z][A-Za-z0-9_]*)*$')


class RosArgumentsError(SweetieMotionError):
    """A ``--ros-args`` parameter rule or parameters file is malformed; one line says where."""


@dataclass(frozen=True)
class ParameterRule:
    """
    One parameter value for some nodes.

    :param source: where it was given: ``-p name:=value`` or ``FILE:LINE``.
    :param target: '' for every node (``-p name:=value``, ``/**``); a node name (``-p
        node:...``) when ``by_name``; else a params file key (a full name or a pattern).
    :param name: the parameter's (dotted) name.
    :param value: the value as YAML reads it.
    :param by_name: ``target`` is a node's name (any namespace), not a full name.
    """

    source: str
    target: str
    name: str
    value: Any
    by_name: bool = False

    @property
    def is_global(self) -> bool:
        """Return whether the rule is meant for every node."""
        return self.target in ('', '/**')

    def applies_to(self, full_name: str) -> bool:
        """Return whether the rule is for the node ``full_name`` ('/ns/name')."""
        if self.is_global:
            return True
        if self.by_name:
            return full_name.rsplit('/', 1)[-1] == self.target
        return key_matches(self.target, full_name)


@dataclass
class RosArguments:
    """
    The parameter rules of a command line's ``--ros-args``, lowest precedence first.

    :param rules: every rule, in the order they apply (a later one wins).
    :param files: the parameters files given.
    """

    rules: List[ParameterRule] = field(default_factory=list)
    files: List[str] = field(default_factory=list)

    def for_node(self, full_name: str) -> Dict[str, ParameterRule]:
        """Return name -> the winning rule of every parameter given to node ``full_name``."""
        found: Dict[str, ParameterRule] = {}
        for rule in self.rules:
            if rule.applies_to(full_name):
                found[rule.name] = rule
        return found

    def node_rules(self) -> Iterator[ParameterRule]:
        """Yield the ``-p node:name:=value`` rules (each must name a node of the process)."""
        return (rule for rule in self.rules if rule.by_name)


def key_matches(key: str, full_name: str) -> bool:
    """
    Return whether a params file key is for the node ``full_name``.

    ``/**`` is every node; ``*`` stands for any characters within a name, ``**`` for any
    namespaces (none included): ``/**/follow_joint_state``, ``/sweetie_bot/*``.
    """
    parts = key.strip('/').split('/')
    pattern = ''
    for part in parts:
        if part == '**':
            pattern += r'(?:/[^/]+)*'
        else:
            pattern += '/' + re.escape(part).replace(r'\*', '[^/]*')
    return re.fullmatch(pattern, full_name) is not None


#: an exponent without a dot: a double to rcl, a string to YAML 1.1 (1e3)
_EXPONENT = re.compile(r'^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$')


def _yaml_value(text: str, source: str, name: str = '') -> Any:
    import yaml
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as error:
        if name in BUILTIN_GLOBALS:
            return text  # a URDF given on the command line is text, whatever YAML makes of it
        problem = getattr(error, 'problem', None) or str(error).split('\n')[0]
        raise RosArgumentsError(f'{source}: the value is not YAML ({problem})') from None
    if isinstance(value, str) and _EXPONENT.match(text.strip()):
        value = float(text)
    if isinstance(value, Mapping):
        raise RosArgumentsError(f'{source}: a parameter value cannot be a mapping (a nested '
                                'parameter is a dotted name: -p smoothing.type:=none)')
    return value


def parse_rule(text: str) -> ParameterRule:
    """
    Return the rule of ``-p TEXT``.

    :raises RosArgumentsError: not ``name:=value`` nor ``node:name:=value``.
    """
    source = f'-p {text}'
    found = _RULE.match(text)
    if found is None:
        raise RosArgumentsError(
            f"--ros-args: cannot read the parameter rule '{source}': expected -p name:=value "
            '(every node that has the parameter) or -p node:name:=value (one node), e.g. '
            '-p follow_joint_state:activation_delay:=2.5')
    node = found.group('node') or ''
    name = found.group('name')
    return ParameterRule(source, node, name, _yaml_value(found.group('value'), source, name),
                         by_name=bool(node))


def _flatten(parameters: Mapping, prefix: str = '') -> Iterator[Tuple[str, Any, Optional[int]]]:
    for key, value in parameters.items():
        name = f'{prefix}{key}'
        line = parameters.line(key) if isinstance(parameters, LineMap) else None
        if isinstance(value, Mapping):
            yield from _flatten(value, name + '.')
        else:
            yield name, value, line


def read_parameters_file(path: str) -> List[ParameterRule]:
    """
    Return the rules of a parameters file (``/**`` keys first, then the others in order).

    :raises RosArgumentsError: unreadable, or not ``{node: {ros__parameters: {...}}}``.
    """
    document = load_yaml_lines(path, lambda message: RosArgumentsError(
        f'--ros-args --params-file: {message}'))

    def at(mapping: object, key: object) -> str:
        line = mapping.line(key) if isinstance(mapping, LineMap) else None
        return f'{path}:{line}' if line else str(path)

    if not isinstance(document, Mapping):
        raise RosArgumentsError(f'{path}: a parameters file is a mapping of node names to '
                                '{ros__parameters: {...}} (e.g. /**: or /sweetie_bot/NODE:)')
    rules: List[ParameterRule] = []
    for key in sorted(document, key=lambda k: k != '/**'):
        section = document[key]
        if not isinstance(key, str) or not _KEY.match(key):
            raise RosArgumentsError(f'{at(document, key)}: {key!r} is not a node name or '
                                    'pattern (/**, /sweetie_bot/follow_joint_state, /**/NODE)')
        if not isinstance(section, Mapping) or set(section) != {'ros__parameters'} or \
                not isinstance(section['ros__parameters'], Mapping):
            raise RosArgumentsError(f'{at(document, key)}: {key}: expected one key, '
                                    'ros__parameters, holding a mapping of parameters')
        for name, value, line in _flatten(section['ros__parameters']):
            rules.append(ParameterRule(f'{path}:{line}' if line else str(path),
                                       '/**' if key == '/**' else key, name, value))
    return rules


def parse_ros_arguments(args: Sequence[str]) -> RosArguments:
    """
    Read the parameter rules of a command line (the words from ``--ros-args`` on).

    Only what ``--ros-args`` sections hold counts (a ``--`` ends one); remappings and log
    settings are left to rcl.

    :raises RosArgumentsError: a malformed rule, a missing value, an unreadable file.
    """
    files: List[ParameterRule] = []
    global_rules: List[ParameterRule] = []
    node_rules: List[ParameterRule] = []
    paths: List[str] = []
    inside = False
    words = list(args)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == '--ros-args':
            inside = True
            continue
        if not inside:
            continue
        if word == '--':
            inside = False
            continue
        if word in ('-p', '--param', '--params-file') or word in _WITH_VALUE:
            if index >= len(words) or words[index] in ('--ros-args', '--'):
                raise RosArgumentsError(f'--ros-args: {word} needs a value after it')
            value = words[index]
            index += 1
            if word == '--params-file':
                paths.append(value)
                files += read_parameters_file(value)
            elif word in ('-p', '--param'):
                rule = parse_rule(value)
                (node_rules if rule.by_name else global_rules).append(rule)
    return RosArguments(files + global_rules + node_rules, paths)


def check_namespace(namespace: str, where: str = 'namespace') -> str:
    """
    Return a ROS namespace without its leading and trailing slashes.

    :raises ConfigError: not a valid namespace ('sweetie_bot', 'robots/pony_1').
    """
    if namespace and not _NAMESPACE.match(namespace.rstrip('/')):
        raise ConfigError(f'{where}: {namespace!r} is not a ROS namespace (letters, digits and '
                          "underscores, starting with a letter; levels joined by '/', e.g. "
                          "'sweetie_bot' or 'robots/pony_1')")
    return namespace.strip('/')
