"""
Cartesian planning end to end without ROS (R-CART-1, R-CART-2).

Path -> samples -> zones -> IK -> joint limits, on the winding arm (the paper's path) and a
pony leg (a hoof placed).
"""

import math

import numpy as np
import pytest
from sweetie_motion.cartesian.frames import Pose, rotation_angle
from sweetie_motion.cartesian.limiter import (Box, JointLimiter, JointLimitViolation,
                                              WorkspaceLimiter, ZoneViolation)
from sweetie_motion.cartesian.path import PathError
from sweetie_motion.cartesian.planner import (CartesianPlanner, CartesianRequest,
                                              SINGULAR_ORIENTATION_TOLERANCE,
                                              SINGULAR_POSITION_TOLERANCE, StartPoseError)
from sweetie_motion.trajectory.timing import planning_limits
from test_cartesian_paper import A_MAX, LATERAL, paper_waypoints, RADIUS, V_MAX

PERIOD = 0.01
HOME = np.radians([-90, 0, 0, 0, 0, 0])  # the paper's waypoint 1


@pytest.fixture(scope='module')
def paper_plan(arm):
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    request = CartesianRequest(paper_waypoints(), RADIUS, V_MAX, A_MAX,
                               lateral_acceleration=LATERAL)
    return planner, planner.plan(request, HOME)


def test_the_papers_path_becomes_a_joint_trajectory_within_the_limits(arm, paper_plan):
    planner, plan = paper_plan
    assert len(plan.path.segments) == 12
    assert len(plan.samples) == 1835  # 18.34 s of path at 10 ms, with the centripetal limit
    assert len(plan.times) == len(plan.positions) == plan.prelude + len(plan.samples)
    # checked again, independently: every sample of the whole motion within the limits
    limits = planning_limits(arm.joint_limits()).take(arm.get_chain_indices('arm'))
    JointLimiter(planner.joints, limits).check(plan.positions, plan.times)
    assert np.all(np.diff(plan.times) > 0)


@pytest.mark.parametrize('radius', [0.0005, 0.002, 0.004])
def test_the_papers_path_plans_at_kdls_parameters_and_radii(arm, radius):
    # KDL accepts blends below 5 mm for these waypoints; with KDL's parameters (no centripetal
    # limit) the 0.5-4 mm hook corners slow the whole motion down, and the wrist turn at the
    # singular start then took longer than the 0.5 s a singular start was allowed: the plan
    # was refused as a branch flip at t = 0.04-0.1 s. The start is bounded by path length now.
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    plan = planner.plan(CartesianRequest(paper_waypoints(), radius, V_MAX, A_MAX), HOME)
    assert len(plan.path.segments) == 13
    count, position_error, orientation_error = plan.singular_start
    assert count > 0 and position_error < 1e-3 and orientation_error < math.radians(1)
    limits = planning_limits(arm.joint_limits()).take(arm.get_chain_indices('arm'))
    JointLimiter(planner.joints, limits).check(plan.positions, plan.times)
    reached = planner.tip_pose(plan.positions[-1])
    assert np.linalg.norm(reached.position - paper_waypoints()[-1].position) < 1e-5


def test_the_tool_follows_the_path_and_waits_during_the_wrist_reconfiguration(arm, paper_plan):
    planner, plan = paper_plan
    # the paper's start is a wrist singularity: the wrist turns first, the tool stays
    assert plan.prelude > 0
    start = planner.tip_pose(HOME)
    for q in plan.positions[:plan.prelude]:
        pose = planner.tip_pose(q)
        assert np.linalg.norm(pose.position - start.position) < 1e-3
        assert rotation_angle(pose.rotation, start.rotation) < 1e-2
    interpolated, position_error, orientation_error = plan.singular_start
    assert 0 < interpolated < 60  # a fraction of a second of the path
    assert position_error <= SINGULAR_POSITION_TOLERANCE
    assert orientation_error <= SINGULAR_ORIENTATION_TOLERANCE
    # after that, the IK tolerance along the whole path
    for i in range(interpolated, len(plan.samples), 7):
        pose = planner.tip_pose(plan.positions[plan.prelude + i])
        assert np.linalg.norm(pose.position - plan.samples.position[i]) < 2e-5
        assert rotation_angle(pose.rotation, plan.samples.rotation[i]) < 2e-4
    assert 'wrist reconfiguration' in plan.describe()
    assert 'singular start' in plan.describe()


@pytest.mark.parametrize('offset', [1e-6, 1e-4, 1e-3])
def test_a_start_next_to_the_wrist_singularity_plans_like_the_singular_one(
        arm, paper_plan, offset):
    # where HOME from a jogged pose leaves the arm: the wrist a hair off straight; the tool is
    # at the first waypoint (within the start tolerance), the path must still plan
    _, singular = paper_plan
    start = HOME + offset * np.array([0.6, -0.6, 0.6, 1.0, 1.0, -1.2])
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    request = CartesianRequest(paper_waypoints(), RADIUS, V_MAX, A_MAX,
                               lateral_acceleration=LATERAL)
    plan = planner.plan(request, start)
    assert plan.override == pytest.approx(singular.override)  # not slowed down for the wrist
    limits = planning_limits(arm.joint_limits()).take(arm.get_chain_indices('arm'))
    JointLimiter(planner.joints, limits).check(plan.positions, plan.times)
    assert np.allclose(plan.positions[0], start)


def test_a_forbidden_zone_refuses_the_motion_before_any_ik(arm):
    # a box around the winding machine's chuck (waypoints 6-7)
    zone = Box(np.array([-0.45, 1.10, 0.95]), np.array([-0.30, 1.25, 1.05]), name='chuck')
    planner = CartesianPlanner(arm, 'arm', PERIOD, workspace=WorkspaceLimiter([zone]))
    planner.ik.solve = None  # the zone must refuse before IK is asked anything
    with pytest.raises(ZoneViolation) as caught:
        planner.plan(CartesianRequest(paper_waypoints(), RADIUS, V_MAX, A_MAX), HOME)
    assert caught.value.zone == 'chuck' and caught.value.segment_index is not None
    assert 'chuck' in str(caught.value) and 't = ' in str(caught.value)


def test_a_waypoint_out_of_reach_is_refused_naming_it_and_the_reach(arm):
    # before any IK: IK along the way would end at the workspace's edge with a small residual,
    # which reads as a near miss (issue #37)
    from sweetie_motion.cartesian.planner import BeyondReach, code_of, CartesianCode
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    start = planner.tip_pose(HOME)
    far = Pose(start.position + np.array([0.0, -3.0, 0.0]), start.rotation)  # 3 m further
    with pytest.raises(BeyondReach) as caught:
        planner.plan(CartesianRequest([start, far], 0.0, 0.2, 0.2), HOME)
    assert caught.value.index == 1 and caught.value.distance > caught.value.reach > 1.0
    assert "beyond the arm's reach (about 1361 mm" in str(caught.value)
    assert code_of(caught.value) == CartesianCode.NO_IK_SOLUTION


def test_a_motion_too_fast_for_the_joints_is_slowed_down_or_refused(arm):
    waypoints = paper_waypoints()[1:4]   # near the turntable, through the 5 mm hook corners
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    start = planner.ik.solve(waypoints[0].matrix(), HOME).require()
    request = CartesianRequest(waypoints, 0.005, 2.0, 20.0)  # 2 m/s around 5 mm corners
    plan = planner.plan(request, start)
    assert plan.override < 1.0 and plan.retimed_by
    limits = planning_limits(arm.joint_limits()).take(arm.get_chain_indices('arm'))
    JointLimiter(planner.joints, limits).check(plan.positions, plan.times)
    refusing = CartesianPlanner(arm, 'arm', PERIOD, policy='refuse')
    with pytest.raises(JointLimitViolation) as caught:
        refusing.plan(request, start)
    assert caught.value.quantity in ('velocity', 'acceleration')
    assert caught.value.joint in planner.joints


def test_the_robot_must_stand_at_the_first_waypoint(arm):
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    with pytest.raises(StartPoseError) as caught:
        planner.plan(CartesianRequest(paper_waypoints()[1:3], 0.0, 0.1, 0.1), HOME)
    assert caught.value.distance > 0.5 and 'start_from_current' in str(caught.value)


def test_planning_errors_name_the_waypoint(arm):
    planner = CartesianPlanner(arm, 'arm', PERIOD)
    start = planner.tip_pose(HOME)
    with pytest.raises(PathError) as caught:
        planner.plan(CartesianRequest([start, start], 0.0, 0.1, 0.1), HOME)
    assert 'waypoint' in str(caught.value)
    with pytest.raises(ValueError):
        CartesianPlanner(arm, 'arm', PERIOD, policy='fast')


def test_a_pony_hoof_is_placed_by_position_only_ik(pony):
    planner = CartesianPlanner(pony, 'leg1', PERIOD)
    assert planner.task == 'position'
    start = np.array([0.0, 0.3, -0.6, 0.3, 0.0, 0.0])
    here = planner.tip_pose(start)
    lifted = Pose(here.position + np.array([0.02, 0.0, 0.03]), here.rotation)
    plan = planner.plan(CartesianRequest([here, lifted], 0.0, 0.1, 0.5), start)
    end = planner.tip_pose(plan.positions[-1])
    assert np.linalg.norm(end.position - lifted.position) < 2e-5
    assert plan.positions[:, 5].max() == plan.positions[:, 5].min() == 0.0  # the virtual joint
    assert math.isclose(plan.duration, plan.samples.time[-1])
