"""Goal errors carry their facts and map to their result codes through one table (R-FJT-2)."""

import pytest
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import (GoalJointsError, PositionLimitError,
                                                  RESULT_CODES, ResultCode, validate_goal)


def goal(joints, *rows):
    return TrajectoryGoal(list(joints), [TrajectoryPoint(t, list(q), [], [], [])
                                         for t, q in rows])


def test_a_waypoint_beyond_a_limit_names_joint_point_value_and_limit(pony):
    with pytest.raises(PositionLimitError) as caught:
        validate_goal(goal(['joint51'], (0.5, [0.0]), (1.0, [0.9])), pony)
    error = caught.value
    violation = error.violations[0]
    assert (violation.joint, violation.point) == ('joint51', 1)
    assert violation.value == 0.9 and violation.upper == pytest.approx(0.26)
    assert error.code == ResultCode.INVALID_GOAL == RESULT_CODES[PositionLimitError]


def test_unknown_and_foreign_joints_name_the_joints(pony):
    with pytest.raises(GoalJointsError) as caught:
        validate_goal(goal(['tail'], (1.0, [0.0])), pony)
    assert caught.value.joints == ['tail']
    assert caught.value.code == ResultCode.INVALID_JOINTS == RESULT_CODES[GoalJointsError]
    with pytest.raises(GoalJointsError) as caught:
        validate_goal(goal(['joint11'], (1.0, [0.0])), pony, ['joint51'])
    assert caught.value.joints == ['joint11'] and 'not driven' in str(caught.value)
