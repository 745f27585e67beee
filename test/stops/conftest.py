"""
The stop matrix (issue #33): every way a person stops the robot, in every state of a window.

Each window (the editor, the console) runs in a process of its own on an X server with a
laptop's 1366 x 768 screen and a window manager, as a person starts it; keys and clicks go
through the X server (xdotool), Ctrl+C and the rest through signals. The robot's bringup runs
apart from the window, so that a dying window never stops the robot by accident, and a peer in
the test process records ``joint_states_ref``: after every stop the reference must be at rest
within its braking distance plus the stop's way (:mod:`stopping`), and stay at rest.

The figures of every case (time from the stop action to rest) are collected and written to
``artifacts/test/stop_matrix.md``.
"""

import os
from pathlib import Path
import shutil
import time

import pytest

#: the laptop's screen [px]
SCREEN = (1366, 768)


@pytest.fixture(scope='session')
def laptop():
    """Run an X server with a 1366 x 768 screen and openbox; yield its DISPLAY name."""
    from x_display import own_display
    if not (shutil.which('Xvfb') and shutil.which('openbox') and shutil.which('xdotool')):
        if os.environ.get('SWEETIE_MOTION_TEST_STRICT') == '1':
            pytest.fail('Xvfb, openbox and xdotool are needed (make setup installs them)')
        pytest.skip('Xvfb, openbox and xdotool are needed (apt-get install xvfb openbox '
                    'xdotool)')
    with own_display(*SCREEN) as name:
        yield name


@pytest.fixture(scope='session', autouse=True)
def stop_matrix_report():
    """Write the figures of every case after the last test (for people to read)."""
    from stop_cases import FIGURES
    artifacts_dir = Path(__file__).resolve().parents[2] / 'artifacts' / 'test'
    yield
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    if not FIGURES:
        return
    lines = ['# The stop matrix: time from the stop action to rest', '',
             f'{time.strftime("%Y-%m-%d %H:%M")}, 1366 x 768 under Xvfb + openbox', '',
             '| window | state | way | speed [rad/s] | at rest after [s] | braking [s] | '
             'window |', '|---|---|---|---|---|---|---|']
    for row in FIGURES:
        lines.append(f'| {row["window"]} | {row["state"]} | {row["way"]} | '
                     f'{row["speed"]:.2f} | {row["rest_after"]:.2f} | {row["braking"]:.2f} | '
                     f'{row["outcome"]} |')
    Path(artifacts_dir, 'stop_matrix.md').write_text('\n'.join(lines) + '\n')
