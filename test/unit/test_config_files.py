"""Configuration files as a person names them: relative paths, shipped names, one-line errors."""

import os
import shutil
import subprocess
import sys

import pytest
from sweetie_motion.errors import ModelError
from sweetie_motion.model import load_robot_description
from sweetie_motion.paths import config_path, share_dir
from sweetie_motion.process_config import ConfigError, load_process_config


def test_a_relative_path_means_the_current_directory_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'sweetie_bot.yaml').write_text('robot: {}\n')
    # the user's own file wins over the shipped one of the same name
    assert config_path('./sweetie_bot.yaml') == tmp_path / 'sweetie_bot.yaml'
    assert config_path('sweetie_bot.yaml') == tmp_path / 'sweetie_bot.yaml'
    # a name only the package has: the shipped file
    assert config_path('winding_arm.yaml') == share_dir() / 'config' / 'winding_arm.yaml'
    # neither: the path the user typed, so that the error names it
    assert config_path('mine.yaml') == tmp_path / 'mine.yaml'


def test_describe_reads_a_robot_description_next_to_the_user(tmp_path):
    for name in ('winding_arm.yaml', 'winding_arm.urdf'):
        shutil.copy(share_dir() / 'config' / name, tmp_path / name)
    text = (tmp_path / 'winding_arm.yaml').read_text().replace('name: winding_arm',
                                                               'name: my_arm')
    (tmp_path / 'my_arm.yaml').write_text(text)
    done = subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', 'describe', '--robot',
                           './my_arm.yaml'], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert "robot 'winding_arm'" in done.stdout  # the URDF's name; the file was the user's


def test_a_yaml_syntax_error_is_one_line_with_file_line_and_column(tmp_path):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('sweetie_motion:\n  robot: [a\n  period: 0.01\n')
    with pytest.raises(ConfigError) as caught:
        load_process_config(str(bad))
    message = str(caught.value)
    assert '\n' not in message and f'{bad}:3:9:' in message
    with pytest.raises(ModelError) as caught:
        load_robot_description(str(bad))
    assert '\n' not in str(caught.value) and f'{bad}:3:' in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        load_process_config(str(tmp_path / 'missing.yaml'))
    assert 'missing.yaml' in str(caught.value) and '\n' not in str(caught.value)


class _Table:
    """A node type as the process config sees it: its parameter table."""

    from sweetie_motion.parameters import ParameterSpec as _Spec
    PARAMETERS = (_Spec('activation_delay', 0.5, 'delay [s]', low=0.0, high=60.0),
                  _Spec('controlled_chains', [], 'chains', array_of=str))


PROCESS = """sweetie_motion:
  robot: sweetie_bot.yaml
  period: 0.01
  components:
    - name: hold
      type: follow_joint_state
      parameters:
        activation_delay: 0.5
        controlled_chains: [head]
"""


@pytest.mark.parametrize('change, message', [
    (('  period: 0.01', '  perod: 0.01'), ":3: unknown key 'perod' (did you mean 'period'?)"),
    (('  period: 0.01', '  period: 5'), ':3: period must be within 0.0005..1 s'),
    (('  period: 0.01', '  period: fast'), ":3: period must be a number of seconds, got 'fast'"),
    (('        activation_delay: 0.5', '        activation_delay: -5.0'),
     ":8: component 'hold': activation_delay: must be >= 0.0, got -5.0"),
    (('        activation_delay: 0.5', '        activation_delay: soon'),
     ":8: component 'hold': activation_delay: expected float, got str 'soon'"),
    (('        activation_delay: 0.5', '        activation_delai: 0.5'),
     ":8: component 'hold': unknown parameter 'activation_delai' (did you mean "
     "'activation_delay'?)"),
    (('      type: follow_joint_state', '      type: follow_joint_stat'),
     ":6: component 'hold': unknown type 'follow_joint_stat' (did you mean "
     "'follow_joint_state'?)"),
    (('      parameters:', '      parameter:'), ":7: component #1: unknown key 'parameter'"),
    (('  period: 0.01', '  namespace: bad ns'), ":3: namespace: 'bad ns' is not a ROS namespace"),
])
def test_every_key_and_value_of_a_process_config_is_checked_with_its_line(tmp_path, change,
                                                                          message):
    path = tmp_path / 'process.yaml'
    path.write_text(PROCESS.replace(*change))
    with pytest.raises(ConfigError) as info:
        load_process_config(str(path), {'follow_joint_state': _Table})
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and '\n' not in text, text
    path.write_text(PROCESS)
    assert load_process_config(str(path), {'follow_joint_state': _Table}).period == 0.01
