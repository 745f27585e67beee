"""
The command line against a real motion process (or none), as a person meets it.

Waiting says at once where it looks and ends naming what it searched; a storage that is not
active is named with its state; a stored name misspelt gets the closest; save --last takes the
goal just played; a second bringup on a namespace in use refuses to start, naming the first.
"""

import os
import subprocess
import sys
import time

from motion_process import motion_process, MotionClient
import pytest
from ros_util import Process, ROOT, wait_for

pytestmark = [pytest.mark.ros]


def cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_waiting_for_nobody_says_so_while_it_waits_and_ends_naming_what_it_searched(domain_id):
    process = subprocess.Popen([sys.executable, '-m', 'sweetie_motion.cli', 'list',
                                '--namespace', 'nobody_here', '--timeout', '6'], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stderr.readline()
        # the notice comes while the command still waits, not with its end
        assert process.poll() is None, 'the notice came only when the wait was over'
        assert first.startswith(f'waiting for the motion process in /nobody_here (ROS_DOMAIN_ID '
                                f'{domain_id}'), first
        assert '--timeout' in first
        rest = process.stderr.read()
        code = process.wait(30)
    finally:
        process.kill()
    assert code == 2
    last = rest.strip().splitlines()[-1]
    assert last.startswith('sweetie-motion list: no trajectory storage in /nobody_here '
                           f'(ROS_DOMAIN_ID {domain_id}'), last
    assert 'within 6 s' in last and 'bringup' in last and '--namespace' in last
    assert 'Traceback' not in rest


@pytest.fixture(scope='module')
def unconfigured():
    """Start a motion process with --no-autostart (nothing configured)."""
    from domains import own_domain
    with own_domain() as domain:
        with motion_process('sweetie_bot_motion.yaml', 'cli_idle', '--no-autostart') as process:
            with MotionClient('cli_idle', domain) as peer:
                peer.wait_ready(['trajectory_storage'], timeout=60, state='unconfigured')
                yield process


def test_a_storage_that_is_not_configured_is_named_with_its_state(unconfigured):
    result = cli('list', '--namespace', 'cli_idle', '--timeout', '10')
    assert result.returncode == 2, result
    assert 'no stored trajectories' not in result.stdout
    assert 'the trajectory storage /cli_idle/trajectory_storage is unconfigured, not active' \
        in result.stderr, result.stderr
    assert 'ros2 lifecycle set' in result.stderr


def test_a_second_bringup_on_a_namespace_in_use_refuses_naming_the_first(unconfigured):
    second = Process([sys.executable, '-m', 'sweetie_motion.cli', 'bringup', '--namespace',
                      'cli_idle', '--no-autostart'], 'second-bringup')
    try:
        code = second.popen.wait(60)
    finally:
        second.stop()
    output = second.output()
    os.unlink(second.log.name)
    assert code == 1, output
    assert 'a motion process already runs in /cli_idle: node /cli_idle/motion (host ' in output
    assert f'pid {unconfigured.popen.pid})' in output, output
    assert 'Traceback' not in output
    assert unconfigured.alive(), 'the second bringup stopped the first'


def test_a_misspelt_name_gets_the_closest_and_save_last_takes_the_goal_just_played(domain_id):
    ns = 'cli_pony'
    with motion_process('sweetie_bot_motion.yaml', ns):
        with MotionClient(ns, domain_id) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'trajectory_storage'], timeout=60)
            for command in (['play', 'nodd'], ['show', 'nodd'], ['delete', 'nodd']):
                result = cli(*command, '--namespace', ns)
                assert result.returncode == 2, result
                lines = result.stderr.strip().splitlines()
                assert lines[-1].startswith(f'sweetie-motion {command[0]}: '), lines
                assert "no trajectory named 'nodd' (did you mean 'nod'?)" in lines[-1] or \
                    "no stored trajectory named 'nodd' (did you mean 'nod'?)" in lines[-1], lines
            # told as soon as the motion process answers, not at the end of the timeout
            servo = cli('servo', 'status', '--namespace', ns, '--timeout', '60')
            assert servo.returncode == 2, servo
            assert servo.stderr.strip().splitlines()[-1] == (
                f'sweetie-motion servo status: the motion process in /{ns} has no HerkuleX '
                'servo bus (its hardware: virtual_robot (VirtualServoBus)); start it with '
                '`sweetie-motion bringup --bus serial` (or --bus sim-serial)'), servo.stderr
            played = cli('play', 'nod', '--namespace', ns)
            assert played.returncode == 0, played
            started = time.monotonic()
            saved = cli('save', 'my_nod', '--last', '--namespace', ns, '--timeout', '20')
            took = time.monotonic() - started
            assert saved.returncode == 0, saved
            assert saved.stdout.startswith("saved 'my_nod'"), saved.stdout
            shown = cli('show', 'my_nod', '--namespace', ns)
            assert shown.returncode == 0 and 'joint' in shown.stdout
    # not a time limit: a --last that waited for its timeout would have taken the whole 20 s
    wait_for(lambda: took < 20, 0.1, message=f'save --last took {took:.1f} s')
