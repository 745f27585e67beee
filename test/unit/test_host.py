"""
The cycle side and its transport, tested without ROS on the calling side.

Pipes with memory files, the state board, the host's calls, and a real cycle process started,
used, killed and closed.
"""

from multiprocessing.connection import Pipe
import os
import signal
import threading
import time

import numpy as np
import pytest
from sweetie_motion.controllers.joint_state import (
    FollowJointStateCore, FollowJointStateSpec, Hold, ReadOfferedPose, SetTargets,
)
from sweetie_motion.core.component import Activate, ComponentError
from sweetie_motion.core.events import (
    CallFailed, GoalEnded, HostExited, NotOperational, Outcome, OwnersChanged,
)
from sweetie_motion.core.ports import JointVector
from sweetie_motion.core.smoothing import FilterSpec
from sweetie_motion.errors import UnknownChainError
from sweetie_motion.host.client import HostError, HostSettings, LocalHost, RemoteHost
from sweetie_motion.host.state_board import BoardWriter, SLOTS, StateBoard, wait_for_tick
from sweetie_motion.host.transport import (
    Channel, decode_error, encode_error, FILE_PREFIX, RemoteError, SHARED_MEMORY_DIR,
)
from sweetie_motion.paths import config_path
from sweetie_motion.servo.components import VirtualRobotComponent, VirtualRobotSpec
from sweetie_motion.trajectory.validation import GoalError, ResultCode
from waiting import wait_for


def leftovers(pid=None):
    prefix = f'{FILE_PREFIX}{pid or os.getpid()}-'
    return [n for n in os.listdir(SHARED_MEMORY_DIR) if n.startswith(prefix)]


def channel_pair():
    a, b = Pipe(duplex=False)
    return Channel(b), Channel(a)  # sender, receiver


def transfer(message):
    sender, receiver = channel_pair()
    received = []
    reader = threading.Thread(target=lambda: received.append(receiver.recv()))
    reader.start()
    sender.send(message)
    reader.join(10)
    return received[0]


# --- transport -----------------------------------------------------------------------------------


def test_small_messages_travel_through_the_pipe():
    message = ('call', 7, 'legs', 'set_targets', (np.arange(3), np.ones(3)), {'x': 1})
    got = transfer(message)
    assert got[:4] == message[:4] and got[5] == {'x': 1}
    np.testing.assert_array_equal(got[4][0], np.arange(3))


def test_large_arrays_travel_through_a_memory_file_that_is_removed():
    # files of a process killed earlier whose pid this one reuses are not ours
    before = set(leftovers())
    coefficients = np.random.default_rng(1).normal(size=(4000, 6, 32))  # 6 MB
    got = transfer({'spline': coefficients, 'times': np.arange(4001.0)})
    np.testing.assert_array_equal(got['spline'], coefficients)
    assert got['times'][-1] == 4000.0
    assert set(leftovers()) - before == set()


def test_errors_keep_their_class_message_and_fields():
    error = decode_error(encode_error(GoalError(ResultCode.INVALID_JOINTS, 'unknown joint x')))
    assert isinstance(error, GoalError) and error.code == -2
    assert str(error) == 'unknown joint x' and error.code_name == 'INVALID_JOINTS'
    chain = decode_error(encode_error(UnknownChainError('tail', ['leg1'])))
    assert isinstance(chain, UnknownChainError) and 'tail' in str(chain)
    strange = decode_error(('no.such.module', 'Oops', 'it broke', {}))
    assert isinstance(strange, RemoteError) and 'Oops: it broke' in str(strange)


# --- state board ---------------------------------------------------------------------------------


def test_the_state_board_hands_over_consistent_poses_and_wakes_the_reader():
    writer = BoardWriter(4)
    try:
        reader = StateBoard(writer.board.path, 4)
        assert reader.read() is None  # nothing written yet
        measured = JointVector(np.arange(4.0), np.ones(4), np.zeros(4))
        reference = JointVector(-np.arange(4.0), 2 * np.ones(4), np.zeros(4))
        writer.board.write(measured, reference, 12, 3.5)
        got_measured, got_reference, index = reader.read()
        np.testing.assert_array_equal(got_measured.position, measured.position)
        np.testing.assert_array_equal(got_reference.velocity, reference.velocity)
        assert index == 12 and got_reference.stamp == 3.5
        assert reader.newest == 12
    finally:
        writer.close()
    assert not os.path.exists(writer.board.path)


def test_a_reader_held_up_gets_every_tick_it_was_due_to_publish_oldest_first():
    writer = BoardWriter(3)
    try:
        reader = StateBoard(writer.board.path, 3)
        assert reader.read_since(None) == []
        for k in range(10):
            pose = JointVector(np.full(3, float(k)), np.zeros(3), np.zeros(3))
            writer.board.write(pose, pose, k, k * 0.01, publish=k % 2 == 0)
        ticks = reader.read_since(3)  # the reader published tick 3, then was held up
        assert [t[2] for t in ticks] == [4, 6, 8]
        assert [t[0].position[0] for t in ticks] == [4.0, 6.0, 8.0]
        assert [t[2] for t in reader.read_since(None)] == [9]  # a new reader: the newest
        for k in range(10, 10 + 2 * SLOTS):  # far behind: only what the ring still holds
            pose = JointVector(np.full(3, float(k)), np.zeros(3), np.zeros(3))
            writer.board.write(pose, pose, k, k * 0.01)
        newest = 10 + 2 * SLOTS - 1
        ticks = reader.read_since(8)
        assert ticks[-1][2] == newest and len(ticks) == SLOTS - 1
        assert all(b[2] == a[2] + 1 for a, b in zip(ticks, ticks[1:]))
    finally:
        writer.close()


def test_the_board_writer_wakes_the_reader_at_the_publish_rate():
    from sweetie_motion.core.cycle import Tick
    writer = BoardWriter(2)
    try:
        writer.set_rate(50.0)  # every other tick of a 100 Hz cycle
        os.set_blocking(writer.wake_read_fd, False)
        for k in range(10):
            writer.update(Tick(k * 0.01, 0.01, k, JointVector.zeros(2), JointVector.zeros(2)))
        assert len(os.read(writer.wake_read_fd, 100)) == 5
        os.set_blocking(writer.wake_read_fd, True)
        os.write(writer.wake_fd, b'!')
        assert wait_for_tick(writer.wake_read_fd)
    finally:
        writer.close()


# --- the host, in this process -------------------------------------------------------------------


def follow_spec(**changes):
    values = {'chains': ('leg1',), 'activation_delay': 0.0, 'stay_operational': True,
              'smoothing': FilterSpec('none')}
    values.update(changes)
    return FollowJointStateSpec(**values)


def test_a_component_takes_only_the_commands_of_its_class(pony):
    host = LocalHost(pony, 0.01)
    try:
        cycle = host.cycle()
        cycle.create('bus', VirtualRobotComponent, VirtualRobotSpec())
        cycle.create('legs', FollowJointStateCore, follow_spec())
        assert host.run(ReadOfferedPose('legs')) == (True, None)  # not activated yet
        with pytest.raises(ComponentError, match='bus is a VirtualRobotComponent, not a '
                           'FollowJointStateCore: it takes no Hold'):
            host.run(Hold('bus'))
        with pytest.raises(ComponentError, match='answers no'):
            host.call(object())
        with pytest.raises(ComponentError, match="no component 'arms'"):
            host.run(Activate('arms'))
        with pytest.raises(ComponentError, match='exists already'):
            cycle.create('legs', FollowJointStateCore, follow_spec())
        with pytest.raises(ComponentError, match='needs a FollowJointStateSpec'):
            cycle.create('arms', FollowJointStateCore, VirtualRobotSpec())
        with pytest.raises(ComponentError, match='not a component class'):
            cycle.create('arms', dict, follow_spec())
        with pytest.raises(UnknownChainError):
            cycle.create('tail', FollowJointStateCore, follow_spec(chains=('x',)))
    finally:
        host.close()


def test_an_event_of_a_controller_goes_to_its_listeners_alone(pony):
    host = LocalHost(pony, 0.01)
    everyone, legs, arms = [], [], []
    host.add_listener(everyone.append)
    host.add_controller_listener('legs', legs.append)
    host.add_controller_listener('arms', arms.append)
    try:
        ended = GoalEnded('legs', b'goal', Outcome('succeeded', 0, ''))
        for event in (ended, NotOperational('arms'), OwnersChanged({'leg1': 'legs'})):
            host.host.emit(event)
        wait_for(lambda: len(everyone) == 1, 5, message='the owners event')
        assert legs == [ended] and arms == [NotOperational('arms')]
        assert everyone == [OwnersChanged({'leg1': 'legs'})]
        host.remove_listener(legs.append)
        host.host.emit(ended)
        host.host.emit(OwnersChanged({}))
        wait_for(lambda: len(everyone) == 2, 5, message='the second owners event')
        assert legs == [ended]
    finally:
        host.close()


# --- the host in a process of its own ------------------------------------------------------------


def settings():
    return HostSettings(str(config_path('sweetie_bot.yaml')), 0.01, 'host_test', priority=0)


def test_a_cycle_process_runs_components_and_tells_ownership(tmp_path):
    before = set(leftovers())
    host = RemoteHost(settings())
    events = []
    host.add_listener(events.append)
    try:
        assert host.pid != os.getpid() and host.alive()
        cycle = host.cycle()
        cycle.create('bus', VirtualRobotComponent, VirtualRobotSpec())
        cycle.create('legs', FollowJointStateCore, follow_spec())
        host.run(Activate('bus'))
        scheduling = cycle.start_cycle(100.0, 0)
        assert scheduling == 'normal'
        host.run(Activate('legs'))
        wait_for(lambda: any(isinstance(e, OwnersChanged) and e.owners['leg1'] == 'legs'
                             for e in events), 10, message='the owners event')
        host.cast(SetTargets('legs', np.array([1]), np.array([0.4])))  # joint12
        wait_for(lambda: abs(cycle.poses().reference.position[1] - 0.4) < 1e-9, 10,
                 message='the target in the reference')
        assert len(cycle.poses().measured.position) == 32
        stats = cycle.statistics()
        assert stats.running and stats.summary()['ticks'] > 0
        with pytest.raises(UnknownChainError):  # the child's exception, same class
            cycle.create('tail', FollowJointStateCore, follow_spec(chains=('x',)))
        # a call made without waiting that fails comes back as an event
        host.cast(SetTargets('legs', np.array([99]), np.array([0.4])))
        wait_for(lambda: any(isinstance(e, CallFailed) and e.command == 'SetTargets'
                             for e in events), 10, message='the CallFailed event')
    finally:
        host.close()
    assert not host.alive()
    assert leftovers(host.pid) == [] and set(leftovers()) - before == set()


def test_a_dead_cycle_process_is_reported_and_calls_fail_at_once():
    host = RemoteHost(settings())
    events = []
    host.add_listener(events.append)
    try:
        os.kill(host.pid, signal.SIGKILL)
        wait_for(lambda: HostExited(-signal.SIGKILL) in events, 10, message='HostExited')
        started = time.monotonic()
        with pytest.raises(HostError, match='gone|ended'):
            host.cycle(timeout=5.0).owners()
        assert time.monotonic() - started < 1.0
    finally:
        host.close()


def test_the_cycle_process_ends_with_its_parent_pipe():
    host = RemoteHost(settings())
    publisher = host.info['publisher_pid']
    host._requests.close()  # what the kernel does when the bringup dies
    host.process.wait(10)
    wait_for(lambda: not os.path.exists(f'/proc/{publisher}') or
             open(f'/proc/{publisher}/stat').read().split()[2] == 'Z', 10,
             message='the publisher to end')
    host.close()
