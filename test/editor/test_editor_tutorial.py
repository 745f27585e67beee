"""
The README's tutorial "Your first animation in five minutes", done as a new user does it.

New trajectory, joints in Setup, poses with the sliders, Add pose, a time edited in the table,
Save, Execute, Undo / Redo, the motion process killed (SIGKILL) and started again, Execute
again, and a close with unsaved changes. A screenshot of each step goes to
``artifacts/test/editor_tutorial/`` (the screen's pixels under the window manager).
"""

from pathlib import Path

from editor_helpers import (
    answer, click, edit_cell, editor_config, open_editor, READY, screenshot, start_motion,
    until, wait_back,
)
from motion_process import MotionClient
from PyQt5.QtWidgets import QMessageBox
import pytest
from sweetie_motion.editor.models import TIME
from sweetie_motion.trajectory.codec import load_goal_file

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_tutorial'
#: the key poses the user makes with the sliders: the head looks down and up, a hoof lifts
POSES = [
    {},
    {'joint51': 0.2, 'joint53': -0.5, 'joint12': 0.5, 'joint13': -0.7},
    {'joint51': -0.1, 'joint53': 0.3, 'joint12': 0.9, 'joint13': -1.2},
    {'joint51': 0.0, 'joint53': 0.0, 'joint12': 0.0, 'joint13': 0.0},
]


def test_your_first_animation_in_five_minutes(qtbot, tmp_path, domain_id, artifacts_dir):
    shots = Path(artifacts_dir) / 'editor_tutorial'
    for old in shots.glob('*.png'):
        old.unlink()
    config = editor_config(tmp_path)
    stored = tmp_path / 'store'
    process = start_motion(config, NS)
    step = [0]

    def shot(name: str) -> None:
        step[0] += 1
        screenshot(editor, shots / f'{step[0]:02d}_{name}.png')

    def finished(what: str) -> str:
        until(qtbot, lambda: editor.presenter.execution is None, 30, what)
        return window.message_label.text()

    try:
        with MotionClient(NS, domain_id) as robot:
            robot.wait_ready(READY)
            with open_editor(qtbot, NS, tmp_path / 'workspace') as editor:
                window, presenter = editor.window, editor.presenter
                until(qtbot, lambda: all(presenter.links.values()), 30, 'connected')
                shot('started')

                # 1. New trajectory; in Setup, tick the head and the front left leg
                click(qtbot, window.new_button)
                assert window.tabs.currentIndex() == 1   # New opens Setup
                window.check_joints(['head', 'leg1'])
                shot('setup')
                click(qtbot, window.apply_joints_button)
                assert presenter.waypoints.joints[:4] == ['joint11', 'joint12', 'joint13',
                                                          'joint14']
                window.tabs.setCurrentIndex(0)

                # 2. pose with the sliders, Add pose after each
                for k, pose in enumerate(POSES):
                    for joint, value in pose.items():
                        window.sliders.set_position(joint, value)
                    until(qtbot, lambda: all(abs(presenter.current_pose[j] - v) < 0.01
                                             for j, v in pose.items()), 15,
                          f'the robot in pose {k + 1}')
                    click(qtbot, window.add_pose_button)
                    until(qtbot, lambda: len(presenter.waypoints) == k + 1, 5, f'row {k + 1}')
                assert [w.time for w in presenter.waypoints.waypoints] == [0, 1, 2, 3]
                assert presenter.waypoints.pose(2)['joint12'] == pytest.approx(0.9, abs=0.01)
                shot('poses')

                # 3. a slower last move: the time of row 4 becomes 4.5 s
                edit_cell(qtbot, editor, 3, TIME, '4.5')
                assert presenter.waypoints.waypoints[3].time == 4.5
                shot('time_edited')

                # 4. save under a name
                window.name_combo.setEditText('my_first')
                click(qtbot, window.save_button)
                until(qtbot, lambda: not presenter.document.modified, 10, 'saved')
                assert load_goal_file(stored / 'my_first.yaml').points[3].time == 4.5
                assert 'unsaved' not in window.modified_label.text()
                shot('saved')

                # 5. execute from the first row
                window.table.selectRow(0)
                click(qtbot, window.set_pose_button)
                click(qtbot, window.execute_button)
                until(qtbot, lambda: presenter.execution is not None and
                      presenter.execution.progress > 1.0, 15, 'the motion under way')
                shot('executing')
                text = finished('the result')
                assert text.startswith('succeeded'), text
                assert robot.position('joint12') == pytest.approx(0.0, abs=0.03)
                shot('executed')

                # 6. undo the time edit, redo it
                click(qtbot, window.undo_button)
                assert presenter.waypoints.waypoints[3].time == 3.0
                assert window.redo_button.isEnabled()
                shot('undone')
                click(qtbot, window.redo_button)
                assert presenter.waypoints.waypoints[3].time == 4.5
                assert not presenter.document.modified   # back at what was saved

                # 7. the motion process dies, and comes back
                process.popen.kill()
                until(qtbot, lambda: not presenter.links['controller'], 15,
                      'the controller shown disconnected')
                assert not window.execute_button.isEnabled()
                assert window.servo_indicator.text() == 'servos: ?'
                shot('motion_process_gone')
                process.stop()
                process = start_motion(config, NS)
                wait_back(robot, NS)
                until(qtbot, lambda: all(presenter.links.values()), 30, 'connected again')
                shot('motion_process_back')

                # 8. execute again, without restarting the editor
                window.table.selectRow(0)
                click(qtbot, window.set_pose_button)
                click(qtbot, window.execute_button)
                text = finished('the result after the restart')
                assert text.startswith('succeeded'), text
                shot('executed_again')

                # 9. one more change, then close: Save / Discard / Cancel
                edit_cell(qtbot, editor, 1, TIME, '1.5')
                assert presenter.document.modified

                step[0] += 1
                text = answer(qtbot, QMessageBox.Save, window.close,
                              snapshot=shots / f'{step[0]:02d}_close_question.png')
                assert 'unsaved changes' in text
                until(qtbot, lambda: not window.isVisible(), 10, 'closed once saved')
                assert load_goal_file(stored / 'my_first.yaml').points[1].time == 1.5
    finally:
        process.stop()
    names = sorted(p.name for p in shots.glob('*.png'))
    assert len(names) == 12, names
