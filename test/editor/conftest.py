"""
Editor tests in a real window: Xvfb + openbox when no display is given, the motion process.

Without a DISPLAY, the session starts its own X server (Xvfb, a 1600 x 1000 screen) and window
manager (openbox) when both programs exist, so that the window is placed, decorated and
resized by a real window manager as on a desktop; otherwise Qt renders offscreen and the checks
that need a window manager are skipped with the reason (:func:`require_window_manager`).
``SWEETIE_EDITOR_OFFSCREEN=1`` forces offscreen rendering.
"""

from contextlib import ExitStack
import os
from pathlib import Path
import shutil
import subprocess
from typing import Iterator

from editor_helpers import DISPLAY as _display, editor_config, open_editor, READY, until
import pytest
from waiting import wait_for
from x_display import die_with_parent, free_display, start_window_manager, window_manager_runs

#: the screen of the X server the tests start [px]
SCREEN = (1600, 1000)


@pytest.fixture(scope='session', autouse=True)
def display() -> Iterator[dict]:
    """Give the editor tests a display: the user's, an own Xvfb + openbox, or offscreen."""
    if os.environ.get('SWEETIE_EDITOR_OFFSCREEN') == '1':
        _display.update(reason='SWEETIE_EDITOR_OFFSCREEN=1: rendered offscreen')
        os.environ['QT_QPA_PLATFORM'] = 'offscreen'
    elif os.environ.get('DISPLAY'):
        name = os.environ['DISPLAY']
        os.environ['QT_QPA_PLATFORM'] = 'xcb'
        _display.update(name=name, wm=window_manager_runs(name),
                        reason='' if window_manager_runs(name) else
                        f'no EWMH window manager on DISPLAY={name}')
    elif shutil.which('Xvfb') and shutil.which('openbox'):
        number = free_display()
        name = f':{number}'
        subprocess.Popen(
            ['Xvfb', name, '-screen', '0', f'{SCREEN[0]}x{SCREEN[1]}x24', '-nolisten', 'tcp'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        wait_for(lambda: os.path.exists(f'/tmp/.X11-unix/X{number}'), 20, message='Xvfb')
        os.environ['DISPLAY'] = name
        if shutil.which('xdotool'):
            start_window_manager(name)
            _display.update(name=name, wm=True)
        else:
            subprocess.Popen(['openbox', '--sm-disable'], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
            _display.update(name=name, reason='xdotool is missing: the window manager cannot '
                            'be checked')
        os.environ['QT_QPA_PLATFORM'] = 'xcb'
    else:
        missing = [p for p in ('Xvfb', 'openbox') if not shutil.which(p)]
        _display.update(reason=f'{" and ".join(missing)} not installed (apt-get install xvfb '
                        'openbox xdotool): rendered offscreen')
        os.environ['QT_QPA_PLATFORM'] = 'offscreen'
    yield _display


# --- the motion process ------------------------------------------------------------------------


#: what the session's motion process of the editor tests holds open (see :func:`robot`)
_robot_stack = ExitStack()


@pytest.fixture(scope='session')
def robot(tmp_path_factory, request):
    """
    Run the motion process on the virtual robot; yield a client that watches it.

    It ends after the last test of this folder (:func:`pytest_runtest_teardown`), not with
    the session: it ran on beside every later test, a real-time cycle and a publisher at
    100 Hz taking CPU from the load-sensitive ones (the servo stack, the cycle under load).
    """
    from domains import own_domain
    from motion_process import motion_process, MotionClient
    directory = tmp_path_factory.mktemp('editor_robot')
    config = editor_config(directory)
    with _robot_stack:
        domain = _robot_stack.enter_context(own_domain())
        process = _robot_stack.enter_context(motion_process(str(config), 'pony_editor'))
        client = _robot_stack.enter_context(MotionClient('pony_editor', domain))
        client.wait_ready(READY)
        _wait_until_follow_joint_state_obeys(client)
        client.storage_dir = directory / 'store'
        client.domain = domain
        client.process = process
        yield client


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem) -> None:
    """Stop the editor tests' motion process once the next test is not one of them."""
    if nextitem is None or nextitem.path.parent != Path(__file__).parent:
        _robot_stack.close()


def _wait_until_follow_joint_state_obeys(client) -> None:
    """
    Wait until FollowJointState moves the robot.

    It ignores input for `activation_delay` after its activation: a first test's slider move
    could otherwise fall into that second.
    """
    def moved() -> bool:
        client.publish('joint_states_set', ['joint53'], [0.05])
        return abs(client.position('joint53') - 0.05) < 0.01
    wait_for(moved, 30, period=0.1, message='FollowJointState obeying')
    client.publish('joint_states_set', ['joint53'], [0.0])
    wait_for(lambda: abs(client.position('joint53')) < 0.01, 30, period=0.1,
             message='the head back at 0')


@pytest.fixture
def editor(qtbot, robot, tmp_path):
    """Open an editor on the session's robot with a fresh workspace; wait until connected."""
    with open_editor(qtbot, 'pony_editor', tmp_path / 'workspace') as opened:
        until(qtbot, lambda: opened.presenter.current_pose and
              all(opened.presenter.links.values()), 30,
              lambda: f'the editor connected to the robot (links {opened.presenter.links}, '
              f'{len(opened.presenter.current_pose)} joints in its pose, motion process '
              f'{"alive" if robot.process.alive() else "dead"})')
        yield opened
