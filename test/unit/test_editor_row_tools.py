"""
The editor's edits of a range of rows, without Qt or ROS (issue #37).

A support run (a drag down the support strip), a named pose inserted between rows, Mirror and
Repeat: each one undoable edit, on the real pony model (its ``mirror:``).
"""

import pytest
from sweetie_motion.editor.presenter import EditorPresenter, PARTS
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.model import load_robot_description

LEGS = ['leg1', 'leg2', 'leg3', 'leg4']
JOINTS = ['joint11', 'joint12', 'joint21', 'joint22', 'joint52', 'joint53',
          'support/leg1', 'support/leg2', 'support/leg3', 'support/leg4']


@pytest.fixture
def presenter(model, sent):
    p = EditorPresenter(sent.append, model, legs=LEGS)
    p.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=True))
    p.handle(PoseReceived(tuple(model.list_all_joints()),
                          tuple(0.0 for _ in model.list_all_joints())))
    return p


def rows(presenter, count: int):
    """Give the table ``count`` rows of JOINTS, 1 s apart, each a little different."""
    presenter.table.set_joints(JOINTS)
    for k in range(count):
        presenter.handle(PoseReceived(('joint11', 'joint12', 'joint21', 'joint22', 'joint52',
                                       'joint53'),
                                      (0.1 * k, 0.2 * k, -0.05 * k, 0.3, 0.1 * k, 0.2)))
        assert presenter.table.add_pose()
    return presenter.waypoints


def column(presenter, joint):
    index = presenter.waypoints.joints.index(joint)
    return [w.positions[index] for w in presenter.waypoints.waypoints]


def test_a_support_run_lifts_a_leg_in_every_row_passed_as_one_edit(presenter):
    rows(presenter, 5)
    assert presenter.table.set_support([1, 2, 3], 'leg3', False)
    assert column(presenter, 'support/leg3') == [1, 0, 0, 0, 1]
    assert 'leg3 lifted in rows 2-4' in presenter.message.text
    presenter.table.undo()
    assert column(presenter, 'support/leg3') == [1] * 5


def test_a_named_pose_goes_after_the_selection_and_keeps_the_joints_it_does_not_name(
        presenter):
    rows(presenter, 3)
    presenter.table.select([1])
    before = presenter.waypoints.pose(1)
    presenter.table.set_support([1], 'leg2', False)
    assert presenter.table.add_named_pose('look_up', {'joint53': 0.5, 'eyes_pitch': 0.3})
    inserted = presenter.waypoints.pose(2)
    assert presenter.waypoints.waypoints[2].label == 'look_up'
    assert inserted['joint53'] == 0.5
    assert {j: inserted[j] for j in ('joint11', 'joint12', 'joint52')} == \
        {j: before[j] for j in ('joint11', 'joint12', 'joint52')}
    assert inserted['support/leg2'] == 0.0        # standing on the legs of the row before
    assert presenter.table.selection == [2]
    presenter.table.undo()
    assert len(presenter.waypoints) == 3


def test_mirror_swaps_left_and_right_with_their_support_and_twice_gives_the_rows_back(
        presenter):
    rows(presenter, 3)
    presenter.table.set_support([2], 'leg1', False)
    original = presenter.waypoints.to_document()
    presenter.table.select([1, 2])
    assert presenter.row_tools.mirror_rows()
    mirrored = presenter.waypoints.pose(2)
    assert mirrored['joint21'] == pytest.approx(-0.2)      # joint11 = 0.2, a roll: negated
    assert mirrored['joint22'] == pytest.approx(0.4)       # joint12 = 0.4, a pitch: kept
    assert mirrored['joint12'] == pytest.approx(0.3)
    assert mirrored['joint52'] == pytest.approx(-0.2)      # the head's yaw
    assert mirrored['joint53'] == pytest.approx(0.2)       # its pitch
    assert mirrored['support/leg2'] == 0.0 and mirrored['support/leg1'] == 1.0
    assert presenter.waypoints.pose(0) == dict(zip(JOINTS, [0, 0, 0, 0.3, 0, 0.2, 1, 1, 1, 1]))
    assert presenter.row_tools.mirror_rows()
    assert presenter.waypoints.to_document() == original
    presenter.table.undo()
    assert presenter.document.undo_label == 'mirror rows 2-3'   # one edit each
    presenter.table.undo()
    assert presenter.waypoints.to_document() == original


def test_mirror_names_what_it_lacks_and_a_robot_without_a_mirror_says_why(presenter, sent):
    presenter.table.set_joints(['joint12', 'joint53'])
    assert presenter.table.add_pose()
    presenter.table.select([0])
    assert not presenter.row_tools.mirror_rows()
    assert 'Mirror needs joint22 (the mirror of joint12)' in presenter.message.text
    arm = load_robot_description('winding_arm.yaml')
    arm.configure()
    without = EditorPresenter(sent.append, arm)
    assert 'declares no mirror' in without.row_tools.mirror_refusal
    assert 'declares no mirror' not in presenter.row_tools.mirror_refusal
    assert presenter.row_tools.mirror_refusal == ''
    assert 'no robot model' in EditorPresenter(sent.append).row_tools.mirror_refusal


def test_repeat_appends_copies_with_the_same_steps_and_moves_what_follows(presenter):
    rows(presenter, 4)
    presenter.table.set_time(2, '2.5')
    presenter.table.set_time(3, '4.0')
    presenter.table.select([1, 2])
    assert presenter.row_tools.repeat_rows(3)
    times = [w.time for w in presenter.waypoints.waypoints]
    # the range 1.0, 2.5 comes back 1.0 s (its first row's Δt) after its end, twice
    assert times == pytest.approx([0.0, 1.0, 2.5, 3.5, 5.0, 6.0, 7.5, 9.0])
    assert column(presenter, 'joint11')[1:7] == pytest.approx([0.1, 0.2] * 3)
    assert presenter.table.selection == [3, 4, 5, 6]
    assert presenter.document.undo_label == 'repeat rows 2-3 3 times'
    presenter.table.undo()
    assert len(presenter.waypoints) == 4
    assert not presenter.row_tools.repeat_rows(1)
    assert 'repeat 2 to 20 times' in presenter.message.text


def test_repeat_of_the_whole_table_moves_an_end_marker_on_its_last_row(presenter):
    rows(presenter, 2)
    presenter.table.select([1])
    assert presenter.table.set_marker('end')
    presenter.table.select([0, 1])
    assert presenter.row_tools.repeat_rows(2)
    waypoints = presenter.waypoints
    # from 0 s: the copy starts the range's inner step (1 s) after its end
    assert [w.time for w in waypoints.waypoints] == pytest.approx([0.0, 1.0, 2.0, 3.0])
    assert waypoints.end == 3
