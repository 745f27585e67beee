"""
A client that closes lets go of its streams: its silence does not stop another client's pose.

The editor and the console name the FollowJointState topic they stream to in their pendant's
heartbeats. A client that dies stops what it streamed (FollowJointState holds where a brake
ends, test_demo_killed). One that closes has sent its last pose; three seconds later its
silence would count, and the FollowJointState may be another client's by then: a single pose
that client sent (the editor's Set robot pose) would stop half way. Found by the editor's
tests, which close one editor and open the next in one process.
"""

import time

from motion_process import motion_process, MotionClient
import pytest
from waiting import wait_for

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'farewell'
#: the pose the second client asks for, once: ~1 s of motion at joint51's 1.57 rad/s
FAR = -1.4
#: when it asks, after the first client closed: the motion spans the moment (3 s after the
#: first client's last heartbeat) its silence would have counted
ASKED_AFTER = 2.4


def test_a_closed_clients_silence_does_not_stop_the_next_clients_pose():
    from domains import own_domain
    from sweetie_motion.controllers.pendants import PATIENCE
    from sweetie_motion.ros.pendant import Pendant
    assert ASKED_AFTER < PATIENCE < ASKED_AFTER + 0.9
    with own_domain() as domain, motion_process('sweetie_bot_motion.yaml', NS) as process:
        with MotionClient(NS, domain) as peer:
            peer.wait_ready(['motion', 'follow_joint_state'], timeout=60)
            first = Pendant(peer.node, f'/{NS}', 'first client')
            first.follow([f'/{NS}/joint_states_set'])
            # the second client streams the pose the robot has (no motion) while the first
            # one's heartbeats arrive, then the first one closes
            peer.stream('joint_states_set', ['joint51'], [0.0],
                        lambda: abs(peer.position('joint51', 'reference')) < 1e-3,
                        'joint51 at 0')
            time.sleep(1.0)     # heartbeats (10 a second) reach the watch: not a measurement
            first.destroy()
            closed = time.monotonic()
            while time.monotonic() < closed + ASKED_AFTER:
                peer.publish('joint_states_set', ['joint51'], [0.0])
                time.sleep(0.1)
            peer.publish('joint_states_set', ['joint51'], [FAR])   # once, as Set robot pose
            wait_for(lambda: abs(peer.position('joint51', 'reference') - FAR) < 1e-3, 15,
                     period=0.05, message=f'joint51 at {FAR} (the pose asked for once)')
        output = process.output()
    assert 'holding where a brake ends' not in output, output[-3000:]
