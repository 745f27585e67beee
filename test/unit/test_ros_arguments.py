"""--ros-args parameter rules as ROS users write them: parsed, matched to nodes, checked."""

from pathlib import Path

import pytest
from sweetie_motion.parameters import ParameterSpec
from sweetie_motion.process_config import (
    apply_parameter_rules, ComponentConfig, ConfigError, ProcessConfig,
)
from sweetie_motion.ros_arguments import (
    key_matches, parse_ros_arguments, parse_rule, RosArgumentsError,
)


class Follow:
    PARAMETERS = [ParameterSpec('activation_delay', 1.0, 'd', low=0.0, high=60.0),
                  ParameterSpec('controlled_chains', [], 'c', array_of=str)]


class Robot:
    PARAMETERS = [ParameterSpec('blocked_joints', [], 'b', array_of=str),
                  ParameterSpec('lag', 0.05, 'l', low=0.001)]


class Motion:
    PARAMETERS = [ParameterSpec('period', 0.01, 'p', read_only=True),
                  ParameterSpec('cycle_priority', 50, 'c', low=0, high=98)]


def config() -> ProcessConfig:
    return ProcessConfig(Path('x.yaml'), 'sweetie_bot', Path('r.yaml'), 0.01, True, {}, [
        ComponentConfig('virtual_robot', 'robot', {'lag': 0.05}),
        ComponentConfig('follow_joint_state', 'follow', {'activation_delay': 1.0})])


def apply(*words: str) -> ProcessConfig:
    result = config()
    apply_parameter_rules(result, parse_ros_arguments(['--ros-args', *words]),
                          {'robot': Robot, 'follow': Follow}, Motion, ['controller_manager'])
    return result


def test_rules_read_their_values_as_ros2_param_does():
    assert parse_rule('a:=2.5').value == 2.5
    assert parse_rule('a:=1').value == 1
    assert parse_rule('a:=true').value is True
    assert parse_rule('a:=[j1, j2]').value == ['j1', 'j2']
    assert parse_rule('a:=[]').value == []
    assert parse_rule('a:=1e3').value == 1000.0     # rcl reads a double
    assert parse_rule('a:=text').value == 'text'
    rule = parse_rule('follow_joint_state:smoothing.type:=none')
    assert (rule.target, rule.name, rule.value, rule.by_name) == \
        ('follow_joint_state', 'smoothing.type', 'none', True)


@pytest.mark.parametrize('text', ['bad', 'a=1', ':=1', 'a:b:c:=1', '1a:=2', 'a.:=1'])
def test_a_malformed_rule_is_one_line_naming_it(text):
    with pytest.raises(RosArgumentsError) as error:
        parse_rule(text)
    assert f"'-p {text}'" in str(error.value) and '\n' not in str(error.value)


def test_a_value_that_is_a_mapping_is_refused():
    with pytest.raises(RosArgumentsError, match='dotted name'):
        parse_rule('smoothing:={type: none}')


def test_params_file_keys_match_as_rcl_matches_node_names():
    assert key_matches('/**', '/sweetie_bot/follow_joint_state')
    assert key_matches('/sweetie_bot/follow_joint_state', '/sweetie_bot/follow_joint_state')
    assert key_matches('sweetie_bot/follow_joint_state', '/sweetie_bot/follow_joint_state')
    assert key_matches('/**/follow_joint_state', '/sweetie_bot/follow_joint_state')
    assert key_matches('/**/follow_joint_state', '/follow_joint_state')
    assert key_matches('/sweetie_bot/follow_*', '/sweetie_bot/follow_joint_state')
    assert not key_matches('/sweetie_bot/joint_trajectory', '/sweetie_bot/follow_joint_state')
    assert not key_matches('/other/follow_joint_state', '/sweetie_bot/follow_joint_state')


def test_each_kind_of_rule_reaches_its_nodes_with_ros_precedence(tmp_path):
    params = tmp_path / 'p.yaml'
    params.write_text('/sweetie_bot/follow_joint_state:\n  ros__parameters:\n'
                      '    activation_delay: 4.0\n    controlled_chains: [head]\n'
                      '/**:\n  ros__parameters:\n    lag: 0.2\n    activation_delay: 3.0\n')
    result = apply('--params-file', str(params))
    follow, robot = result.component('follow_joint_state'), result.component('virtual_robot')
    # the node's own key wins over /**, whatever their order in the file
    assert follow.parameters == {'activation_delay': 4.0, 'controlled_chains': ['head']}
    assert robot.parameters['lag'] == 0.2
    # -p beats the files; a node's own -p beats the global one
    result = apply('--params-file', str(params), '-p', 'follow_joint_state:activation_delay:=6.0',
                   '-p', 'activation_delay:=5.0')
    assert result.component('follow_joint_state').parameters['activation_delay'] == 6.0
    # a global rule goes only to the nodes that have the parameter
    assert 'activation_delay' not in result.component('virtual_robot').parameters


def test_an_empty_list_of_any_type_is_an_empty_list():
    for text in ('[]', "['']"):
        assert apply('-p', f'blocked_joints:={text}').component(
            'virtual_robot').parameters['blocked_joints'] == []


def test_period_and_motion_parameters():
    result = apply('-p', 'motion:period:=0.02', '-p', 'cycle_priority:=0')
    assert result.period == 0.02 and result.motion == {'cycle_priority': 0}
    with pytest.raises(ConfigError, match='period'):
        apply('-p', 'motion:period:=7.0')


@pytest.mark.parametrize('words, expected', [
    (['-p', 'activation_delay:=abc'],
     "-p activation_delay:=abc: node 'follow_joint_state': activation_delay: expected float"),
    (['-p', 'activation_delay:=-1.0'], 'activation_delay: must be >= 0.0'),
    (['-p', 'nonsense:=1'], "no node of this motion process has a parameter 'nonsense'"),
    (['-p', 'follow_joint_stat:activation_delay:=1.0'],
     "no node named 'follow_joint_stat' (did you mean 'follow_joint_state'?)"),
    (['-p', 'follow_joint_state:activation_dela:=1.0'],
     "node 'follow_joint_state' has no parameter 'activation_dela' (did you mean "
     "'activation_delay'?)"),
    (['-p', 'controller_manager:lag:=1.0'], "node 'controller_manager' has no parameter"),
])
def test_a_bad_rule_is_one_line_naming_the_rule_and_the_parameter(words, expected):
    with pytest.raises(ConfigError) as error:
        apply(*words)
    assert expected in str(error.value) and '\n' not in str(error.value)


def test_params_file_problems_name_the_file_and_line(tmp_path):
    params = tmp_path / 'p.yaml'
    params.write_text('/sweetie_bot/follow_joint_state:\n  ros__parameters:\n'
                      '    activation_delay: fast\n')
    with pytest.raises(ConfigError, match=f'{params}:3: node .follow_joint_state.'):
        apply('--params-file', str(params))
    params.write_text('/sweetie_bot/follow_joint_stat:\n  ros__parameters:\n    lag: 1.0\n')
    with pytest.raises(ConfigError, match=f'{params}:3: no node '
                                          "'/sweetie_bot/follow_joint_stat' "
                                          r'\(did you mean'):
        apply('--params-file', str(params))
    params.write_text('/sweetie_bot/follow_joint_state:\n  activation_delay: 1.0\n')
    with pytest.raises(RosArgumentsError, match=f'{params}:1: .*ros__parameters'):
        apply('--params-file', str(params))
    with pytest.raises(RosArgumentsError, match='no such file'):
        apply('--params-file', str(tmp_path / 'missing.yaml'))
    # another robot's nodes in a shared file are not ours to judge
    params.write_text('/other_robot/nobody:\n  ros__parameters:\n    anything: 1\n')
    assert apply('--params-file', str(params)).component('virtual_robot').parameters == \
        {'lag': 0.05}


def test_only_the_ros_args_sections_count():
    arguments = parse_ros_arguments(['bringup', '-p', 'x', '--ros-args', '-r', 'a:=b', '-p',
                                     'lag:=0.1', '--', '-p', 'not:a rule', '--ros-args', '-p',
                                     'follow_joint_state:activation_delay:=2.0'])
    assert [(r.target, r.name, r.value) for r in arguments.rules] == [
        ('', 'lag', 0.1), ('follow_joint_state', 'activation_delay', 2.0)]
    with pytest.raises(RosArgumentsError, match='-p needs a value'):
        parse_ros_arguments(['--ros-args', '-p'])
