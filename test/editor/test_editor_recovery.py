"""
The editor while the motion process dies and comes back (issue #12, defect 1 and the servos).

The motion process is killed with SIGKILL (no goodbye on DDS) and started again, as a crash
and a restart by a person would.
"""

from pathlib import Path

from editor_helpers import (
    add_poses, answer, click, editor_config, open_editor, POSES, READY, screenshot,
    set_robot_pose, start_motion, until, wait_back,
)
from motion_process import MotionClient
from PyQt5.QtWidgets import QMessageBox
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_recovery'


def finished(qtbot, editor, timeout: float, what: str) -> str:
    until(qtbot, lambda: editor.presenter.execution is None, timeout, what)
    return editor.window.message_label.text()


def test_the_editor_recovers_when_the_motion_process_dies_and_comes_back(
        qtbot, tmp_path, domain_id, artifacts_dir):
    config = editor_config(tmp_path)
    shots = Path(artifacts_dir) / 'editor_recovery'
    shots.mkdir(parents=True, exist_ok=True)
    step = [0]

    def shot(editor, name: str) -> None:
        step[0] += 1
        screenshot(editor, shots / f'{step[0]:02d}_{name}.png')

    process = None
    try:
        with MotionClient(NS, domain_id) as robot:
            with open_editor(qtbot, NS, tmp_path / 'workspace') as editor:
                presenter, window = editor.presenter, editor.window
                # started before the motion process (stumble 14): it says how to start one,
                # and the robot view does not pass the model at zero off as the robot's pose
                until(qtbot, lambda: 'sweetie-motion bringup' in window.message_label.text(),
                      15, 'the hint to start a motion process')
                assert not presenter.current_pose
                shot(editor, 'no_motion_process')
                process = start_motion(config, NS)
                robot.wait_ready(READY)
                until(qtbot, lambda: all(presenter.links.values()), 30, 'connected')
                until(qtbot, lambda: window.message_label.text() ==
                      'the motion process is connected', 10, 'the news')
                until(qtbot, lambda: window.servo_indicator.text() == 'servos: ON', 10,
                      'the servos shown on')
                add_poses(qtbot, robot, editor, POSES[:2])
                presenter.document.edit('slow', lambda w: w.move(1, 8.0))
                window.name_combo.setEditText('before_kill')
                click(qtbot, window.save_button)
                until(qtbot, lambda: not presenter.document.modified, 10, 'saved')

                # killed while a goal runs: "running" ends, the links and servos say so
                set_robot_pose(qtbot, robot, editor, POSES[0])
                click(qtbot, window.execute_button)
                until(qtbot, lambda: presenter.execution is not None and
                      presenter.execution.progress > 0.5, 10, 'the motion under way')
                process.popen.kill()
                finished(qtbot, editor, 10, '"running" to end after the kill')
                # beside Execute (the message line may already say that the process is gone:
                # the link watch and the lost goal report in either order)
                assert presenter.last_outcome.startswith('lost:'), presenter.last_outcome
                assert window.result_label.text() == 'lost'
                until(qtbot, lambda: not presenter.links['controller'] and
                      not presenter.links['servos'], 10, 'the links shown down')
                assert window.servo_indicator.text() == 'servos: ?', \
                    f'{window.servo_indicator.text()!r} while the motion process is gone'
                assert '✗' in window.links_panel.labels['controller'].text()
                assert not window.execute_button.isEnabled()
                # stumble 9: the storage's light goes out too, and the message says why
                until(qtbot, lambda: not presenter.links['storage'] and
                      'motion process is gone' in window.message_label.text(), 10,
                      'the storage shown down, with the reason')
                assert not window.save_button.isEnabled()
                shot(editor, 'motion_process_gone')

                # back: Execute, Stop, Save and Load work without restarting the editor
                process.stop()
                process = start_motion(config, NS)
                wait_back(robot, NS)
                until(qtbot, lambda: all(presenter.links.values()), 30, 'connected again')
                until(qtbot, lambda: window.message_label.text() ==
                      'the motion process is connected again', 10, 'the news')
                assert not window.result_label.text().startswith('lost')
                shot(editor, 'motion_process_back')
                set_robot_pose(qtbot, robot, editor, POSES[0])
                click(qtbot, window.execute_button)
                until(qtbot, lambda: presenter.execution is not None and
                      presenter.execution.progress > 1.0, 10, 'the motion under way again')
                click(qtbot, window.stop_button)
                stopped = finished(qtbot, editor, 10, 'Stop')
                # once seen ending 'succeeded' at the motion's end: the motion process's log
                # says whether the cancel reached it
                assert stopped.startswith('stopped at'), \
                    f'{stopped}\n----- motion process -----\n{process.output()[-4000:]}'
                presenter.document.edit('faster', lambda w: w.move(1, 1.5))
                set_robot_pose(qtbot, robot, editor, POSES[0])
                click(qtbot, window.execute_button)
                text = finished(qtbot, editor, 20, 'the result after the restart')
                assert text.startswith('succeeded'), text
                window.name_combo.setEditText('after_restart')
                click(qtbot, window.save_button)
                until(qtbot, lambda: (tmp_path / 'store' / 'after_restart.yaml').exists(), 10,
                      'saved after the restart')
                # the editor shows it saved (its name in the selector) only once the answer is
                # back, which can come after the file is written: a name typed before then would
                # be replaced by the saved one
                until(qtbot, lambda: not presenter.document.modified and
                      presenter.document.name == 'after_restart', 10,
                      lambda: f'the editor to show the save: {window.message_label.text()!r}')
                window.name_combo.setEditText('before_kill')
                presenter.table.set_time(1, '2.0')   # unsaved: Load asks first
                # an edit of the table (the window shows it before set_time returns) keeps the name
                # typed into the selector (it once put the document's name back, and Load or Save
                # took the wrong trajectory)
                assert window.name_combo.currentText() == 'before_kill'
                answer(qtbot, QMessageBox.Discard, lambda: click(qtbot, window.load_button))
                until(qtbot, lambda: presenter.document.name == 'before_kill' and
                      presenter.waypoints.waypoints[1].time == 8.0, 10,
                      lambda: f'loaded: {presenter.document.name!r}, '
                      f'{window.message_label.text()!r}')

                # killed just before Execute (DDS still lists the controller): a clear end
                set_robot_pose(qtbot, robot, editor, POSES[0])
                process.popen.kill()
                if window.execute_button.isEnabled():
                    click(qtbot, window.execute_button)
                    finished(qtbot, editor, 15, 'the end of a goal sent to the dead')
                    # beside Execute: the message line may say that the process is gone
                    assert presenter.last_outcome.startswith(('lost:', 'FAILED')), \
                        presenter.last_outcome
                until(qtbot, lambda: not window.execute_button.isEnabled(), 10,
                      'Execute disabled while the controller is gone')
    finally:
        if process is not None:
            process.stop()
