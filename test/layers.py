"""
The package's layers, and the import graph the layer tests read them against.

:data:`LAYERS` is the one list of sweetie_motion's folders (and loose top-level modules) in
import order: a module may import its own layer and the layers before it, never one after.
The layers before :data:`EDGE` are the pure core (no rclpy, no ROS messages, no Qt); from
:data:`EDGE` on, the ROS and Qt edge. test/unit/test_layers.py enforces both;
test/lint/test_mypy.py checks the types of every module :func:`typed_files` names (those that
import neither rclpy nor PyQt5, in any layer).
"""

import ast
import os
from typing import Dict, FrozenSet, List, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'sweetie_motion'

#: (layer, its folders or loose modules of sweetie_motion), lowest first
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    # the package's loose modules: errors, config files, parameters, the command-line grammar
    ('base', ('errors', 'paths', 'tables', 'parameters', 'ros_arguments', 'process_lock',
              'command_line')),
    ('model', ('model',)),                  # the robot: chains, limits, URDF, its settings
    ('trajectory', ('trajectory',)),        # goals, splines, validation, timing
    ('files', ('storage', 'plots')),        # stored motions; figures
    ('core', ('core',)),                    # the cycle, its ports, arbiter, safety, bus port
    ('servo', ('servo',)),                  # the servo buses: virtual, serial driver, simulator
    ('checks', ('checks',)),                # collision, balance, load of a motion
    ('controllers', ('controllers',)),      # the controller cores and their goal planning
    # and a motion process's config, which names the components by the controllers' registry
    ('above the controllers', ('physics', 'cartesian', 'host', 'process_config')),
    # the ROS and Qt edge
    ('ros', ('ros',)),                      # clients, conversions, a client's own node
    ('nodes', ('nodes',)),                  # the lifecycle nodes, the bringup
    ('gui kit', ('gui',)),                  # what both windows share
    ('windows', ('editor', 'console')),     # the editor and the console
    ('cli', ('cli',)),                      # the `sweetie-motion` command
)

#: the first layer of the ROS and Qt edge
EDGE = 'ros'

#: folder cycles that are known and being cut, each the set of its folders: the layer test
#: passes while one is there and fails once it is gone (then its entry goes too)
KNOWN_CYCLES: Tuple[FrozenSet[str], ...] = ()

#: the packages whose import puts a module out of mypy's reach (no stubs, generated code)
UNTYPED = ('rclpy', 'PyQt5')
#: layers mypy checks whole: the command line imports rclpy only inside the functions that
#: talk to ROS, and its types hold
TYPED_LAYERS = ('cli',)


def layer_of() -> Dict[str, int]:
    """Return each folder or loose module's layer (its index in :data:`LAYERS`)."""
    return {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}


def edge_index() -> int:
    """Return the index in :data:`LAYERS` of the first layer of the ROS and Qt edge."""
    return [name for name, _ in LAYERS].index(EDGE)


def module_files() -> Dict[str, str]:
    """Return every module of the package (dotted name) and its file."""
    modules = {}
    for base, _, files in os.walk(os.path.join(ROOT, PACKAGE)):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(base, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
                modules[module[:-len('.__init__')] if module.endswith('.__init__')
                        else module] = path
    return modules


def imported_names(path: str) -> List[str]:
    """Return every name a file imports, at any level (module, class or function)."""
    with open(path, encoding='utf-8') as stream:
        tree = ast.parse(stream.read(), path)
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module] + [f'{node.module}.{a.name}' for a in node.names]
    return names


def import_graph() -> Dict[str, Set[str]]:
    """Return the package's modules and, for each, the package's modules it imports."""
    modules = module_files()
    return {module: {n for n in imported_names(path) if n in modules and n != module}
            for module, path in modules.items()}


def unit(module: str) -> str:
    """Return the folder or loose module of sweetie_motion a module is in ('' : the package)."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else ''


def units() -> Set[str]:
    """Return the package's folders and loose modules (what :data:`LAYERS` must list)."""
    return {unit(module) for module in module_files()} - {''}


def unit_graph(graph: Dict[str, Set[str]]) -> Dict[str, Set[str]]:
    """Fold a module graph into its folders and loose modules (the package itself left out)."""
    folded: Dict[str, Set[str]] = {}
    for module, imported in graph.items():
        if unit(module):
            folded.setdefault(unit(module), set()).update(
                unit(other) for other in imported if unit(other) not in ('', unit(module)))
    return folded


def imports_up(graph: Dict[str, Set[str]], layers: Dict[str, int]) -> List[str]:
    """Return 'module -> module' for each import of a layer after the importer's own."""
    return sorted(f'{module} -> {other}' for module, imported in graph.items()
                  for other in imported
                  if unit(module) and unit(other)
                  and layers[unit(other)] > layers[unit(module)])


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Return the strongly connected components of more than one node (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def typed_files() -> List[str]:
    """
    Return the files mypy checks: every module that imports neither rclpy nor PyQt5.

    A rule, not a list: a module that starts or stops importing them, or moves to another
    folder, is checked accordingly; the modules of :data:`TYPED_LAYERS` are checked whatever
    they import. Paths are relative to the repository.
    """
    whole = {unit for name, layer in LAYERS if name in TYPED_LAYERS for unit in layer}
    return sorted(os.path.relpath(path, ROOT) for module, path in module_files().items()
                  if unit(module) in whole
                  or not any(name.split('.')[0] in UNTYPED for name in imported_names(path)))
