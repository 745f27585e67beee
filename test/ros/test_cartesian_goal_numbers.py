"""A CartesianMotion goal's numbers are checked before anything is planned, each named."""

import pytest

pytestmark = [pytest.mark.ros]


def goal(**fields):
    from sweetie_motion_msgs.action import CartesianMotion
    request = CartesianMotion.Goal()
    for name, value in fields.items():
        setattr(request, name, value)
    return request


def refusal(request, count):
    from sweetie_motion.nodes.cartesian import goal_radii_and_speeds, CartesianGoalError
    from sweetie_motion_msgs.action import CartesianMotion
    with pytest.raises(CartesianGoalError) as caught:
        goal_radii_and_speeds(request, count)
    assert caught.value.code == CartesianMotion.Result.INVALID_GOAL
    return str(caught.value)


def test_one_radius_and_no_speeds_apply_to_every_waypoint():
    from sweetie_motion.nodes.cartesian import goal_radii_and_speeds
    assert goal_radii_and_speeds(goal(blend_radius=0.02), 3) == ([0.02] * 3, [None] * 3)
    radii, speeds = goal_radii_and_speeds(goal(blend_radii=[0.0, 0.01], speeds=[0.0, 0.2]), 2)
    assert radii == pytest.approx([0.0, 0.01]) and speeds == [None, pytest.approx(0.2)]


@pytest.mark.parametrize('fields, count, said', [
    ({'max_velocity': -1.0}, 2, 'max_velocity must be a number >= 0, got -1.0'),
    ({'blend_radius': float('nan')}, 2, 'blend_radius must be a number >= 0, got nan'),
    ({'speed_scale': 1.5}, 2, 'speed_scale must be within (0, 1] (0 means 1), got 1.5'),
    ({'blend_radii': [0.01]}, 2, 'blend_radii has 1 values for 2 waypoints'),
    ({'speeds': [0.1, -0.2]}, 2, 'speeds must be numbers >= 0'),
])
def test_a_bad_number_is_refused_naming_the_field(fields, count, said):
    assert said in refusal(goal(**fields), count)
