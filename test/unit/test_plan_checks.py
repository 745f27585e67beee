"""
Planned arm motions checked link by link before anything moves (R-SYS-9, R-CART-2).

The forbidden zones stop the tool point; the checks keep every link out of them and off the
robot's other links, on the Cartesian planner's paths and on joint moves, offline (the console,
``sweetie-motion program check``) as in the motion process's Cartesian node.
"""

import numpy as np
import pytest
from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.limiter import WorkspaceLimiter
from sweetie_motion.cartesian.plan_checks import CheckViolation, PathChecks
from sweetie_motion.cartesian.planner import CartesianCode, code_of
from sweetie_motion.cartesian.program import parse_program
from sweetie_motion.cartesian.runner import chain_home, OfflineBackend, program_steps
from sweetie_motion.checks.collision import CollisionModel, zone_obstacles
from sweetie_motion.checks.robot import CheckRobot
from sweetie_motion.console.planning import OfflinePlanner
from sweetie_motion.console.requests import PlanProgram


@pytest.fixture(scope='module')
def zones(arm):
    return WorkspaceLimiter.from_config(arm.get_chain_property('arm', 'workspace'))


def backend(arm, zones, checked=True):
    """Return an offline backend at the paper's first waypoint, checked or not."""
    home = chain_home(arm, 'arm')
    return OfflineBackend(arm, 'arm', home, workspace=zones,
                          checks=PathChecks(arm, 'arm', zones) if checked else None)


def above_the_turntable(arm, zones, height):
    """Return the joints at the paper's waypoint 2 (near the turntable) and a target above it."""
    planner = OfflinePlanner(arm, 'arm', chain_home(arm, 'arm'))
    try:
        program = 'HOME\nMOVL X1037 Y0 Z735 A0 B90 C180\n'
        plan = planner.plan(PlanProgram(1, tuple(program_steps(parse_program(program))),
                                        tuple(np.zeros(6))))
        assert not plan.error, plan.error
    finally:
        planner.close()
    start = plan.positions[-1]
    there = OfflineBackend(arm, 'arm', start, workspace=zones).tool_pose()
    return start, Pose(np.array([1.15, 0.0, height]), there.rotation)


def test_the_wrist_into_the_turntable_is_refused_though_the_tool_point_keeps_out(arm, zones):
    start, target = above_the_turntable(arm, zones, 0.68)
    # the tool point (the wrist's centre) stays 10 mm above the zone's margin: only the
    # tool-point check, it plans
    unchecked = OfflineBackend(arm, 'arm', start, workspace=zones)
    unchecked.move_linear([unchecked.tool_pose(), target], [0, 0], [None, None], 1.0)
    checked = OfflineBackend(arm, 'arm', start, workspace=zones,
                             checks=PathChecks(arm, 'arm', zones))
    with pytest.raises(CheckViolation) as refused:
        checked.move_linear([checked.tool_pose(), target], [0, 0], [None, None], 1.0)
    message = str(refused.value)
    # the forearm and the wrist (60 mm spheres and cylinders) reach into the turntable's body
    assert ('link3 and turntable' in message or 'link5 and turntable' in message) and \
        'overlap' in message, message
    assert refused.value.segment_index == 0 and refused.value.time > 0
    assert code_of(refused.value) == CartesianCode.PLANNING_FAILED
    # nothing was added to the plan: the move is refused as a whole
    assert np.allclose(checked.joint_positions(), start)


def test_a_joint_move_that_folds_the_tool_into_the_floor_or_the_base_is_refused(arm, zones):
    folded = np.array([-1.57, 1.23, 0.99, 0.0, 0.0, 0.0])
    with pytest.raises(CheckViolation, match='tool0 and floor overlap'):
        backend(arm, zones).move_joints(folded, None, 1.0)
    # without zones: the tool into the arm's own base
    alone = OfflineBackend(arm, 'arm', chain_home(arm, 'arm'), checks=PathChecks(arm, 'arm'))
    with pytest.raises(CheckViolation, match='base_link and tool0'):
        alone.move_joints(folded, None, 1.0)


def test_the_console_preview_names_the_line_of_a_move_the_checks_refuse(arm):
    planner = OfflinePlanner(arm, 'arm', chain_home(arm, 'arm'))
    try:
        program = 'HOME\nMOVL X1037 Y0 Z735 A0 B90 C180\nMOVL X1150 Y0 Z680 A0 B90 C180\n'
        plan = planner.plan(PlanProgram(1, tuple(program_steps(parse_program(program))),
                                        tuple(np.zeros(6))))
        assert plan.line == 3, plan.error
        assert 'would hurt the robot' in plan.error and 'turntable' in plan.error
    finally:
        planner.close()


def test_the_zones_bounds_hold_for_every_link_on_random_poses(arm, zones):
    robot = CheckRobot(arm.urdf_document(), arm.list_all_joints())
    model = CollisionModel(robot, obstacles=zone_obstacles(zones.zones))
    names = model.pair_names()
    assert ('link5', 'floor') in names and ('tool0', 'turntable') in names
    # the base is fixed like the zones: its pairs with them are never checked
    assert not any('base_link' in pair and 'floor' in pair for pair in names)
    lower, upper = arm.position_limits()
    poses = np.random.default_rng(7).uniform(lower, upper, (200, len(lower)))
    exact = model.all_exact(poses)
    assert (model.lower_bounds(poses) <= exact + 1e-9).all()
    # some random poses really do put a link into the floor or a machine
    zone_pairs = [k for k, (_, b) in enumerate(names) if b in ('floor', 'turntable',
                                                               'winding machine')]
    assert (exact[:, zone_pairs] < 0).any()
