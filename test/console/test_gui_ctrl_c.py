"""
Ctrl+C in the terminal of the console and of the editor.

The window closes as its close button closes it (asking about unsaved work there), with no
traceback.
"""

import signal
import sys

import pytest
from ros_util import Process, wait_for

pytestmark = [pytest.mark.ros, pytest.mark.slow]

READY = 'the window is open; Ctrl+C here closes it'


@pytest.mark.parametrize('command', [['console', '--program', 'config/programs/paper_path.txt'],
                                     ['editor']], ids=['console', 'editor'])
def test_ctrl_c_in_the_terminal_closes_the_window_without_a_traceback(
        command, domain_id, tmp_path):
    # the backups go to the test's folder, not the user's
    own = (['--workspace', str(tmp_path)] if command[0] == 'console' else
           ['--ros-args', '-p', f'workspace_dir:={tmp_path}'])
    process = Process([sys.executable, '-m', 'sweetie_motion.cli', *command, *own], command[0])
    try:
        wait_for(lambda: READY in process.output() or not process.alive(), 60, period=0.1,
                 message=f'the {command[0]} window open')
        assert process.alive(), process.output()
        process.popen.send_signal(signal.SIGINT)
        code = process.popen.wait(20)
    finally:
        process.stop(signal.SIGKILL)
    output = process.output()
    assert code == 0, output
    assert 'Ctrl+C: closing the window' in output and 'Traceback' not in output, output
