"""
Physics as the judge of stored motions (#35 item 4), through the motion process as shipped.

The pony's description says ``physics: judge: refuse``. A motion saved to the storage is judged
in the background; played by name once its verdict is known, a motion the physics says falls
is refused before anything moves — here the original `dance`, which the static checks pass
(they miss its fall) and our physics sees tip over on its hooves' edges. A motion with no
verdict yet plays at once and is judged for the next play; the verdicts are kept in the
storage folder by content.
"""

import json
from pathlib import Path

from motion_process import motion_process, MotionClient
import pytest
from ros_util import wait_for
from sweetie_motion.physics.judge import VERDICTS_NAME
from sweetie_motion.trajectory.codec import load_goal_file

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'physics_judge'
DATA = Path(__file__).resolve().parents[1] / 'data' / 'checks'


def verdicts(store: Path) -> dict:
    """Return what the verdicts file holds (nothing while it is not written)."""
    try:
        return json.loads((store / VERDICTS_NAME).read_text())['verdicts']
    except (OSError, ValueError, KeyError):
        return {}


def test_a_saved_motion_the_physics_says_falls_is_refused_and_one_not_judged_yet_plays(
        tmp_path):
    from domains import own_domain
    from sweetie_motion.ros.motion_client import MotionClient as Client
    store = tmp_path / 'store'
    with own_domain() as domain, motion_process('sweetie_bot_motion.yaml', NS,
                                                '--storage-dir', str(store)):
        with MotionClient(NS, domain) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'trajectory_storage'], timeout=60)
        with Client(NS, timeout=30) as robot:
            robot.save('tipsy_dance', load_goal_file(DATA / 'dance_before.yaml'))
            wait_for(lambda: any('falls at' in v['summary'] for v in verdicts(store).values()),
                     90, period=0.2, message='the physics judging the saved dance')
            result = robot.play('tipsy_dance')
            assert not result.succeeded and result.error_code == -1, result   # INVALID_GOAL
            assert "the physics says the robot cannot do 'tipsy_dance': falls at" in \
                result.error_string, result.error_string
            # nod has no verdict yet: it plays now (it did not wait: it says so), and is judged
            # for the next play
            first = robot.play('nod')
            assert first.succeeded, first.error_string
            assert 'not judged this motion yet' in first.error_string
            wait_for(lambda: len(verdicts(store)) >= 2, 60, period=0.2,
                     message='the physics judging nod')
            second = robot.play('nod')
            assert second.succeeded and 'judged' not in second.error_string, second
