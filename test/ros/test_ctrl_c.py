"""
Ctrl+C stops the robot: `play` and `program run` cancel their goal; killed, they stop it too.

The motion process runs as a user starts it; the command runs in its own process and gets
SIGINT (what Ctrl+C in its terminal sends), or SIGKILL (nothing of it runs any more: its
pendant falls silent), while the robot moves. From a third process the test
records ``joint_states_ref``: after the signal every joint must come to rest within its braking
distance (from the speed and the acceleration it had, within its acceleration and jerk limits,
plus a tenth), plus what it travels while the cancel makes its way (at most 0.2 s at that
speed; 0.5 s after kill -9); the command says that the motion was cancelled and exits 130.
"""

import signal
import sys
import time

from motion_process import motion_process, MotionClient
import pytest
from ros_util import Process
from stopping import judge_stop, wait_until_moving
from sweetie_motion.model import load_robot_description

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the longest the cancel may take to reach the cycle after the signal [s]
REACTION = 0.2
#: after kill -9: the pendant's lease, a check period and the cancel's way [s]
KILLED_REACTION = 0.5


def command(*args: str) -> Process:
    return Process([sys.executable, '-m', 'sweetie_motion.cli', *args], 'command')


def interrupt_while_moving(peer: MotionClient, process: Process, joints, robot: str,
                           sig: int = signal.SIGINT, reaction: float = REACTION):
    """Send ``sig`` once the reference moves; return (exit code, output, StopFigures)."""
    model = load_robot_description(robot)
    model.configure()
    wait_until_moving(peer, joints)
    signalled = time.time()
    process.popen.send_signal(sig)
    code = process.popen.wait(15)
    figures = judge_stop(peer, model, joints, signalled, reaction)
    print('\n'.join(figures.lines))
    print(f'at rest {figures.rest_after:.2f} s after the signal (braking '
          f'{figures.braking_time:.2f} s)')
    return code, process.output(), figures


@pytest.fixture(scope='module')
def pony():
    """Run the pony's bringup on the virtual robot; yield a peer recording joint_states_ref."""
    from domains import own_domain
    ns = 'ctrl_c_pony'
    with own_domain() as domain, motion_process('sweetie_bot_motion.yaml', ns):
        with MotionClient(ns, domain) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'trajectory_storage'], timeout=60)
            peer.namespace = ns
            yield peer


@pytest.fixture(scope='module')
def arm():
    """Run the arm's bringup on the virtual robot; yield a peer recording joint_states_ref."""
    from domains import own_domain
    ns = 'ctrl_c_arm'
    with own_domain() as domain, motion_process('winding_arm_motion.yaml', ns):
        with MotionClient(ns, domain) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'cartesian'], timeout=60)
            peer.namespace = ns
            yield peer


HEAD = ['joint51', 'joint52', 'joint53']
ARM = [f'joint{k}' for k in range(1, 7)]


def test_ctrl_c_on_play_cancels_the_motion_and_the_robot_stops(pony):
    play = command('play', 'look_around', '--namespace', pony.namespace)
    try:
        code, output, figures = interrupt_while_moving(pony, play, HEAD, 'sweetie_bot.yaml')
    finally:
        play.stop(signal.SIGKILL)
    assert code == 130, output
    assert 'stopped: the motion was cancelled; the robot decelerated and holds' in output
    assert 'Traceback' not in output
    assert figures.within(REACTION), figures


def test_a_killed_play_stops_its_motion_within_half_a_second(pony):
    # kill -9: nothing of the command runs any more; its pendant falls silent and the
    # controller stops the goal (lease 0.3 s, checked every 0.05 s)
    play = command('play', 'look_around', '--namespace', pony.namespace)
    try:
        code, output, figures = interrupt_while_moving(pony, play, HEAD, 'sweetie_bot.yaml',
                                                       signal.SIGKILL, KILLED_REACTION)
    finally:
        play.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL, output
    assert figures.within(KILLED_REACTION), figures


def test_ctrl_c_on_program_run_cancels_the_motion_and_the_arm_stops(arm):
    run = command('program', 'run', 'config/programs/paper_path.txt', '--namespace',
                  arm.namespace)
    try:
        code, output, figures = interrupt_while_moving(arm, run, ARM, 'winding_arm.yaml')
    finally:
        run.stop(signal.SIGKILL)
    assert code == 130, output
    assert 'stopped: the motion was cancelled; the robot decelerated and holds' in output
    assert 'goal succeeded' not in output and 'steps done' not in output
    assert figures.within(REACTION), figures


def test_a_killed_program_run_stops_its_motion_within_half_a_second(arm):
    run = command('program', 'run', 'config/programs/paper_path.txt', '--namespace',
                  arm.namespace)
    try:
        code, _, figures = interrupt_while_moving(arm, run, ARM, 'winding_arm.yaml',
                                                  signal.SIGKILL, KILLED_REACTION)
    finally:
        run.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert figures.within(KILLED_REACTION), figures
