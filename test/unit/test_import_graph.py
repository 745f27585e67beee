"""No import cycle between the package's modules, at any level (module or function)."""

import ast
import os
from typing import Dict, List, Set

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_files() -> Dict[str, str]:
    modules = {}
    for base, _, files in os.walk(os.path.join(ROOT, 'sweetie_motion')):
        for name in files:
            if name.endswith('.py'):
                path = os.path.join(base, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, '.')
                modules[module[:-len('.__init__')] if module.endswith('.__init__')
                        else module] = path
    return modules


def import_graph() -> Dict[str, Set[str]]:
    modules = module_files()
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        with open(path, encoding='utf-8') as stream:
            tree = ast.parse(stream.read(), path)
        for node in ast.walk(tree):
            names: List[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f'{node.module}.{a.name}' for a in node.names]
            graph[module] |= {n for n in names if n in modules and n != module}
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Return the strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
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


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    graph = import_graph()
    assert len(graph) > 50 and 'sweetie_motion.cli' in graph
    assert cycles(graph) == []


def test_the_cycle_detector_finds_a_cycle():
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
