"""Pendant leases: a client's goals and streams stop once its heartbeat is silent too long."""

import pytest
from sweetie_motion.controllers.pendants import MAX_LEASE, MIN_LEASE, PendantError, PendantLeases

GOAL_A, GOAL_B = b'a' * 16, b'b' * 16
SET = '/sweetie_bot/joint_states_set'


def test_a_goal_lapses_when_its_client_is_silent_longer_than_its_lease():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=10.0)
    assert leases.goal_lapse(GOAL_A, 10.29) is None
    lapse = leases.goal_lapse(GOAL_A, 10.35)
    assert lapse is not None and lapse.client == 'editor'
    assert lapse.silent == pytest.approx(0.35) and 'editor fell silent' in lapse.describe()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=10.4)     # it beats again: alive
    assert leases.goal_lapse(GOAL_A, 10.5) is None


def test_a_goal_no_heartbeat_named_is_never_stopped():
    # ros2 action send_goal and MoveIt publish no pendant: their goals run as before
    leases = PendantLeases()
    leases.heartbeat('console', 0.3, [GOAL_A], [], now=0.0)
    assert leases.goal_lapse(GOAL_B, 100.0) is None


def test_a_goal_its_client_names_no_more_is_let_go():
    # the goal ended for the client (or was refused): a later silence does not stop another's
    leases = PendantLeases()
    leases.heartbeat('play', 0.3, [GOAL_A, GOAL_B], [], now=0.0)
    leases.heartbeat('play', 0.3, [GOAL_B], [], now=0.1)
    assert leases.goal_lapse(GOAL_A, 5.0) is None
    assert leases.goal_lapse(GOAL_B, 5.0) is not None
    assert leases.watched() == (1, 1)


def test_each_client_keeps_its_own_goals():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [GOAL_A], [], now=0.0)
    leases.heartbeat('console', 1.0, [GOAL_B], [], now=0.0)
    leases.heartbeat('console', 1.0, [GOAL_B], [], now=0.5)
    assert leases.goal_lapse(GOAL_A, 0.6) is not None      # the editor died
    assert leases.goal_lapse(GOAL_B, 0.6) is None          # the console beats on


def test_a_stream_lapses_once_per_silence_for_each_watcher_of_its_topic():
    leases = PendantLeases()
    leases.heartbeat('editor', 0.3, [], [SET], now=0.0)
    assert leases.stream_lapses('follow_joint_state', {SET}, 0.2) == []
    first = leases.stream_lapses('follow_joint_state', {SET}, 0.5)
    assert [lapse.client for lapse in first] == ['editor']
    assert leases.stream_lapses('follow_joint_state', {SET}, 0.6) == []     # told once
    assert leases.stream_lapses('other_follower', {'/x/in'}, 0.6) == []     # not its topic
    leases.heartbeat('editor', 0.3, [], [SET], now=1.0)                     # back
    assert len(leases.stream_lapses('follow_joint_state', {SET}, 1.5)) == 1   # silent again


@pytest.mark.parametrize('lease', [0.0, MIN_LEASE / 2, MAX_LEASE * 2, float('nan'),
                                   float('inf'), -1.0])
def test_a_lease_outside_the_allowed_range_is_refused_and_nothing_is_watched(lease):
    leases = PendantLeases()
    with pytest.raises(PendantError, match='lease'):
        leases.heartbeat('bad', lease, [GOAL_A], [SET], now=0.0)
    assert leases.watched() == (0, 0)
    assert leases.goal_lapse(GOAL_A, 100.0) is None
