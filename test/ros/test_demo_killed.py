"""
A demo killed mid-motion (kill -9) stops its robot, and leaves no motion process behind.

`sweetie-motion demo` starts its own bringup; killed while it drives the robot through
FollowJointState, its pendant falls silent: FollowJointState holds where a brake ends (within
half a second), and the bringup, started with --stop-with-parent, ends once the robot is at
rest. A peer records the reference from another process.
"""

import os
from pathlib import Path
import signal
import sys
import time

import pytest
from ros_util import Process
from stopping import judge_stop, wait_until_moving
from waiting import wait_for

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the demo's namespace (sweetie_motion/ros/demo.py)
DEMO_NS = 'sweetie_demo'
#: what the demo drives through FollowJointState
DRIVEN = ['joint51', 'joint53', 'joint12', 'joint13']


def processes_with(text: str) -> list:
    """Return the pids of the processes whose command line holds ``text``."""
    found = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as stream:
                if text.encode() in stream.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_a_killed_demo_stops_its_motion_and_its_bringup_ends_once_at_rest(tmp_path):
    from domains import own_domain
    from motion_process import MotionClient
    from sweetie_motion.model import load_robot_description
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    out = tmp_path / 'demo'
    with own_domain() as domain:
        demo = Process([sys.executable, '-m', 'sweetie_motion.cli', 'demo', '--out', str(out),
                        '--seconds', '60'], 'demo')
        try:
            with MotionClient(DEMO_NS, domain) as peer:
                wait_for(lambda: 'through FollowJointState' in demo.output() or
                         not demo.alive(), 90, period=0.1, message='the demo driving')
                wait_until_moving(peer, DRIVEN, speed=0.2)
                acted = time.time()
                demo.popen.send_signal(signal.SIGKILL)
                figures = judge_stop(peer, model, DRIVEN, acted, 0.5)
                print('\n'.join(figures.lines))
                print(f'at rest {figures.rest_after:.2f} s after kill -9')
                assert figures.within(0.5), figures
                # the demo's own bringup ends by itself once the robot rests
                wait_for(lambda: not processes_with(str(out)), 30, period=0.2,
                         message="the demo's bringup to end")
        finally:
            demo.stop(signal.SIGKILL)
    log = Path(out, 'motion_process.log').read_text()
    assert 'the process that started this bringup ended: stopping once the robot is at ' \
        'rest' in log, log[-3000:]
    assert 'ended (its process is gone)' in log and 'Traceback' not in log, log[-3000:]
