"""
The motion process core in simulated time (no wall clock, no executor, no ROS).

The cycle is stepped by hand; the virtual servo bus closes the loop. Covers the aggregator,
the cycle's stage order, FollowJointState (R-FJS), TorqueMainSwitch (R-SYS-6) and takeovers.
"""


import numpy as np
import pytest
from sim_process import PERIOD, Sim
from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.controllers.torque_switch import TorqueMainSwitchCore
from sweetie_motion.core.cycle import CycleStatistics, StageRole, SyncCycle
from sweetie_motion.core.ports import ControllerOutput
from sweetie_motion.errors import UnknownChainError
from sweetie_motion.servo.virtual import VirtualServoBus
from waiting import wait_for


def test_aggregator_takes_each_resource_from_its_current_owner_only(model):
    sim = Sim(model)
    aggregator = sim.process.aggregator
    n = len(model.list_all_joints())
    ref_p, ref_v = np.full(n, 0.5), np.full(n, 0.1)
    legs = sim.view.get_group_indices('leg1')
    head = sim.view.get_group_indices('head')
    outputs = {'a': ControllerOutput(np.full(n, 1.0), np.full(n, 2.0),
                                     frozenset({'leg1', 'head'})),
               'b': ControllerOutput(np.full(n, -1.0), np.full(n, -2.0), frozenset({'head'}))}
    owners = {'leg1': 'a', 'head': 'b', 'leg2': 'a', 'eyes': ''}
    aggregator.merge(ref_p, ref_v, outputs, owners)
    assert np.all(ref_p[legs] == 1.0) and np.all(ref_v[legs] == 2.0)
    assert np.all(ref_p[head] == -1.0)   # 'a' still outputs head but lost it to 'b'
    leg2 = sim.view.get_group_indices('leg2')
    assert np.all(ref_p[leg2] == 0.5) and np.all(ref_v[leg2] == 0.0)  # a does not drive leg2
    eyes = sim.view.get_group_indices('eyes')
    assert np.all(ref_p[eyes] == 0.5) and np.all(ref_v[eyes] == 0.0)  # free: hold


def test_cycle_runs_stages_in_role_order_and_survives_a_failing_stage():
    calls, errors = [], []

    class Stage:
        """Records its calls."""

        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def update(self, tick):
            calls.append(self.name)
            if self.fail:
                raise RuntimeError('boom')

    cycle = SyncCycle(PERIOD, 3, on_error=lambda stage, error: errors.append(stage))
    cycle.add_stage(StageRole.OUTPUT, Stage('out'))
    cycle.add_stage(StageRole.CONTROLLER, Stage('c2'), order=2)
    cycle.add_stage(StageRole.CONTROLLER, Stage('c1', fail=True), order=1)
    cycle.add_stage(StageRole.INPUT, Stage('in'))
    cycle.add_stage(StageRole.AGGREGATOR, Stage('agg'))
    assert cycle.stages() == ['in', 'c1', 'c2', 'agg', 'out']
    cycle.step(0.0)
    cycle.step(0.01)
    assert calls == ['in', 'c1', 'c2', 'agg', 'out'] * 2
    assert errors == ['c1', 'c1'] and cycle.statistics.stage_errors == 2
    with pytest.raises(ValueError, match='role'):
        cycle.add_stage('middle', Stage('x'))


def test_cycle_thread_ticks_and_measures_itself():
    cycle = SyncCycle(0.002, 2)
    ticks = []

    class Counter:
        name = 'counter'

        def update(self, tick):
            ticks.append(tick.now)

    cycle.add_stage(StageRole.CONTROLLER, Counter())
    cycle.start()
    try:
        wait_for(lambda: len(ticks) >= 50, 20, period=0.01, message='50 ticks')
    finally:
        cycle.stop()
    steps = np.diff(ticks)  # nominal tick times: whole periods apart (more when ticks were lost)
    assert np.allclose(np.round(steps / 0.002), steps / 0.002, atol=1e-6) and np.all(steps > 0)
    summary = cycle.statistics.summary()
    assert summary['ticks'] >= 50 and summary['compute_max'] >= summary['compute_p50'] > 0
    assert not cycle.running


def test_virtual_servo_follows_with_lag_and_velocity_limit():
    bus = VirtualServoBus(['a', 'b'], [1.0, 1.0], lag=0.05, delay=0)
    bus.receive(0.0)
    positions = []
    for k in range(1, 301):
        bus.send(k * PERIOD, np.array([1.0, 0.02]), np.zeros(2))
        positions.append(bus.receive(k * PERIOD + PERIOD).position)
    positions = np.array(positions)
    speed = np.diff(positions[:, 0]) / PERIOD
    assert speed.max() <= 1.0 + 1e-9                    # velocity-limited
    assert abs(positions[-1, 0] - 1.0) < 1e-3
    assert positions[:, 1].max() <= 0.02 + 1e-12        # small step: lag, no overshoot
    assert 0.005 < positions[4, 1] < 0.02               # first-order lag, not instant


def test_virtual_servo_blocked_and_free_joints():
    bus = VirtualServoBus(['a', 'b'], [2.0, 2.0], delay=0)
    bus.receive(0.0)
    bus.block(['a'])
    bus.set_torque(['b'], False)
    assert bus.move_by_hand({'a': 0.3, 'b': 0.4, 'zz': 1}) == ['b']  # 'a' holds torque
    for k in range(1, 20):
        bus.send(k * PERIOD, np.array([1.0, 1.0]), np.zeros(2))
        state = bus.receive(k * PERIOD)
    assert state.position[0] == 0.0            # jammed
    assert state.position[1] == pytest.approx(0.4)  # free: where the hand put it
    status = {s.joint: s for s in bus.status()}
    assert not status['a'].ok and 'blocked' in status['a'].message
    assert not status['b'].torque


def test_follow_joint_state_holds_during_the_activation_delay_then_follows(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.2)
    fjs.set_input(['joint51', 'joint12', 'joint31', 'tail'], [-0.4, 0.6, 0.9, 1.0])
    sim.step(10)
    assert fjs.in_activation_delay and fjs.src_reset.value is not None
    # input sent before activation is not obeyed
    fjs.set_input(['joint51', 'joint12', 'joint31'], [-0.4, 0.6, 0.9])
    sim.step(10)
    ref = sim.refs[-1]
    assert ref[sim.idx('joint51')] == pytest.approx(0.0, abs=1e-9)  # still holding
    sim.step(80)
    ref = sim.refs[-1]
    assert ref[sim.idx('joint51')] == pytest.approx(-0.4, abs=1e-3)
    assert ref[sim.idx('joint12')] == pytest.approx(0.6, abs=1e-3)
    assert ref[sim.idx('joint31')] == 0.0      # leg3 is not this controller's
    assert ref[sim.idx('joint52')] == 0.0      # not in the message: holds
    measured = sim.process.cycle.measured.position
    assert measured[sim.idx('joint12')] == pytest.approx(0.6, abs=0.01)


def test_follow_joint_state_rejects_unknown_chains(model):
    sim = Sim(model)
    with pytest.raises(UnknownChainError, match='tail'):
        sim.fjs(chains=['leg1', 'tail'])


class Holder(ControllerCore):
    """A controller that drives its joints to a fixed pose."""

    def __init__(self, sim, name, chains, value):
        super().__init__(name, sim.view, sim.process.arbiter, chains)
        self.value = value

    def update(self, tick):
        position = tick.reference.position.copy()
        position[self.indices] = self.value
        self.emit(tick, position, np.zeros(len(position)))


def test_takeover_stops_the_first_controller_and_release_returns_without_a_jump(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0)
    fjs.set_input(['joint51'], [-0.3])
    sim.step(60)
    other = Holder(sim, 'other', ['head'], -0.8)
    sim.process.cycle.add_stage(StageRole.CONTROLLER, other, 20)
    other.acquire()
    assert 'head' not in fjs.owned and fjs.operational  # stay_operational keeps it running
    sim.step(100)
    j51 = sim.idx('joint51')
    assert sim.refs[-1][j51] == pytest.approx(-0.8)
    assert sim.process.arbiter.owners()['head'] == 'other'
    fjs.set_input(['joint51'], [0.1])          # input while not owning head: not driven
    sim.step(5)
    assert sim.refs[-1][j51] == pytest.approx(-0.8)
    other.release()
    sim.process.cycle.remove_stage(other)
    before = sim.refs[-1][j51]
    sim.step(1)
    assert sim.process.arbiter.owners()['head'] == 'fjs'
    assert abs(sim.refs[-1][j51] - before) < 1e-6   # continues from the current pose


def test_controller_without_stay_operational_stops_when_everything_is_taken(model):
    sim = Sim(model)
    told = []
    fjs = sim.fjs(chains=['head'], stay=False, delay=0.0)
    fjs.on_not_operational = lambda: told.append(True)
    other = Holder(sim, 'other', ['head'], 0.1)
    other.acquire()
    assert told == [True] and not fjs.operational


def test_torque_off_feeds_the_measured_pose_and_torque_on_resumes_without_a_jump(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0)
    switch = TorqueMainSwitchCore('torque', sim.view, sim.process.arbiter,
                                  ['leg1', 'head', 'nose'], sim.bus)
    sim.process.cycle.add_stage(StageRole.CONTROLLER, switch, 5)
    fjs.set_input(['joint12'], [0.5])
    sim.step(80)
    ok, message = switch.set_torque_off(True)
    assert ok and 'torque off' in message and switch.torque_off
    assert not sim.bus.torque()[sim.bus.joints.index('joint12')]
    sim.step(2)
    for k in range(50):                         # a person moves the leg
        sim.bus.move_by_hand({'joint12': 0.5 - 0.01 * k})
        sim.step(1)
    j12 = sim.idx('joint12')
    assert sim.refs[-1][j12] == pytest.approx(0.02, abs=0.011)  # the reference follows
    ok, message = switch.set_torque_off(False)
    assert ok and 'torque on' in message and not switch.torque_off
    held = sim.refs[-1][j12]
    sim.step(60)
    # the hand moved the leg at -1 rad/s: the servos brake from that motion (R-SYS-8), along
    # it, and hold where it came to rest
    trace = np.array(sim.refs[-61:])[:, j12]
    assert np.diff(trace).max() < 1e-9, 'no reversal'
    assert held - 0.1 < trace[-1] < held
    assert np.abs(np.diff(trace[-20:])).max() < 1e-6
    assert sim.process.arbiter.owners()['leg1'] == 'fjs'


def test_torque_off_for_some_chains_frees_only_theirs_and_hands_back_only_theirs(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0, chains=('leg1', 'leg2', 'head', 'nose'))
    switch = TorqueMainSwitchCore('torque', sim.view, sim.process.arbiter,
                                  ['leg1', 'leg2', 'head', 'nose'], sim.bus)
    sim.process.cycle.add_stage(StageRole.CONTROLLER, switch, 5)
    torque = lambda j: sim.bus.torque()[sim.bus.joints.index(j)]  # noqa: E731
    ok, message = switch.set_torque_off(True, ['leg1'])
    assert ok and 'leg1' in message and switch.torque_off
    assert not torque('joint12') and torque('joint22') and torque('joint51')
    owners = sim.process.arbiter.owners()
    assert owners['leg1'] == 'torque' and owners['leg2'] == 'fjs'
    # the other legs still obey: a leg is taught by hand while the rest stands and moves
    fjs.set_input(['joint22'], [0.3])
    for k in range(40):
        sim.bus.move_by_hand({'joint12': 0.01 * k})
        sim.step(1)
    sim.step(60)
    assert sim.refs[-1][sim.idx('joint22')] == pytest.approx(0.3, abs=1e-3)
    assert sim.refs[-1][sim.idx('joint12')] == pytest.approx(0.39, abs=0.011)
    # more chains join those already free; switching one on hands back only that one
    assert switch.set_torque_off(True, ['head'])[0]
    assert not torque('joint51') and not torque('joint12')
    ok, message = switch.set_torque_off(False, ['leg1'])
    assert ok and 'torque on' in message
    sim.step(60)
    owners = sim.process.arbiter.owners()
    assert owners['leg1'] == 'fjs' and owners['head'] == 'torque'
    assert torque('joint12') and not torque('joint51') and switch.torque_off
    # unknown chains are refused and change nothing
    ok, message = switch.set_torque_off(True, ['leg9'])
    assert not ok and 'leg9' in message and 'leg1' in message
    assert torque('joint12')
    assert switch.set_torque_off(False)[0]
    sim.step(60)
    assert not switch.torque_off and sim.process.arbiter.owners()['head'] == 'fjs'
    assert torque('joint51')


def test_follow_joint_state_applies_every_partial_pose_received_within_a_tick(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0)
    sim.step(1)
    fjs.set_input(['joint12'], [0.3])          # two partial poses before the next tick
    fjs.set_input(['joint51', 'joint12'], [-0.2, 0.5])
    fjs.set_input(['joint13'], [0.4])
    sim.step(120)
    ref = sim.refs[-1]
    assert ref[sim.idx('joint12')] == pytest.approx(0.5, abs=1e-3)   # the newer value wins
    assert ref[sim.idx('joint51')] == pytest.approx(-0.2, abs=1e-3)
    assert ref[sim.idx('joint13')] == pytest.approx(0.4, abs=1e-3)   # none is lost


def test_follow_joint_state_hold_brakes_within_the_limits_and_obeys_the_next_pose(model):
    # a pose far away is on its way; hold (a stop, or its client's pendant fell silent) makes
    # the joint rest where a brake within the limits ends: short of the target, no reversal
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0, smoothing='jerk_limited')     # the node's default
    sim.step(1)
    fjs.set_input(['joint12'], [1.2])
    sim.step(25)
    k = sim.idx('joint12')
    moving_at = sim.refs[-1][k]
    assert 0.05 < moving_at < 1.0
    fjs.hold()
    sim.step(100)
    path = [ref[k] for ref in sim.refs[-101:]]
    assert all(b >= a - 1e-9 for a, b in zip(path, path[1:]))    # no reversal
    rest = path[-1]
    assert moving_at < rest < 1.0 and abs(path[-1] - path[-10]) < 1e-9   # held short of 1.2
    # a hold and a pose before the same tick: the hold drops the older pose
    fjs.set_input(['joint12'], [0.0])
    sim.step(150)
    assert sim.refs[-1][k] == pytest.approx(0.0, abs=1e-3)       # the next pose is obeyed


def test_follow_joint_state_clamps_targets_into_the_position_limits(model):
    sim = Sim(model)
    fjs = sim.fjs(delay=0.0)
    report = fjs.set_input(['joint51', 'joint12', 'tail', 'joint13'],
                           [1.5, 0.2, 0.0, float('nan')])
    assert report.clamped == ['joint51'] and report.unknown == ['tail']
    assert report.invalid == ['joint13'] and report.taken == 2
    sim.step(150)
    assert sim.refs[-1][sim.idx('joint51')] == pytest.approx(0.26, abs=1e-3)  # upper limit


def test_a_motion_taken_from_the_torque_switch_ends_with_servos_on_and_no_chatter(model):
    from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
    sim = Sim(model)
    sim.fjs(name='background', delay=0.0, order=5)
    switch = TorqueMainSwitchCore('torque', sim.view, sim.process.arbiter,
                                  ['leg1', 'head', 'nose'], sim.bus)
    sim.process.cycle.add_stage(StageRole.CONTROLLER, switch, 6)
    trajectory = sim.trajectory_controller(order=10)
    sim.step(5)
    switch.set_torque_off(True)
    sim.step(5)
    executing = sim.run_goal(trajectory, TrajectoryGoal(
        ['joint51'], [TrajectoryPoint(1.0, [-0.2])]))
    assert executing.outcome.status == 'succeeded'
    sim.step(200)
    owners = sim.process.arbiter.owners()
    assert owners['head'] == 'background'        # not back to the switch
    assert owners['leg1'] == 'torque'            # the rest stays free
    torque = dict(zip(sim.bus.joints, sim.bus.torque()))
    assert torque['joint51'] and not torque['joint12']
    ref = np.array(sim.refs[-100:])[:, sim.idx('joint51')]
    assert np.abs(np.diff(ref)).max() < 1e-4 and ref[-1] == pytest.approx(-0.2, abs=1e-3)


def test_cycle_statistics_keep_the_ticks_that_lost_time_for_matching_with_the_machine():
    statistics = CycleStatistics(window=4)
    statistics.record(0.0002, 0.00005, 0, False, 1.00, 0.01)
    statistics.record(0.0003, 0.004, 2, False, 1.01, 0.01)  # started 24 ms after 1.01
    snapshot = statistics.snapshot('SCHED_FIFO 50', True)
    assert snapshot.late_ticks == ((1.01, pytest.approx(0.024), 2),)
    summary = snapshot.summary()
    assert summary['lost'] == 2 and summary['ticks'] == 2
    assert summary['compute_max'] == pytest.approx(0.0003)
