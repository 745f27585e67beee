"""
Safe references (R-SYS-8): the safety stage, brakes, goal timing, in simulated time.

Every test records the reference the virtual servos receive, tick by tick, and checks it the
way a servo would feel it: position steps (velocity), their changes (acceleration), NaN, and
overshoot on stops.
"""

import math

import numpy as np
import pytest
from sim_process import PERIOD, Sim
from sweetie_motion.core.cycle import StageRole, SyncCycle, Tick
from sweetie_motion.core.ports import ControllerOutput
from sweetie_motion.core.safety import Brake, SafetyStage, stopping_position
from sweetie_motion.model.robot_model import JointLimits
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import GoalError, ResultCode

#: rounding allowance of the checks
SLACK = 1e-6


def goal(joints, rows, times):
    return TrajectoryGoal(list(joints), [TrajectoryPoint(t, list(r)) for t, r in
                                         zip(times, rows)])


def peaks(positions, dt=PERIOD):
    """Return (peak velocity, peak acceleration) per joint implied by sampled positions."""
    p = np.asarray(positions)
    velocity = np.diff(p, axis=0) / dt
    acceleration = np.diff(velocity, axis=0) / dt
    return np.abs(velocity).max(axis=0), np.abs(acceleration).max(axis=0)


def assert_within_limits(sim, model, start=0):
    refs = np.array(sim.refs[start:])
    velocities = np.array(sim.velocities[start:])
    assert np.isfinite(refs).all() and np.isfinite(velocities).all()
    limits = model.joint_limits()
    v_peak, a_peak = peaks(refs)
    bad_v = np.flatnonzero(v_peak > limits.velocity * (1 + SLACK) + SLACK)
    bad_a = np.flatnonzero(a_peak > limits.acceleration * (1 + 1e-3) + 1e-3)
    names = model.list_all_joints()
    assert not len(bad_v), [(names[i], v_peak[i]) for i in bad_v]
    assert not len(bad_a), [(names[i], a_peak[i]) for i in bad_a]
    stated = np.abs(np.diff(velocities, axis=0)).max(axis=0) / PERIOD
    bad = np.flatnonzero(stated > limits.acceleration * (1 + 1e-3) + 1e-3)
    assert not len(bad), [(names[i], stated[i]) for i in bad]
    assert (np.abs(velocities) <= limits.velocity * (1 + SLACK) + SLACK).all()


def assert_stops_without_reversal(trace, direction):
    """After the stop began, the joint moves only in ``direction`` (+1/-1), then rests."""
    steps = np.diff(trace) * direction
    assert steps.min() > -1e-9, f'reversal of {-steps.min():.2e} rad'
    assert abs(trace[-1] - trace[-2]) < 1e-9, 'not at rest'


# --- the stage alone ---------------------------------------------------------------------------


class Jumper:
    """A buggy controller: whatever position it is told, at once, velocity zero."""

    name = 'jumper'

    def __init__(self, n, target):
        self.target = target
        self.n = n

    def update(self, tick):
        position = np.array(self.target, dtype=float)
        tick.outputs[self.name] = ControllerOutput(position, np.zeros(self.n),
                                                   frozenset({'all'}))


def stage_cycle(limits, target, owners=None):
    n = len(limits.velocity)
    events = []
    joints = [f'j{i}' for i in range(n)]
    cycle = SyncCycle(PERIOD, n)
    stage = SafetyStage(joints, limits, PERIOD, lambda: owners or ['jumper'] * n,
                        on_event=events.append)
    stage.reset(np.zeros(n))

    class Merge:
        name = 'aggregator'

        def update(self, tick: Tick):
            out = tick.outputs.get('jumper')
            tick.reference.position[:] = out.position
            tick.reference.velocity[:] = out.velocity
            tick.held = np.zeros(n, dtype=bool)

    jumper = Jumper(n, target)
    cycle.add_stage(StageRole.CONTROLLER, jumper)
    cycle.add_stage(StageRole.AGGREGATOR, Merge())
    cycle.add_stage(StageRole.SAFETY, stage)
    return cycle, stage, jumper, events


def limits_of(n, velocity=1.5, acceleration=20.0, jerk=math.inf):
    return JointLimits(np.full(n, -2.0), np.full(n, 2.0), np.full(n, velocity),
                       np.full(n, acceleration), np.full(n, jerk))


def run(cycle, ticks):
    refs, vels = [], []
    for k in range(ticks):
        tick = cycle.step((k + 1) * PERIOD)
        refs.append(tick.reference.position.copy())
        vels.append(tick.reference.velocity.copy())
    return np.array(refs), np.array(vels)


@pytest.mark.parametrize('jerk', [math.inf, 500.0])
def test_a_jump_reaches_the_bus_within_the_limits_and_is_counted(jerk):
    limits = limits_of(2, jerk=jerk)
    cycle, stage, jumper, events = stage_cycle(limits, [1.0, 0.0])
    refs, vels = run(cycle, 200)
    v_peak, a_peak = peaks(np.vstack([np.zeros(2), np.zeros(2), refs]))
    assert v_peak[0] <= 1.5 + 1e-9 and a_peak[0] <= 20.0 * (1 + 1e-6)
    assert refs[-1, 0] == pytest.approx(1.0, abs=1e-9)      # it gets there, no overshoot
    assert refs[:, 0].max() <= 1.0 + 1e-9
    assert np.diff(refs[:, 0]).min() >= -1e-12
    report = stage.report()
    assert report.joints == {'j0': report.joints['j0']} and report.joints['j0'] > 10
    assert report.controllers == {'jumper': report.intervened}
    assert 'j0' in report.last and 'jumper' in report.last
    # after the catch-up the same reference passes untouched
    before = report.intervened
    run(cycle, 20)
    assert stage.report().intervened == before
    assert not events                                       # ~1 s of catch-up: not chronic


class Swinger:
    """A controller following a smooth swing sampled at the tick's time (as a spline does)."""

    name = 'jumper'

    def __init__(self, amplitude, omega):
        self.amplitude, self.omega = amplitude, omega

    def at(self, t):
        return (self.amplitude * math.sin(self.omega * t),
                self.amplitude * self.omega * math.cos(self.omega * t))

    def update(self, tick):
        position, velocity = self.at(tick.now)
        tick.outputs[self.name] = ControllerOutput(np.array([position]), np.array([velocity]),
                                                   frozenset({'all'}))


def test_a_reference_within_the_limits_passes_unchanged_after_the_cycle_lost_ticks():
    # A CPU stall makes the cycle skip ticks: the next tick's reference is further along, as
    # far as the time that passed allows. Limiting it as if one period had passed made the
    # reference lag behind its controller for a while (a path tolerance violation on the
    # virtual robot under load).
    limits = limits_of(1, velocity=1.5, acceleration=20.0)
    swing = Swinger(0.1, 14.0)   # 1.4 rad/s and 19.6 rad/s^2 at the peaks
    cycle, stage, jumper, _ = stage_cycle(limits, [0.0])
    cycle.remove_stage(jumper)
    cycle.add_stage(StageRole.CONTROLLER, swing)
    stage.reset(np.zeros(1), np.array([swing.at(0.0)[1]]))
    rng = np.random.default_rng(7)
    tick_index, lost = 0, 0
    for _ in range(600):
        skip = int(rng.integers(1, 9)) if rng.random() < 0.05 else 0
        lost += skip
        tick_index += 1 + skip
        t = tick_index * PERIOD
        tick = cycle.step(t)
        assert tick.reference.position[0] == pytest.approx(swing.at(t)[0], abs=1e-12), t
    assert lost > 50
    assert stage.report().intervened == 0
    # a jump that the lost time does not explain is still limited
    cycle.remove_stage(swing)
    jumper.target = [1.0]
    cycle.add_stage(StageRole.CONTROLLER, jumper)
    before = tick.reference.position[0]
    tick = cycle.step((tick_index + 6) * PERIOD)
    assert stage.report().intervened == 1
    assert abs(tick.reference.position[0] - before) <= 1.5 * 6 * PERIOD


def test_a_controller_that_needs_the_stage_all_the_time_is_reported():
    limits = limits_of(1)
    cycle, stage, jumper, events = stage_cycle(limits, [1.0])
    for k in range(400):   # a reference that jumps back and forth forever
        jumper.target = [1.0 if (k // 30) % 2 else -1.0]
        cycle.step((k + 1) * PERIOD)
    assert len(events) == 1
    assert 'jumper' in events[0] and 'exceeds the joint limits' in events[0]


def test_nan_never_reaches_the_bus():
    limits = limits_of(2)
    cycle, stage, jumper, _ = stage_cycle(limits, [0.3, 0.0])
    run(cycle, 100)
    jumper.target = [float('nan'), 0.0]
    refs, vels = run(cycle, 50)
    assert np.isfinite(refs).all() and np.isfinite(vels).all()
    assert refs[-1, 0] == pytest.approx(0.3, abs=1e-6)


def test_a_reference_beyond_the_position_limit_stops_at_the_limit():
    limits = limits_of(1)
    cycle, stage, jumper, _ = stage_cycle(limits, [5.0])
    refs, _ = run(cycle, 400)
    assert refs.max() <= 2.0 + 1e-9 and refs[-1, 0] == pytest.approx(2.0)


# --- brakes ------------------------------------------------------------------------------------


@pytest.mark.parametrize('jerk', [math.inf, 500.0])
def test_a_brake_stops_along_the_motion_where_stopping_position_says(jerk):
    limits = limits_of(2, jerk=jerk)
    start = np.array([0.1, -0.2])
    velocity = np.array([1.4, -0.6])
    expected = stopping_position(limits, start, velocity)
    brake = Brake(limits, PERIOD)
    brake.start(start, velocity)
    trace = [start]
    for _ in range(200):
        position, _ = brake.step()
        trace.append(position)
        if not brake.active:
            break
    trace.append(trace[-1])            # it rests there
    trace = np.array(trace)
    assert not brake.active
    assert_stops_without_reversal(trace[:, 0], +1)
    assert_stops_without_reversal(trace[:, 1], -1)
    assert trace[-1] == pytest.approx(expected, abs=2e-3)
    # v^2 / 2a without jerk limit; longer with it
    assert expected[0] - 0.1 >= 1.4 ** 2 / 40 - 1e-6


# --- controllers on the virtual robot -----------------------------------------------------------


def test_far_first_point_is_approached_within_the_limits_and_the_result_says_so(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    start = len(sim.refs)
    executing = sim.run_goal(core, goal(['joint12'], [[0.9], [0.9]], [0.1, 0.5]))
    assert executing.outcome.status == 'succeeded', executing.outcome.message
    assert 'approach to the first point takes' in executing.outcome.message
    assert_within_limits(sim, model, max(0, start - 2))
    assert sim.process.safety.report().intervened == 0  # planned right: nothing to correct
    ref = np.array(sim.refs)[:, sim.idx('joint12')]
    assert ref.max() <= 0.9 + 1e-6


def test_a_goal_beyond_the_velocity_limit_is_retimed_or_refused(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    fast = goal(['joint12'], [[0.0], [1.0], [0.0]], [0.0, 0.3, 0.6])
    sim.planner(core).policy = 'refuse'
    with pytest.raises(GoalError) as caught:
        sim.prepare(core, fast)
    assert caught.value.code == ResultCode.INVALID_GOAL
    text = str(caught.value)
    assert 'joint12 needs' in text and 'velocity limit 1.57' in text and 't = ' in text
    sim.planner(core).policy = 'retime'
    start = len(sim.refs)
    executing = sim.run_goal(core, fast)
    assert executing.outcome.status == 'succeeded', executing.outcome.message
    assert 'retimed' in executing.outcome.message and 'slower' in executing.outcome.message
    assert executing.duration > 0.6 * 2
    assert_within_limits(sim, model, max(0, start - 2))


@pytest.mark.parametrize('stop', ['cancel', 'abort'])
def test_cancel_and_abort_brake_along_the_motion_and_hold_where_they_rest(model, stop):
    sim = Sim(model)
    core = sim.trajectory_controller()
    executing = sim.prepare(core, goal(['joint12'], [[1.2]], [1.2]))
    core.start(executing)
    sim.step(60)                                   # moving fast by now
    assert sim.velocities[-1][sim.idx('joint12')] > 1.0
    mark = len(sim.refs)
    if stop == 'cancel':
        core.cancel(executing)
    else:
        executing.end('aborted', ResultCode.PATH_TOLERANCE_VIOLATED, 'test abort')
    sim.step(150)
    trace = np.array(sim.refs)[mark - 1:, sim.idx('joint12')]
    assert_stops_without_reversal(trace, +1)
    assert_within_limits(sim, model)
    assert np.abs(np.diff(trace[-50:])).max() < 1e-9   # holds where it came to rest
    assert sim.process.safety.report().intervened == 0


def test_preemption_within_the_limits(model):
    sim = Sim(model)
    core = sim.trajectory_controller()
    first = sim.prepare(core, goal(['joint12'], [[1.2]], [1.2]))
    core.start(first)
    sim.step(60)
    second = sim.run_goal(core, goal(['joint12'], [[-0.5]], [0.2]))
    assert second.outcome.status == 'succeeded', second.outcome.message
    assert_within_limits(sim, model)


def test_follow_joint_state_steps_and_catches_up_within_the_limits(model):
    sim = Sim(model)
    fjs = sim.fjs(smoothing='jerk_limited', delay=0.05)
    sim.step(10)
    fjs.set_input(['joint12'], [1.0])
    sim.step(300)
    trace = np.array(sim.refs)[:, sim.idx('joint12')]
    assert trace[-1] == pytest.approx(1.0, abs=1e-6)
    assert trace.max() <= 1.0 + 1e-9                       # no overshoot
    assert_within_limits(sim, model)
    assert sim.process.safety.report().intervened == 0


def test_a_chain_handed_over_while_moving_continues_and_rests(model):
    sim = Sim(model)
    fjs = sim.fjs(smoothing='jerk_limited', delay=0.05, chains=('leg1',))
    sim.step(10)
    core = sim.trajectory_controller(chains=('leg1',), order=20)
    executing = sim.prepare(core, goal(['joint12'], [[1.2]], [1.2]))
    core.start(executing)
    sim.step(60)
    mark = len(sim.refs)
    core.release()                       # the trajectory controller gives the leg up
    sim.step(150)
    assert fjs.owned                      # the background controller has it back
    trace = np.array(sim.refs)[mark - 1:, sim.idx('joint12')]
    assert_stops_without_reversal(trace, +1)
    assert_within_limits(sim, model)


def test_a_free_moving_joint_is_braked_by_the_stage(model):
    sim = Sim(model)
    core = sim.trajectory_controller(chains=('leg1',))
    executing = sim.prepare(core, goal(['joint12'], [[1.2]], [1.2]))
    core.start(executing)
    sim.step(60)
    mark = len(sim.refs)
    sim.process.cycle.remove_stage(core)  # the controller is gone, nobody drives the leg
    core.release()
    sim.step(100)
    trace = np.array(sim.refs)[mark - 1:, sim.idx('joint12')]
    assert_stops_without_reversal(trace, +1)
    assert_within_limits(sim, model)
    assert sim.process.safety.report().controllers.get('', 0) > 0


def test_torque_on_while_moved_by_hand_brakes_from_the_measured_motion(model):
    from sweetie_motion.controllers.torque_switch import TorqueMainSwitchCore
    sim = Sim(model)
    switch = TorqueMainSwitchCore('torque', sim.view, sim.process.arbiter, ['leg1'], sim.bus)
    sim.process.cycle.add_stage(StageRole.CONTROLLER, switch, 5)
    sim.step(2)
    switch.set_torque_off(True)
    position = 0.0
    for _ in range(50):                   # a hand moves the leg at 0.4 rad/s
        position += 0.4 * PERIOD
        sim.bus.move_by_hand({'joint12': position})
        sim.step(1)
    mark = len(sim.refs)
    switch.set_torque_off(False)
    for _ in range(60):
        sim.step(1)
    trace = np.array(sim.refs)[mark - 1:, sim.idx('joint12')]
    assert_stops_without_reversal(trace, +1)
    assert_within_limits(sim, model, mark - 1)
    assert trace[-1] > position - 1e-6        # rested ahead of the last hand position


# --- limits from the robot config, timing -------------------------------------------------------


def pony(limits):
    from sweetie_motion.model.description import robot_model_from_mapping
    from sweetie_motion.paths import config_path
    import yaml
    path = config_path('sweetie_bot.yaml')
    robot = dict(yaml.safe_load(path.read_text())['robot'])
    robot['limits'] = limits
    model = robot_model_from_mapping(robot, path.parent)
    model.configure()
    return model


def test_the_most_specific_limits_entry_wins():
    model = pony({'default': {'acceleration': 10.0, 'jerk': 100.0},
                  'leg1': {'acceleration': 11.0},           # a group (and chain) name
                  'head': {'jerk': 300.0},
                  'joint12': {'acceleration': 12.0}})
    info = model.get_joint_info
    assert info('joint11').acceleration == 11.0 and info('joint11').jerk == 100.0
    assert info('joint12').acceleration == 12.0
    assert info('joint21').acceleration == 10.0
    assert info('joint52').jerk == 300.0 and info('joint52').acceleration == 10.0
    limits = model.joint_limits()
    assert limits.acceleration[model.get_joint_index('joint12')] == 12.0
    assert (model.acceleration_limits() == limits.acceleration).all()


def test_without_limits_a_joint_reaches_its_top_speed_in_a_fifth_of_a_second():
    model = pony({})
    info = model.get_joint_info('joint12')
    assert info.acceleration == pytest.approx(5 * info.velocity)
    assert math.isinf(info.jerk)


@pytest.mark.parametrize('limits, message', [
    ({'tail': {'acceleration': 1.0}}, "'tail' is neither"),
    ({'default': {'velocity': 1.0}}, 'velocity limits come from the URDF'),
    ({'default': {'acceleration': -1.0}}, 'must be > 0'),
    ({'default': {'jerk': 'fast'}}, 'expected a number'),
    ({'default': 3.0}, 'expected a mapping'),
])
def test_bad_limits_are_refused_with_a_clear_message(limits, message):
    from sweetie_motion.errors import ChainDeclarationError
    with pytest.raises(ChainDeclarationError, match=message):
        pony(limits)


def test_jerk_limited_smoothing_takes_the_models_limits_for_zero(model):
    from sweetie_motion.core.smoothing import filter_spec
    view = model.view()
    spec = filter_spec('jerk_limited', {'max_velocity': 0.0, 'max_acceleration': 0.0,
                                        'max_jerk': 0.0}, {'joint12': {'max_jerk': 50.0}},
                       view.list_all_joints(), view.velocity_limits(), (),
                       view.acceleration_limits(), view.jerk_limits())
    smoothing = spec.create(['joint12', 'eyes_yaw'], PERIOD)
    assert smoothing.params['max_acceleration'].tolist() == [20.0, 40.0]
    assert smoothing.params['max_jerk'].tolist() == [50.0, 1000.0]
    assert smoothing.params['max_velocity'].tolist() == [1.5708, 6.2832]


def test_an_approach_takes_the_requested_time_when_the_limits_allow_it(model):
    from sweetie_motion.trajectory.timing import plan_approach
    limits = model.joint_limits().take([model.get_joint_index('joint12')])
    duration, times, p, v, a = plan_approach(np.zeros(1), np.zeros(1), np.array([0.1]),
                                             np.zeros(1), np.zeros(1), limits, 2.0)
    assert duration == pytest.approx(2.0)
    assert p[-1, 0] == pytest.approx(0.1) and abs(v[-1, 0]) < 1e-9
    assert np.abs(v).max() <= 1.57 and np.abs(a).max() <= 20.0 + 1e-9
    duration, *_ = plan_approach(np.zeros(1), np.zeros(1), np.array([1.5]), np.zeros(1),
                                 np.zeros(1), limits, 0.1)
    assert duration > 1.5 / 1.57                     # as fast as the limits allow, no faster
