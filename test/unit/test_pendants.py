"""Pendant leases: a client's goals and streams stop once the client is gone, and not before."""

import os
import subprocess
import sys

import pytest
from sweetie_motion.controllers.pendants import (
    MAX_LEASE, MIN_LEASE, PATIENCE, PendantError, PendantLeases, process_alive,
    process_namespace, process_start,
)

GOAL_A, GOAL_B = b'a' * 16, b'b' * 16
SET = '/sweetie_bot/joint_states_set'
LOCAL = (4242, 1000)


def alive(pid: int, start: int) -> bool:
    return True


def dead(pid: int, start: int) -> bool:
    return False


def test_a_distant_clients_goal_lapses_when_it_is_silent_longer_than_its_lease():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=10.0)
    assert leases.goal_lapse(GOAL_A, 10.29, alive) is None
    lapse = leases.goal_lapse(GOAL_A, 10.35, alive)
    assert lapse is not None and lapse.client == 'editor' and not lapse.ended
    assert lapse.silent == pytest.approx(0.35) and 'editor fell silent' in lapse.describe()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=10.4)     # it beats again: there
    assert leases.goal_lapse(GOAL_A, 10.5, alive) is None


def test_a_local_clients_goal_stops_when_its_process_ends_and_not_for_a_short_silence():
    # beside the motion process: a starved client (silent 1 s) keeps its motion; a killed one
    # loses it at once, whatever the heartbeats
    leases = PendantLeases()
    leases.heartbeat('console', 0.3, [GOAL_A], [], now=0.0, process=LOCAL)
    assert leases.goal_lapse(GOAL_A, 1.0, alive) is None
    ended = leases.goal_lapse(GOAL_A, 0.01, dead)
    assert ended is not None and ended.ended and 'ended' in ended.describe()
    # a hung one (its process there, silent) is gone after the patience
    assert leases.goal_lapse(GOAL_A, PATIENCE + 0.01, alive) is not None


def test_silence_does_not_count_while_the_asker_was_held_up_but_an_ended_process_does():
    leases = PendantLeases()
    leases.heartbeat('play', 0.3, [GOAL_A], [], now=0.0)
    leases.heartbeat('editor', 0.3, [GOAL_B], [], now=0.0, process=LOCAL)
    assert leases.goal_lapse(GOAL_A, 5.0, alive, silence=False) is None
    assert leases.goal_lapse(GOAL_B, 5.0, dead, silence=False).ended


def test_a_goal_no_heartbeat_named_is_never_stopped():
    # ros2 action send_goal and MoveIt publish no pendant: their goals run as before
    leases = PendantLeases()
    leases.heartbeat('console', 0.3, [GOAL_A], [], now=0.0)
    assert leases.goal_lapse(GOAL_B, 100.0, dead) is None


def test_a_goal_its_client_names_no_more_is_let_go():
    # the goal ended for the client (or was refused): a later silence does not stop another's
    leases = PendantLeases()
    leases.heartbeat('play', 0.3, [GOAL_A, GOAL_B], [], now=0.0)
    leases.heartbeat('play', 0.3, [GOAL_B], [], now=0.1)
    assert leases.goal_lapse(GOAL_A, 5.0, alive) is None
    assert leases.goal_lapse(GOAL_B, 5.0, alive) is not None
    assert leases.watched() == (1, 1)


def test_each_client_keeps_its_own_goals():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=0.0)
    leases.heartbeat('console', 1.0, [GOAL_B], [], now=0.0)
    leases.heartbeat('console', 1.0, [GOAL_B], [], now=0.5)
    assert leases.goal_lapse(GOAL_A, 0.6, alive) is not None      # the editor is gone
    assert leases.goal_lapse(GOAL_B, 0.6, alive) is None          # the console beats on


def test_a_stream_lapses_once_per_end_for_each_watcher_of_its_topic():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [], [SET], now=0.0)
    assert leases.stream_lapses('follow_joint_state', {SET}, 0.2, alive) == []
    first = leases.stream_lapses('follow_joint_state', {SET}, 0.5, alive)
    assert [lapse.client for lapse in first] == ['editor']
    assert leases.stream_lapses('follow_joint_state', {SET}, 0.6, alive) == []      # once
    assert leases.stream_lapses('other_follower', {'/x/in'}, 0.6, alive) == []      # not its
    leases.heartbeat('editor', 0.3, [], [SET], now=1.0)                             # back
    assert len(leases.stream_lapses('follow_joint_state', {SET}, 1.5, alive)) == 1


def test_a_watcher_has_something_to_watch_only_while_a_client_holds_its_goal_or_stream():
    # the node's checks sleep otherwise: nothing can lapse until a heartbeat names something
    leases = PendantLeases()
    assert not leases.watching('joint_trajectory', [GOAL_A], set())
    leases.heartbeat('console', 0.3, [GOAL_B], [], now=0.0)
    assert not leases.watching('joint_trajectory', [GOAL_A], set())    # another's goal
    leases.heartbeat('play', 0.3, [GOAL_A], [], now=0.0)
    assert leases.watching('joint_trajectory', [GOAL_A], set())
    leases.heartbeat('play', 0.3, [], [], now=0.1)                       # ended, for play
    assert not leases.watching('joint_trajectory', [GOAL_A], set())
    leases.heartbeat('editor', 0.3, [], [SET], now=0.0)
    assert leases.watching('follow_joint_state', [], {SET})
    assert not leases.watching('follow_joint_state', [], {'/x/in'})
    assert len(leases.stream_lapses('follow_joint_state', {SET}, 0.5, alive)) == 1
    assert not leases.watching('follow_joint_state', [], {SET})         # told: nothing left
    leases.heartbeat('editor', 0.3, [], [SET], now=1.0)                  # back
    assert leases.watching('follow_joint_state', [], {SET})


@pytest.mark.parametrize('lease', [0.0, MIN_LEASE / 2, MAX_LEASE * 2, float('nan'),
                                   float('inf'), -1.0])
def test_a_lease_outside_the_allowed_range_is_refused_and_nothing_is_watched(lease):
    leases = PendantLeases()
    with pytest.raises(PendantError, match='lease'):
        leases.heartbeat('bad', lease, [GOAL_A], [SET], now=0.0)
    assert leases.watched() == (0, 0)
    assert leases.goal_lapse(GOAL_A, 100.0, dead) is None


def test_a_process_is_alive_until_it_ends_and_a_reused_pid_is_another_process():
    assert process_namespace()          # Linux: the boot id and the PID namespace
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])
    try:
        start = process_start(child.pid)
        assert start is not None and process_alive(child.pid, start)
        assert not process_alive(child.pid, start + 1)       # same pid, another start
        child.kill()
        child.wait(10)
        assert not process_alive(child.pid, start)
    finally:
        child.kill()
    assert process_alive(os.getpid(), process_start(os.getpid()))
