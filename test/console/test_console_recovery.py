"""
The console when the motion process dies and comes back (R-CART-5).

The arm's bringup is killed (SIGKILL, as a crash would end it) while the console is open: the
console shows it disconnected and refuses motions with the reason; a new bringup in the same
namespace is found again without touching the console, and sliders, jog and programs work.
"""

import signal

from console_helpers import (
    click, JOINTS, move_sliders, NODES, open_console, reference, start_arm, tool, until,
    wait_at_rest, wait_job,
)
import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'console_restart'


def test_a_dead_motion_process_is_shown_and_everything_works_when_it_is_back(
        qtbot, arm_domain, arm_model, shots):
    from motion_process import MotionClient
    with open_console(qtbot, NS, arm_model, connected=False) as console:
        window, presenter = console.window, console.presenter
        until(qtbot, lambda: 'disconnected' in window.connection_label.text(), 10,
              'the console without a motion process')
        assert not window.run_button.isEnabled() and not window.home_button.isEnabled()
        shots(console, 'no_motion_process')
        with start_arm(NS, check_exit=False) as process:
            with MotionClient(NS, arm_domain) as peer:
                peer.wait_ready(NODES)
                until(qtbot, lambda: all(presenter.links.values()), 30,
                      lambda: f'the console connected: {presenter.links}')
                move_sliders(qtbot, console, peer, {'joint2': -0.2, 'joint5': 0.6})
                # a slow joint move runs when the motion process dies
                window.editor.setPlainText('MOVJ joint1=60 V5\n')
                until(qtbot, lambda: window.run_button.isEnabled(), 10, 'Run enabled')
                click(qtbot, window.run_button)
                until(qtbot, lambda: reference(peer, ['joint1'])[0] > 0.05, 20,
                      'joint1 on its way')
                shots(console, 'running')
                process.popen.send_signal(signal.SIGKILL)
                process.popen.wait(10)
                until(qtbot, lambda: 'disconnected' in window.connection_label.text(), 10,
                      'the console showing the motion process gone')
                # the move is given up at once, not when DDS notices the action server gone
                message = wait_job(qtbot, console, timeout=5)
        assert 'stopped publishing joint_states' in message, message
        assert presenter.message.level == 'error' and presenter.error_line == 1
        assert window.editor.highlighted.get('error') == 1
        assert any('motion process is disconnected' in m.text for m in presenter.log[-3:])
        assert not window.jog_panel.buttons[('z', 1)].isEnabled()
        assert not window.sliders.sliders['joint1'].isEnabled()
        assert not presenter.jog('z', 1) and 'disconnected' in presenter.message.text
        shots(console, 'disconnected')

        with start_arm(NS) as process:
            with MotionClient(NS, arm_domain) as peer:
                peer.wait_ready(NODES)
                until(qtbot, lambda: all(presenter.links.values()), 30,
                      lambda: f'the console connected again: {presenter.links}')
                assert 'connected' in window.connection_label.text()
                # the new process starts at zero; the sliders take it from there
                move_sliders(qtbot, console, peer, {'joint2': -0.3, 'joint3': 0.4,
                                                    'joint5': 0.8})
                wait_at_rest(qtbot, peer)
                before = tool(peer, arm_model)
                until(qtbot, lambda: presenter.can('jog'), 10, 'jog allowed')
                click(qtbot, window.jog_panel.buttons[('z', 1)])
                message = wait_job(qtbot, console)
                assert presenter.message.level == 'info', message
                # the job is done within its tolerance; the reference heard here may come later
                until(qtbot, lambda: np.allclose(
                    tool(peer, arm_model).position - before.position, [0, 0, 0.010],
                    atol=3e-4), 10, lambda: f'the tool 10 mm up: {tool(peer, arm_model)}')
                window.editor.setPlainText('HOME\n')
                until(qtbot, lambda: window.run_button.isEnabled(), 10, 'Run enabled')
                click(qtbot, window.run_button)
                wait_job(qtbot, console)
                assert 'the program is done' in presenter.message.text
                home = arm_model.get_chain_property('arm', 'home')
                until(qtbot, lambda: np.abs(reference(peer, JOINTS) - home).max() < 2e-3, 10,
                      'the arm at home')
                shots(console, 'recovered')
