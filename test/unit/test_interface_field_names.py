"""
The package's own interfaces can be typed on the ros2 command line as YAML.

`ros2 service call`, `ros2 topic pub` and `ros2 action send_goal` read their request as YAML
(PyYAML, YAML 1.1): a field named ``off``, ``on``, ``yes`` or ``no`` (or ``true``, ``null``,
...) becomes a boolean or None there and the CLI fails with "attribute name must be string".
"""

from pathlib import Path
import re
from typing import List, Tuple

import pytest
import yaml

INTERFACES = Path(__file__).resolve().parents[2] / 'interfaces' / 'sweetie_motion_msgs'
#: a field or constant line of a .msg/.srv/.action: TYPE NAME [DEFAULT] or TYPE NAME=VALUE
FIELD = re.compile(r'^\s*([A-Za-z][\w/]*(?:\[[^\]]*\])?(?:<=\d+)?)\s+([A-Za-z]\w*)')


def field_names() -> List[Tuple[str, str]]:
    """Return (file, name) of every field and constant of the package's interfaces."""
    found = []
    for path in sorted(INTERFACES.glob('*/*.*')):
        if path.suffix not in ('.msg', '.srv', '.action'):
            continue
        for line in path.read_text().splitlines():
            if line.strip().startswith('#') or line.strip() == '---':
                continue
            match = FIELD.match(line.split('#')[0])
            if match:
                found.append((f'{path.parent.name}/{path.name}', match.group(2)))
    return found


def test_the_interfaces_have_fields():
    names = dict(field_names())
    assert len(field_names()) > 50
    assert 'srv/SetChainsTorque.srv' in names


@pytest.mark.parametrize('where,name', field_names())
def test_every_field_name_is_a_yaml_string(where, name):
    typed = yaml.safe_load(f'{{{name}: 1}}')
    assert list(typed) == [name], \
        f'{where}: YAML reads the field name {name!r} as {list(typed)[0]!r}: rename it'


def test_set_chains_torque_is_typed_as_written():
    # the README's request, as the ros2 CLI reads it
    assert yaml.safe_load('{chains: [leg1], torque_off: false}') == \
        {'chains': ['leg1'], 'torque_off': False}
    # what the old field name did
    assert list(yaml.safe_load('{chains: [leg1], off: false}')) == ['chains', False]
