"""
The layers of test/layers.py hold: imports go down only, folders form no cycle, the core is pure.

The pure core (every layer before the ROS and Qt edge) imports without rclpy, any ROS message
package or Qt (design rule: ROS only at the edges).
"""

import subprocess
import sys

from layers import (
    cycles, edge_index, import_graph, imports_up, KNOWN_CYCLES, layer_of, LAYERS, ROOT,
    unit_graph, units,
)

PROBE = r'''
import importlib, pkgutil, sys

class Block:
    """Refuse rclpy, every ROS interface package and Qt."""
    banned = ('rclpy', 'rcl_interfaces', 'sensor_msgs', 'trajectory_msgs', 'control_msgs',
              'std_msgs', 'std_srvs', 'builtin_interfaces', 'sweetie_motion_msgs',
              'diagnostic_msgs', 'lifecycle_msgs', 'action_msgs', 'PyQt5')
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in self.banned:
            raise ImportError(f'pure core imported {name}')
        return None

sys.meta_path.insert(0, Block())
core = set(sys.argv[1].split(','))
extra = sys.argv[2].split(',')
import sweetie_motion
names = []
for info in pkgutil.walk_packages(sweetie_motion.__path__, 'sweetie_motion.'):
    if info.name.split('.')[1] in core:
        importlib.import_module(info.name)
        names.append(info.name)
for name in extra:
    importlib.import_module(name)
    names.append(name)
print(len(names), 'modules:', ' '.join(names))
'''


def test_every_folder_and_loose_module_of_the_package_has_one_layer():
    listed = [unit for _, layer in LAYERS for unit in layer]
    assert len(listed) == len(set(listed)), 'a folder in two layers'
    assert set(listed) == units(), ('not in test/layers.py LAYERS: '
                                    f'{sorted(units() - set(listed))}; listed, not found: '
                                    f'{sorted(set(listed) - units())}')


def test_no_module_imports_a_layer_above_its_own():
    assert imports_up(import_graph(), layer_of()) == []


def test_no_folders_import_each_other_in_a_cycle():
    found = [frozenset(c) for c in cycles(unit_graph(import_graph()))]
    assert [sorted(c) for c in found if c not in KNOWN_CYCLES] == []
    # a known cycle that is cut leaves the list too: it would hide its return
    assert [sorted(c) for c in KNOWN_CYCLES if c not in found] == []


def test_the_layer_rule_finds_an_import_up_and_a_folder_cycle():
    graph = {'sweetie_motion.model.a': {'sweetie_motion.core.b'},
             'sweetie_motion.core.b': {'sweetie_motion.model.c', 'sweetie_motion.errors'},
             'sweetie_motion.model.c': set(), 'sweetie_motion.errors': set()}
    layers = {'errors': 0, 'model': 1, 'core': 2}
    assert imports_up(graph, layers) == ['sweetie_motion.model.a -> sweetie_motion.core.b']
    assert cycles(unit_graph(graph)) == [['core', 'model']]


def test_the_pure_core_imports_without_rclpy_ros_messages_or_qt():
    core = [unit for _, layer in LAYERS[:edge_index()] for unit in layer]
    # the command line too: `sweetie-motion describe` works where the pure core does
    result = subprocess.run([sys.executable, '-c', PROBE, ','.join(core), 'sweetie_motion.cli'],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    for module in ('sweetie_motion.model.robot_model', 'sweetie_motion.cartesian.planner',
                   'sweetie_motion.servo.virtual', 'sweetie_motion.errors',
                   'sweetie_motion.cli'):
        assert module in result.stdout.split(), result.stdout
