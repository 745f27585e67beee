"""Fit to limits (trajectory/retime.py): what an animator sees after pressing the button."""

from pathlib import Path

import numpy as np
import pytest

from sweetie_motion.model.robot_model import JointLimits
from sweetie_motion.storage.migration import load_ros1_json
from sweetie_motion.trajectory.codec import load_goal_file
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.retime import (
    fit_to_limits, KEPT, MIN_SEGMENT, MINIMUM, NO_LIMIT, PAUSE, retime_goal, retime_waypoints,
    RetimeError,
)
from sweetie_motion.trajectory.spline import build_spline
from sweetie_motion.trajectory.timing import PLANNING_MARGIN
from sweetie_motion.trajectory.waypoints import Waypoint, WaypointsList

ROOT = Path(__file__).resolve().parents[2]
STORED = sorted((ROOT / 'config' / 'trajectories').glob('*.yaml'))
ORIGINAL = sorted((ROOT / 'test' / 'data' / 'sweetie_movements').glob('*.json'))
#: sampling step of the independent check [s]
DENSE = 0.0005


def limits(n, velocity=1.5, acceleration=20.0):
    """Return JointLimits of n joints, the same for all (or per joint when arrays)."""
    big = np.full(n, 10.0)
    return JointLimits(-big, big, np.broadcast_to(velocity, (n,)).astype(float),
                       np.broadcast_to(acceleration, (n,)).astype(float), np.full(n, np.inf))


def need(times, positions, lim, interpolation='akima'):
    """Return the largest share of the planning limits the spline needs, sampled densely."""
    spline = build_spline(times, positions, interpolation=interpolation)
    grid = np.arange(times[0], times[-1], DENSE)
    _, velocity, acceleration = spline.sample_many(grid)
    v_max, a_max = lim.velocity * PLANNING_MARGIN, lim.acceleration * PLANNING_MARGIN
    with np.errstate(divide='ignore', invalid='ignore'):
        ratio_v = np.where(np.isfinite(v_max), np.abs(velocity) / v_max, 0.0)
        ratio_a = np.where(np.isfinite(a_max), np.sqrt(np.abs(acceleration) / a_max), 0.0)
    return float(max(np.max(ratio_v), np.max(ratio_a)))


def keyframes_of(path):
    goal = load_goal_file(path) if path.suffix == '.yaml' else load_ros1_json(path)
    joints = goal.joints()
    columns = [goal.joint_names.index(j) for j in joints]
    times = np.array([p.time for p in goal.points])
    positions = np.array([[p.positions[c] for c in columns] for p in goal.points])
    return goal, joints, times, positions


ANIMATIONS = [p for p in STORED + ORIGINAL if p.name != 'default.json']   # default: no points


def test_every_animation_is_here():
    assert len(STORED) >= 6 and len(ANIMATIONS) >= 15


@pytest.mark.parametrize('interpolation', ['akima', 'cubic'])
@pytest.mark.parametrize('path', ANIMATIONS, ids=lambda p: p.name)
def test_animations_fit_within_the_limits_no_slower_than_one_factor(pony, path, interpolation):
    _, joints, times, positions = keyframes_of(path)
    lim = pony.joint_limits().take(pony.get_joint_indices(joints))
    result = fit_to_limits(times, positions, joints, lim, interpolation)
    # the package's own spline through the new times, sampled every 0.5 ms
    assert need(result.times, positions, lim, interpolation) <= 1.0 + 1e-3
    assert result.times[0] == times[0]
    assert np.all(np.diff(result.times) >= MIN_SEGMENT * (1 - 1e-9))
    # one factor for the whole motion, measured here independently of the module
    uniform = need(times, positions, lim, interpolation) * (times[-1] - times[0])
    assert result.duration_after <= uniform * (1 + 2e-3)
    assert result.duration_after == pytest.approx(result.times[-1] - result.times[0])
    assert len(result.segments) == len(times) - 1


def test_only_one_fast_segment_is_slowed_the_rest_speeds_up():
    times = np.array([0.0, 2.0, 4.0, 4.3, 6.0, 8.0])
    positions = np.array([[0.0], [0.5], [0.0], [1.0], [0.4], [0.0]])
    lim = limits(1)
    result = fit_to_limits(times, positions, ['joint'], lim)
    uniform = need(times, positions, lim) * 8.0
    assert uniform > 8.0                          # one factor: everything slower
    assert result.duration_after < 0.6 * uniform  # ours: strictly and clearly faster
    assert result.duration_after < 8.0
    before, after = np.diff(times), np.diff(result.times)
    assert after[2] > before[2]                   # the fast move got slower ...
    assert np.all(after[[0, 1, 3, 4]] < before[[0, 1, 3, 4]])   # ... the others faster
    assert need(result.times, positions, lim) <= 1.0 + 1e-3
    assert result.method == 'segments'
    assert {s.bound_by for s in result.segments} <= {'velocity', 'acceleration'}
    assert max(s.usage for s in result.segments) == pytest.approx(1.0, abs=5e-3)
    assert result.uniform_duration == pytest.approx(uniform, rel=2e-3)


def test_a_slow_trajectory_speeds_up_and_a_fast_one_slows_down():
    positions = np.array([[0.0, 0.0], [0.6, -0.3], [0.1, 0.2], [0.8, 0.0]])
    lim = limits(2)
    slow = fit_to_limits([0, 5, 10, 15], positions, ['a', 'b'], lim)
    fast = fit_to_limits([0, 0.05, 0.1, 0.15], positions, ['a', 'b'], lim)
    assert slow.duration_after < 15 / 3
    assert fast.duration_after > 0.15 * 3
    # the timing depends on the keyframes, not on the timing asked for
    assert slow.duration_after == pytest.approx(fast.duration_after, rel=1e-2)


def test_binding_joint_and_limit_are_reported_per_segment():
    times = [0.0, 1.0, 2.0]
    # joint b moves far (velocity-bound), joint a a little
    positions = np.array([[0.0, 0.0], [0.05, 1.5], [0.0, 3.0]])
    lim = limits(2, velocity=np.array([1.5, 1.0]), acceleration=np.array([20.0, 100.0]))
    result = fit_to_limits(times, positions, ['a', 'b'], lim)
    assert [s.joint for s in result.segments] == ['b', 'b']
    assert all(s.bound_by == 'velocity' for s in result.segments)
    heavy = fit_to_limits(times, positions, ['a', 'b'],
                          limits(2, velocity=np.array([1.5, 100.0]),
                                 acceleration=np.array([20.0, 2.0])))
    assert all(s.bound_by == 'acceleration' and s.joint == 'b' for s in heavy.segments)
    assert 'fit to limits: 2.00 s ->' in result.describe()


def test_selected_rows_change_and_the_others_keep_their_spacing():
    times = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    positions = np.array([[0.0], [0.3], [0.1], [0.5], [0.2], [0.4], [0.0]])
    lim = limits(1)
    result = fit_to_limits(times, positions, ['joint'], lim, rows=(2, 4))
    before, after = np.diff(times), np.diff(result.times)
    assert np.array_equal(after[[0, 1, 4, 5]], before[[0, 1, 4, 5]])
    assert np.all(after[2:4] < before[2:4])           # the selected rows were slow
    shift = result.times[4] - times[4]
    assert np.allclose(result.times[4:], times[4:] + shift)
    assert np.array_equal(result.times[:3], times[:3])
    assert [s.bound_by for s in result.segments].count(KEPT) == 4
    assert need(result.times, positions, lim) <= 1.0 + 1e-3
    assert np.isnan(result.uniform_duration)


def test_selection_next_to_a_segment_beyond_the_limits_is_refused_with_its_rows():
    times = np.array([0.0, 1.0, 2.0, 2.05, 3.0])
    positions = np.array([[0.0], [0.3], [0.1], [0.9], [0.0]])
    with pytest.raises(RetimeError) as caught:
        fit_to_limits(times, positions, ['joint'], limits(1), rows=(0, 2))
    message = str(caught.value)
    assert 'keyframes 3-4' in message and 'outside the selection' in message
    assert caught.value.joint == 'joint' and caught.value.row == 2


def test_single_keyframe_is_left_as_it_is():
    result = fit_to_limits([0.5], [[0.1, 0.2]], ['a', 'b'], limits(2))
    assert list(result.times) == [0.5]
    assert result.method == 'unchanged' and result.segments == ()


def test_identical_keyframes_get_the_minimum_segment_time_or_keep_it():
    times = [0.0, 1.0, 3.0, 4.0]
    positions = np.array([[0.0], [0.5], [0.5], [0.0]])
    lim = limits(1)
    short = fit_to_limits(times, positions, ['joint'], lim)
    assert np.diff(short.times)[1] == pytest.approx(MIN_SEGMENT)
    assert short.segments[1].bound_by == MINIMUM
    kept = fit_to_limits(times, positions, ['joint'], lim, keep_pauses=True)
    assert np.diff(kept.times)[1] == pytest.approx(2.0)
    assert kept.segments[1].bound_by == PAUSE
    for result in (short, kept):
        assert need(result.times, positions, lim) <= 1.0 + 1e-3
    longer = fit_to_limits(times, positions, ['joint'], lim, min_segment=0.2)
    assert np.diff(longer.times)[1] == pytest.approx(0.2)
    with pytest.raises(RetimeError, match='minimum segment time'):
        fit_to_limits(times, positions, ['joint'], lim, min_segment=0.0)


def test_joints_without_finite_limits_do_not_constrain_the_timing():
    times = [0.0, 1.0, 2.0, 3.0]
    # joint b (no limits) moves alone in the second segment
    positions = np.array([[0.0, 0.0], [0.5, 0.0], [0.5, 2.0], [0.0, 2.0]])
    lim = limits(2, velocity=np.array([1.5, np.inf]), acceleration=np.array([20.0, np.inf]))
    result = fit_to_limits(times, positions, ['a', 'b'], lim)
    after = np.diff(result.times)
    assert after[1] == pytest.approx(1.0)        # nothing to fit it to: kept
    assert result.segments[1].bound_by == NO_LIMIT
    assert after[0] < 1.0 and after[2] < 1.0
    unlimited = fit_to_limits(times, positions, ['a', 'b'],
                              limits(2, velocity=np.inf, acceleration=np.inf))
    assert np.allclose(unlimited.times, times)
    # a joint limited in velocity only
    partly = fit_to_limits(times, positions, ['a', 'b'],
                           limits(2, velocity=1.0, acceleration=np.array([np.inf, 0.0])))
    assert need(partly.times, positions, limits(2, velocity=1.0, acceleration=np.inf)) <= 1.001


@pytest.mark.parametrize('times, positions, fragment', [
    ([0.0, 1.0, 2.0], [[0.0], [np.nan], [1.0]], 'keyframe 2: position nan of joint'),
    ([0.0, np.inf, 2.0], [[0.0], [0.5], [1.0]], 'keyframe 2: time inf'),
    ([0.0, 1.0, 1.0], [[0.0], [0.5], [1.0]], 'keyframe 3 (1.000 s) is not after keyframe 2'),
    ([0.0, 1.0], [[0.0], [0.5], [1.0]], '2 times but positions of shape (3, 1)'),
    ([0.0, 1.0], [[0.0, 1.0], [0.5, 1.0]], '2 position columns but 1 joint names'),
])
def test_bad_input_gets_a_clear_error(times, positions, fragment):
    with pytest.raises(RetimeError) as caught:
        fit_to_limits(times, positions, ['joint'], limits(1))
    assert fragment in str(caught.value)


def test_unknown_interpolation_and_bad_selection_are_refused():
    with pytest.raises(RetimeError, match='position-only keyframes'):
        fit_to_limits([0, 1], [[0], [1]], ['j'], limits(1), 'quintic')
    with pytest.raises(RetimeError, match='keyframes 2 to 2'):
        fit_to_limits([0, 1, 2], [[0], [1], [0]], ['j'], limits(1), rows=(1, 1))


def test_cubic_spline_is_kept_within_the_position_limits():
    # a C2 cubic overshoots between keyframes; non-uniform spacing may make it overshoot more
    times = [0.0, 0.3, 2.0, 2.3, 4.0]
    positions = np.array([[0.0], [0.95], [1.0], [0.95], [0.0]])
    lim = JointLimits(np.array([-1.0]), np.array([1.0]), np.array([1.5]), np.array([20.0]),
                      np.array([np.inf]))
    before = build_spline(times, positions, interpolation='cubic')
    grid = np.linspace(0, 4, 4001)
    beyond = max(0.0, float(np.max(before.sample_many(grid)[0] - 1.0)))
    result = fit_to_limits(times, positions, ['j'], lim, 'cubic')
    after = build_spline(result.times, positions, interpolation='cubic')
    grid = np.linspace(result.times[0], result.times[-1], 4001)
    assert float(np.max(after.sample_many(grid)[0] - 1.0)) <= beyond + 1e-6


def test_stored_goal_gets_new_times_and_keeps_the_rest(pony):
    goal = load_ros1_json(ROOT / 'test' / 'data' / 'sweetie_movements' / 'greeting.json')
    retimed, result = retime_goal(goal, pony)
    assert retimed.joint_names == goal.joint_names
    assert [p.positions for p in retimed.points] == [p.positions for p in goal.points]
    assert retimed.path_tolerance == goal.path_tolerance
    assert [p.time for p in retimed.points] == pytest.approx(list(result.times))
    assert result.duration_before == pytest.approx(goal.duration)
    joints = goal.joints()
    columns = [goal.joint_names.index(j) for j in joints]
    positions = np.array([[p.positions[c] for c in columns] for p in retimed.points])
    lim = pony.joint_limits().take(pony.get_joint_indices(joints))
    assert need(result.times, positions, lim) <= 1.0 + 1e-3


def test_goal_with_keyframe_velocities_or_no_points_is_refused(pony):
    goal = TrajectoryGoal(['joint51'], [TrajectoryPoint(0.0, [0.0], [0.0]),
                                        TrajectoryPoint(1.0, [0.2], [0.1])])
    with pytest.raises(RetimeError, match='velocities or accelerations'):
        retime_goal(goal, pony)
    with pytest.raises(RetimeError, match='no points'):
        retime_goal(TrajectoryGoal(['joint51'], []), pony)


def waypoint_list():
    waypoints = WaypointsList(['joint51', 'joint53', 'support/leg1'])
    rows = [(0.0, [0.0, 0.0, 1.0], True), (1.0, [-0.2, 0.5, 1.0], True),
            (1.5, [-1.5, -0.5, 0.0], False),      # disabled: not part of the motion
            (2.0, [0.0, -0.1, 1.0], True), (3.0, [0.1, 0.3, 1.0], True),
            (4.0, [0.0, 0.0, 1.0], True), (5.0, [0.2, 0.2, 1.0], False)]
    waypoints.waypoints = [Waypoint(p, t, a) for t, p, a in rows]
    waypoints.check()
    return waypoints


def test_waypoints_disabled_rows_are_not_part_of_the_motion(pony):
    waypoints = waypoint_list()
    retimed, result = retime_waypoints(waypoints, pony)
    assert [w.time for w in waypoints.waypoints] == [0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0]
    times = [w.time for w in retimed.waypoints]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0)
    # the disabled row stays halfway between its active neighbours, the last one shifts along
    assert times[2] == pytest.approx((times[1] + times[3]) / 2)
    assert times[6] - times[5] == pytest.approx(1.0)
    # the same timing as the active rows alone: the disabled pose does not count
    active = waypoints.active_indices()
    positions = np.array([waypoints.waypoints[r].positions[:2] for r in active])
    alone = fit_to_limits([waypoints.waypoints[r].time for r in active], positions,
                          ['joint51', 'joint53'], pony.joint_limits().take(
                              pony.get_joint_indices(['joint51', 'joint53'])))
    assert [times[r] for r in active] == pytest.approx(list(alone.times))
    spans = [(s.start_row, s.end_row) for s in result.segments]
    assert spans == [(0, 1), (1, 3), (3, 4), (4, 5)]
    positions_after = [w.positions for w in retimed.waypoints]
    assert positions_after == [w.positions for w in waypoints.waypoints]


def test_waypoints_selected_rows(pony):
    waypoints = waypoint_list()
    retimed, result = retime_waypoints(waypoints, pony, rows=[3, 4])
    before = [w.time for w in waypoints.waypoints]
    after = [w.time for w in retimed.waypoints]
    assert after[:4] == before[:4]
    assert after[5] - after[4] == pytest.approx(1.0)
    assert after[4] != before[4]
    assert [s.bound_by == KEPT for s in result.segments] == [True, True, False, True]
    with pytest.raises(RetimeError, match='at least two active rows'):
        retime_waypoints(waypoints, pony, rows=[2, 3])


def test_a_trajectory_of_contact_flags_only_is_refused(pony):
    waypoints = WaypointsList(['support/leg1'])
    waypoints.waypoints = [Waypoint([1.0], 0.0), Waypoint([0.0], 1.0)]
    with pytest.raises(RetimeError, match='no joints'):
        retime_waypoints(waypoints, pony)


def test_a_pause_between_poses_measured_at_rest_is_a_pause():
    # two poses taken of a robot posed twice differ by what its servos settled to
    times = [0.0, 1.0, 3.0, 4.0]
    positions = np.array([[0.0], [0.5], [0.5 + 3e-3], [0.0]])
    kept = fit_to_limits(times, positions, ['joint'], limits(1), keep_pauses=True)
    assert np.diff(kept.times)[1] == pytest.approx(2.0)
    assert kept.segments[1].bound_by == PAUSE
