"""
The physics (R-SYS-11) against the real engine: MuJoCo, the package's robot descriptions.

The pony is built from config/sweetie_bot.yaml (Proto2's URDF, its collision meshes, the
DRS-0101 servo models) and plays motions as its trajectory controller plans them.
"""

import math
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from sweetie_motion.model import load_robot_description
from sweetie_motion.model.physics_settings import PhysicsConfigError, PhysicsSettings
from sweetie_motion.model.stl import read_stl
from sweetie_motion.physics.builder import build_physics
from sweetie_motion.physics.meshes import collision_mesh, mesh_volume
from sweetie_motion.physics.motion import MotionSimulator
from sweetie_motion.physics.simulation import PhysicsSimulation
from sweetie_motion.trajectory.codec import load_goal_file
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import GoalError

pytest.importorskip('mujoco')

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config'
LEG1 = ['joint11', 'joint12', 'joint13', 'joint14', 'joint15']


@pytest.fixture(scope='module')
def pony():
    robot = load_robot_description(CONFIG / 'sweetie_bot.yaml')
    robot.configure()
    return robot


@pytest.fixture(scope='module')
def simulator(pony):
    return MotionSimulator(pony)


def lean(angle: float) -> TrajectoryGoal:
    """Swing every leg back by ``angle`` [rad], hooves kept flat: the body leans forward."""
    joints = ['joint12', 'joint22', 'joint32', 'joint42', 'joint14', 'joint24', 'joint34',
              'joint44']
    pose = [-angle] * 4 + [angle] * 4
    return TrajectoryGoal(joints, [TrajectoryPoint(0.0, [0.0] * 8), TrajectoryPoint(2.0, pose),
                                   TrajectoryPoint(3.0, pose)])


def test_the_model_has_the_urdfs_masses_and_inertias_not_ones_from_geometry(pony):
    physics = build_physics(pony)
    model = physics.model
    assert physics.mass == pytest.approx(2.707, abs=0.001)   # Proto2's published total
    import mujoco
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, 'base_link_inertia')
    assert model.body_mass[body] == pytest.approx(0.97193)
    # base_link has no <inertial>: MuJoCo must not give it one from its 35 boxes (3.9 kg)
    assert model.body_mass[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY,
                                             'base_link')] == 0.0
    bone54 = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, 'bone54')
    assert sorted(model.body_inertia[bone54]) == pytest.approx(
        sorted([0.0005385, 0.0006084, 0.0005539]), rel=0.01)


def test_the_virtual_joints_are_fixed_the_servos_are_actuators_and_the_base_is_free(pony):
    physics = build_physics(pony)
    assert physics.free_base and physics.model.nq == 7 + 24 and physics.model.nu == 24
    joints = physics.joints
    for virtual in pony.list_virtual_joints():   # hoof and nose tails, the eyes
        assert physics.qpos[joints.index(virtual)] == -1
    servo = physics.actuators[0]
    # the DRS-0101's default model at 7.4 V: kp U = 1.35 * 7.4, stall 1.18 N*m
    assert servo.stiffness == pytest.approx(1.35 * 7.4)
    assert servo.stall == pytest.approx(1.18) and servo.damping == pytest.approx(0.18)
    assert servo.friction == pytest.approx(0.04 + 0.03)
    assert physics.model.actuator_forcerange[0] == pytest.approx([-1.18, 1.18])


def test_a_servo_models_file_feeds_the_actuators(pony, tmp_path):
    models = tmp_path / 'servo_models.yaml'
    models.write_text('servo_models:\n  - {name: joint12, kp: 2.0, kgear: 1.0, '
                      'alpha: [0.3, 0.05, 0.01, 1.25], qs: 0.3}\n', encoding='utf-8')
    settings = PhysicsSettings.from_mapping(
        {'servo_models': str(models), 'meshes': 'meshes/proto2_collision', 'voltage': 8.0},
        CONFIG)
    physics = build_physics(pony, settings)
    servo = next(a for a in physics.actuators if a.joint == 'joint12')
    assert servo.source == 'servo models file'
    assert servo.stiffness == pytest.approx(2.0 * 8.0 / 1.25)
    assert servo.stall == pytest.approx(1.18 * 8.0 / 7.4 / 1.25)
    assert servo.damping == pytest.approx(0.3 / 1.25)
    other = next(a for a in physics.actuators if a.joint == 'joint13')
    assert other.source == 'DRS-0101 defaults'


def test_the_arm_builds_with_a_fixed_base_and_holds_its_pose():
    arm = load_robot_description(CONFIG / 'winding_arm.yaml')
    arm.configure()
    physics = build_physics(arm)
    assert not physics.free_base and physics.legs == []
    assert physics.model.nq == 6 and physics.model.nu == 6   # no free joint
    sim = PhysicsSimulation(physics)
    pose = np.array([-math.pi / 2, 0.3, -0.2, 0.0, 0.4, 0.0])
    sim.reset(pose)
    sim.hold(pose, 1.0)
    # each joint within the error at which its servo would deliver its whole effort
    assert np.abs(sim.positions() - pose).max() < 0.1
    assert np.abs(sim.servo_torques()).max() > 0   # holding the arm up against gravity
    assert np.allclose(sim.base_pose()[:3], sim.data.xpos[1])


def test_proto2s_concave_meshes_become_boxes_that_keep_their_volume():
    path = CONFIG / 'meshes' / 'proto2_collision' / 'bone12.STL'
    mesh = collision_mesh(str(path))
    assert 0.2 < mesh.solid_share < 0.3 and len(mesh.boxes) >= 3
    boxes = sum(float(np.prod(2 * half)) for _, half in mesh.boxes)
    assert boxes == pytest.approx(mesh_volume(read_stl(str(path))), rel=0.05)
    head = collision_mesh(str(CONFIG / 'meshes' / 'proto2_collision' / 'bone54.STL'))
    assert head.solid_share == 0.0 and head.boxes == ()   # an open surface: its hull
    convex = collision_mesh(str(CONFIG / 'meshes' / 'proto2_collision' / 'bone11.STL'))
    assert convex.solid_share == pytest.approx(1.0, abs=0.01) and convex.boxes == ()


def test_a_lean_past_the_front_hooves_falls(simulator):
    motion = simulator.simulate('lean', lean(0.9))
    assert motion.fall is not None and 1.0 < motion.fall < 3.0
    assert math.degrees(motion.max_tilt()) > 40
    assert any(f.startswith('falls at t =') for f in motion.findings())


def test_a_small_lean_and_the_nod_stay_up(simulator):
    small = simulator.simulate('lean', lean(0.3))
    assert small.fall is None and math.degrees(small.max_tilt()) < 5
    nod = simulator.simulate('nod', load_goal_file(CONFIG / 'trajectories' / 'nod.yaml'))
    assert nod.fall is None and nod.findings() == []
    assert math.degrees(nod.max_tilt()) < 2 and nod.slip().max() < 0.003
    assert nod.duration == pytest.approx(2.5)
    assert len(nod.times) == int(round((2.5 + 1.5) / 0.01)) + 1


def test_a_diagonal_pair_lifted_is_a_rock_not_a_fall(simulator):
    # a trot step: the front left and hind right hooves lifted together for 0.8 s
    joints = ['joint12', 'joint13', 'joint14', 'joint42', 'joint43', 'joint44']
    up = [0.5, -1.0, 0.5, -0.5, 1.0, -0.5]
    goal = TrajectoryGoal(joints, [TrajectoryPoint(0.0, [0.0] * 6), TrajectoryPoint(0.8, up),
                                   TrajectoryPoint(1.6, up), TrajectoryPoint(2.4, [0.0] * 6)])
    motion = simulator.simulate('trot', goal)
    assert motion.fall is None and math.degrees(motion.max_tilt()) < 5
    # without flags one lifted leg is told from the plane of the others, two are not: the hind
    # one counts as supporting, and is seen off the floor
    assert motion.off_ground()[3] > 1.0 and motion.off_ground()[1:3].max() == 0.0


def test_the_stances_of_a_pose_are_its_feets_faces_and_balanced_pairs():
    from sweetie_motion.checks.balance import support_planes
    square = np.array([[0.08, 0.04, -0.23], [0.08, -0.04, -0.23], [-0.08, 0.04, -0.23],
                       [-0.08, -0.04, -0.23]])
    lifted = square.copy()
    lifted[[0, 3], 2] += 0.05              # a diagonal pair up
    feet = np.stack([square, lifted])
    com = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    origins, normals, usable = support_planes(feet, com, np.ones((2, 4), dtype=bool))
    tilt = np.degrees(np.arccos(np.clip(normals[..., 2], -1, 1)))
    # four feet on a plane: every face is level and usable
    assert usable[0, :4].all() and np.allclose(tilt[0, :4], 0.0, atol=1e-6)
    # a diagonal pair up: the faces on the low pair and one lifted hoof tilt (the body would
    # rock onto it), those on both lifted hooves leave the low ones below: no stance; the plane
    # balanced on the low diagonal (legs 2 and 3) is level
    assert usable[1, :4].tolist() == [True, False, False, True]
    assert tilt[1, [0, 3]].min() > 20
    pair = 4 + [(a, b) for a in range(4) for b in range(a + 1, 4)].index((1, 2))
    assert usable[1, pair] and tilt[1, pair] < 1e-6
    # the pair 1-4 up in the air is no stance: the others would be below it
    lifted_pair = 4 + [(a, b) for a in range(4) for b in range(a + 1, 4)].index((0, 3))
    assert not usable[1, lifted_pair]


def test_torque_off_drops_a_lifted_leg(pony):
    # the pony on a stand (its body held, no floor), a front leg lifted forward
    physics = build_physics(pony, PhysicsSettings.from_mapping(
        {'base': 'fixed', 'meshes': 'meshes/proto2_collision'}, CONFIG))
    assert not physics.free_base
    sim = PhysicsSimulation(physics)
    sim.model.geom_contype[sim.model.geom_contype == 1] = 0   # the floor
    pose = np.zeros(len(physics.joints))
    for joint, value in {'joint12': 1.2, 'joint13': -1.3, 'joint14': 0.5}.items():
        pose[physics.joints.index(joint)] = value
    sim.reset(pose)
    sim.hold(pose, 1.0)
    lifted = sim.contact_points()[0]
    sim.set_torque(False, LEG1)
    # slowly: a servo's gears brake it (its viscous friction, 0.18 N*m*s/rad)
    sim.advance(4.0)
    dropped = sim.contact_points()[0]
    assert dropped[2] < lifted[2] - 0.03 and dropped[0] < lifted[0] - 0.025
    assert np.all(sim.servo_torques()[:len(LEG1)] == 0.0)
    assert np.abs(sim.servo_torques()[len(LEG1):]).max() > 0   # the other servos still hold
    sim.set_torque(True)
    sim.hold(pose, 2.0)
    assert np.allclose(sim.contact_points()[0], lifted, atol=0.01)   # lifted again


def test_two_runs_of_a_motion_agree_exactly(simulator):
    goal = load_goal_file(CONFIG / 'trajectories' / 'greeting.yaml')
    first = simulator.simulate('greeting', goal)
    second = MotionSimulator(simulator.robot, simulator.physics).simulate('greeting', goal)
    for name in ('tilt', 'deviation', 'height', 'torque', 'feet', 'on_floor'):
        assert np.array_equal(getattr(first, name), getattr(second, name)), name
    assert first.summary() == second.summary()


def test_the_plan_played_is_the_controllers_approach_and_retiming(simulator):
    goal = TrajectoryGoal(['joint51'], [TrajectoryPoint(0.0, [-0.8]), TrajectoryPoint(0.1, [0.0])])
    plan = simulator.plan(goal)
    # the approach from the standing pose to -0.8 rad, then a swing retimed to the limits
    assert plan.duration > 1.0
    assert any('retimed' in note for note in plan.notes)
    with pytest.raises(GoalError, match='outside the position limits'):
        simulator.plan(TrajectoryGoal(['joint51'], [TrajectoryPoint(0.0, [0.5])]))


@pytest.mark.parametrize('section, message', [
    ({'timestep': -0.001}, 'physics.timestep: expected a number > 0, got -0.001'),
    ({'timestpe': 0.001}, "physics.timestpe: unknown key (did you mean 'timestep'?)"),
    ({'solver': {'cone': 'round'}}, "physics.solver.cone: 'round' is not one of pyramidal, "
                                    'elliptic'),
    ({'fall': {'tilt': 'steep'}}, "physics.fall.tilt: expected a number > 0, got 'steep'"),
    ({'solver': {'iterations': 2.5}}, 'physics.solver.iterations: expected a whole number'),
    ({'floor': 0.8}, 'physics.floor: expected a mapping with friction'),
    ({'stall_share': 1.5}, 'physics.stall_share: expected a number > 0 and <= 1, got 1.5'),
])
def test_a_bad_physics_setting_is_one_line_naming_the_key(section, message):
    with pytest.raises(PhysicsConfigError) as caught:
        PhysicsSettings.from_mapping(section)
    assert str(caught.value).startswith(message)
    assert '\n' not in str(caught.value)
    assert caught.value.key == message.split(':')[0]


@pytest.mark.slow   # a process of its own: make test runs it, make test-fast does not
def test_the_command_refuses_a_bad_physics_setting_in_one_line(tmp_path):
    text = (CONFIG / 'sweetie_bot.yaml').read_text(encoding='utf-8')
    bad = tmp_path / 'bad.yaml'
    bad.write_text(text.replace('urdf: sweetie_bot.urdf', f'urdf: {CONFIG}/sweetie_bot.urdf')
                   .replace('srdf: sweetie_bot.srdf', f'srdf: {CONFIG}/sweetie_bot.srdf')
                   .replace('timestep: 0.002', 'timestep: fast'), encoding='utf-8')
    result = subprocess.run(
        [sys.executable, '-m', 'sweetie_motion.cli', 'simulate', '--robot', str(bad),
         '--files', str(CONFIG / 'trajectories' / 'nod.yaml')],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ('sweetie-motion simulate: physics.timestep: expected a number > 0, '
                             "got 'fast'\n")


@pytest.mark.slow   # two processes, 8 s
def test_the_command_prints_the_same_figures_twice_without_ros(tmp_path):
    files = [str(CONFIG / 'trajectories' / 'nod.yaml'), str(tmp_path / 'lean.yaml')]
    from sweetie_motion.trajectory.codec import dump_goal
    (tmp_path / 'lean.yaml').write_text(dump_goal(lean(0.9), 'lean'), encoding='utf-8')
    hide_ros = ("import sys; sys.modules['rclpy'] = None; "
                'from sweetie_motion.cli import main; sys.exit(main())')
    command = [sys.executable, '-c', hide_ros, 'simulate', '--files', *files, '--png',
               str(tmp_path / 'png')]
    runs = [subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
            for _ in range(2)]
    assert runs[0].returncode == 1, runs[0].stderr   # the lean falls
    assert runs[0].stdout == runs[1].stdout
    table = runs[0].stdout.splitlines()
    assert table[0].split()[:3] == ['motion', 'seconds', 'verdict']
    assert 'FALLS at t =' in next(line for line in table if line.startswith('lean'))
    assert 'stays up' in next(line for line in table if line.startswith('nod'))
    assert (tmp_path / 'png' / 'lean.png').stat().st_size > 10000
