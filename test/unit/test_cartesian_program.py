"""Motion programs: the parser, errors with line:column, the formatter, from_path (R-CART-3)."""

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest
from sweetie_motion.cartesian.frames import euler_zyz, Pose
from sweetie_motion.cartesian.path import CartesianPath
from sweetie_motion.cartesian.program import (
    format_command, format_number, format_program, from_path, Gripper, Home, JointMove,
    linear_run, LinearMove, load_program, parse_line, parse_program, ProgramError,
    SpeedOverride, Wait,
)

PROGRAM = """\
; pick a mandrel (the paper's waypoints 2 to 5)
SPEED 50                              ; half speed from here on

home
MOVJ -90 0 0 0 0 0 V30
movj joint5=45 joint6=-10.5 RAD
MOVL X1037 Y0 Z735 A180 B-90 C0 F200 R20
  MOVL X1080 r5    (modal: Y, Z and the orientation stay)
MOVL X+1080.5 Y-.5 Z745. R0
GRIP CLAMP (clamp it)
grip release
GRIP Hold
WAIT 0.5
MOVL X10Y20Z30
"""


def test_every_command_parses():
    commands = parse_program(PROGRAM)
    assert commands == [
        SpeedOverride(50.0),
        Home(),
        JointMove((-90.0, 0.0, 0.0, 0.0, 0.0, 0.0), speed=30.0),
        JointMove(joints=(('joint5', 45.0), ('joint6', -10.5)), unit='rad'),
        LinearMove(1037.0, 0.0, 735.0, (180.0, -90.0, 0.0), 20.0, 200.0),
        LinearMove(x=1080.0, radius=5.0),
        LinearMove(1080.5, -0.5, 745.0, radius=0.0),
        Gripper('clamp'), Gripper('release'), Gripper('hold'),
        Wait(0.5),
        LinearMove(10.0, 20.0, 30.0),
    ]
    assert [c.line for c in commands] == [2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    assert commands[1].line == 4  # lines are counted with blanks and comments


def test_commands_know_their_units():
    move = parse_line('MOVJ 90 -45 V10')
    assert move.radians() == pytest.approx((math.pi / 2, -math.pi / 4))
    assert move.speed_radians() == pytest.approx(math.radians(10))
    named = parse_line('MOVJ joint2=0.5 RAD V1')
    assert named.radians() == (('joint2', 0.5),) and named.speed_radians() == 1.0
    assert parse_line('SPEED 25').factor == 0.25
    previous = Pose((0.1, 0.2, 0.3), euler_zyz(0.1, 0.2, 0.3))
    target = parse_line('MOVL Z500').target(previous)
    np.testing.assert_allclose(target.position, [0.1, 0.2, 0.5])
    np.testing.assert_allclose(target.rotation, previous.rotation)
    turned = parse_line('MOVL A90 B90 C0').target(previous)
    np.testing.assert_allclose(turned.rotation, euler_zyz(90, 90, 0, degrees=True))


def test_blank_and_comment_lines_give_nothing():
    for line in ('', '   ', '; only a comment', '(a comment) ; and another', '\t'):
        assert parse_line(line) is None
    assert parse_program('\n\n; x\n') == []


@pytest.mark.parametrize('text, column, pattern', [
    ('FOO 1', 1, "unknown command 'FOO'"),
    ('G1 X10', 1, "unknown command 'G1'"),
    ('12', 1, "unknown command '12'"),
    ('MOVL', 1, 'MOVL needs a target'),
    ('MOVL R5 F100', 1, 'MOVL needs a target'),
    ('MOVL X Y0', 6, 'X needs a number right after it'),
    ('MOVL X10 X20', 10, 'X given twice'),
    ('MOVL X10 Q5', 10, "unexpected 'Q5'"),
    ('MOVL X10 A90 B0', 10, 'A B C .* C missing'),
    ('MOVL X10 R-1', 10, 'R .* must be >= 0'),
    ('MOVL X10 F0', 10, r'F \(feed\) must be > 0'),
    ('MOVL X1.2.3', 6, "malformed number 'X1.2.3'"),
    ('MOVL X-', 6, 'X needs a number'),
    ('MOVJ', 1, 'MOVJ needs joint values'),
    ('MOVJ 1 2 joint3=4', 10, 'not both'),
    ('MOVJ joint1=1 joint1=2', 15, 'joint1 given twice'),
    ('MOVJ 1 V0', 8, r'V \(joint speed\) must be > 0'),
    ('MOVJ 1 V2 V3', 11, 'V .* given twice'),
    ('MOVJ 1 RAD DEG', 12, 'unit .* given twice'),
    ('MOVJ 1 fast', 8, "unexpected 'fast'"),
    ('MOVJ joint1=', 13, 'expected a number after joint1='),
    ('WAIT', 5, 'WAIT needs a duration'),
    ('WAIT -1', 6, 'duration >= 0'),
    ('WAIT 1 2', 8, "unexpected '2'"),
    ('WAIT 2s', 6, r"malformed number '2s' \(separate words by spaces\)"),
    # a typo, not G-code's compact X10Y20 (it would move the tool to X35)
    ('MOVL X10 Z7x35', 10, r"malformed number 'Z7x35' \(separate words by spaces\)"),
    ('MOVJ joint1=30deg', 13, "malformed number '30deg'"),
    ('WAIT soon', 6, 'WAIT needs a duration'),
    ('SPEED 0', 7, r'percentage in \(0, 100\]'),
    ('SPEED 101', 7, r'percentage in \(0, 100\]'),
    ('GRIP', 5, 'GRIP needs CLAMP, RELEASE or HOLD'),
    ('GRIP OPEN', 6, "got 'OPEN'"),
    ('HOME 1', 6, 'HOME takes nothing'),
    ('MOVL X10 (unclosed', 10, 'comment not closed'),
    ('MOVL X10 )', 10, "'\\)' without '\\('"),
    ('MOVL X10 # 1', 10, "unexpected character '#'"),
    ('MOVL X10 ..5', 10, 'a number has digits'),
])
def test_errors_point_at_the_offending_token(text, column, pattern):
    with pytest.raises(ProgramError, match=pattern) as error:
        parse_line(text, line=7)
    assert (error.value.line, error.value.column) == (7, column)
    caret = str(error.value).splitlines()[-1]
    assert caret == '    ' + ' ' * (column - 1) + '^'
    assert f'line 7:{column}: ' in str(error.value)


def test_errors_in_a_file_name_the_file_and_the_line(tmp_path):
    program = tmp_path / 'pick.prg'
    program.write_text('HOME\n; fine\nMOVL X10 Y\n')
    with pytest.raises(ProgramError) as error:
        load_program(str(program))
    assert (error.value.line, error.value.column) == (3, 10)
    assert str(error.value).startswith(f'{program}:3:10: Y needs a number')
    program.write_text('HOME\nWAIT 1\n')
    assert load_program(str(program)) == [Home(), Wait(1.0)]


def test_round_trip_of_the_example_program():
    commands = parse_program(PROGRAM)
    text = format_program(commands, header=['generated', 'by a test'])
    assert text.startswith('; generated\n; by a test\nSPEED 50\nHOME\nMOVJ -90 0 0 0 0 0 V30\n')
    assert parse_program(text) == commands
    assert format_command(commands[3]) == 'MOVJ joint5=45 joint6=-10.5 RAD'
    assert format_command(commands[4]) == 'MOVL X1037 Y0 Z735 A180 B-90 C0 R20 F200'


numbers = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-6, max_value=1e5, allow_nan=False)
maybe = st.one_of(st.none(), numbers)
names = st.from_regex(r'[a-z_][a-z0-9_]{0,8}', fullmatch=True).filter(
    lambda n: n.upper() not in ('DEG', 'RAD'))
command = st.one_of(
    st.builds(JointMove, positions=st.lists(numbers, min_size=1, max_size=7).map(tuple),
              speed=st.one_of(st.none(), positive), unit=st.sampled_from(['deg', 'rad'])),
    st.builds(JointMove, joints=st.dictionaries(names, numbers, min_size=1, max_size=4).map(
        lambda d: tuple(d.items())), speed=st.one_of(st.none(), positive)),
    st.builds(LinearMove, x=numbers, y=maybe, z=maybe,
              orientation=st.one_of(st.none(), st.tuples(numbers, numbers, numbers)),
              radius=st.one_of(st.none(), st.floats(0, 1e4)), feed=st.one_of(st.none(),
                                                                             positive)),
    st.builds(Wait, st.floats(0, 1e5)),
    st.builds(SpeedOverride, st.floats(1e-3, 100)),
    st.builds(Gripper, st.sampled_from(['clamp', 'release', 'hold'])),
    st.builds(Home),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(command, max_size=12))
def test_round_trip_format_then_parse(commands):
    assert parse_program(format_program(commands)) == commands


@pytest.mark.parametrize('value, text', [(1037.0, '1037'), (-90.0, '-90'), (0.1, '0.1'),
                                         (-0.0, '0'), (1e-7, '0.0000001'), (2.5e6, '2500000')])
def test_numbers_are_written_without_exponents(value, text):
    assert format_number(value) == text
    assert float(text) == value


def test_from_path_plans_the_same_path_again():
    poses = [Pose.from_mm_zyz(0, -384.8, 850.2, math.pi / 2, -math.pi / 2, 0),
             Pose.from_mm_zyz(1037, 0, 735, math.pi, -math.pi / 2, 0),
             Pose.from_mm_zyz(1080, 0, 735, math.pi, -math.pi / 2, 0),
             Pose.from_mm_zyz(1080, 0, 745, math.pi, -math.pi / 2, 0),
             Pose.from_mm_zyz(-350, 1172, 1000, -math.pi / 2, -math.pi / 2, -math.pi / 2)]
    path = CartesianPath(poses, radius=0.02)
    commands = from_path(path, feed=0.25)
    text = format_program(commands, header=[path.describe()])
    assert text.count('MOVL') == 5 and 'F250' in text
    parsed = parse_program(text)
    assert parsed == commands
    waypoints, radii, speeds = linear_run(parsed, start=poses[0])
    again = CartesianPath(waypoints, radius=radii)
    assert again.dropped == (1,)  # the start is the first target
    assert again.length == pytest.approx(path.length, abs=1e-6)
    assert [s.kind for s in again.segments] == [s.kind for s in path.segments]
    for mine, theirs in zip(again.segments, path.segments):
        assert mine.radius == pytest.approx(theirs.radius, abs=1e-7)
    end = again.pose(again.length)
    assert end.is_close(poses[-1], 1e-7, 1e-7)
    assert speeds == [None, 0.25, 0.25, 0.25, 0.25, 0.25]


def test_linear_run_takes_modal_values_from_the_previous_target():
    start = Pose((0.0, 0.0, 0.5), np.eye(3))
    moves = parse_program('MOVL X100 R10 F50\nMOVL Y200\nMOVL Z300 A0 B90 C0 F20\n')
    waypoints, radii, speeds = linear_run(moves, start)
    np.testing.assert_allclose([w.position for w in waypoints],
                               [[0, 0, 0.5], [0.1, 0, 0.5], [0.1, 0.2, 0.5], [0.1, 0.2, 0.3]])
    np.testing.assert_allclose(waypoints[2].rotation, np.eye(3))
    np.testing.assert_allclose(waypoints[3].rotation, euler_zyz(0, 90, 0, degrees=True))
    assert radii == pytest.approx([0.0, 0.01, 0.0, 0.0])
    assert speeds == pytest.approx([None, 0.05, 0.05, 0.02])
    with pytest.raises(TypeError, match='MOVL'):
        linear_run([Home()], start)


def test_the_documented_example_parses_and_formats_back():
    import sweetie_motion.cartesian.program as program
    doc = program.__doc__
    example = doc[doc.index('Example::') + len('Example::'):doc.index('Grammar')]
    text = '\n'.join(line[4:] for line in example.splitlines())
    commands = parse_program(text)
    assert len(commands) == 9
    assert parse_program(format_program(commands)) == commands


def test_step_mode_runs_a_path_one_movl_at_a_time_stopping_at_each_waypoint(arm):
    from sweetie_motion.cartesian.program import load_program
    from sweetie_motion.cartesian.runner import chain_home, OfflineBackend, program_steps, \
        ProgramRunner
    import os
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    commands = load_program(os.path.join(root, 'config', 'programs', 'paper_path.txt'))
    home = chain_home(arm, 'arm')
    backend = OfflineBackend(arm, 'arm', home)
    runner = ProgramRunner(program_steps(commands), backend, arm.list_joints('arm'), home)
    assert len(runner.steps) == 2   # HOME, then the path of the eight MOVL
    lines = []
    reports = runner.run(before=lambda step: lines.append(runner.next_line) or True,
                         single_move=True)
    assert lines == [3, 4, 5, 6, 7, 8, 9, 10, 11] and len(reports) == 9
    assert runner.finished and runner.next_move == 0
    # every MOVL ended at its own waypoint (the first one is where HOME leaves the tool)
    paths = [sample for kind, sample, _ in backend.record.steps if kind == 'linear']
    assert len(paths) == 7
    anywhere = Pose(np.zeros(3), np.eye(3))   # each MOVL of the paper gives x, y and z
    for command, sample in zip(commands[2:], paths):
        reached = np.asarray(backend.record.tool[sample])
        assert np.linalg.norm(reached - command.target(anywhere).position) < 1e-4
