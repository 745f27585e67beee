"""
The robot description's ``mirror:`` (model/mirror.py): what it declares is the kinematics' mirror.

The pony's declaration is checked against its URDF: for random poses within the limits, the
mirrored pose puts every link where the original pose's mirror link is, reflected in the
sagittal plane (y negated), and turns it as the reflection does (M R M, M = diag(1, -1, 1)):
the turn also checks the signs of the joints that move no link's origin (the hooves' N6).
"""

import random
import re

import numpy as np
import pytest
from sweetie_motion.errors import ModelError
from sweetie_motion.model import load_robot_description
from sweetie_motion.model.mirror import mirror_of, MirrorSettings

#: the head's joints 52 and 54 sit 3.15 mm off the plane (and cancel at zero): the head's links
#: are mirrored to within that
HEAD_OFFSET = 2 * 0.00315 + 1e-9
#: the reflection in the sagittal plane, as a placement
REFLECTION = np.diag([1.0, -1.0, 1.0, 1.0])


@pytest.fixture(scope='module')
def pony():
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    yield model
    model.cleanup()


def mirror_link(name: str) -> str:
    """Return the link the mirror puts where ``name`` was (legs 1-2 and 3-4 swap, eyes too)."""
    legs = {'1': '2', '2': '1', '3': '4', '4': '3'}
    leg = re.fullmatch(r'(bone|hoof)([1-4])(\d?)', name)
    if leg:
        return f'{leg.group(1)}{legs[leg.group(2)]}{leg.group(3)}'
    for left, right in (('left', 'right'), ('right', 'left')):
        if name.endswith(f'_{left}'):
            return name[:-len(left)] + right
    return name


def test_the_pony_mirror_is_the_reflection_of_its_kinematics(pony):
    symmetry = mirror_of(pony)
    assert symmetry is not None
    lower, upper = pony.position_limits()
    joints = pony.list_all_joints()
    rng = random.Random(37)
    for _ in range(20):
        pose = {j: rng.uniform(max(lo, -1.0), min(hi, 1.0))
                for j, lo, hi in zip(joints, lower, upper)}
        mirrored = symmetry.mirror_pose(pose)
        assert sorted(mirrored) == sorted(pose)
        before, after = pony.link_placements(pose), pony.link_placements(mirrored)
        for link, placement in before.items():
            reflected = REFLECTION @ placement @ REFLECTION
            there = after[mirror_link(link)]
            tolerance = HEAD_OFFSET if link.startswith('bone5') or link.startswith(
                ('eye', 'screen', 'camera')) else 1e-9
            assert np.allclose(there[:3, 3], reflected[:3, 3], atol=tolerance), link
            # the screens' and the camera's frames are no mirrors (a camera's optical frame
            # is right-handed; the screens' meshes are each other's mirror, not their frames)
            if not link.startswith(('screen', 'camera')):
                assert np.allclose(there[:3, :3], reflected[:3, :3], atol=1e-9), link


def test_mirroring_twice_gives_the_pose_back_and_a_standing_pose_stays_symmetric(pony):
    symmetry = mirror_of(pony)
    pose = {'joint11': 0.1, 'joint12': 0.3, 'joint23': -0.4, 'joint52': 0.2, 'joint54': -0.1,
            'joint53': 0.3, 'eyes_yaw': 0.05}
    assert symmetry.mirror_pose(symmetry.mirror_pose(pose)) == pose
    mirrored = symmetry.mirror_pose(pose)
    assert mirrored['joint21'] == -0.1 and mirrored['joint22'] == 0.3
    assert mirrored['joint13'] == -0.4 and mirrored['joint52'] == -0.2
    assert mirrored['joint53'] == 0.3 and mirrored['eyes_yaw'] == -0.05
    stand = {'joint12': 0.2, 'joint13': -0.4, 'joint14': 0.2, 'joint22': 0.2,
             'joint23': -0.4, 'joint24': 0.2, 'joint32': -0.2, 'joint33': 0.4,
             'joint34': -0.2, 'joint42': -0.2, 'joint43': 0.4, 'joint44': -0.2}
    assert symmetry.mirror_pose(stand) == stand
    assert symmetry.chain('leg1') == 'leg2' and symmetry.chain('leg4') == 'leg3'
    assert symmetry.chain('head') == 'head'


def test_a_description_without_a_mirror_has_none_and_a_bad_one_is_named():
    arm = load_robot_description('winding_arm.yaml')
    assert not arm.mirror_settings.declared
    assert mirror_of(arm) is None
    with pytest.raises(ModelError, match='mirror: unknown key'):
        MirrorSettings.from_mapping({'pairs': []})
    with pytest.raises(ModelError, match='not a pair'):
        MirrorSettings.from_mapping({'joints': [['a', 'a']]})
    lengths = MirrorSettings.from_mapping({'chains': [['l', 'r']]})
    with pytest.raises(ModelError, match='l has 2 joints, r 1'):
        lengths.symmetry(lambda chain: ['a', 'b'] if chain == 'l' else ['c'])
    odd = MirrorSettings.from_mapping({'joints': [['a', 'b']], 'negate': ['a']})
    with pytest.raises(ModelError, match='a negated but not b'):
        odd.symmetry(lambda chain: [])
