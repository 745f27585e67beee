"""
Cartesian motion on the winding arm's bringup, from other processes (R-CART-1..4).

The arm's motion process runs as a user starts it (`sweetie-motion bringup --config
winding_arm_motion.yaml`); the paper's program runs with `sweetie-motion program run`, goals go
to the CartesianMotion action, and the joint reference is recorded over DDS and checked against
the path with the robot model's forward kinematics.
"""

import os
import subprocess
import sys

from motion_process import motion_process, MotionClient
import numpy as np
import pytest
from ros_util import ROOT, wait_for, wait_future
from sweetie_motion.cartesian.frames import Pose, rotation_angle
from sweetie_motion.ros.conversions import pose_to_msg

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'arm_cartesian'
CONFIG = 'winding_arm_motion.yaml'
PROGRAM = os.path.join('config', 'programs', 'paper_path.txt')  # relative, as a person types it
NODES = ['motion', 'joint_trajectory', 'cartesian', 'gripper']


def tool(arm, msg) -> Pose:
    index = {n: i for i, n in enumerate(msg.name)}
    q = [msg.position[index[j]] for j in arm.list_joints('arm')]
    return Pose.from_matrix(arm.forward_kinematics('arm', q))


def cartesian_goal(peer, goal, timeout=60.0, cancel_when=None):
    """Send ``goal``; cancel it once ``cancel_when()`` is true (if given); return the result."""
    from sweetie_motion.ros.action_client import ActionClient
    from sweetie_motion_msgs.action import CartesianMotion
    client = ActionClient(peer.node, CartesianMotion, f'/{NS}/cartesian/cartesian_motion')
    assert client.wait_for_server(timeout_sec=15)
    handle = wait_future(client.send_goal_async(goal), 15)
    assert handle.accepted
    if cancel_when is not None:
        wait_for(cancel_when, 30, message='the moment to cancel')  # a person pressing Stop
        wait_future(handle.cancel_goal_async(), 15)
    return wait_future(handle.get_result_async(), timeout).result


def stamp(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def densified_tool_path(arm, history, steps: int = 8, longest_gap: float = 0.25):
    """
    Return the tool poses along the recorded reference, samples a busy subscriber missed filled in.

    The reference moves by a few millimetres per cycle, so consecutive messages are joined in
    joint space (as the cycle interpolates); a gap longer than ``longest_gap`` is not bridged:
    the samples on either side count on their own.
    """
    names = arm.list_joints('arm')

    def joints(msg):
        index = {n: i for i, n in enumerate(msg.name)}
        return np.array([msg.position[index[j]] for j in names])

    poses = []
    previous = None
    for msg in history:
        q = joints(msg)
        if previous is not None and 0.0 < stamp(msg) - stamp(previous[0]) <= longest_gap:
            for s in np.linspace(0.0, 1.0, steps, endpoint=False)[1:]:
                between = previous[1] + s * (q - previous[1])
                poses.append(Pose.from_matrix(arm.forward_kinematics('arm', list(between))))
        poses.append(Pose.from_matrix(arm.forward_kinematics('arm', list(q))))
        previous = (msg, q)
    return poses


def paper_waypoints():
    import yaml
    with open(os.path.join(ROOT, 'config', 'paths', 'paper_path.yaml')) as stream:
        return [Pose.from_mm_zyz(*w, degrees=True) for w in yaml.safe_load(stream)['waypoints']]


def test_the_papers_program_moves_the_arm_through_all_eight_waypoints(arm, domain_id):
    with motion_process(CONFIG, NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(NODES)
            run = subprocess.run(
                [sys.executable, '-m', 'sweetie_motion.cli', 'program', 'run', PROGRAM,
                 '--namespace', NS], capture_output=True, text=True, timeout=180, cwd=ROOT)
            assert run.returncode == 0, run.stdout + run.stderr
            assert '2 steps done' in run.stdout, run.stdout
            assert '12 segments' in run.stdout, run.stdout
            with peer.lock:
                history = list(peer.history)
    poses = densified_tool_path(arm, history)
    positions = np.array([p.position for p in poses])
    for number, waypoint in enumerate(paper_waypoints(), start=1):
        nearest = int(np.argmin(np.linalg.norm(positions - waypoint.position, axis=1)))
        distance = np.linalg.norm(positions[nearest] - waypoint.position)
        # corners are blended (20 mm radius, 5 mm at the hook): the path passes within a few
        # millimetres of each corner, through the first and the last exactly
        limit = 0.002 if number in (1, 8) else 0.012
        assert distance < limit, f'waypoint {number}: the tool passed {distance * 1e3:.1f} mm away'
        if number in (1, 8):
            assert rotation_angle(poses[nearest].rotation, waypoint.rotation) < 0.01


def test_a_motion_into_a_forbidden_zone_is_refused_before_anything_moves(arm, domain_id,
                                                                         tmp_path):
    from sweetie_motion_msgs.action import CartesianMotion
    with motion_process(CONFIG, NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(NODES)
            with peer.lock:
                before = tool(arm, peer.reference)
                first = len(peer.history)
            # straight down through the floor (z < 0.05 m in the world frame)
            down = Pose(before.position * [1, 1, 0] + [0, 0, 0.02], before.rotation)
            goal = CartesianMotion.Goal(start_from_current=True,
                                        waypoints=[pose_to_msg(down)])
            result = cartesian_goal(peer, goal)
            assert result.error_code == CartesianMotion.Result.FORBIDDEN_ZONE, result
            assert 'floor' in result.error_string and 'segment' in result.error_string
            assert result.failed_waypoint == 0  # the goal's first waypoint
            with peer.lock:
                after = tool(arm, peer.reference)
            assert np.linalg.norm(after.position - before.position) < 1e-6  # nothing moved
            # a pose out of reach after one within it: NO_IK_SOLUTION naming the reach and the
            # waypoint (index 1 of the goal's); plan_only moves nothing
            up = Pose(before.position + [0, 0, 0.05], before.rotation)
            far = Pose(before.position + [0, 0, 2.0], before.rotation)
            result = cartesian_goal(peer, CartesianMotion.Goal(
                start_from_current=True, waypoints=[pose_to_msg(up), pose_to_msg(far)]))
            assert result.error_code == CartesianMotion.Result.NO_IK_SOLUTION, result
            assert "beyond the arm's reach" in result.error_string, result
            assert result.failed_waypoint == 1, result
            result = cartesian_goal(peer, CartesianMotion.Goal(
                start_from_current=True, waypoints=[pose_to_msg(up)], plan_only=True))
            assert result.error_code == 0 and result.samples > 10, result
            assert result.failed_waypoint == -1
            assert 'not executed' in result.error_string
            # nothing may move for a while after the plan: 0.3 s of the process's own stamps
            end = peer.node.get_clock().now().nanoseconds * 1e-9 + 0.3
            wait_for(lambda: stamp(peer.reference) >= end, 20, message='0.3 s more of references')
            with peer.lock:
                since = list(peer.history[first:])
            moved = max(np.linalg.norm(tool(arm, m).position - before.position) for m in since)
            assert moved < 1e-6, f'the tool moved {moved * 1e3:.3f} mm without a motion'
            # a program whose third move is out of reach fails on that move's line (not on
            # the line of the first move of the run)
            program = tmp_path / 'reach.txt'
            program.write_text('HOME\nMOVL X0 Y-384.8 Z850.2 A-90 B90 C180 F250\n'
                               'MOVL X1037 Y0 Z735 A0 B90 C180 R20\nMOVL Z2000\n')
            run = subprocess.run(
                [sys.executable, '-m', 'sweetie_motion.cli', 'program', 'run', str(program),
                 '--namespace', NS], capture_output=True, text=True, timeout=180, cwd=ROOT)
            assert run.returncode != 0 and 'line 4: ' in run.stdout + run.stderr, \
                run.stdout + run.stderr


def test_a_cancelled_path_stops_and_holds_and_the_gripper_answers(arm, domain_id):
    from sweetie_motion_msgs.action import CartesianMotion
    from sweetie_motion_msgs.srv import Gripper
    with motion_process(CONFIG, NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(NODES)
            with peer.lock:
                start = tool(arm, peer.reference)
            far = Pose(start.position + [0.0, 0.3, -0.3], start.rotation)
            goal = CartesianMotion.Goal(start_from_current=True, waypoints=[pose_to_msg(far)],
                                        max_velocity=0.1)

            def mid_path():
                with peer.lock:
                    now = tool(arm, peer.reference).position
                return np.linalg.norm(now - start.position) > 0.1   # of 0.42 m
            result = cartesian_goal(peer, goal, cancel_when=mid_path)
            assert result.error_code == CartesianMotion.Result.CANCELED, result
            # the arm decelerates (within its limits) and holds somewhere on the way

            def resting():
                with peer.lock:
                    recent = [tool(arm, m).position for m in peer.history[-20:]]
                return len(recent) == 20 and np.ptp(np.array(recent), axis=0).max() < 1e-6
            wait_for(resting, 10, message='the arm at rest after the cancel')
            with peer.lock:
                stop = tool(arm, peer.history[-1]).position
            assert 0.02 < np.linalg.norm(stop - start.position) < \
                np.linalg.norm(far.position - start.position) - 0.02
            client = peer.node.create_client(Gripper, f'/{NS}/gripper/command')
            assert client.wait_for_service(timeout_sec=10)
            hold = wait_future(client.call_async(Gripper.Request(command='hold')), 10)
            assert not hold.success and 'released' in hold.message
            clamp = wait_future(client.call_async(Gripper.Request(command='clamp')), 10)
            assert clamp.success and clamp.state == 'clamped'
            odd = wait_future(client.call_async(Gripper.Request(command='squeeze')), 10)
            assert not odd.success and 'unknown' in odd.message


def test_a_link_into_a_zone_or_the_floor_is_refused_before_it_moves(arm, domain_id, tmp_path):
    # from HOME: the tool point stays out of the turntable's zone, the forearm and the wrist do
    # not (the two MOVL make one path, refused as a whole); a joint move folds the tool into
    # the floor: both refused by the motion checks, and nothing of them runs
    home = tmp_path / 'home.txt'
    home.write_text('HOME\n')
    into = tmp_path / 'into.txt'
    into.write_text('MOVL X1037 Y0 Z735 A0 B90 C180\nMOVL X1150 Y0 Z680 A0 B90 C180\n')
    fold = tmp_path / 'fold.txt'
    fold.write_text('MOVJ -90 70.5 56.7 0 0 0\n')

    def program_run(program):
        return subprocess.run(
            [sys.executable, '-m', 'sweetie_motion.cli', 'program', 'run', str(program),
             '--namespace', NS], capture_output=True, text=True, timeout=180, cwd=ROOT)
    with motion_process(CONFIG, NS):
        with MotionClient(NS, domain_id) as peer:
            peer.wait_ready(NODES)
            for program, line, names in ((into, 2, ('turntable',)),
                                         (fold, 1, ('tool0 and floor',))):
                run = program_run(home)
                assert run.returncode == 0, run.stdout + run.stderr
                with peer.lock:
                    first = len(peer.history)
                    before = tool(arm, peer.reference)
                run = program_run(program)
                output = run.stdout + run.stderr
                assert run.returncode != 0 and f'line {line}: ' in output, output
                assert 'would hurt the robot' in output and all(n in output for n in names), \
                    output
                end = peer.node.get_clock().now().nanoseconds * 1e-9 + 0.3
                wait_for(lambda: stamp(peer.reference) >= end, 20,
                         message='0.3 s more of references')
                with peer.lock:
                    since = list(peer.history[first:])
                moved = max(np.linalg.norm(tool(arm, m).position - before.position)
                            for m in since)
                assert moved < 1e-6, f'the tool moved {moved * 1e3:.3f} mm'
