"""
The motion process as three processes (ROS side, cycle, state publisher), as a user runs it.

What a user must be able to rely on: one command starts all of it; a dead cycle process stops
the bringup with a clear message instead of leaving a robot that is silently not driven; a
killed bringup leaves no orphan behind; ``--in-process`` runs everything in one process.
"""

import os
from pathlib import Path
import signal

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from motion_process import motion_process, MotionClient
import pytest
from ros_util import HERE, wait_for, wait_future
from sweetie_motion.ros.action_client import ActionClient
from trajectory_msgs.msg import JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def children(pid):
    """Return the process ids whose parent is ``pid``."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open(f'/proc/{entry}/stat') as stream:
                    fields = stream.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != 'Z':
                found.append(int(entry))
    return found


def running(pid):
    try:
        with open(f'/proc/{pid}/stat') as stream:
            return stream.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


def bringup(namespace, *extra):
    """Run `sweetie-motion bringup` of the two-controller test process; yield the Process."""
    return motion_process('two_controllers.yaml', namespace, *extra, check_exit=False)


def cycle_status(peer, namespace):
    seen = {}
    peer.node.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda m: seen.update({s.name: s for s in m.status}), 10)
    wait_for(lambda: f'{namespace}: sync cycle' in seen, 15, message='cycle diagnostics')
    return {kv.key: kv.value for kv in seen[f'{namespace}: sync cycle'].values}


def test_a_killed_cycle_process_stops_the_bringup_with_a_message(domain_id):
    with bringup('cycle_killed') as process:
        with MotionClient('cycle_killed', domain_id) as peer:
            peer.wait_ready(['motion'])
        cycle = children(process.popen.pid)
        assert len(cycle) == 1, cycle
        os.kill(cycle[0], signal.SIGKILL)
        process.popen.wait(20)
        assert process.popen.returncode == 1
        assert 'the cycle process ended' in process.output()


def test_a_goal_running_when_the_cycle_process_dies_is_answered_aborted(tmp_path, domain_id):
    # the client waiting for its result (MoveIt, play) learns that the motion did not finish
    config = (Path(HERE) / 'config' / 'trajectory_test.yaml').read_text()
    path = tmp_path / 'trajectory_test.yaml'
    path.write_text(config.replace('STORAGE_DIR', str(tmp_path / 'store')))
    with motion_process(str(path), 'cycle_killed_goal', check_exit=False) as process:
        with MotionClient('cycle_killed_goal', domain_id) as peer:
            peer.wait_ready(['motion', 'joint_trajectory'])
            action = ActionClient(peer.node, FollowJointTrajectory,
                                  '/cycle_killed_goal/joint_trajectory/follow_joint_trajectory')
            assert action.wait_for_server(timeout_sec=20)
            start = peer.position('joint52', 'reference')
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = ['joint52']
            goal.trajectory.points = [
                JointTrajectoryPoint(positions=[start + 0.3], time_from_start=Duration(sec=5)),
                JointTrajectoryPoint(positions=[start], time_from_start=Duration(sec=10))]
            handle = wait_future(action.send_goal_async(goal), 15, 'goal response')
            assert handle.accepted
            result = handle.get_result_async()
            wait_for(lambda: peer.position('joint52', 'reference') > start + 0.02, 10,
                     message='the motion to start')
            cycle = children(process.popen.pid)
            assert len(cycle) == 1, cycle
            os.kill(cycle[0], signal.SIGKILL)
            answer = wait_future(result, 10, 'the goal result')
            assert answer.status == GoalStatus.STATUS_ABORTED
            assert answer.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
            assert 'the cycle process ended' in answer.result.error_string
        process.popen.wait(20)
        assert process.popen.returncode == 1


def test_a_killed_bringup_leaves_no_process_behind(domain_id):
    with bringup('bringup_killed') as process:
        with MotionClient('bringup_killed', domain_id) as peer:
            peer.wait_ready(['motion'])
        cycle = children(process.popen.pid)
        assert len(cycle) == 1
        publisher = children(cycle[0])
        assert len(publisher) == 1, 'the state publisher runs under the cycle process'
        os.kill(process.popen.pid, signal.SIGKILL)
        process.popen.wait(10)
        wait_for(lambda: not running(cycle[0]) and not running(publisher[0]), 15,
                 message='the cycle and publisher processes to end')


def test_the_cycle_reports_how_it_runs(domain_id):
    with bringup('cycle_report') as process:
        with MotionClient('cycle_report', domain_id) as peer:
            peer.wait_ready(['motion'])
            status = cycle_status(peer, 'cycle_report')
            assert status['isolated'] == 'true'
            assert status['scheduling'].startswith(('SCHED_FIFO 50', 'normal'))
            # Startup on a busy machine may cost ticks (imports contend for the cores); that
            # no client costs one is asserted under load in test_cycle_load.py.
            assert float(status['ticks']) > 0, 'the cycle runs'
            assert float(status['compute_p99']) > 0, 'and measures its compute time'
            assert float(status['lost']) >= 0 and float(status['jitter_p99']) >= 0
        assert process.stop() == 0


def test_in_process_the_same_nodes_publish_and_move(domain_id):
    with bringup('in_process', '--in-process') as process:
        with MotionClient('in_process', domain_id) as peer:
            peer.wait_ready(['motion', 'head_control', 'follow_joint_state'])
            assert children(process.popen.pid) == [], 'no cycle process'
            status = cycle_status(peer, 'in_process')
            assert status['isolated'] == 'false'
            peer.publish('joint_states_set', ['joint12'], [0.3])
            wait_for(lambda: abs(peer.position('joint12', 'reference') - 0.3) < 1e-3, 10,
                     message='the reference at the pose')
            wait_for(lambda: abs(peer.position('joint12') - 0.3) < 0.01, 10,
                     message='the virtual robot at the pose')
        assert process.stop() == 0
