"""The trajectory controller core in simulated time on the virtual robot (R-FJT)."""

import numpy as np
import pytest
from sim_process import PERIOD, Sim
from sweetie_motion.controllers.joint_trajectory import JointTrajectoryCore, JointTrajectorySpec
from sweetie_motion.core.events import GoalEnded, GoalProgress
from sweetie_motion.core.smoothing import FilterSpec
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import GoalError, ResultCode


def goal(joints, rows, times, **kwargs):
    return TrajectoryGoal(list(joints), [TrajectoryPoint(t, list(r)) for t, r in
                                         zip(times, rows)], **kwargs)


def trace(sim, joint):
    return np.array(sim.refs)[:, sim.idx(joint)]


def test_a_trajectory_is_followed_and_succeeds(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    g = goal(['joint12', 'joint51'], [[0.5, -0.3], [0.0, -0.6]], [1.0, 2.0])
    executing = sim.run_goal(core, g)
    assert executing.outcome.status == 'succeeded', executing.outcome.message
    assert executing.outcome.code == ResultCode.SUCCESSFUL
    ref = trace(sim, 'joint12')
    assert ref.max() == pytest.approx(0.5, abs=0.01)       # passes the keyframe, no overshoot
    assert sim.process.cycle.measured.position[sim.idx('joint51')] == pytest.approx(-0.6,
                                                                                    abs=0.05)
    assert np.abs(np.diff(ref)).max() < 0.05               # smooth: no jump anywhere


def test_first_point_later_than_zero_starts_from_the_current_pose(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    sim.run_goal(core, goal(['joint12'], [[0.4]], [0.8]))
    before = len(sim.refs)
    executing = sim.run_goal(core, goal(['joint12'], [[-0.4]], [1.0]))
    assert executing.outcome.status == 'succeeded'
    ref = trace(sim, 'joint12')[before - 1:]
    assert abs(ref[1] - ref[0]) < 0.02 and ref[0] == pytest.approx(0.4, abs=0.01)


def test_start_far_from_the_current_pose_is_rejected_naming_the_joint(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    with pytest.raises(GoalError) as caught:
        sim.prepare(core, goal(['joint12', 'joint13'], [[0.0, 0.9], [0.0, 0.0]], [0.0, 1.0]))
    assert caught.value.code == ResultCode.PATH_TOLERANCE_VIOLATED
    assert 'joint13' in str(caught.value)


def test_small_start_offset_blends_in_without_a_jump(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    before = len(sim.refs)
    executing = sim.run_goal(core, goal(['joint12'], [[0.2], [0.2]], [0.0, 1.0]))
    assert executing.outcome.status == 'succeeded'
    ref = trace(sim, 'joint12')[before - 1:]
    assert np.abs(np.diff(ref)).max() < 0.03


def test_blocked_joint_aborts_with_path_tolerance_violated(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    sim.bus.block(['joint23'])
    executing = sim.run_goal(core, goal(['joint23'], [[1.2], [0.0]], [1.0, 2.0]))
    assert executing.outcome.status == 'aborted'
    assert executing.outcome.code == ResultCode.PATH_TOLERANCE_VIOLATED
    assert 'joint23' in executing.outcome.message


def test_goal_not_reached_in_time_is_goal_tolerance_violated(model):
    sim = Sim(model)
    core = sim.trajectory_controller(defaults=ToleranceDefaults(path=0.0, goal=0.02,
                                                                goal_time=0.3))
    sim.step(1)
    executing = sim.prepare(core, goal(['joint23'], [[0.5]], [1.0]))
    core.start(executing)
    for _ in range(70):
        sim.step(1)
    sim.bus.block(['joint23'])   # jams before the end, about 0.1 rad short
    while executing.outcome is None:
        sim.step(1)
    assert executing.outcome.code == ResultCode.GOAL_TOLERANCE_VIOLATED
    assert 'joint23' in executing.outcome.message


def test_goal_tolerance_from_the_goal_overrides_the_default(model):
    sim = Sim(model)
    core = sim.trajectory_controller(defaults=ToleranceDefaults(path=0.0, goal=0.001,
                                                                goal_time=0.2))
    sim.bus.block(['joint23'])
    loose = goal(['joint23'], [[0.05]], [0.5],
                 goal_tolerance=[JointTolerance('joint23', position=0.1)])
    assert sim.run_goal(core, loose).outcome.status == 'succeeded'
    unlimited = goal(['joint23'], [[0.5]], [0.5],
                     goal_tolerance=[JointTolerance('joint23', position=-1)])
    assert sim.run_goal(core, unlimited).outcome.status == 'succeeded'


def test_preemption_aborts_the_old_goal_and_switches_without_a_jump(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    first = sim.prepare(core, goal(['joint12'], [[1.0]], [2.0]))
    core.start(first)
    sim.step(80)                                  # moving fast in the middle
    second = sim.prepare(core, goal(['joint12'], [[-0.5]], [1.5]))
    core.start(second)
    sim.step(1)
    assert first.outcome.status == 'aborted' and 'preempted' in first.outcome.message
    while second.outcome is None:
        sim.step(1)
    assert second.outcome.status == 'succeeded'
    ref = trace(sim, 'joint12')
    velocity = np.diff(ref) / PERIOD
    acceleration = np.diff(velocity) / PERIOD
    assert np.abs(np.diff(ref)).max() < 0.03      # no jump
    assert np.abs(acceleration).max() < 30.0      # bounded acceleration through the switch


def test_cancel_decelerates_and_holds(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    executing = sim.prepare(core, goal(['joint12'], [[1.2]], [2.0]))
    core.start(executing)
    sim.step(100)
    core.cancel(executing)
    sim.step(1)
    assert executing.outcome.status == 'canceled'
    sim.step(100)
    ref = trace(sim, 'joint12')
    after = ref[-60:]
    assert np.abs(np.diff(after)).max() < 1e-4    # holds still
    assert 0.3 < after[-1] < 1.0                  # stopped on the way, not at the end
    assert np.abs(np.diff(ref)).max() < 0.03


def test_losing_a_chain_aborts_the_goal_with_a_clear_message(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    fjs = sim.fjs(name='joint_state', chains=['head', 'nose'], delay=0.0, order=30)
    executing = sim.prepare(core, goal(['joint51', 'joint12'], [[-0.5, 0.5]], [2.0]))
    core.start(executing)
    sim.step(20)
    fjs.acquire()
    assert executing.outcome.status == 'aborted'
    assert 'head' in executing.outcome.message and 'joint_state' in executing.outcome.message


def test_two_controllers_on_disjoint_chains_run_at_once(model):
    sim = Sim(model)
    body = sim.trajectory_controller('body', chains=['leg1', 'leg2', 'leg3', 'leg4'])
    head = sim.trajectory_controller('head', chains=['head', 'nose', 'eyes'], order=21)
    a = sim.prepare(body, goal(['joint12', 'joint22'], [[0.5, -0.5], [0.0, 0.0]], [1.0, 2.0]))
    b = sim.prepare(head, goal(['joint52', 'eyes_yaw'], [[0.6, 0.3], [-0.6, 0.0]], [0.8, 1.6]))
    body.start(a)
    head.start(b)
    for _ in range(400):
        sim.step(1)
        if a.outcome and b.outcome:
            break
    assert a.outcome.status == 'succeeded' and b.outcome.status == 'succeeded'
    assert trace(sim, 'joint52').max() == pytest.approx(0.6, abs=0.02)
    assert trace(sim, 'joint12').max() == pytest.approx(0.5, abs=0.02)


def test_support_flags_are_reported_not_driven(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    g = goal(['joint12', 'support/leg1', 'support/leg2'],
             [[0.0, 1, 1], [0.3, 0, 1], [0.0, 1, 1]], [0.0, 0.5, 1.0])
    executing = sim.prepare(core, g)
    core.start(executing)
    seen = []
    while executing.outcome is None:
        sim.step(1)
        seen.append(dict(core.support.value or {}))
    assert {'leg1': 0.0, 'leg2': 1.0} in seen and seen[-1] == {'leg1': 1.0, 'leg2': 1.0}
    assert executing.outcome.status == 'succeeded'


def test_resources_return_to_the_background_controller_after_the_goal(model):
    sim = Sim(model)
    fjs = sim.fjs(name='background', delay=0.0, order=5)
    core = sim.trajectory_controller()
    executing = sim.prepare(core, goal(['joint12'], [[0.4]], [0.6]))
    core.start(executing)
    sim.step(5)
    assert sim.process.arbiter.owners()['leg1'] == 'trajectory'
    while executing.outcome is None:
        sim.step(1)
    assert executing.outcome.status == 'succeeded'
    sim.step(100)
    assert sim.process.arbiter.owners()['leg1'] == 'background'
    ref = trace(sim, 'joint12')
    assert ref[-1] == pytest.approx(0.4, abs=0.01)   # the background controller holds the pose
    assert np.abs(np.diff(ref[-100:])).max() < 1e-3  # no jump at the hand-over
    assert fjs.operational


def test_a_motion_at_the_limits_is_followed_through_ticks_lost_to_cpu_stalls(model):
    # Under load the cycle skips ticks (1-3 periods, 5 % of the ticks here). The reference
    # continues where the time says and the servos follow it; limiting each late tick as if one
    # period had passed made the reference lag by up to 0.13 rad and aborted such motions.
    sim = Sim(model)
    core = sim.trajectory_controller(defaults=ToleranceDefaults(path=0.1))
    times = np.arange(0.0, 4.0, 0.25)
    executing = sim.prepare(core, goal(['joint12'],
                                       [[0.6 * np.sin(2.0 * np.pi * t)] for t in times], times))
    core.start(executing)
    rng = np.random.default_rng(3)
    worst, lost = 0.0, 0
    while executing.outcome is None and len(sim.refs) < 2000:
        if rng.random() < 0.05:
            skip = int(rng.integers(1, 4))
            sim.now += skip * PERIOD
            lost += skip
        sim.step(1)
        feedback, _ = executing.feedback.read()
        if feedback is not None:
            worst = max(worst, float(np.abs(feedback.desired_position
                                            - feedback.actual_position).max()))
    assert lost > 30
    assert executing.outcome.status == 'succeeded', executing.outcome.message
    assert worst < 0.03
    assert sim.process.safety.intervened == 0


# --- the core as its node's component: goals by id, their progress and end pushed -------------


def test_the_component_pushes_progress_at_the_feedback_rate_and_the_end_once(model):
    sim = Sim(model)
    events = []
    core = JointTrajectoryCore.create(
        sim.process, 'trajectory', events.append,
        JointTrajectorySpec(('head',), FilterSpec('none'), order=20, feedback_rate=20.0))
    sim.add_planner(core)
    core.activate()
    sim.step(1)
    plan = sim.prepare(core, goal(['joint51'], [[0.0], [0.2]], [0.0, 1.0])).plan
    core.start_goal(b'goal-1', plan)
    sim.step(200)
    progress = [e for e in events if isinstance(e, GoalProgress)]
    ended = [e for e in events if isinstance(e, GoalEnded)]
    assert len(ended) == 1 and ended[0].goal_id == b'goal-1', events
    assert ended[0].outcome.status == 'succeeded' and ended[0].outcome.code == 0
    # 1 s of motion at 20 Hz: about 20 feedbacks, each of the goal, never after its end
    assert 18 <= len(progress) <= 22 and all(e.goal_id == b'goal-1' for e in progress)
    assert events.index(ended[0]) == len(events) - 1
    times = [e.feedback.time_from_start for e in progress]
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.05 - 1e-9
    # an ended goal is forgotten: cancelling it does nothing, and nothing more is sent
    core.cancel_goal(b'goal-1')
    sim.step(10)
    assert events[-1] is ended[0]


def test_deactivating_the_component_ends_the_running_goal_and_says_so(model):
    sim = Sim(model)
    events = []
    core = JointTrajectoryCore.create(
        sim.process, 'trajectory', events.append,
        JointTrajectorySpec(('head',), FilterSpec('none')))
    sim.add_planner(core)
    core.activate()
    sim.step(1)
    core.start_goal(b'long',
                    sim.prepare(core, goal(['joint51'], [[0.0], [0.2]], [0.0, 5.0])).plan)
    sim.step(20)
    core.deactivate()
    ended = [e for e in events if isinstance(e, GoalEnded)]
    assert [e.goal_id for e in ended] == [b'long']
    assert ended[0].outcome.status == 'aborted' and 'deactivated' in ended[0].outcome.message
    assert int(ended[0].outcome.code) == int(ResultCode.INVALID_GOAL)
