"""The trajectory editor's model WaypointsList (R-EDIT-7): every rule, pure Python, no ROS."""

import math

import pytest
from sweetie_motion.trajectory.codec import FORMAT, goal_to_document
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.waypoints import (
    DEFAULT_STEP, WaypointError, WAYPOINTS_FORMAT, WaypointsList,
)
import yaml

JOINTS = ['joint11', 'joint12', 'joint13']
NAN = float('nan')
INF = float('inf')


def make(n=3, joints=JOINTS, times=None):
    """Return a list over ``joints`` with ``n`` rows; row k holds 10 k + column + 1."""
    waypoints = WaypointsList(joints)
    real = waypoints.real_joints()
    for k in range(n):
        waypoints.add_from_state(real, [10.0 * k + c + 1 for c in range(len(real))],
                                 time=None if times is None else times[k])
    return waypoints


def times_of(waypoints):
    return [w.time for w in waypoints.waypoints]


def rows_of(waypoints):
    return [list(w.positions) for w in waypoints.waypoints]


def refused(waypoints, edit, *fragments):
    """Assert that ``edit`` raises WaypointError naming ``fragments`` and changes nothing."""
    before = waypoints.to_document()
    with pytest.raises(WaypointError) as info:
        edit()
    for fragment in fragments:
        assert fragment in str(info.value)
    assert waypoints.to_document() == before
    return info.value


def check_consistent(waypoints):
    """Assert the invariants that every successful edit must keep."""
    n = len(waypoints.joints)
    assert len(set(waypoints.joints)) == n
    for w in waypoints.waypoints:
        assert len(w.positions) == n
        assert all(math.isfinite(v) for v in w.positions)
        assert math.isfinite(w.time) and w.time >= 0
    times = times_of(waypoints)
    assert all(b > a for a, b in zip(times, times[1:]))
    active = waypoints.active_indices()
    for marker in (waypoints._start, waypoints._end):
        if marker is not None:
            assert 0 <= marker < len(waypoints)
            assert waypoints.waypoints[marker].active
    if len(active) > 1:
        assert waypoints.start in active and waypoints.end in active
        assert waypoints.start < waypoints.end
    for table in (waypoints.path_tolerance, waypoints.goal_tolerance):
        for joint, value in table.items():
            assert joint in waypoints.joints
            assert math.isfinite(value) and (value > 0 or value == -1)
    assert math.isfinite(waypoints.goal_time_tolerance)
    assert waypoints.goal_time_tolerance >= 0


def refused_or_consistent(waypoints, edit):
    """Assert that ``edit`` either is refused without a change or keeps the invariants."""
    before = waypoints.to_document()
    try:
        edit()
    except WaypointError:
        assert waypoints.to_document() == before
    else:
        check_consistent(waypoints)


# --- add_from_state ----------------------------------------------------------------------------


def test_add_from_state_takes_a_full_joint_state_in_any_order():
    waypoints = WaypointsList(['joint12', 'joint11'])
    index = waypoints.add_from_state(['joint51', 'joint11', 'joint99', 'joint12'],
                                     [5.0, 1.0, 9.0, 2.0], label='home')
    assert index == 0
    assert rows_of(waypoints) == [[2.0, 1.0]]
    assert waypoints.pose(0) == {'joint12': 2.0, 'joint11': 1.0}
    assert waypoints.waypoints[0].label == 'home'
    assert waypoints.waypoints[0].active and waypoints.waypoints[0].actions == []
    check_consistent(waypoints)


def test_add_from_state_refuses_a_pose_lacking_joints_and_names_each():
    waypoints = make(1, ['joint11', 'joint12', 'joint13', 'support/leg1'])
    error = refused(waypoints, lambda: waypoints.add_from_state(['joint12', 'joint51'],
                                                                [0.0, 0.0]),
                    'joint11', 'joint13')
    assert 'joint12' not in str(error) and 'support' not in str(error)


def test_add_from_state_does_not_need_support_pseudo_joints():
    waypoints = WaypointsList(['joint11', 'support/leg1'])
    waypoints.add_from_state(['joint11'], [0.5])
    assert rows_of(waypoints) == [[0.5, 1.0]]


@pytest.mark.parametrize('names, positions', [(['joint11', 'joint12', 'joint13'], [0.0, 0.0]),
                                              (['joint11', 'joint12'], [0.0, 0.0, 0.0])])
def test_add_from_state_refuses_names_and_positions_of_different_lengths(names, positions):
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.add_from_state(names, positions), 'names',
            'positions')


@pytest.mark.parametrize('bad', [NAN, INF, -INF])
def test_add_from_state_refuses_non_finite_positions(bad):
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.add_from_state(JOINTS, [0.0, bad, 0.0]), 'joint12')


def test_add_from_state_default_times_start_at_zero_and_step_one_second():
    waypoints = make(3)
    assert DEFAULT_STEP == 1.0
    assert times_of(waypoints) == [0.0, 1.0, 2.0]


def test_add_from_state_inserting_between_close_rows_puts_the_time_halfway():
    waypoints = make(3, times=[0.0, 1.0, 1.5])
    assert waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=1) == 1
    assert times_of(waypoints) == [0.0, 0.5, 1.0, 1.5]
    assert rows_of(waypoints)[1] == [7.0, 7.0, 7.0]
    waypoints.add_from_state(JOINTS, [8.0, 8.0, 8.0], index=4)       # at the end: a step later
    assert times_of(waypoints)[4] == 2.5
    waypoints.add_from_state(JOINTS, [9.0, 9.0, 9.0], index=4)       # 1.5 .. 2.5: halfway
    assert times_of(waypoints) == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    check_consistent(waypoints)


def test_add_from_state_inserting_with_room_puts_the_row_a_step_after_the_one_before():
    waypoints = make(2, times=[0.0, 10.0])
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=1)
    assert times_of(waypoints) == [0.0, DEFAULT_STEP, 10.0]


def test_add_from_state_inserting_first_takes_time_zero():
    waypoints = make(2, times=[2.0, 3.0])
    assert waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=0) == 0
    assert times_of(waypoints) == [0.0, 2.0, 3.0]
    assert rows_of(waypoints)[0] == [7.0, 7.0, 7.0]


def test_add_from_state_before_a_row_at_time_zero_is_refused():
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=0))


def test_add_from_state_takes_an_explicit_time_that_fits():
    waypoints = make(3)
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], time=1.25, index=2)
    assert times_of(waypoints) == [0.0, 1.0, 1.25, 2.0]


@pytest.mark.parametrize('time, index', [(1.0, 2), (0.5, 2), (2.0, 2), (3.0, 1), (2.0, None),
                                         (1.5, None), (0.0, 1)])
def test_add_from_state_refuses_an_explicit_time_out_of_order(time, index):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], time=time,
                                                        index=index), 'times must increase')


@pytest.mark.parametrize('time', [-0.5, NAN, INF])
def test_add_from_state_refuses_an_invalid_time(time):
    waypoints = make(1)
    refused(waypoints, lambda: waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], time=time))


@pytest.mark.parametrize('index', [-1, 4, 10])
def test_add_from_state_refuses_an_index_outside_the_list(index):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=index))


def test_add_from_state_support_takes_given_else_previous_row_else_one():
    waypoints = WaypointsList(['joint11', 'support/leg1', 'support/leg2'])
    waypoints.add_from_state(['joint11'], [0.0])
    assert rows_of(waypoints)[0] == [0.0, 1.0, 1.0]                   # no row before: 1
    waypoints.add_from_state(['joint11'], [0.1], support={'leg1': 0.0})
    assert rows_of(waypoints)[1] == [0.1, 0.0, 1.0]                   # given, else previous
    waypoints.add_from_state(['joint11'], [0.2], support={'leg2': 0.0})
    assert rows_of(waypoints)[2] == [0.2, 0.0, 0.0]                   # previous leg1
    waypoints.add_from_state(['joint11'], [0.3], index=2)            # between rows 1 and 2
    assert rows_of(waypoints)[2] == [0.3, 0.0, 1.0]                   # row 1's, not the last
    check_consistent(waypoints)


def test_add_from_state_support_of_a_row_inserted_first_defaults_to_one():
    waypoints = WaypointsList(['joint11', 'support/leg1'])
    waypoints.add_from_state(['joint11'], [0.0], time=1.0, support={'leg1': 0.0})
    waypoints.add_from_state(['joint11'], [0.5], index=0)
    assert rows_of(waypoints) == [[0.5, 1.0], [0.0, 0.0]]


def test_add_from_state_refuses_a_non_finite_support_value():
    # BUG: a NaN support value is stored in the row (and would reach the goal).
    waypoints = make(1, ['joint11', 'support/leg1'])
    refused(waypoints, lambda: waypoints.add_from_state(['joint11'], [0.5],
                                                        support={'leg1': NAN}))


# --- delete, duplicate, move, set_position, set_pose, set_actions ------------------------------


def test_delete_removes_the_row():
    waypoints = make(3)
    expected = [rows_of(waypoints)[0], rows_of(waypoints)[2]]
    waypoints.delete(1)
    assert rows_of(waypoints) == expected
    assert times_of(waypoints) == [0.0, 2.0]


@pytest.mark.parametrize('index', [-1, 3])
def test_delete_refuses_a_row_outside_the_list(index):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.delete(index), 'row')


def test_duplicate_copies_the_row_after_it_halfway_in_time():
    waypoints = make(3)
    waypoints.set_actions(1, ['blink'])
    waypoints.waypoints[1].label = 'nod'
    assert waypoints.duplicate(1) == 2
    assert times_of(waypoints) == [0.0, 1.0, 1.5, 2.0]
    source, copy = waypoints.waypoints[1], waypoints.waypoints[2]
    assert copy.positions == source.positions and copy.positions is not source.positions
    assert copy.actions == ['blink'] and copy.actions is not source.actions
    assert copy.label == 'nod' and copy.active
    copy.positions[0] = 42.0
    assert source.positions[0] != 42.0


def test_duplicate_of_the_last_row_is_a_step_later():
    waypoints = make(2)
    assert waypoints.duplicate(1) == 2
    assert times_of(waypoints) == [0.0, 1.0, 2.0]
    assert rows_of(waypoints)[2] == rows_of(waypoints)[1]


def test_duplicate_keeps_a_disabled_row_disabled():
    waypoints = make(3)
    waypoints.set_active(1, False)
    waypoints.duplicate(1)
    assert [w.active for w in waypoints.waypoints] == [True, False, False, True]


@pytest.mark.parametrize('index', [-1, 3])
def test_duplicate_refuses_a_row_outside_the_list(index):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.duplicate(index))


def test_move_changes_the_time_of_a_row_within_its_neighbours():
    waypoints = make(3)
    waypoints.set_actions(1, ['blink'])
    waypoints.move(1, 1.75)
    assert times_of(waypoints) == [0.0, 1.75, 2.0]
    assert waypoints.waypoints[1].actions == ['blink']
    waypoints.move(2, 30.0)
    waypoints.move(0, 0.5)
    assert times_of(waypoints) == [0.5, 1.75, 30.0]


@pytest.mark.parametrize('index, time, rows', [(1, 2.0, ('row 3', 'row 2')),
                                               (1, 0.0, ('row 2', 'row 1')),
                                               (1, 5.0, ('row 3', 'row 2')),
                                               (0, 1.0, ('row 2', 'row 1')),
                                               (2, 0.5, ('row 3', 'row 2'))])
def test_move_refuses_equal_or_out_of_order_times_naming_the_rows(index, time, rows):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.move(index, time), 'times must increase', *rows)


@pytest.mark.parametrize('time', [-1.0, NAN, INF])
def test_move_refuses_an_invalid_time(time):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.move(2, time))


def test_move_refuses_a_row_outside_the_list():
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.move(3, 10.0))


def test_set_position_sets_one_angle():
    waypoints = make(2, JOINTS + ['support/leg1'])
    waypoints.set_position(1, 'joint12', -0.5)
    waypoints.set_position(1, 'support/leg1', 0.0)
    assert waypoints.pose(1) == {'joint11': 11.0, 'joint12': -0.5, 'joint13': 13.0,
                                 'support/leg1': 0.0}
    assert rows_of(waypoints)[0] == [1.0, 2.0, 3.0, 1.0]


@pytest.mark.parametrize('index, joint, value', [(0, 'joint99', 0.0), (2, 'joint11', 0.0),
                                                 (-1, 'joint11', 0.0), (0, 'joint11', NAN),
                                                 (0, 'joint11', INF)])
def test_set_position_refuses_bad_input(index, joint, value):
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_position(index, joint, value))


def test_set_pose_replaces_the_given_joints_and_keeps_the_others():
    waypoints = make(2)
    waypoints.set_pose(1, ['joint51', 'joint13', 'joint11'], [9.0, -3.0, -1.0])
    assert waypoints.pose(1) == {'joint11': -1.0, 'joint12': 12.0, 'joint13': -3.0}
    assert rows_of(waypoints)[0] == [1.0, 2.0, 3.0]


def test_set_pose_refuses_a_row_outside_the_list():
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_pose(2, JOINTS, [0.0, 0.0, 0.0]))


def test_set_pose_with_an_invalid_angle_changes_nothing():
    # BUG: set_pose applies the joints one by one; the NaN of joint12 is refused after joint11
    # has already been overwritten (half-applied edit).
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_pose(0, ['joint11', 'joint12'], [5.0, NAN]),
            'joint12')


def test_set_pose_refuses_names_and_positions_of_different_lengths():
    # BUG: zip() silently drops the names without a position (add_from_state refuses this).
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_pose(0, ['joint11', 'joint12'], [5.0]))


def test_set_actions_attaches_actions_and_drops_blank_ones():
    waypoints = make(2)
    actions = ['blink', ' ', '', 'say hello']
    waypoints.set_actions(1, actions)
    assert waypoints.waypoints[1].actions == ['blink', 'say hello']
    actions.append('later')
    assert waypoints.waypoints[1].actions == ['blink', 'say hello']
    assert waypoints.waypoints[0].actions == []
    waypoints.set_actions(1, [])
    assert waypoints.waypoints[1].actions == []
    refused(waypoints, lambda: waypoints.set_actions(2, ['blink']))


# --- markers -----------------------------------------------------------------------------------


def test_default_markers_are_the_first_and_last_active_rows():
    waypoints = make(5)
    assert (waypoints.start, waypoints.end) == (0, 4)
    waypoints.set_active(0, False)
    waypoints.set_active(4, False)
    assert (waypoints.start, waypoints.end) == (1, 3)
    assert WaypointsList(JOINTS).start == 0 and WaypointsList(JOINTS).end == 0


def test_markers_can_be_set_and_reset():
    waypoints = make(5)
    waypoints.set_start(1)
    waypoints.set_end(3)
    assert (waypoints.start, waypoints.end) == (1, 3)
    waypoints.set_start(None)
    waypoints.set_end(None)
    assert (waypoints.start, waypoints.end) == (0, 4)


@pytest.mark.parametrize('setter', ['set_start', 'set_end'])
def test_markers_refuse_disabled_rows(setter):
    waypoints = make(5)
    waypoints.set_active(2, False)
    refused(waypoints, lambda: getattr(waypoints, setter)(2), 'row 3 is disabled')


@pytest.mark.parametrize('setter', ['set_start', 'set_end'])
def test_markers_refuse_rows_outside_the_list(setter):
    waypoints = make(3)
    refused(waypoints, lambda: getattr(waypoints, setter)(3))
    refused(waypoints, lambda: getattr(waypoints, setter)(-1))


def test_start_marker_must_be_before_the_end_marker():
    waypoints = make(5)
    refused(waypoints, lambda: waypoints.set_start(4), 'before the end marker', 'row 5')
    waypoints.set_end(2)
    refused(waypoints, lambda: waypoints.set_start(2), 'before the end marker', 'row 3')
    refused(waypoints, lambda: waypoints.set_start(3), 'before the end marker')
    waypoints.set_start(1)
    assert waypoints.start == 1


def test_end_marker_must_be_after_the_start_marker():
    waypoints = make(5)
    refused(waypoints, lambda: waypoints.set_end(0), 'after the start marker', 'row 1')
    waypoints.set_start(2)
    refused(waypoints, lambda: waypoints.set_end(2), 'after the start marker', 'row 3')
    refused(waypoints, lambda: waypoints.set_end(1), 'after the start marker')
    waypoints.set_end(3)
    assert waypoints.end == 3


def test_markers_shift_when_rows_are_inserted_before_them():
    waypoints = make(5, times=[1, 3, 5, 7, 9])
    waypoints.set_start(1)
    waypoints.set_end(3)
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=0, time=None)  # before both
    assert (waypoints.start, waypoints.end) == (2, 4)
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=3)      # between them
    assert (waypoints.start, waypoints.end) == (2, 5)
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=6)      # after both
    assert (waypoints.start, waypoints.end) == (2, 5)
    waypoints.add_from_state(JOINTS, [7.0, 7.0, 7.0], index=2)      # at the start row
    assert (waypoints.start, waypoints.end) == (3, 6)
    assert waypoints.waypoints[3].time == 3.0 and waypoints.waypoints[6].time == 7.0
    check_consistent(waypoints)


def test_markers_shift_when_a_row_is_duplicated_before_them():
    waypoints = make(5)
    waypoints.set_start(1)
    waypoints.set_end(3)
    waypoints.duplicate(1)                                          # copy lands at 2
    assert (waypoints.start, waypoints.end) == (1, 4)
    waypoints.duplicate(0)
    assert (waypoints.start, waypoints.end) == (2, 5)


def test_markers_shift_when_rows_are_deleted_before_them():
    waypoints = make(6)
    waypoints.set_start(2)
    waypoints.set_end(4)
    waypoints.delete(5)                                             # after both
    assert (waypoints.start, waypoints.end) == (2, 4)
    waypoints.delete(3)                                             # between
    assert (waypoints.start, waypoints.end) == (2, 3)
    waypoints.delete(0)                                             # before both
    assert (waypoints.start, waypoints.end) == (1, 2)
    assert times_of(waypoints)[1:3] == [2.0, 4.0]


def test_deleting_a_marked_row_resets_that_marker():
    waypoints = make(6)
    waypoints.set_start(2)
    waypoints.set_end(4)
    waypoints.delete(2)
    assert waypoints._start is None and (waypoints.start, waypoints.end) == (0, 3)
    waypoints.delete(3)
    assert waypoints._end is None and (waypoints.start, waypoints.end) == (0, 3)


def test_disabling_the_first_row_keeps_the_start_before_an_explicit_end_marker():
    # BUG: rows 0..2 active, end marker on row 1, start marker by default on the first active
    # row. Disabling row 0 is allowed and moves the default start onto row 1 == the end marker
    # while rows 1 and 2 are active (set_start refuses exactly that state).
    waypoints = make(3)
    waypoints.set_end(1)
    refused_or_consistent(waypoints, lambda: waypoints.set_active(0, False))


def test_deleting_the_first_row_keeps_the_start_before_an_explicit_end_marker():
    # BUG: as above with delete(0): the end marker shifts to row 0, the default start is row 0.
    waypoints = make(3)
    waypoints.set_end(1)
    refused_or_consistent(waypoints, lambda: waypoints.delete(0))


def test_deleting_the_last_row_keeps_the_end_after_an_explicit_start_marker():
    # BUG: start marker on row 1, end by default on the last row 2; deleting row 2 makes the
    # default end row 1 == the start marker while rows 0 and 1 are active.
    waypoints = make(3)
    waypoints.set_start(1)
    refused_or_consistent(waypoints, lambda: waypoints.delete(2))


# --- set_active --------------------------------------------------------------------------------


@pytest.mark.parametrize('row, marker', [(1, 'start'), (3, 'end')])
def test_disabling_a_marked_row_is_refused(row, marker):
    waypoints = make(5)
    waypoints.set_start(1)
    waypoints.set_end(3)
    refused(waypoints, lambda: waypoints.set_active(row, False),
            f'row {row + 1} carries the {marker} marker')
    waypoints.set_active(row, True)                                 # enabling is fine
    assert waypoints.waypoints[row].active


def test_disabled_rows_are_not_played():
    waypoints = make(4)
    waypoints.set_active(1, False)
    goal = waypoints.build_goal()
    assert [p.positions for p in goal.points] == [rows_of(waypoints)[k] for k in (0, 2, 3)]
    assert [p.time for p in goal.points] == [0.0, 2.0, 3.0]
    assert len(waypoints) == 4
    waypoints.set_active(1, True)
    assert len(waypoints.build_goal().points) == 4


def test_set_active_refuses_a_row_outside_the_list():
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_active(2, False))


# --- set_joints --------------------------------------------------------------------------------


def test_set_joints_removes_columns_and_their_tolerances():
    waypoints = make(2)
    waypoints.set_tolerance('path', 'joint12', 0.3)
    waypoints.set_tolerance('goal', 'joint12', 0.1)
    waypoints.set_tolerance('goal', 'joint13', 0.2)
    waypoints.set_joints(['joint13', 'joint11'])
    assert waypoints.joints == ['joint13', 'joint11']
    assert rows_of(waypoints) == [[3.0, 1.0], [13.0, 11.0]]
    assert waypoints.path_tolerance == {}
    assert waypoints.goal_tolerance == {'joint13': 0.2}
    check_consistent(waypoints)


def test_set_joints_adds_new_joints_from_the_given_positions():
    waypoints = make(2)
    waypoints.set_joints(['joint11', 'joint51', 'joint12', 'joint13', 'support/leg1'],
                         {'joint51': -0.7, 'joint11': 99.0})
    assert rows_of(waypoints) == [[1.0, -0.7, 2.0, 3.0, 1.0], [11.0, -0.7, 12.0, 13.0, 1.0]]
    waypoints.set_joints(waypoints.joints + ['support/leg2'], {'support/leg2': 0.0})
    assert [r[-1] for r in rows_of(waypoints)] == [0.0, 0.0]


def test_set_joints_needs_a_position_for_new_joints_when_rows_exist():
    waypoints = make(2)
    error = refused(waypoints, lambda: waypoints.set_joints(
        JOINTS + ['joint51', 'joint52', 'joint53', 'support/leg1'], {'joint52': 0.0}),
        'joint51', 'joint53')
    assert 'joint52' not in str(error) and 'support' not in str(error)


def test_set_joints_on_an_empty_list_needs_no_positions():
    waypoints = WaypointsList()
    waypoints.set_joints(['joint11', 'support/leg1'])
    assert waypoints.joints == ['joint11', 'support/leg1']
    waypoints.add_from_state(['joint11'], [0.5])
    assert rows_of(waypoints) == [[0.5, 1.0]]


def test_set_joints_refuses_duplicates():
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_joints(['joint11', 'joint12', 'joint11',
                                                     'joint13', 'joint12']),
            'joint11', 'joint12')


def test_set_joints_refuses_a_non_finite_position_for_a_new_joint():
    # BUG: set_joints(['joint11', 'joint12', 'joint13', 'joint51'], {'joint51': nan}) puts NaN
    # into every row.
    waypoints = make(2)
    refused(waypoints, lambda: waypoints.set_joints(JOINTS + ['joint51'], {'joint51': NAN}))


# --- tolerances --------------------------------------------------------------------------------


@pytest.mark.parametrize('kind, table', [('path', 'path_tolerance'),
                                         ('goal', 'goal_tolerance')])
def test_set_tolerance_zero_removes_minus_one_is_kept(kind, table):
    waypoints = make(1)
    waypoints.set_tolerance(kind, 'joint12', 0.25)
    waypoints.set_tolerance(kind, 'joint13', -1)
    assert getattr(waypoints, table) == {'joint12': 0.25, 'joint13': -1.0}
    waypoints.set_tolerance(kind, 'joint12', 0)
    assert getattr(waypoints, table) == {'joint13': -1.0}
    waypoints.set_tolerance(kind, 'joint11', 0)                     # absent: still fine
    assert getattr(waypoints, table) == {'joint13': -1.0}


@pytest.mark.parametrize('value', [-0.5, -2.0, NAN, INF, -INF])
def test_set_tolerance_refuses_invalid_values(value):
    waypoints = make(1)
    waypoints.set_tolerance('path', 'joint11', 0.5)
    refused(waypoints, lambda: waypoints.set_tolerance('path', 'joint11', value), 'tolerance')


def test_set_tolerance_refuses_unknown_joints_and_kinds():
    waypoints = make(1)
    refused(waypoints, lambda: waypoints.set_tolerance('path', 'joint99', 0.5), 'joint99')
    refused(waypoints, lambda: waypoints.set_tolerance('speed', 'joint11', 0.5), 'speed')


def test_set_tolerance_for_all_skips_support_pseudo_joints():
    waypoints = make(1, ['joint11', 'support/leg1', 'joint12'])
    waypoints.set_tolerance_for_all('goal', 0.2)
    assert waypoints.goal_tolerance == {'joint11': 0.2, 'joint12': 0.2}
    assert waypoints.path_tolerance == {}
    waypoints.set_tolerance_for_all('goal', 0)
    assert waypoints.goal_tolerance == {}
    refused(waypoints, lambda: waypoints.set_tolerance_for_all('goal', -3.0))
    refused(waypoints, lambda: waypoints.set_tolerance_for_all('other', 1.0))


def test_set_goal_time_tolerance_validates():
    waypoints = make(1)
    waypoints.set_goal_time_tolerance(0.5)
    assert waypoints.goal_time_tolerance == 0.5
    for bad in (-0.1, -1, NAN, INF):
        refused(waypoints, lambda: waypoints.set_goal_time_tolerance(bad), 'goal time')
    waypoints.set_goal_time_tolerance(0)
    assert waypoints.goal_time_tolerance == 0.0


def test_tolerances_appear_in_the_goal_in_joint_order():
    waypoints = make(2)
    waypoints.set_tolerance('path', 'joint13', 0.3)
    waypoints.set_tolerance('path', 'joint11', -1)
    waypoints.set_tolerance('goal', 'joint12', 0.05)
    waypoints.set_goal_time_tolerance(0.75)
    goal = waypoints.build_goal()
    assert goal.path_tolerance == [JointTolerance('joint11', -1.0), JointTolerance('joint13', 0.3)]
    assert goal.goal_tolerance == [JointTolerance('joint12', 0.05)]
    assert goal.goal_time_tolerance == 0.75


# --- scale_time, reverse -----------------------------------------------------------------------


def test_scale_time_multiplies_every_time():
    waypoints = make(3, times=[0.5, 1.0, 2.5])
    waypoints.scale_time(2)
    assert times_of(waypoints) == [1.0, 2.0, 5.0]
    waypoints.scale_time(0.25)
    assert times_of(waypoints) == [0.25, 0.5, 1.25]


@pytest.mark.parametrize('factor', [0, -1, NAN, INF])
def test_scale_time_refuses_a_factor_that_is_not_positive(factor):
    waypoints = make(3)
    refused(waypoints, lambda: waypoints.scale_time(factor), 'scale')


def test_reverse_mirrors_times_and_reverses_rows():
    waypoints = make(4, times=[0.5, 1.0, 2.0, 4.5])
    waypoints.set_actions(0, ['blink'])
    waypoints.set_active(1, False)
    rows = rows_of(waypoints)
    waypoints.reverse()
    assert times_of(waypoints) == [0.5, 3.0, 4.0, 4.5]              # first + last - t
    assert rows_of(waypoints) == rows[::-1]
    assert waypoints.waypoints[3].actions == ['blink']
    assert [w.active for w in waypoints.waypoints] == [True, True, False, True]
    check_consistent(waypoints)


def test_reverse_swaps_the_markers():
    waypoints = make(6)
    waypoints.set_start(1)
    waypoints.set_end(3)
    waypoints.reverse()
    assert (waypoints._start, waypoints._end) == (2, 4)
    assert (waypoints.start, waypoints.end) == (2, 4)
    waypoints.set_start(None)
    waypoints.reverse()
    assert (waypoints._start, waypoints._end) == (1, None)          # start on row 1: end on 4
    assert (waypoints.start, waypoints.end) == (1, 5)


def test_reverse_twice_gives_the_original():
    waypoints = make(5, JOINTS + ['support/leg1'], times=[0.0, 0.5, 1.5, 2.0, 4.0])
    waypoints.set_start(1)
    waypoints.set_end(4)
    waypoints.set_active(2, False)
    waypoints.set_actions(3, ['blink'])
    waypoints.set_tolerance('path', 'joint11', 0.2)
    original = waypoints.to_document()
    waypoints.reverse()
    assert waypoints.to_document() != original
    waypoints.reverse()
    assert waypoints.to_document() == original


def test_reverse_of_an_empty_list_does_nothing():
    waypoints = WaypointsList(JOINTS)
    waypoints.reverse()
    assert len(waypoints) == 0


# --- build_goal --------------------------------------------------------------------------------


def test_build_goal_plays_the_marked_range_from_lead():
    waypoints = make(5, JOINTS + ['support/leg1'], times=[0.0, 1.0, 3.0, 4.0, 6.0])
    waypoints.set_start(1)
    waypoints.set_end(3)
    rows = rows_of(waypoints)
    goal = waypoints.build_goal()
    assert isinstance(goal, TrajectoryGoal)
    assert goal.joint_names == JOINTS + ['support/leg1']
    assert [p.positions for p in goal.points] == rows[1:4]
    assert [p.time for p in goal.points] == [0.0, 2.0, 3.0]
    goal = waypoints.build_goal(lead=0.5)
    assert [p.time for p in goal.points] == [0.5, 2.5, 3.5]
    goal.points[0].positions[0] = 42.0
    goal.joint_names.append('joint99')
    assert rows_of(waypoints) == rows and waypoints.joints == JOINTS + ['support/leg1']
    assert times_of(waypoints) == [0.0, 1.0, 3.0, 4.0, 6.0]


def test_build_goal_scale_two_halves_the_times():
    waypoints = make(3, times=[1.0, 2.0, 5.0])
    goal = waypoints.build_goal(scale=2, lead=1.0)
    assert [p.time for p in goal.points] == [1.0, 1.5, 3.0]
    assert times_of(waypoints) == [1.0, 2.0, 5.0]


def test_build_goal_backward_plays_end_to_start_with_mirrored_times():
    waypoints = make(5, times=[0.0, 1.0, 2.0, 5.0, 9.0])
    waypoints.set_start(1)
    waypoints.set_end(3)
    rows = rows_of(waypoints)
    goal = waypoints.build_goal(backward=True, lead=0.5, scale=2)
    assert [p.positions for p in goal.points] == [rows[3], rows[2], rows[1]]
    assert [p.time for p in goal.points] == [0.5, 2.0, 2.5]        # 0, 3, 4 s halved + lead


def test_build_goal_whole_ignores_the_markers():
    waypoints = make(5)
    waypoints.set_start(1)
    waypoints.set_end(2)
    waypoints.set_active(3, False)
    goal = waypoints.build_goal(whole=True)
    assert [p.positions for p in goal.points] == [rows_of(waypoints)[k] for k in (0, 1, 2, 4)]
    assert [p.time for p in goal.points] == [0.0, 1.0, 2.0, 4.0]


def test_build_goal_needs_joints():
    with pytest.raises(WaypointError, match='no joints'):
        WaypointsList().build_goal()


def test_build_goal_needs_an_active_row_in_the_range():
    with pytest.raises(WaypointError, match='no active rows'):
        WaypointsList(JOINTS).build_goal()
    waypoints = make(2)
    waypoints.set_active(0, False)
    waypoints.set_active(1, False)
    with pytest.raises(WaypointError, match='no active rows'):
        waypoints.build_goal()
    with pytest.raises(WaypointError, match='no active rows'):
        waypoints.build_goal(whole=True)


@pytest.mark.parametrize('scale', [0, -1.0, NAN, INF])
def test_build_goal_refuses_a_bad_scale(scale):
    with pytest.raises(WaypointError, match='scale'):
        make(2).build_goal(scale=scale)


# --- from_goal, documents ----------------------------------------------------------------------


def rich():
    """Return a list using everything the editor keeps."""
    waypoints = make(5, JOINTS + ['support/leg1'], times=[0.0, 0.5, 1.5, 2.0, 4.0])
    waypoints.set_position(2, 'support/leg1', 0.0)
    waypoints.set_start(1)
    waypoints.set_end(3)
    waypoints.set_active(4, False)
    waypoints.set_actions(1, ['blink', 'say hi'])
    waypoints.waypoints[3].label = 'home'
    waypoints.set_tolerance('path', 'joint12', 0.3)
    waypoints.set_tolerance('goal', 'joint13', -1)
    waypoints.set_goal_time_tolerance(0.5)
    return waypoints


def test_from_goal_holds_every_point_and_the_tolerances():
    waypoints = rich()
    goal = waypoints.build_goal(whole=True)
    back = WaypointsList.from_goal(goal)
    assert back.joints == waypoints.joints
    assert rows_of(back) == [rows_of(waypoints)[k] for k in range(4)]
    assert times_of(back) == [0.0, 0.5, 1.5, 2.0]
    assert all(w.active and w.actions == [] for w in back.waypoints)
    assert back.path_tolerance == {'joint12': 0.3}
    assert back.goal_tolerance == {'joint13': -1.0}
    assert back.goal_time_tolerance == 0.5
    assert (back._start, back._end) == (None, None)
    assert back.build_goal() == goal
    back.waypoints[0].positions[0] = 42.0
    back.joints.append('joint99')
    assert goal.points[0].positions[0] != 42.0 and 'joint99' not in goal.joint_names


def test_from_goal_drops_zero_tolerances_and_tolerances_of_other_joints():
    goal = TrajectoryGoal(['joint11'], [TrajectoryPoint(0.0, [0.0])],
                          [JointTolerance('joint11', 0.0), JointTolerance('joint99', 0.5)],
                          [JointTolerance('joint11', 0.2), JointTolerance('joint98', 0.1)])
    back = WaypointsList.from_goal(goal)
    assert back.path_tolerance == {} and back.goal_tolerance == {'joint11': 0.2}


def test_from_goal_refuses_times_out_of_order():
    goal = TrajectoryGoal(['joint11'], [TrajectoryPoint(1.0, [0.0]), TrajectoryPoint(1.0, [1.0])])
    with pytest.raises(WaypointError, match='times must increase'):
        WaypointsList.from_goal(goal)


def test_from_goal_refuses_points_with_the_wrong_number_of_positions():
    # BUG: from_goal does not compare the number of positions with the joints.
    goal = TrajectoryGoal(['joint11', 'joint12'], [TrajectoryPoint(0.0, [0.0]),
                                                   TrajectoryPoint(1.0, [0.0, 1.0])])
    with pytest.raises(WaypointError):
        WaypointsList.from_goal(goal)


@pytest.mark.parametrize('first, second', [(-1.0, 0.5), (0.0, NAN)])
def test_from_goal_refuses_invalid_times(first, second):
    # BUG: a negative first time and a NaN time (NaN passes every comparison) are accepted.
    goal = TrajectoryGoal(['joint11'], [TrajectoryPoint(first, [0.0]),
                                        TrajectoryPoint(second, [1.0]),
                                        TrajectoryPoint(3.0, [2.0])])
    with pytest.raises(WaypointError):
        WaypointsList.from_goal(goal)


def test_document_round_trip_keeps_everything():
    waypoints = rich()
    document = waypoints.to_document()
    assert document['format'] == WAYPOINTS_FORMAT
    assert document['start'] == 1 and document['end'] == 3
    assert [r['active'] for r in document['waypoints']] == [True, True, True, True, False]
    back = WaypointsList.from_document(document)
    assert back.to_document() == document
    assert (back.start, back.end) == (1, 3)
    assert back.waypoints[1].actions == ['blink', 'say hi']
    assert back.waypoints[3].label == 'home'
    assert back.path_tolerance == {'joint12': 0.3} and back.goal_tolerance == {'joint13': -1.0}
    assert back.goal_time_tolerance == 0.5
    assert back.build_goal() == waypoints.build_goal()
    assert back.build_goal(whole=True) == waypoints.build_goal(whole=True)


def test_document_survives_yaml():
    waypoints = rich()
    text = yaml.safe_dump(waypoints.to_document())
    back = WaypointsList.from_document(yaml.safe_load(text))
    assert back.to_document() == waypoints.to_document()


def test_document_without_markers_keeps_the_defaults():
    waypoints = make(3)
    back = WaypointsList.from_document(waypoints.to_document())
    assert (back._start, back._end) == (None, None)
    assert (back.start, back.end) == (0, 2)


def test_document_is_independent_of_the_list():
    waypoints = rich()
    document = waypoints.to_document()
    document['joints'].append('joint99')
    document['waypoints'][0]['positions'][0] = 42.0
    document['waypoints'][1]['actions'].append('dance')
    document['path_tolerance']['joint11'] = 1.0
    assert waypoints.to_document() == rich().to_document()
    document = waypoints.to_document()
    back = WaypointsList.from_document(document)
    back.waypoints[0].positions[0] = 42.0
    back.joints.append('joint99')
    back.path_tolerance['joint11'] = 1.0
    assert document == waypoints.to_document()


def test_from_document_reads_a_trajectory_file_document():
    goal = TrajectoryGoal(['joint51', 'joint53', 'support/leg1'],
                          [TrajectoryPoint(0.0, [0.0, 0.1, 1.0], [0.0, 0.0, 0.0]),
                           TrajectoryPoint(0.5, [-0.1, 0.3, 0.0]),
                           TrajectoryPoint(1.25, [0.05, -0.2, 1.0])],
                          [JointTolerance('joint53', 0.3)], [JointTolerance('joint51', -1.0)],
                          1.0)
    document = goal_to_document(goal, 'nod')
    assert document['format'] == FORMAT == 'sweetie_motion/trajectory 1'
    waypoints = WaypointsList.from_document(document)
    assert waypoints.joints == ['joint51', 'joint53', 'support/leg1']
    assert rows_of(waypoints) == [[0.0, 0.1, 1.0], [-0.1, 0.3, 0.0], [0.05, -0.2, 1.0]]
    assert times_of(waypoints) == [0.0, 0.5, 1.25]
    assert waypoints.path_tolerance == {'joint53': 0.3}
    assert waypoints.goal_tolerance == {'joint51': -1.0}
    assert waypoints.goal_time_tolerance == 1.0
    assert waypoints.build_goal(whole=True).points[1].positions == [-0.1, 0.3, 0.0]


def test_from_document_refuses_a_broken_trajectory_file_document():
    goal = TrajectoryGoal(['joint51'], [TrajectoryPoint(0.0, [0.0]), TrajectoryPoint(1.0, [1.0])])
    document = goal_to_document(goal, 'nod')
    document['points'][1]['t'] = 0.0
    with pytest.raises(WaypointError, match='times must increase'):
        WaypointsList.from_document(document)
    document = goal_to_document(goal, 'nod')
    document['format'] = 'sweetie_motion/trajectory 2'
    with pytest.raises(WaypointError):
        WaypointsList.from_document(document)
    document = goal_to_document(goal, 'nod')
    document['points'] = 'none'
    with pytest.raises(WaypointError):
        WaypointsList.from_document(document)


def test_from_document_refuses_a_trajectory_file_with_the_wrong_number_of_positions():
    # BUG: neither goal_from_document nor from_goal compares positions with joint_names.
    goal = TrajectoryGoal(['joint51', 'joint53'], [TrajectoryPoint(0.0, [0.0, 0.0]),
                                                   TrajectoryPoint(1.0, [1.0, 0.0])])
    document = goal_to_document(goal, 'nod')
    document['points'][1]['positions'] = [1.0]
    with pytest.raises(WaypointError):
        WaypointsList.from_document(document)


def broken(change):
    """Return the document of :func:`rich` after ``change(document)``."""
    document = rich().to_document()
    change(document)
    return document


def _set_row(k, key, value):
    return lambda d: d['waypoints'][k].__setitem__(key, value)


@pytest.mark.parametrize('document', [
    None, [], 'sweetie_motion/waypoints 1',
    broken(lambda d: d.__setitem__('format', 'sweetie_motion/waypoints 2')),
    broken(lambda d: d.pop('format')),
    broken(lambda d: d.pop('joints')),
    broken(lambda d: d.__setitem__('joints', None)),
    broken(_set_row(1, 'positions', [0.0, 0.0, 0.0])),
    broken(_set_row(1, 'positions', [0.0, 0.0, 0.0, 0.0, 0.0])),
    broken(_set_row(1, 'positions', ['a', 0.0, 0.0, 0.0])),
    broken(_set_row(1, 'positions', None)),
    broken(lambda d: d['waypoints'][1].pop('t')),
    broken(lambda d: d['waypoints'][1].pop('positions')),
    broken(_set_row(1, 't', 'soon')),
    broken(_set_row(1, 't', 0.0)),
    broken(_set_row(1, 't', 2.0)),
    broken(lambda d: d['waypoints'].__setitem__(2, 'row')),
    broken(lambda d: d.__setitem__('start', 5)),
    broken(lambda d: d.__setitem__('start', -1)),
    broken(lambda d: d.__setitem__('end', 1.5)),
    broken(lambda d: d.__setitem__('end', 'last')),
    broken(lambda d: d.__setitem__('goal_time_tolerance', 'long')),
    broken(lambda d: d.__setitem__('path_tolerance', {'joint12': 'wide'})),
], ids=lambda d: None)
def test_from_document_refuses_malformed_documents(document):
    with pytest.raises(WaypointError):
        WaypointsList.from_document(document)


@pytest.mark.parametrize('change', [
    # BUG: from_document crashes with AttributeError instead of WaypointError
    lambda d: d.__setitem__('format', None),
    lambda d: d.__setitem__('format', 1),
    lambda d: d.__setitem__('path_tolerance', [{'name': 'joint12', 'position': 0.3}]),
    lambda d: d.__setitem__('goal_tolerance', 'joint12'),
    # BUG: from_document accepts markers that the editor refuses
    lambda d: d.update(start=3, end=1),
    lambda d: d.update(start=2, end=2),
    lambda d: d.update(start=4, end=None),                          # row 4 is disabled
    lambda d: d.update(start=None, end=4),
    # BUG: from_document accepts times and positions that no edit can produce
    _set_row(1, 't', NAN),
    _set_row(0, 't', -1.0),
    _set_row(1, 'positions', [NAN, 0.0, 0.0, 1.0]),
    # BUG: from_document accepts tolerances and joints that the editor refuses
    lambda d: d.__setitem__('path_tolerance', {'joint12': -5.0}),
    lambda d: d.__setitem__('goal_tolerance', {'joint12': NAN}),
    lambda d: d.__setitem__('goal_time_tolerance', -1.0),
    lambda d: d.__setitem__('joints', ['joint11', 'joint11', 'joint13', 'support/leg1']),
], ids=['format None', 'format 1', 'path_tolerance list', 'goal_tolerance str',
        'start after end', 'start at end', 'start on disabled', 'end on disabled', 'NaN time',
        'negative time', 'NaN position', 'tolerance -5', 'tolerance NaN',
        'goal_time_tolerance -1', 'duplicate joints'])
def test_from_document_refuses_documents_breaking_the_rules(change):
    document = broken(change)
    with pytest.raises(WaypointError):
        WaypointsList.from_document(document)


def test_from_document_keeps_no_tolerance_of_an_unknown_joint():
    # BUG: from_document keeps {'joint99': 0.5} (from_goal drops such entries; set_joints
    # removes them); it must refuse the document or drop the entry.
    document = broken(lambda d: d.__setitem__('goal_tolerance', {'joint99': 0.5}))
    try:
        waypoints = WaypointsList.from_document(document)
    except WaypointError:
        return
    assert 'joint99' not in waypoints.goal_tolerance


# --- copy --------------------------------------------------------------------------------------


def test_copy_is_deep():
    waypoints = rich()
    original = waypoints.to_document()
    copy = waypoints.copy()
    assert copy.to_document() == original
    copy.set_position(0, 'joint11', 42.0)
    copy.set_actions(1, ['dance'])
    copy.waypoints[1].actions.append('more')
    copy.move(0, 0.25)
    copy.set_tolerance('path', 'joint12', 0.9)
    copy.set_goal_time_tolerance(3.0)
    copy.set_start(2)
    copy.set_joints(['joint11', 'joint12'])
    copy.delete(0)
    copy.reverse()
    assert waypoints.to_document() == original
    waypoints.set_position(0, 'joint12', -42.0)
    assert copy.pose(0)['joint12'] != -42.0


def test_the_time_from_the_previous_row_moves_that_row_and_every_row_after_it():
    waypoints = make(4, times=[0.5, 1.0, 3.0, 4.0])
    assert [waypoints.duration_before(k) for k in range(4)] == [0.5, 0.5, 2.0, 1.0]
    waypoints.set_duration(1, 1.5)          # the move into row 2 takes 1.5 s now
    assert times_of(waypoints) == [0.5, 2.0, 4.0, 5.0]
    waypoints.set_duration(0, 0.0)          # the first row at the start
    assert times_of(waypoints) == [0.0, 1.5, 3.5, 4.5]
    assert waypoints.duration_before(2) == 2.0   # the spacing after stays
    refused(waypoints, lambda: waypoints.set_duration(2, 0.0), 'previous row', '> 0')
    refused(waypoints, lambda: waypoints.set_duration(2, NAN), 'previous row')
    refused(waypoints, lambda: waypoints.set_duration(0, -1.0), 'first row')
