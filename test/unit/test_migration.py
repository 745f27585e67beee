"""Migration of the old robot's animations (ROS 1 JSON goals) with the real sample files."""

import copy
import json
from pathlib import Path

import pytest
from sweetie_motion.storage.migration import (
    clamp_to_limits, goal_from_ros1, load_ros1_json, MigrationError,
)
from sweetie_motion.trajectory.goal import JointTolerance
from sweetie_motion.trajectory.validation import (
    check_limits, check_structure, GoalError, validate_goal,
)

SAMPLES = Path(__file__).resolve().parent.parent / 'data' / 'sweetie_movements'
NAMES = ['applause', 'bow_begin', 'buck3', 'crouch_front', 'default', 'greeting', 'head_node',
         'head_suprised', 'hoof_wave', 'look_around']
#: the waypoints outside the Proto2 limits (README: joint51 upper 0.26, joint54 +-0.4)
OUTSIDE = {'crouch_front': 'joint51', 'head_suprised': 'joint54'}

pytestmark = pytest.mark.skipif(not SAMPLES.is_dir(), reason='sample animations not present')


@pytest.fixture(scope='module')
def goals():
    return {name: load_ros1_json(SAMPLES / f'{name}.json') for name in NAMES}


def raw(name):
    with open(SAMPLES / f'{name}.json', encoding='utf-8') as stream:
        return json.load(stream)


def test_the_ten_sample_files_are_there():
    assert sorted(p.stem for p in SAMPLES.glob('*.json')) == NAMES


@pytest.mark.parametrize('name', NAMES)
def test_every_sample_loads(goals, name):
    goal = goals[name]
    document = raw(name)['trajectory']
    assert goal.joint_names == document['joint_names']
    assert len(goal.points) == len(document['points'])
    if name == 'default':
        assert goal.points == [] and goal.duration == 0.0
        return
    assert len(goal.points) >= 3
    assert goal.points[0].time == 0.0
    assert all(b.time > a.time for a, b in zip(goal.points, goal.points[1:]))
    for point, source in zip(goal.points, document['points']):
        assert point.positions == source['positions']
        assert len(point.positions) == len(goal.joint_names)
        assert point.velocities == [] and point.accelerations == []
        stamp = source['time_from_start']
        assert point.time == pytest.approx(stamp['secs'] + stamp['nsecs'] * 1e-9, abs=1e-12)


def test_greeting_has_the_support_pseudo_joints_and_lasts_4_6_s(goals):
    goal = goals['greeting']
    assert goal.support_chains() == ['leg1', 'leg2', 'leg3', 'leg4']
    assert [j for j in goal.joint_names if j.startswith('support/')] == [
        'support/leg1', 'support/leg2', 'support/leg3', 'support/leg4']
    assert 'support/leg1' not in goal.joints() and 'joint11' in goal.joints()
    assert len(goal.joints()) == 14
    assert goal.duration == pytest.approx(4.6, abs=1e-8)
    assert len(goal.points) == 10
    assert goal.goal_time_tolerance == 1.0
    column = goal.column('support/leg1')
    assert set(column) <= {0.0, 1.0}


def test_tolerances_and_goal_time_are_converted(goals):
    head = goals['head_suprised']
    assert head.path_tolerance[0] == JointTolerance('joint54', 0.5, 0.0, 0.0)
    assert head.tolerance('path', 'eyes_yaw').position == pytest.approx(3.14)
    assert head.tolerance('goal', 'eyes_yaw').position == pytest.approx(0.5)
    assert goals['buck3'].goal_time_tolerance == pytest.approx(0.5)
    assert goals['applause'].goal_time_tolerance == 0.0
    assert all(not t.name.startswith('support/') for t in goals['greeting'].path_tolerance)
    for name in NAMES:
        document = raw(name)
        assert [t.name for t in goals[name].path_tolerance] == [
            t['name'] for t in document['path_tolerance']]
        assert [t.position for t in goals[name].goal_tolerance] == [
            t['position'] for t in document['goal_tolerance']]
        assert goals[name].frame_id == ''


@pytest.mark.parametrize('name', sorted(OUTSIDE))
def test_limit_violations_name_exactly_the_joint_point_and_value(goals, model, name):
    goal = goals[name]
    joint = OUTSIDE[name]
    column = goal.joint_names.index(joint)
    lower, upper = {'joint51': (-1.5708, 0.26), 'joint54': (-0.4, 0.4)}[joint]
    expected = [(k, p.positions[column]) for k, p in enumerate(goal.points)
                if not lower - 1e-6 <= p.positions[column] <= upper + 1e-6]
    violations = check_limits(goal, model)
    assert violations, name
    assert {v.joint for v in violations} == {joint}
    assert [(v.point, v.value) for v in violations] == expected
    for violation in violations:
        assert (violation.lower, violation.upper) == (pytest.approx(lower),
                                                      pytest.approx(upper))
        text = str(violation)
        assert text.startswith(f'{joint} point {violation.point} = ')
        assert f'{violation.value:.4g}' in text
        assert f'upper limit {upper:.4g}' in text or f'lower limit {lower:.4g}' in text


def test_the_known_violations_of_the_samples(goals, model):
    found = {name: [str(v) for v in check_limits(goals[name], model)] for name in OUTSIDE}
    assert found['head_suprised'] == ['joint54 point 1 = 0.4467 > upper limit 0.4']
    assert found['crouch_front'] == [f'joint51 point {k} = {value} > upper limit 0.26'
                                     for k, value in enumerate(
                                         ['0.38', '0.4084', '0.38', '0.3801', '0.3801'])]


@pytest.mark.parametrize('name', [n for n in NAMES if n not in OUTSIDE])
def test_the_other_samples_are_inside_the_limits(goals, model, name):
    assert check_limits(goals[name], model) == []
    if name != 'default':
        validate_goal(goals[name], model)


def test_default_has_no_points_and_is_refused(goals, model):
    with pytest.raises(GoalError, match='no points'):
        check_structure(goals['default'])
    # it also names three joints the Proto2 model does not have
    with pytest.raises(GoalError, match='joint_eyes_focus_x') as caught:
        validate_goal(goals['default'], model)
    assert caught.value.code_name == 'INVALID_JOINTS'


@pytest.mark.parametrize('name', sorted(OUTSIDE))
def test_the_samples_outside_the_limits_are_refused(goals, model, name):
    with pytest.raises(GoalError, match=OUTSIDE[name]) as caught:
        validate_goal(goals[name], model)
    assert caught.value.code_name == 'INVALID_GOAL'


@pytest.mark.parametrize('name', sorted(OUTSIDE))
def test_clamp_moves_exactly_the_violating_waypoints_to_the_limit(goals, model, name):
    goal = goals[name]
    before = copy.deepcopy(goal)
    clamped, moved = clamp_to_limits(goal, model)
    assert goal == before                                    # the input is untouched
    assert moved == check_limits(goal, model)
    column = goal.joint_names.index(OUTSIDE[name])
    changed = set()
    for k, (old, new) in enumerate(zip(goal.points, clamped.points)):
        assert old.time == new.time
        for c, (a, b) in enumerate(zip(old.positions, new.positions)):
            if a != b:
                changed.add((k, c))
    assert changed == {(v.point, column) for v in moved}
    for violation in moved:
        value = clamped.points[violation.point].positions[column]
        limit = violation.upper if violation.value > violation.upper else violation.lower
        assert value == limit
    assert (clamped.joint_names, clamped.path_tolerance, clamped.goal_tolerance,
            clamped.goal_time_tolerance) == (goal.joint_names, goal.path_tolerance,
                                             goal.goal_tolerance, goal.goal_time_tolerance)
    assert check_limits(clamped, model) == []
    validate_goal(clamped, model)


@pytest.mark.parametrize('name', ['greeting', 'look_around', 'head_node'])
def test_clamp_leaves_a_goal_inside_the_limits_alone(goals, model, name):
    clamped, moved = clamp_to_limits(goals[name], model)
    assert moved == []
    assert clamped == goals[name]


def test_clamp_to_the_lower_limit(goals, model):
    goal = copy.deepcopy(goals['head_suprised'])
    column = goal.joint_names.index('joint54')
    goal.points[2].positions[column] = -0.55
    clamped, moved = clamp_to_limits(goal, model)
    assert [(v.point, v.value) for v in moved] == [(1, pytest.approx(0.4467, abs=1e-4)),
                                                   (2, -0.55)]
    assert clamped.points[2].positions[column] == pytest.approx(-0.4)
    assert clamped.points[1].positions[column] == pytest.approx(0.4)


# --- malformed input -----------------------------------------------------------------------------


def test_malformed_json_names_the_file(tmp_path):
    path = tmp_path / 'broken_anim.json'
    path.write_text('{"trajectory": {"joint_names": [', encoding='utf-8')
    with pytest.raises(MigrationError, match='broken_anim.json'):
        load_ros1_json(path)


def test_a_missing_file_names_the_file(tmp_path):
    with pytest.raises(MigrationError, match='nothing_here.json'):
        load_ros1_json(tmp_path / 'nothing_here.json')


@pytest.mark.parametrize('document', [
    {'goal_time_tolerance': {'secs': 0, 'nsecs': 0}},
    {'trajectory': None},
    {'trajectory': [1, 2]},
    [{'trajectory': {}}],
    'trajectory',
])
def test_missing_trajectory_names_the_file(tmp_path, document):
    path = tmp_path / 'no_trajectory.json'
    path.write_text(json.dumps(document), encoding='utf-8')
    with pytest.raises(MigrationError, match='no_trajectory.json'):
        load_ros1_json(path)


@pytest.mark.parametrize('mutate, fragment', [
    (lambda d: d['trajectory'].pop('joint_names'), 'joint_names'),
    (lambda d: d['trajectory'].update(joint_names=['joint53', 7]), 'joint_names'),
    (lambda d: d['trajectory']['points'].__setitem__(1, 'oops'), 'point 1'),
    (lambda d: d['trajectory']['points'][2].update(positions=['high']), 'point 2'),
    (lambda d: d['trajectory']['points'][0].update(time_from_start='soon'), 'point 0'),
    (lambda d: d['trajectory']['points'][0].update(time_from_start={'secs': 'a'}), 'point 0'),
    (lambda d: d.update(goal_time_tolerance='long'), 'goal_time_tolerance'),
    (lambda d: d['path_tolerance'].append({'position': 1.0}), 'path_tolerance'),
    (lambda d: d['goal_tolerance'][0].update(position='x'), 'goal_tolerance'),
])
def test_malformed_parts_name_the_file_and_the_part(tmp_path, mutate, fragment):
    document = raw('head_node')
    mutate(document)
    path = tmp_path / 'bad_head.json'
    path.write_text(json.dumps(document), encoding='utf-8')
    with pytest.raises(MigrationError) as caught:
        load_ros1_json(path)
    assert 'bad_head.json' in str(caught.value) and fragment in str(caught.value)


def test_goal_from_ros1_accepts_ros2_durations_and_plain_seconds():
    goal = goal_from_ros1({'trajectory': {
        'header': {'frame_id': 'odom'}, 'joint_names': ['joint53'],
        'points': [{'positions': [0.0], 'time_from_start': {'sec': 0, 'nanosec': 0}},
                   {'positions': [0.2], 'time_from_start': {'sec': 1, 'nanosec': 500000000}},
                   {'positions': [0.1], 'velocities': [0.0], 'time_from_start': 2.25}]},
        'goal_time_tolerance': 0.5})
    assert [p.time for p in goal.points] == [0.0, 1.5, 2.25]
    assert goal.points[2].velocities == [0.0]
    assert goal.frame_id == 'odom' and goal.goal_time_tolerance == 0.5


def test_goal_from_ros1_default_name_in_errors():
    with pytest.raises(MigrationError, match='goal'):
        goal_from_ros1({})
