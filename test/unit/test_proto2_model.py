"""
The pony model is Sweetie Bot Proto2: its kinematics and masses equal the published figures.

The figures (test/data/proto2_figures.yaml, transcribed from the published URDF's numbers) are
turned into link frames and a centre of mass here with plain numpy, from the table alone, and
compared with the package's model (its URDF through pinocchio) for random poses within the
limits.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from sweetie_motion.model import load_robot_description
import yaml

FIGURES = yaml.safe_load((Path(__file__).parent.parent / 'data' /
                          'proto2_figures.yaml').read_text(encoding='utf-8'))
JOINTS = {j['name']: j for j in FIGURES['joints']}
LINKS = {link['name']: link for link in FIGURES['links']}


def rotation(axis, angle: float) -> np.ndarray:
    """Return the rotation by ``angle`` about the unit ``axis`` (Rodrigues)."""
    x, y, z = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def transform(xyz, rpy, axis=None, angle: float = 0.0) -> np.ndarray:
    """Return a joint's transform: its origin (URDF roll, pitch, yaw), then its motion."""
    roll, pitch, yaw = rpy
    t = np.eye(4)
    t[:3, :3] = rotation((0, 0, 1), yaw) @ rotation((0, 1, 0), pitch) @ rotation((1, 0, 0), roll)
    t[:3, 3] = xyz
    if axis is not None:
        motion = np.eye(4)
        motion[:3, :3] = rotation(axis, angle)
        t = t @ motion
    return t


def published_frames(pose):
    """Return every link's 4x4 frame in base_link's, from the figures alone."""
    frames = {'base_link': np.eye(4)}
    pending = list(JOINTS.values())
    while pending:
        joint = next(j for j in pending if j['parent'] in frames)
        pending.remove(joint)
        moving = joint['type'] != 'fixed'
        frames[joint['child']] = frames[joint['parent']] @ transform(
            joint['xyz'], joint['rpy'], joint.get('axis') if moving else None,
            pose.get(joint['name'], 0.0))
    return frames


def published_center_of_mass(frames):
    total = sum(link['mass'] for link in LINKS.values() if 'mass' in link)
    moment = sum(link['mass'] * (frames[name] @ np.append(link['com'], 1.0))[:3]
                 for name, link in LINKS.items() if 'mass' in link)
    return total, moment / total


@pytest.fixture(scope='module')
def pony():
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    return model


def random_poses(count: int, seed: int = 2):
    rng = np.random.default_rng(seed)
    moving = [j for j in JOINTS.values() if j['type'] != 'fixed']
    for _ in range(count):
        yield {j['name']: float(rng.uniform(j['lower'], j['upper'])) for j in moving}


def test_every_link_frame_equals_proto2s_for_random_poses(pony):
    poses = [{}] + list(random_poses(25))
    worst_position = worst_rotation = 0.0
    for pose in poses:
        ours = pony.link_placements(pose)
        published = published_frames(pose)
        assert sorted(ours) == sorted(published)
        for link, frame in published.items():
            worst_position = max(worst_position, np.abs(ours[link][:3, 3] - frame[:3, 3]).max())
            worst_rotation = max(worst_rotation, np.abs(ours[link][:3, :3] - frame[:3, :3]).max())
    assert worst_position <= 1e-6
    assert worst_rotation <= 1e-6


def test_the_centre_of_mass_and_the_mass_equal_proto2s(pony):
    for pose in [{}] + list(random_poses(25, seed=3)):
        mass, com = pony.center_of_mass(pose)
        published_mass, published_com = published_center_of_mass(published_frames(pose))
        assert mass == pytest.approx(published_mass, abs=1e-9)
        assert np.abs(com - published_com).max() <= 1e-6
    assert mass == pytest.approx(2.707, abs=1e-3)


def test_joints_axes_and_limits_are_proto2s_and_the_names_unchanged(pony):
    moving = {name: j for name, j in JOINTS.items() if j['type'] != 'fixed'}
    assert sorted(pony.list_all_joints()) == sorted(moving)
    for name, joint in moving.items():
        info = pony.get_joint_info(name)
        assert (info.lower, info.upper, info.velocity) == pytest.approx(
            (joint['lower'], joint['upper'], joint['velocity']))
    # the legs and the neck turn about -x / -y, the hoof's virtual joint about z
    assert JOINTS['joint12']['axis'] == [0.0, -1.0, 0.0]
    assert JOINTS['joint51']['axis'] == [0.0, -1.0, 0.0]
    assert JOINTS['joint16']['axis'] == [0.0, 0.0, 1.0]


def test_chains_groups_and_contacts_are_proto2s(pony):
    assert pony.get_chain_links('leg1') == ('base_link', 'bone15', 'bone16')
    assert pony.get_chain_links('nose') == ('base_link', 'bone54', 'bone56')
    assert pony.list_virtual_joints() == ['joint16', 'joint26', 'joint36', 'joint46', 'joint55',
                                          'joint56', 'eyes_yaw', 'eyes_pitch']
    for leg in range(1, 5):
        contact = pony.get_chain_property(f'leg{leg}', 'contact')
        assert contact == f'hoof{leg}'
        # the hoof is 3 cm below the last servo of the leg
        frames = pony.link_placements({})
        assert frames[contact][:3, 3] - frames[f'bone{leg}5'][:3, 3] == pytest.approx(
            [0, 0, -0.03])


def test_effort_limits_are_the_stall_torques_of_the_servos_of_the_servo_config(pony):
    # one source of truth: the servo config says which servo drives a joint, the servo types
    # what it can give; Proto2's published 2.4 N*m is a DRS-0201's, its servos are DRS-0101
    from sweetie_motion.paths import config_path
    from sweetie_motion.servo.driver import load_bus_config_file
    config = load_bus_config_file(str(config_path('sweetie_bot_servos.yaml')))
    servos = {s.joint: s for bus in config.buses for s in bus.servos}
    assert sorted(servos) == sorted(j for j in pony.list_all_joints() if not pony.is_virtual(j))
    assert {s.servo_type for s in servos.values()} == {'DRS-0101'}
    for joint in pony.list_all_joints():
        expected = servos[joint].kind.stall_torque if joint in servos else 0.0
        assert pony.get_joint_info(joint).effort == pytest.approx(expected), joint
