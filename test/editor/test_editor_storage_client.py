"""
The storage client against the real trajectory_storage node of a motion process (and a hung one).

The session's motion process (``robot``) runs the storage node in another process.
"""

import threading
import time

import pytest
from ros_util import RosPeer, wait_for
from sweetie_motion.ros.storage_client import (
    StorageError, StorageRefusedError, StorageTimeoutError, StorageUnavailableError,
    TrajectoryNotFoundError, TrajectoryStorageClient,
)
from sweetie_motion.trajectory.codec import load_goal_file
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint

pytestmark = [pytest.mark.ros]

STORAGE = '/pony_editor/trajectory_storage'


def goal(*times: float, value: float = 0.3) -> TrajectoryGoal:
    return TrajectoryGoal(['joint51', 'joint53'],
                          [TrajectoryPoint(t, [-value * k, value * k]) for k, t in
                           enumerate(times)])


@pytest.fixture
def peer(robot):
    with RosPeer('storage_client_test', robot.domain) as peer:
        yield peer


def test_save_list_load_and_delete_through_the_storage_node(robot, peer):
    client = TrajectoryStorageClient(peer.node, STORAGE, timeout=10.0)
    assert client.wait_ready(10.0)
    client.save('client_made', goal(0.0, 0.5, 1.25))
    assert load_goal_file(robot.storage_dir / 'client_made.yaml').points[2].time == 1.25
    assert 'client_made' in client.names()
    assert 'greeting' in client.names()   # a built-in of the library
    loaded = client.load('client_made')
    assert [p.time for p in loaded.points] == [0.0, 0.5, 1.25]
    assert loaded.points[1].positions == pytest.approx([-0.3, 0.3])
    client.delete('client_made')
    assert 'client_made' not in client.names()
    assert not (robot.storage_dir / 'client_made.yaml').exists()


def test_errors_name_what_went_wrong(peer):
    client = TrajectoryStorageClient(peer.node, STORAGE, timeout=10.0)
    assert client.wait_ready(10.0)
    with pytest.raises(TrajectoryNotFoundError, match="no stored trajectory named 'nothing'"):
        client.load('nothing')
    with pytest.raises(StorageRefusedError) as refused:
        client.save('too_far', goal(0.0, 1.0, value=1.5))   # joint51 beyond its limit
    assert 'limit' in refused.value.reason and refused.value.name == 'too_far'
    with pytest.raises(StorageRefusedError, match="deleting 'greeting' refused"):
        client.delete('greeting')   # built-in
    with pytest.raises(StorageError, match='invalid trajectory name'):
        client.load('../escape')
    with pytest.raises(StorageError, match='times must increase'):
        client.save('backwards', goal(1.0, 0.5))


def test_futures_complete_in_the_executor_with_the_value_or_the_error(peer):
    client = TrajectoryStorageClient(peer.node, STORAGE, timeout=10.0)
    assert client.wait_ready(10.0)
    listed = client.list_async()
    missing = client.load_async('nothing')
    wait_for(lambda: listed.done() and missing.done(), 10, message='the answers')
    assert 'greeting' in listed.result()
    assert isinstance(missing.exception(), TrajectoryNotFoundError)


def test_a_storage_that_is_not_there_fails_at_once(peer):
    client = TrajectoryStorageClient(peer.node, '/pony_editor/no_such_storage', timeout=0.5)
    future = client.load_async('greeting')
    assert future.done() and isinstance(future.exception(), StorageUnavailableError)
    started = time.monotonic()
    with pytest.raises(StorageUnavailableError, match='start the motion process'):
        client.names()
    assert time.monotonic() - started < 5.0


def test_a_storage_that_never_answers_times_out(robot, peer, tmp_path):
    # a real storage node whose process hangs: it is discovered but nobody serves it
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    import rclpy
    from sweetie_motion.nodes.storage import TrajectoryStorageNode
    context = Context()
    rclpy.init(context=context, domain_id=robot.domain)
    node = TrajectoryStorageNode(None, 'hung_storage', namespace='/pony_editor',
                                 parameters={'storage_dir': str(tmp_path), 'library_dirs': []},
                                 context=context)
    try:
        node.trigger_configure()
        node.trigger_activate()
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        thread = threading.Thread(target=executor.spin, daemon=True)
        thread.start()
        client = TrajectoryStorageClient(peer.node, '/pony_editor/hung_storage', timeout=1.0)
        assert client.wait_ready(10.0)
        executor.shutdown()   # hung from now on
        thread.join(5.0)
        started = time.monotonic()
        with pytest.raises(StorageTimeoutError, match='did not answer within 1 s'):
            client.load('greeting')
        assert time.monotonic() - started < 5.0
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_cli_retime_prints_the_gain_and_stores_the_fitted_trajectory(robot):
    import os
    import subprocess
    import sys
    from ros_util import ROOT
    env = {**os.environ, 'ROS_DOMAIN_ID': str(robot.domain)}
    command = [sys.executable, '-m', 'sweetie_motion.cli', 'retime', 'look_around',
               '--save-as', 'look_around_fast', '--namespace', 'pony_editor']
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith('look_around: fit to limits: 7.70 s -> '), done.stdout
    assert 'bound by' in done.stdout and "saved 'look_around_fast'" in done.stdout
    fast = load_goal_file(robot.storage_dir / 'look_around_fast.yaml')
    assert fast.duration == pytest.approx(float(first.split('-> ')[1].split(' s')[0]),
                                          abs=0.006)
    assert fast.duration < 7.7
    refused = subprocess.run(command[:5] + ['--save-as', '../x', '--namespace', 'pony_editor'],
                             env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and 'invalid trajectory name' in refused.stderr
