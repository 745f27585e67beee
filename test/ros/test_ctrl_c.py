"""
Ctrl+C stops the robot: `play` and `program run` cancel their goal, from another process.

The motion process runs as a user starts it; the command runs in its own process and gets
SIGINT (what Ctrl+C in its terminal sends) while the robot moves. From a third process the test
records ``joint_states_ref``: after the signal every joint must come to rest within its braking
distance (from the speed and the acceleration it had, within its acceleration and jerk limits,
plus a tenth), plus what it travels while the cancel makes its way (at most 0.2 s at that
speed); the command says that the motion was cancelled and exits 130.
"""

import signal
import sys
import time

from motion_process import motion_process, MotionClient
import numpy as np
import pytest
from ros_util import Process, wait_for
from sweetie_motion.model import load_robot_description

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the longest the cancel may take to reach the cycle after the signal [s]
REACTION = 0.2


def command(*args: str) -> Process:
    return Process([sys.executable, '-m', 'sweetie_motion.cli', *args], 'command')


def braking_distance(speed: float, acceleration: float, limit: float, jerk: float) -> float:
    """
    Return the distance to rest from ``speed`` (and ``acceleration`` along it) [rad].

    The fastest stop within the acceleration ``limit`` and the ``jerk`` limit: the deceleration
    ramps up at the jerk limit (taking back an acceleration first), and eases off so as to
    reach rest without reversing.
    """
    if not np.isfinite(jerk) or jerk <= 0:
        return speed * speed / (2 * limit) + max(0.0, acceleration) * speed / limit
    dt, distance, v, a = 1e-4, 0.0, speed, acceleration
    while v > 0:
        if a < 0 and v <= a * a / (2 * jerk):
            a = min(0.0, a + jerk * dt)                # ease off: rest with no reversal
        else:
            a = max(a - jerk * dt, -limit)
        v += a * dt
        distance += max(v, 0.0) * dt
    return distance


def stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def interrupt_while_moving(peer: MotionClient, process: Process, joints, robot: str):
    """Send SIGINT once the reference moves; return (exit code, output, worst margin [rad])."""
    model = load_robot_description(robot)
    model.configure()
    index = {j: k for k, j in enumerate(model.list_all_joints())}
    acceleration = model.acceleration_limits()
    jerk = model.jerk_limits()
    velocity = model.joint_limits().velocity

    def moving() -> bool:
        with peer.lock:
            msg = peer.reference
        speeds = [abs(msg.velocity[list(msg.name).index(j)]) for j in joints]
        return max(speeds) > 0.2
    wait_for(moving, 30, period=0.02, message='the robot under way')
    with peer.lock:
        before = len(peer.history)
    signalled = time.time()
    process.popen.send_signal(signal.SIGINT)
    code = process.popen.wait(15)

    def resting() -> bool:
        with peer.lock:
            recent = peer.history[-20:]
        return len(recent) == 20 and all(
            max(abs(v) for v in (m.velocity[list(m.name).index(j)] for j in joints)) < 1e-3
            for m in recent)
    wait_for(resting, 10, period=0.05, message='the robot at rest')
    with peer.lock:
        history = peer.history[max(0, before - 5):]
    names = list(history[0].name)
    k_signal = min(range(len(history)), key=lambda k: abs(stamp(history[k]) - signalled))
    at_signal = history[k_signal]
    before_signal = history[max(0, k_signal - 2)]
    final = history[-1]
    worst = -np.inf
    for joint in joints:
        k = names.index(joint)
        speed = abs(at_signal.velocity[k])
        span = max(stamp(at_signal) - stamp(before_signal), 1e-3)
        along = (at_signal.velocity[k] - before_signal.velocity[k]) / span * np.sign(
            at_signal.velocity[k])
        # a joint that speeds up (a HOME move starting) goes on doing so while the signal is
        # handled: it brakes from the speed it has after the reaction time
        speeding_up = min(max(0.0, along), acceleration[index[joint]])
        reached = min(speed + speeding_up * REACTION, velocity[index[joint]])
        reacting = (speed + reached) / 2 * REACTION
        braking = 1.1 * braking_distance(reached, along, acceleration[index[joint]],
                                         jerk[index[joint]])
        travelled = abs(final.position[k] - at_signal.position[k])
        worst = max(worst, travelled - (braking + reacting + 0.01))
        print(f'{joint}: {speed:.3f} rad/s at the signal, braking {braking:.3f} rad, '
              f'travelled {travelled:.3f} rad, at rest '
              f'{stamp(final) - signalled:.2f} s after the signal')
    return code, process.output(), worst


def test_ctrl_c_on_play_cancels_the_motion_and_the_robot_stops(domain_id):
    ns = 'ctrl_c_pony'
    with motion_process('sweetie_bot_motion.yaml', ns):
        with MotionClient(ns, domain_id) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'trajectory_storage'], timeout=60)
            play = command('play', 'look_around', '--namespace', ns)
            try:
                code, output, worst = interrupt_while_moving(
                    peer, play, ['joint51', 'joint52', 'joint53'], 'sweetie_bot.yaml')
            finally:
                play.stop(signal.SIGKILL)
    assert code == 130, output
    assert 'stopped: the motion was cancelled; the robot decelerated and holds' in output
    assert 'Traceback' not in output
    assert worst <= 0.0, f'a joint went {worst:.3f} rad beyond its braking distance'


def test_ctrl_c_on_program_run_cancels_the_motion_and_the_arm_stops(domain_id):
    ns = 'ctrl_c_arm'
    with motion_process('winding_arm_motion.yaml', ns):
        with MotionClient(ns, domain_id) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'cartesian'], timeout=60)
            run = command('program', 'run', 'config/programs/paper_path.txt', '--namespace', ns)
            try:
                code, output, worst = interrupt_while_moving(
                    peer, run, [f'joint{k}' for k in range(1, 7)], 'winding_arm.yaml')
            finally:
                run.stop(signal.SIGKILL)
    assert code == 130, output
    assert 'stopped: the motion was cancelled; the robot decelerated and holds' in output
    assert 'goal succeeded' not in output and 'steps done' not in output
    assert worst <= 0.0, f'a joint went {worst:.3f} rad beyond its braking distance'
