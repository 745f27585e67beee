"""
The physics robot's servo bus against the real engine, driven as the cycle drives it (no ROS).

A :class:`~sweetie_motion.core.cycle.SyncCycle` is stepped by hand with the tick times a real
cycle would give (lost ticks included), with the bus component installed as the bringup does.
"""

import numpy as np
import pytest

from sweetie_motion.core.component import CycleResources
from sweetie_motion.model import load_robot_description
from sweetie_motion.physics.robot import PhysicsRobotComponent, PhysicsRobotSpec
from sweetie_motion.process_config import load_process_config

pytest.importorskip('mujoco')

PERIOD = 0.01


@pytest.fixture(scope='module')
def pony():
    robot = load_robot_description('sweetie_bot.yaml')
    robot.configure()
    return robot


@pytest.fixture
def robot(pony):
    shared = CycleResources(pony, PERIOD)
    component = PhysicsRobotComponent.create(shared, 'physics_robot', lambda event: None,
                                             PhysicsRobotSpec(max_catch_up=2))
    component.activate()
    return shared, component


def run(shared, start: float, ticks: int, step: float = PERIOD) -> float:
    """Step the cycle ``ticks`` times from ``start`` [s], ``step`` apart; return the end time."""
    now = start
    for _ in range(ticks):
        now += step
        shared.cycle.step(now)
    return now


def test_the_cycle_reads_the_simulated_joints_and_the_servos_torques(robot):
    shared, component = robot
    run(shared, 100.0, 20)
    measured = shared.cycle.measured
    view = shared.view
    head = view.get_joint_indices(['joint51', 'joint52', 'joint53'])
    # the neck's pitch servos hold the head up against gravity; the yaw servo holds nothing
    assert measured.effort[head[0]] > 0.08 and measured.effort[head[2]] > 0.08
    assert abs(measured.effort[head[1]]) < 0.03
    state = component.state()
    assert state.position[2] == pytest.approx(0.236, abs=0.005)
    assert state.on_floor.all()
    assert state.forces[:, 2].sum() == pytest.approx(2.707 * 9.81, rel=0.02)


def test_a_stalled_machine_costs_simulated_time_never_a_long_tick(robot):
    shared, component = robot
    now = run(shared, 100.0, 10)
    before = component.statistics()
    # the next tick comes 2 s late (a stalled machine): at most 2 periods are made up
    shared.cycle.step(now + 2.0)
    after = component.statistics()
    assert after.simulated - before.simulated == pytest.approx(2 * PERIOD)
    assert after.dropped - before.dropped == pytest.approx(2.0 - 2 * PERIOD)
    assert after.drops == before.drops + 1
    # one lost tick is made up in full
    run(shared, now + 2.0, 1, 2 * PERIOD)
    assert component.statistics().simulated - after.simulated == pytest.approx(2 * PERIOD)
    stats = component.statistics()
    assert stats.real_time_factor < 0.1 and stats.step_max < 0.05


def test_the_reference_drives_the_servos_a_tick_later(robot):
    shared, component = robot
    bus = component.bus
    index = bus.joints.index('joint52')
    target = np.zeros(len(bus.joints))
    target[index] = 0.3
    now = 100.0
    bus.receive(now)
    for _ in range(100):
        now += PERIOD
        bus.receive(now)
        bus.send(now, target, np.zeros_like(target))
    assert bus.receive(now).position[index] == pytest.approx(0.3, abs=0.01)


def test_torque_off_makes_the_joints_limp_and_reset_stands_the_pony_up(robot):
    shared, component = robot
    bus = component.bus
    # knees bent: the legs carry the weight through their servos (straight legs stand on the
    # joints' dry friction alone)
    crouch = np.array([{'2': -0.4, '3': 0.8, '4': -0.4}.get(j[-1], 0.0) if j[-2] in '1234'
                       else 0.0 for j in bus.joints])
    now = 100.0
    bus.receive(now)
    for _ in range(100):
        now += PERIOD
        bus.receive(now)
        bus.send(now, crouch, np.zeros_like(crouch))
    crouched = component.state().position[2]
    bus.set_torque(bus.joints, False)
    assert not bus.torque().any()
    shared.cycle.seed(shared.cycle.measured)
    now = run(shared, now, 150)
    assert component.state().position[2] < crouched - 0.03, 'the limp pony sags'
    measured = shared.cycle.measured
    assert measured.position[shared.view.get_joint_index('joint53')] < -0.3, 'the head droops'
    assert np.allclose(measured.effort[shared.view.get_joint_indices(bus.joints)], 0.0), \
        'a servo with torque off delivers no torque'
    assert 'sags again' in component.reset()
    bus.set_torque(bus.joints, True)
    bus.send(now, np.zeros(len(bus.joints)), np.zeros(len(bus.joints)))
    message = component.reset()
    assert message.startswith('stood up at x') and 'sags' not in message
    run(shared, now, 100)
    state = component.state()
    assert state.position[2] == pytest.approx(0.236, abs=0.005)
    assert state.on_floor.all()
    assert component.statistics().resets == 2


def test_bringup_bus_physics_replaces_the_virtual_robot_in_its_place():
    config = load_process_config('sweetie_bot_motion.yaml')
    place = [c.name for c in config.components].index('virtual_robot')
    config.select_bus('physics')
    assert (config.components[place].name, config.components[place].type_name) == \
        ('physics_robot', 'physics_robot')
    assert not any(c.type_name in ('virtual_robot', 'servo_ident') for c in config.components)
    config.select_bus('virtual')
    assert config.components[place].type_name == 'virtual_robot'
