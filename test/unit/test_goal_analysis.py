"""One view of a goal's motion for the controller, the editor's plot and plot_trajectory."""

import numpy as np
import pytest
from sweetie_motion.trajectory.analysis import goal_motion, limit_flags
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.retime import limits_of
from sweetie_motion.trajectory.timing import limit_excess, planning_limits


def goal(joints, rows, times):
    return TrajectoryGoal(list(joints), [TrajectoryPoint(t, list(r)) for t, r in
                                         zip(times, rows)])


def test_support_flags_are_not_joints_and_keyframes_stay_in_order():
    motion = goal_motion(goal(['joint12', 'support/leg1', 'joint11'],
                              [(0.0, 1.0, 0.1), (0.3, 0.0, 0.2)], [0.5, 1.5]))
    assert motion.joints == ['joint12', 'joint11']
    assert motion.start == 0.5 and motion.end == 1.5
    np.testing.assert_allclose(motion.positions, [[0.0, 0.1], [0.3, 0.2]])
    sampled = motion.sample(11)
    np.testing.assert_allclose(sampled.position[[0, -1]], motion.positions, atol=1e-12)
    assert sampled.times[0] == 0.5 and sampled.times[-1] == 1.5


def test_what_the_plot_flags_as_too_fast_is_what_the_controller_retimes(model):
    # joint12 over 1 rad in 0.2 s: beyond its velocity limit
    joints = ['joint12']
    motion = goal_motion(goal(joints, [(0.0,), (1.0,)], [0.0, 0.2]))
    limits = limits_of(model, joints)
    flags = limit_flags(motion.sample(), limits)
    assert flags.fast.any() and not flags.outside.any()
    assert flags.describe(joints, limits) == [
        f'joint12: faster than {float(limits.velocity[0]):.2f} rad/s']
    factor, excess = limit_excess(motion.spline, joints, planning_limits(limits))
    assert factor > 1 and excess.joint == 'joint12'
    slower = motion.retimed(factor)
    assert slower.end == pytest.approx(0.2 * factor)
    assert not limit_flags(slower.sample(), limits).broken().any()
    assert limit_excess(slower.spline, joints, limits)[1] is None


def test_positions_beyond_a_limit_are_flagged_where_they_are(model):
    joints = ['joint51']  # upper limit 0.26 rad
    motion = goal_motion(goal(joints, [(0.0,), (0.5,), (0.0,)], [0.0, 2.0, 4.0]))
    sampled = motion.sample(401)
    flags = limit_flags(sampled, limits_of(model, joints))
    outside = sampled.times[flags.outside[:, 0]]
    assert outside.min() > 0.5 and outside.max() < 3.5 and 2.0 in np.round(outside, 3)


def test_a_single_keyframe_is_a_pose_held():
    motion = goal_motion(goal(['joint12'], [(0.2,)], [1.0]))
    sampled = motion.sample()
    assert len(sampled.times) == 1 and sampled.velocity[0, 0] == 0.0
