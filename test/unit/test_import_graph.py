"""No import cycle between the package's modules, at any level (module or function)."""

from layers import cycles, import_graph


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    graph = import_graph()
    assert len(graph) > 50 and 'sweetie_motion.cli' in graph
    assert cycles(graph) == []


def test_the_cycle_detector_finds_a_cycle():
    assert cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]
