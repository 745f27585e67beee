"""The editor's play head: the pose the controller would play at a time of the table."""

import numpy as np
import pytest
from sweetie_motion.editor.play_head import PlayHead
from sweetie_motion.trajectory.analysis import goal_motion
from sweetie_motion.trajectory.waypoints import WaypointsList

JOINTS = ['joint11', 'joint12']


def rows(times, positions):
    waypoints = WaypointsList(JOINTS)
    for t, q in zip(times, positions):
        waypoints.add_from_state(JOINTS, q, time=t)
    return waypoints


def test_the_play_head_plays_what_the_controller_interpolates_on_the_tables_time_axis():
    waypoints = rows([2.0, 3.0, 5.0], [[0.0, 0.0], [0.5, -0.2], [0.1, 0.4]])
    head = PlayHead()
    assert head.span(waypoints) == (2.0, 5.0)
    for t, q in ((2.0, [0.0, 0.0]), (3.0, [0.5, -0.2]), (5.0, [0.1, 0.4])):
        pose = head.pose_at(waypoints, t)
        assert [pose[j] for j in JOINTS] == pytest.approx(q, abs=1e-9)
    # between the rows: the controller's spline, counted from the first row at 2 s
    motion = goal_motion(waypoints.build_goal(whole=True))
    expected = motion.spline.sample(4.2 - 2.0)[0]
    pose = head.pose_at(waypoints, 4.2)
    assert [pose[j] for j in JOINTS] == pytest.approx(expected.tolist(), abs=1e-12)
    assert pose['joint11'] != pytest.approx(0.5) and pose['joint11'] != pytest.approx(0.1)
    # before and after: the first and the last row
    assert head.pose_at(waypoints, 0.0)['joint12'] == pytest.approx(0.0)
    assert head.pose_at(waypoints, 9.0)['joint12'] == pytest.approx(0.4)


def test_the_play_head_follows_edits_and_skips_disabled_rows():
    waypoints = rows([0.0, 1.0, 2.0], [[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    head = PlayHead()
    assert head.pose_at(waypoints, 1.0)['joint11'] == pytest.approx(0.5)
    waypoints.set_position(1, 'joint11', -0.3)
    assert head.pose_at(waypoints, 1.0)['joint11'] == pytest.approx(-0.3)
    waypoints.set_active(1, False)
    middle = head.pose_at(waypoints, 1.0)['joint11']
    assert 0.0 < middle < 1.0 and not np.isclose(middle, -0.3)
    assert head.span(rows([], [])) is None and head.pose_at(rows([], []), 1.0) == {}
