"""Goal validation (result codes, messages), goal transforms and tolerance resolution."""

import math

import numpy as np
import pytest
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.tolerances import ToleranceDefaults, Tolerances, Violation
from sweetie_motion.trajectory.validation import (
    check_limits, check_structure, GoalError, LimitViolation, PlayCode, ResultCode,
    validate_goal,
)


def make_goal(names=('joint51', 'joint53'), rows=((0.0, 0.0), (0.1, 0.2), (0.2, 0.4)),
              times=(0.0, 0.5, 1.0), velocities=None, accelerations=None, **kwargs):
    """Return a goal with one point per row (velocities/accelerations: rows or None)."""
    points = []
    for k, (t, row) in enumerate(zip(times, rows)):
        points.append(TrajectoryPoint(
            t, list(row), list(velocities[k]) if velocities else [],
            list(accelerations[k]) if accelerations else []))
    return TrajectoryGoal(list(names), points, **kwargs)


def refused(goal, model, code, *fragments, controlled=None):
    """Validate ``goal``, expect a GoalError with ``code``; return its message."""
    with pytest.raises(GoalError) as caught:
        validate_goal(goal, model, controlled)
    assert caught.value.code == code, str(caught.value)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# --- result codes --------------------------------------------------------------------------------


def test_result_codes_have_the_control_msgs_values():
    assert [(c.name, int(c)) for c in ResultCode] == [
        ('SUCCESSFUL', 0), ('INVALID_GOAL', -1), ('INVALID_JOINTS', -2),
        ('OLD_HEADER_TIMESTAMP', -3), ('PATH_TOLERANCE_VIOLATED', -4),
        ('GOAL_TOLERANCE_VIOLATED', -5)]


def test_goal_error_carries_code_and_name():
    error = GoalError(ResultCode.INVALID_JOINTS, 'unknown joint(s): x')
    assert error.code == -2 and error.code_name == 'INVALID_JOINTS'
    assert str(error) == 'unknown joint(s): x'
    assert GoalError(PlayCode.NOT_FOUND, 'x').code_name == 'NOT_FOUND'
    assert GoalError(-99, 'x').code_name == '-99'


# --- validation rules ----------------------------------------------------------------------------


def test_a_valid_goal_passes(model):
    validate_goal(make_goal(), model)
    validate_goal(make_goal(velocities=[(0, 0), (0.1, 0.1), (0, 0)],
                            accelerations=[(0, 0), (0, 0), (0, 0)]), model)


def test_unknown_joint_is_invalid_joints_and_named(model):
    goal = make_goal(names=('joint51', 'joint99'))
    refused(goal, model, ResultCode.INVALID_JOINTS, 'joint99')


def test_support_of_an_unknown_chain_is_invalid_joints(model):
    goal = make_goal(names=('joint51', 'support/tail'), rows=((0.0, 1.0), (0.1, 1.0),
                                                              (0.2, 0.0)))
    message = refused(goal, model, ResultCode.INVALID_JOINTS, 'support/tail')
    assert 'joint51' not in message


def test_support_of_a_leg_is_accepted(model):
    goal = make_goal(names=('joint11', 'support/leg1', 'support/leg3'),
                     rows=((0.0, 1.0, 1.0), (0.1, 0.0, 1.0), (0.2, 1.0, 0.0)))
    validate_goal(goal, model)
    validate_goal(goal, model, controlled=['joint11'])     # support flags are not joints
    assert goal.joints() == ['joint11']
    assert goal.support_chains() == ['leg1', 'leg3']
    assert goal.first_pose() == {'joint11': 0.0}


def test_duplicate_joint_names_are_invalid(model):
    goal = make_goal(names=('joint53', 'joint51', 'joint53'),
                     rows=((0, 0, 0), (0, 0, 0), (0, 0, 0)))
    refused(goal, model, ResultCode.INVALID_GOAL, 'duplicate', 'joint53')


def test_positions_size_mismatch(model):
    goal = make_goal(rows=((0.0, 0.0), (0.1,), (0.2, 0.4)))
    refused(goal, model, ResultCode.INVALID_GOAL, 'point 1', '1 positions', '2 joints')


def test_velocities_size_mismatch(model):
    goal = make_goal(velocities=[(0, 0), (0, 0), (0, 0, 0)])
    refused(goal, model, ResultCode.INVALID_GOAL, 'point 2', '3 velocities', '2 joints')


@pytest.mark.parametrize('field', ['velocities', 'accelerations'])
@pytest.mark.parametrize('missing', [0, 1])
def test_velocities_or_accelerations_in_some_points_only(model, field, missing):
    goal = make_goal(velocities=[(0, 0)] * 3, accelerations=[(0, 0)] * 3)
    setattr(goal.points[missing], field, [])
    refused(goal, model, ResultCode.INVALID_GOAL, field, 'every point or none')


@pytest.mark.parametrize('field, word', [('positions', 'position'), ('velocities', 'velocity'),
                                         ('accelerations', 'acceleration'),
                                         ('effort', 'effort')])
@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf])
def test_nan_and_inf_values_name_point_field_and_joint(model, field, word, bad):
    goal = make_goal(velocities=[(0, 0)] * 3, accelerations=[(0, 0)] * 3)
    for point in goal.points:
        point.effort = [0.0, 0.0]
    getattr(goal.points[2], field)[1] = bad
    refused(goal, model, ResultCode.INVALID_GOAL, 'point 2', f'{word} of joint53',
            str(bad))


@pytest.mark.parametrize('time', [-0.1, math.nan, math.inf])
def test_negative_or_non_finite_time(model, time):
    goal = make_goal(times=(time, 0.5, 1.0))
    refused(goal, model, ResultCode.INVALID_GOAL, 'point 0', str(time))


@pytest.mark.parametrize('times', [(0.0, 0.5, 0.5), (0.0, 0.7, 0.6)])
def test_times_must_increase_strictly(model, times):
    goal = make_goal(times=times)
    refused(goal, model, ResultCode.INVALID_GOAL, 'point 2', f'{times[2]:.4f}', 'point 1',
            'strictly')


def test_first_point_may_be_later_than_zero(model):
    validate_goal(make_goal(times=(0.3, 0.5, 1.0)), model)


def test_no_points(model):
    refused(make_goal(rows=(), times=()), model, ResultCode.INVALID_GOAL, 'no points')


def test_no_joint_names(model):
    goal = TrajectoryGoal([], [TrajectoryPoint(0.0, [])])
    refused(goal, model, ResultCode.INVALID_GOAL, 'no joint names')
    with pytest.raises(GoalError, match='no joint names'):
        check_structure(goal)


@pytest.mark.parametrize('value', [-0.5, math.nan, math.inf])
def test_goal_time_tolerance_must_be_finite_and_not_negative(model, value):
    refused(make_goal(goal_time_tolerance=value), model, ResultCode.INVALID_GOAL,
            'goal_time_tolerance', str(value))


def test_goal_time_tolerance_zero_and_positive_are_accepted(model):
    validate_goal(make_goal(goal_time_tolerance=0.0), model)
    validate_goal(make_goal(goal_time_tolerance=2.5), model)


@pytest.mark.parametrize('kind', ['path', 'goal'])
@pytest.mark.parametrize('field', ['position', 'velocity', 'acceleration'])
def test_tolerance_minus_two_is_invalid_minus_one_and_zero_are_fine(model, kind, field):
    for ok in (-1.0, 0.0, 0.25):
        tolerance = JointTolerance('joint53', **{field: ok})
        validate_goal(make_goal(**{f'{kind}_tolerance': [tolerance]}), model)
    tolerance = JointTolerance('joint53', **{field: -2.0})
    refused(make_goal(**{f'{kind}_tolerance': [tolerance]}), model, ResultCode.INVALID_GOAL,
            f'{kind}_tolerance of joint53', f'{field} -2.0')


@pytest.mark.parametrize('kind', ['path', 'goal'])
def test_tolerance_of_an_unknown_joint_is_invalid_joints(model, kind):
    goal = make_goal(**{f'{kind}_tolerance': [JointTolerance('joint51', 0.1),
                                              JointTolerance('jointX', 0.1)]})
    message = refused(goal, model, ResultCode.INVALID_JOINTS, f'{kind}_tolerance', 'jointX')
    assert 'joint51' not in message


def test_waypoint_above_the_upper_limit_names_joint_point_and_value(model):
    goal = make_goal(rows=((0.0, 0.0), (0.31, 0.2), (0.2, 0.4)))
    message = refused(goal, model, ResultCode.INVALID_GOAL, 'joint51', 'point 1', '0.31',
                      '0.26')
    assert 'more' not in message


def test_waypoint_below_the_lower_limit(model):
    goal = make_goal(names=('joint54', 'joint53'), rows=((0.0, 0.0), (0.0, 0.2), (-0.45, -0.6)))
    refused(goal, model, ResultCode.INVALID_GOAL, 'joint54 point 2 = -0.45 < lower limit -0.4',
            '(and 1 more)')


def test_waypoints_at_the_limit_are_accepted(model):
    goal = make_goal(names=('joint51', 'joint54'),
                     rows=((0.26, 0.4), (0.26 + 5e-7, -0.4 - 5e-7), (-1.57, 0.0)))
    validate_goal(goal, model)
    assert check_limits(goal, model) == []


def test_check_limits_lists_every_violation(model):
    goal = make_goal(names=('joint51', 'support/leg1', 'joint54'),
                     rows=((0.3, 1.0, 0.0), (0.0, 1.0, 0.5), (0.27, 0.0, -0.5)))
    violations = check_limits(goal, model)
    assert [(v.joint, v.point, v.value) for v in violations] == [
        ('joint51', 0, 0.3), ('joint51', 2, 0.27), ('joint54', 1, 0.5), ('joint54', 2, -0.5)]
    assert violations[0] == LimitViolation('joint51', 0, 0.3, -1.5708, 0.26)
    assert str(violations[3]) == 'joint54 point 2 = -0.5 < lower limit -0.4'


def test_controlled_joints_restriction(model):
    goal = make_goal(names=('joint51', 'joint53', 'joint11'),
                     rows=((0, 0, 0), (0, 0, 0), (0, 0, 0)))
    message = refused(goal, model, ResultCode.INVALID_JOINTS, 'joint11',
                      controlled=['joint51', 'joint53', 'joint52'])
    assert 'joint51' not in message and 'joint53' not in message
    validate_goal(goal, model, controlled=['joint11', 'joint51', 'joint53', 'joint52'])
    validate_goal(goal, model, controlled=None)


def test_unknown_joints_are_reported_before_structure(model):
    goal = make_goal(names=('joint99', 'joint51'), rows=(), times=())
    refused(goal, model, ResultCode.INVALID_JOINTS, 'joint99')


# --- goal transforms -----------------------------------------------------------------------------


def rich_goal():
    """Return a goal with velocities, accelerations, effort and tolerances."""
    goal = make_goal(names=('joint51', 'joint53', 'support/leg1'),
                     rows=((0.0, 0.1, 1.0), (0.2, -0.3, 1.0), (0.1, 0.5, 0.0)),
                     times=(0.0, 0.8, 2.0),
                     velocities=[(0, 0, 0), (0.4, -0.2, 0), (0, 0, 0)],
                     accelerations=[(0.1, 0, 0), (0.5, 1.5, 0), (-0.3, 0, 0)],
                     path_tolerance=[JointTolerance('joint51', 0.2),
                                     JointTolerance('joint53', -1, 0.5)],
                     goal_tolerance=[JointTolerance('joint53', 0.05)],
                     goal_time_tolerance=0.7, frame_id='base_link')
    for k, point in enumerate(goal.points):
        point.effort = [float(k), 2.0 * k, 0.0]
    return goal


def test_scaled_twice_as_fast():
    goal = rich_goal()
    fast = goal.scaled(2.0)
    assert [p.time for p in fast.points] == [0.0, 0.4, 1.0]
    assert [p.velocities for p in fast.points] == [[0, 0, 0], [0.8, -0.4, 0], [0, 0, 0]]
    assert [p.accelerations for p in fast.points] == [[0.4, 0, 0], [2.0, 6.0, 0],
                                                      [-1.2, 0, 0]]
    assert [p.positions for p in fast.points] == [p.positions for p in goal.points]
    assert [p.effort for p in fast.points] == [p.effort for p in goal.points]
    assert fast.duration == 1.0
    assert (fast.joint_names, fast.path_tolerance, fast.goal_tolerance, fast.frame_id,
            fast.goal_time_tolerance) == (goal.joint_names, goal.path_tolerance,
                                          goal.goal_tolerance, goal.frame_id, 0.7)
    assert goal == rich_goal()                             # the original is untouched
    fast.points[1].positions[0] = 9.0
    assert goal.points[1].positions[0] == 0.2              # no shared lists


def test_scaled_slower():
    slow = rich_goal().scaled(0.5)
    assert [p.time for p in slow.points] == [0.0, 1.6, 4.0]
    assert slow.points[1].velocities == [0.2, -0.1, 0]
    assert slow.points[1].accelerations == [0.125, 0.375, 0]


@pytest.mark.parametrize('speed', [0.0, -1.0, math.inf, math.nan])
def test_scaled_refuses_a_non_positive_or_non_finite_speed(speed):
    with pytest.raises(ValueError, match='speed'):
        rich_goal().scaled(speed)


def test_backward_plays_backwards():
    goal = rich_goal()
    back = goal.backward()
    assert [p.time for p in back.points] == [0.0, 1.2, 2.0]
    assert [p.positions for p in back.points] == [p.positions for p in goal.points[::-1]]
    assert [p.velocities for p in back.points] == [[0, 0, 0], [-0.4, 0.2, 0], [0, 0, 0]]
    # x(T - t) has the same second derivative
    assert [p.accelerations for p in back.points] == [p.accelerations
                                                      for p in goal.points[::-1]]
    assert [p.effort for p in back.points] == [p.effort for p in goal.points[::-1]]
    assert back.duration == goal.duration
    assert back.path_tolerance == goal.path_tolerance and back.frame_id == 'base_link'
    assert goal == rich_goal()


def test_backward_twice_is_the_original():
    goal = rich_goal()
    assert goal.backward().backward() == goal


def test_backward_twice_keeps_a_first_point_later_than_zero():
    goal = rich_goal().shifted(0.5)                        # times 0.5, 1.3, 2.5
    assert goal.backward().backward() == goal


def test_backward_without_points_is_a_copy():
    goal = make_goal(rows=(), times=())
    back = goal.backward()
    assert back == goal and back is not goal


def test_shifted():
    goal = rich_goal()
    later = goal.shifted(0.25)
    assert [p.time for p in later.points] == [0.25, 1.05, 2.25]
    assert [p.positions for p in later.points] == [p.positions for p in goal.points]
    assert [p.velocities for p in later.points] == [p.velocities for p in goal.points]
    assert later.duration == 2.25
    assert goal == rich_goal()
    assert later.shifted(-0.25) == goal


def test_subset_keeps_the_given_order_and_the_tolerances_of_kept_joints_only():
    goal = rich_goal()
    part = goal.subset(['joint53', 'support/leg1'])
    assert part.joint_names == ['joint53', 'support/leg1']
    assert [p.positions for p in part.points] == [[0.1, 1.0], [-0.3, 1.0], [0.5, 0.0]]
    assert [p.velocities for p in part.points] == [[0, 0], [-0.2, 0], [0, 0]]
    assert [p.accelerations for p in part.points] == [[0, 0], [1.5, 0], [0, 0]]
    assert [p.effort for p in part.points] == [[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]]
    assert part.path_tolerance == [JointTolerance('joint53', -1, 0.5)]
    assert part.goal_tolerance == [JointTolerance('joint53', 0.05)]
    assert [p.time for p in part.points] == [0.0, 0.8, 2.0]
    assert (part.goal_time_tolerance, part.frame_id) == (0.7, 'base_link')
    only51 = goal.subset(['joint51'])
    assert only51.goal_tolerance == [] and only51.path_tolerance == [
        JointTolerance('joint51', 0.2)]


def test_subset_keeps_empty_velocities_empty():
    part = make_goal().subset(['joint53'])
    assert [p.positions for p in part.points] == [[0.0], [0.2], [0.4]]
    assert all(p.velocities == [] and p.accelerations == [] for p in part.points)


def test_subset_of_an_unknown_joint_raises():
    with pytest.raises(ValueError):
        make_goal().subset(['joint11'])


def test_goal_accessors():
    goal = rich_goal()
    assert goal.column('joint53') == [0.1, -0.3, 0.5]
    assert goal.duration == 2.0
    assert make_goal(rows=(), times=()).duration == 0.0
    assert goal.tolerance('path', 'joint51') == JointTolerance('joint51', 0.2)
    assert goal.tolerance('goal', 'joint53') == JointTolerance('joint53', 0.05)
    assert goal.tolerance('goal', 'joint51') is None
    assert goal.first_pose() == {'joint51': 0.0, 'joint53': 0.1}
    assert make_goal(rows=(), times=()).first_pose() == {}


# --- tolerances ----------------------------------------------------------------------------------


JOINTS = ['joint51', 'joint52', 'joint53']


def test_tolerance_resolution_rules():
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,),
                     path_tolerance=[JointTolerance('joint51', 0.0, 0.0),
                                     JointTolerance('joint52', -1.0, 0.4)],
                     goal_tolerance=[JointTolerance('joint52', 0.02, -1.0),
                                     JointTolerance('joint53', -1.0, 0.1)])
    tolerances = Tolerances(JOINTS, goal, ToleranceDefaults(path=0.3, goal=0.05))
    # 0 -> default, -1 -> no limit, missing -> default, > 0 -> value
    np.testing.assert_array_equal(tolerances.path_position, [0.3, math.inf, 0.3])
    np.testing.assert_array_equal(tolerances.goal_position, [0.05, 0.02, math.inf])
    # velocities have no default: 0 or missing -> not checked
    np.testing.assert_array_equal(tolerances.path_velocity, [math.inf, 0.4, math.inf])
    np.testing.assert_array_equal(tolerances.goal_velocity, [math.inf, math.inf, 0.1])


def test_tolerances_follow_the_given_joint_order():
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,),
                     path_tolerance=[JointTolerance('joint53', 0.7)])
    tolerances = Tolerances(['joint53', 'joint51'], goal, ToleranceDefaults(path=0.3))
    np.testing.assert_array_equal(tolerances.path_position, [0.7, 0.3])


def test_per_joint_defaults_override_the_controller_defaults():
    defaults = ToleranceDefaults(path=0.3, goal=0.05,
                                 joints={'joint52': {'path': 0.1}, 'joint53': {'goal': 0.2}})
    assert defaults.of('joint52', 'path') == 0.1 and defaults.of('joint52', 'goal') == 0.05
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,),
                     goal_tolerance=[JointTolerance('joint53', 0.0)])
    tolerances = Tolerances(JOINTS, goal, defaults)
    np.testing.assert_array_equal(tolerances.path_position, [0.3, 0.1, 0.3])
    np.testing.assert_array_equal(tolerances.goal_position, [0.05, 0.05, 0.2])


def test_a_zero_default_means_not_checked():
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,))
    tolerances = Tolerances(JOINTS, goal, ToleranceDefaults(path=0.0, goal=0.0))
    assert np.all(np.isinf(tolerances.path_position))
    assert np.all(np.isinf(tolerances.goal_position))
    assert tolerances.start_violation(np.zeros(3), np.full(3, 100.0)) is None


def test_goal_time_default_when_zero():
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,))
    assert Tolerances(JOINTS, goal, ToleranceDefaults(goal_time=1.5)).goal_time == 1.5
    goal.goal_time_tolerance = 0.25
    assert Tolerances(JOINTS, goal, ToleranceDefaults(goal_time=1.5)).goal_time == 0.25


def violation_tolerances():
    goal = make_goal(names=JOINTS, rows=((0, 0, 0),), times=(0.0,),
                     path_tolerance=[JointTolerance('joint51', 0.5, 1.0),
                                     JointTolerance('joint52', 0.1, 1.0),
                                     JointTolerance('joint53', -1.0)],
                     goal_tolerance=[JointTolerance('joint51', 0.05, 0.2),
                                     JointTolerance('joint52', 0.02),
                                     JointTolerance('joint53', 0.01, 0.1)])
    return Tolerances(JOINTS, goal, ToleranceDefaults())


def test_path_violation_returns_the_worst_joint_with_its_error():
    tolerances = violation_tolerances()
    zero = np.zeros(3)
    assert tolerances.path_violation(zero, np.array([0.45, -0.09, 50.0]), zero, zero) is None
    # joint51 has the larger error, joint52 exceeds its tolerance by more
    found = tolerances.path_violation(zero, np.array([0.7, -0.35, 50.0]), zero, zero)
    assert found == Violation('joint52', 'position', pytest.approx(0.35), 0.1)
    assert 'joint52' in str(found) and 'position' in str(found)
    found = tolerances.path_violation(zero, np.array([0.8, 0.0, 0.0]), zero, zero)
    assert (found.joint, found.quantity, found.error, found.limit) == (
        'joint51', 'position', pytest.approx(0.3 + 0.5), 0.5)


def test_path_velocity_is_checked_after_the_position():
    tolerances = violation_tolerances()
    zero = np.zeros(3)
    desired_velocity = np.array([1.0, 0.0, 0.0])
    actual_velocity = np.array([-0.5, 0.2, 9.0])
    found = tolerances.path_violation(zero, zero, desired_velocity, actual_velocity)
    assert found == Violation('joint51', 'velocity', pytest.approx(1.5), 1.0)
    assert 'rad/s' in str(found)
    found = tolerances.path_violation(zero, np.array([0, 0.2, 0]), desired_velocity,
                                      actual_velocity)
    assert found.quantity == 'position' and found.joint == 'joint52'


def test_goal_violation():
    tolerances = violation_tolerances()
    desired = np.array([0.1, 0.2, 0.3])
    assert tolerances.goal_violation(desired, desired + 0.009, np.zeros(3)) is None
    found = tolerances.goal_violation(desired, desired + np.array([0.04, 0.0, 0.03]),
                                      np.zeros(3))
    assert found == Violation('joint53', 'position', pytest.approx(0.03), 0.01)
    found = tolerances.goal_violation(desired, desired, np.array([0.25, 5.0, 0.05]))
    assert found == Violation('joint51', 'velocity', pytest.approx(0.25), 0.2)
    assert str(found) == 'joint51: velocity error 0.2500 rad/s exceeds 0.2000 rad/s'


def test_start_violation_uses_the_path_tolerance():
    tolerances = violation_tolerances()
    start = np.array([0.0, 0.0, 0.0])
    assert tolerances.start_violation(start, np.array([0.49, 0.09, 3.0])) is None
    found = tolerances.start_violation(start, np.array([0.49, -0.12, 3.0]))
    assert found == Violation('joint52', 'position', pytest.approx(0.12), 0.1)
    assert str(found) == 'joint52: position error 0.1200 rad exceeds 0.1000 rad'
