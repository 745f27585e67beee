"""
The editor's defects of issue #12, one test each, driven through the window as a person would.

The motion process runs in another process on the virtual robot (the session's ``robot``);
each test opens its own editor window with a fresh workspace (``editor``).
"""

from pathlib import Path
import re
import subprocess
import sys

from editor_helpers import (
    add_poses, answer, choose_joints, click, edit_cell, insert_pose, JOINTS, POSES,
    set_robot_pose, shown_whole, until,
)
from PyQt5.QtCore import Qt
from PyQt5.QtTest import QTest
from PyQt5.QtWidgets import QApplication, QMessageBox
import pytest
from sweetie_motion.editor.models import FIXED, TIME
from sweetie_motion.trajectory.codec import load_goal_file

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def rows(editor):
    return editor.presenter.waypoints.waypoints


def test_redo_is_enabled_right_after_undo(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    window = editor.window
    assert window.undo_button.isEnabled() and not window.redo_button.isEnabled()
    click(qtbot, window.undo_button)
    assert len(rows(editor)) == 1
    assert window.redo_button.isEnabled(), 'Redo stays greyed after an Undo'
    click(qtbot, window.redo_button)
    assert len(rows(editor)) == 2


def test_ctrl_z_ctrl_y_and_ctrl_s_undo_redo_and_save(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    window = editor.window
    window.table.setFocus()
    QTest.keyClick(window, Qt.Key_Z, Qt.ControlModifier)
    until(qtbot, lambda: len(rows(editor)) == 1, 5, 'Ctrl+Z undoes')
    QTest.keyClick(window, Qt.Key_Y, Qt.ControlModifier)
    until(qtbot, lambda: len(rows(editor)) == 2, 5, 'Ctrl+Y redoes')
    window.name_combo.setEditText('ctrl_s_made')
    QTest.keyClick(window, Qt.Key_S, Qt.ControlModifier)
    until(qtbot, lambda: (robot.storage_dir / 'ctrl_s_made.yaml').exists(), 10,
          'Ctrl+S saves')
    until(qtbot, lambda: not editor.presenter.document.modified, 5, 'clean after the save')


def test_selection_stays_on_the_edited_row(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES)
    edit_cell(qtbot, editor, 2, TIME, '2.5')
    assert rows(editor)[2].time == pytest.approx(2.5)
    assert editor.presenter.table.selection == [2]
    selected = [i.row() for i in editor.window.table.selectionModel().selectedRows()]
    assert selected == [2], f'the selection jumped to {selected}'
    assert editor.window.table.currentIndex().row() == 2


def test_a_refused_edit_shows_its_reason_and_a_later_edit_clears_it(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES)
    window = editor.window
    edit_cell(qtbot, editor, 1, TIME, '5.0')   # after row 3: out of order
    message = window.message_label
    assert message.isVisible()
    assert 'times must increase' in message.text() and 'row 2' in message.text()
    assert message.level == 'error'
    assert [w.time for w in rows(editor)] == [0.0, 1.0, 2.0, 3.0]
    edit_cell(qtbot, editor, 2, FIXED, 'abc')
    assert "'abc' is not a number (row 3, joint12)" in message.text()
    edit_cell(qtbot, editor, 1, TIME, '1.5')
    assert rows(editor)[1].time == pytest.approx(1.5)
    assert 'not a number' not in message.text() and message.level == 'info', \
        f'a stale error stays: {message.text()!r}'


def test_errors_name_table_rows_counted_from_one(qtbot, robot, editor, tmp_path):
    # a table from a file with row 4 beyond the head's limit and row 1 disabled: the goal's
    # point 2 is row 4 of the table
    add_poses(qtbot, robot, editor, POSES)
    presenter = editor.presenter
    presenter.document.edit('make it bad', lambda w: (
        w.set_position(3, 'joint51', 0.6), w.set_active(0, False)))
    path = tmp_path / 'bad.yaml'
    assert presenter.files.dump(str(path))
    presenter.document.mark_saved('')
    assert editor.window.load_file(str(path))
    index = editor.window.table_model.index(3, FIXED + JOINTS.index('joint51'))
    tip = editor.window.table_model.data(index, Qt.ToolTipRole)
    assert tip == 'joint51 = 0.6 is outside its position limits [-1.571, 0.26] rad'
    click(qtbot, editor.window.execute_button)
    text = editor.window.message_label.text()
    assert 'row 4' in text and not re.search(r'\bpoint\b', text), text


def test_stop_is_reported_as_stopped_not_failed(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    presenter = editor.presenter
    presenter.document.edit('slow', lambda w: w.move(1, 8.0))
    set_robot_pose(qtbot, robot, editor, POSES[0])
    click(qtbot, editor.window.execute_button)
    until(qtbot, lambda: presenter.execution is not None and presenter.execution.progress > 2.0,
          10, 'the motion under way')
    label = editor.window.result_label
    assert label.text().startswith('running ') and label.text().endswith(' s'), label.text()
    assert shown_whole(label), f'{label.text()!r} is cut'
    # stumble 5: the 3D view follows the robot during Execute, though a row is selected
    view = editor.window.robot_view
    assert presenter.table.selected_row is not None
    until(qtbot, lambda: view.title == 'current pose' and abs(
        view.pose['joint12'] - presenter.current_pose['joint12']) < 0.05, 5,
        'the 3D view on the moving robot')
    # the stop acts at the press: the button held down, the motion ends
    qtbot.mousePress(editor.window.stop_button, Qt.LeftButton)
    until(qtbot, lambda: presenter.execution is None, 10, 'the end of the motion')
    qtbot.mouseRelease(editor.window.stop_button, Qt.LeftButton)
    until(qtbot, lambda: view.title.startswith('row '), 5, 'the selected row shown again')
    text = editor.window.message_label.text()
    assert text.startswith('stopped at'), text
    assert 'FAILED' not in editor.window.result_label.text()
    assert editor.window.execute_button.isEnabled()
    moved = robot.position('joint12')
    assert -0.5 < moved < -0.05, f'Stop did not stop the robot midway ({moved})'


def test_tolerance_headers_are_shown_whole(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:1])
    window = editor.window
    window.tabs.setCurrentIndex(1)
    qtbot.waitExposed(window.tolerance_table)
    header = window.tolerance_table.horizontalHeader()
    metrics = header.fontMetrics()
    for section, text in enumerate(('path tolerance [rad]', 'goal tolerance [rad]')):
        assert header.model().headerData(section, Qt.Horizontal) == text
        assert header.sectionSize(section) >= metrics.horizontalAdvance(text), \
            f'the header {text!r} is clipped to {header.sectionSize(section)} px'


def test_a_value_outside_the_limits_is_refused_naming_the_limit(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    column = FIXED + JOINTS.index('joint51')
    edit_cell(qtbot, editor, 1, column, '0.6')
    assert rows(editor)[1].positions[JOINTS.index('joint51')] == pytest.approx(-0.3, abs=0.01)
    text = editor.window.message_label.text()
    assert 'joint51 = 0.6 is outside its position limits [-1.571, 0.26] rad' in text, text
    edit_cell(qtbot, editor, 1, column, '0.2')
    assert rows(editor)[1].positions[JOINTS.index('joint51')] == pytest.approx(0.2)


def test_row_labels_survive_save_and_load(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    window = editor.window
    insert_pose(qtbot, window, 'look_up')
    assert rows(editor)[2].label == 'look_up'
    window.name_combo.setEditText('labelled')
    click(qtbot, window.save_button)
    until(qtbot, lambda: not editor.presenter.document.modified, 10, 'saved')
    click(qtbot, window.new_button)   # saved: no question
    assert len(rows(editor)) == 0
    window.name_combo.setEditText('labelled')
    click(qtbot, window.load_button)
    until(qtbot, lambda: len(rows(editor)) == 3, 10, 'loaded')
    assert [w.label for w in rows(editor)] == ['', '', 'look_up']
    marker = window.table_model.data(window.table_model.index(2, 1))
    assert 'look_up' in marker


def test_saved_values_carry_no_float_noise(qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:2])
    editor.presenter.table.speed = 100
    window = editor.window
    window.speed_slider.setValue(30)
    click(qtbot, window.apply_scale_button)   # times * 1/0.3: 3.3333333333333335
    window.name_combo.setEditText('no_noise')
    click(qtbot, window.save_button)
    path = robot.storage_dir / 'no_noise.yaml'
    until(qtbot, path.exists, 10, 'saved')
    text = path.read_text()
    long_numbers = re.findall(r'-?\d+\.\d{7,}', text)
    assert not long_numbers, f'float noise in the saved file: {long_numbers}'
    goal = load_goal_file(path)
    assert goal.points[1].time == pytest.approx(1 / 0.3, abs=1e-6)


def test_plot_cursor_is_on_the_selected_keyframe_when_the_first_row_is_not_at_zero(
        qtbot, robot, editor):
    add_poses(qtbot, robot, editor, POSES[:3])
    window = editor.window
    edit_cell(qtbot, editor, 2, TIME, '4.0')
    edit_cell(qtbot, editor, 1, TIME, '3.0')
    edit_cell(qtbot, editor, 0, TIME, '2.0')   # the first row at t = 2 s
    window.table.selectRow(1)
    until(qtbot, lambda: editor.presenter.table.selection == [1], 5, 'row 2 selected')
    until(qtbot, lambda: not window.views_pending(), 5, 'the plot drawn')
    figure = window.trajectory_plot.figure
    cursors = [line for axes in figure.axes for line in axes.get_lines()
               if line.get_gid() == 'cursor']
    keyframes = [line for axes in figure.axes for line in axes.get_lines()
                 if line.get_gid() == 'keyframes']
    assert cursors and keyframes
    for cursor, marks in zip(cursors, keyframes):
        assert list(marks.get_xdata()) == pytest.approx([2.0, 3.0, 4.0])
        assert cursor.get_xdata()[0] == pytest.approx(marks.get_xdata()[1]), \
            'the cursor is not on the selected keyframe'


def test_new_trajectory_and_add_pose_records_only_the_trajectory_joints(qtbot, robot, editor):
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:1])
    text = answer(qtbot, QMessageBox.Discard, lambda: click(qtbot, window.new_button))
    assert 'unsaved changes' in text
    assert len(rows(editor)) == 0 and editor.presenter.document.name == ''
    choose_joints(qtbot, editor, ['head'])
    click(qtbot, window.add_pose_button)
    joints = editor.presenter.waypoints.joints
    assert joints == ['joint51', 'joint52', 'joint53', 'joint54'], joints
    assert len(rows(editor)[0].positions) == 4
    assert window.table_model.columnCount() == FIXED + 4


def test_saving_onto_a_stored_name_asks_and_a_motion_without_time_is_refused(
        qtbot, robot, editor):
    # New -> head -> Add pose -> name `nod` -> Save replaced the built-in nod with one point
    window, presenter = editor.window, editor.presenter
    until(qtbot, lambda: 'nod' in presenter.files.names, 10, 'the stored names listed')
    choose_joints(qtbot, editor, ['head'])
    click(qtbot, window.add_pose_button)
    window.name_combo.setEditText('single')
    click(qtbot, window.save_button)
    assert 'a motion needs time' in presenter.message.text, presenter.message.text
    assert not (robot.storage_dir / 'single.yaml').exists()
    click(qtbot, window.add_pose_button)         # a second row, a second later
    window.name_combo.setEditText('nod')
    text = answer(qtbot, QMessageBox.Cancel, lambda: click(qtbot, window.save_button))
    assert "'nod' is stored already" in text and 'sweetie-motion delete nod' in text, text
    assert not (robot.storage_dir / 'nod.yaml').exists() and presenter.document.modified
    assert 'not saved' in presenter.message.text
    try:
        answer(qtbot, QMessageBox.Save, lambda: click(qtbot, window.save_button))
        until(qtbot, lambda: not presenter.document.modified, 10, 'saved after the question')
        assert len(load_goal_file(robot.storage_dir / 'nod.yaml').points) == 2
    finally:
        # the built-in nod shows again for the other tests
        subprocess.run([sys.executable, '-m', 'sweetie_motion.cli', 'delete', 'nod',
                        '--namespace', 'pony_editor'], capture_output=True, timeout=60)


def test_close_with_unsaved_changes_asks_save_discard_cancel(qtbot, robot, editor):
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:2])
    text = answer(qtbot, QMessageBox.Cancel, window.close)
    assert 'unsaved changes' in text
    assert window.isVisible(), 'Cancel closed the window'
    window.name_combo.setEditText('saved_on_close')
    answer(qtbot, QMessageBox.Save, window.close)
    until(qtbot, lambda: not window.isVisible(), 10, 'the window closes once saved')
    assert (robot.storage_dir / 'saved_on_close.yaml').exists()
    window.show()
    editor.presenter.document.edit('one more', lambda w: w.move(1, 2.0))
    answer(qtbot, QMessageBox.Discard, window.close)
    until(qtbot, lambda: not window.isVisible(), 5, 'closed after Discard')
    assert load_goal_file(robot.storage_dir / 'saved_on_close.yaml').points[1].time == 1.0


def test_backups_are_timestamped_kept_offered_and_not_written_without_changes(
        qtbot, robot, tmp_path):
    from editor_helpers import open_editor
    workspace = tmp_path / 'workspace'
    extra = ['-p', 'backup_period:=1.0', '-p', 'backups_kept:=3']
    with open_editor(qtbot, 'pony_editor', workspace, extra=extra) as editor:
        until(qtbot, lambda: all(editor.presenter.links.values()), 30, 'connected')
        backups = Path(workspace) / 'backups'
        assert not backups.exists()
        add_poses(qtbot, robot, editor, POSES[:1])
        until(qtbot, lambda: backups.exists() and list(backups.iterdir()), 5, 'a backup')

        def newest():
            return max(p.name for p in backups.iterdir())
        for time in (2.0, 3.0, 4.0, 5.0):   # four more changes, a second apart
            before = newest()
            editor.presenter.document.edit('more', lambda w: w.add_from_state(
                JOINTS, [0.1] * 4, time=time))
            until(qtbot, lambda: newest() != before, 5, 'the next backup')
        names = sorted(p.name for p in backups.iterdir())
        assert len(names) == 3, names   # only the newest three are kept
        assert all(re.fullmatch(r'\d{8}-\d{6}-\d{6}_\.yaml', n) for n in names), names
        last = names[-1]
        # something that must not happen: a backup without changes. The window is counted in
        # the editor's own periodic work: it ran for more than a backup period since the last
        # change (a fixed pause could pass without a single tick on a loaded machine)
        presenter = editor.presenter
        ticks = []
        real_tick = presenter.tick
        presenter.tick = lambda: (real_tick(), ticks.append(presenter.clock()))
        try:
            start = presenter.clock()
            until(qtbot, lambda: len(ticks) >= 3 and ticks[-1] - start >= 1.5, 20,
                  'a backup period of the editor ticking without changes')
        finally:
            del presenter.tick
        assert newest() == last, 'a backup was written without changes'
        # the end of the with-block takes the window away as a kill would: nothing marks a
        # clean close
    with open_editor(qtbot, 'pony_editor', workspace, show=False, extra=extra) as again:
        text = answer(qtbot, QMessageBox.Yes, again.window.show)
        assert 'restore the backup' in text
        until(qtbot, lambda: len(again.presenter.waypoints) == 5, 5, 'the backup restored')
        assert again.presenter.document.modified
        answer(qtbot, QMessageBox.Discard, again.window.close)
    with open_editor(qtbot, 'pony_editor', workspace) as third:
        # a discarded close: nothing offered. The offer comes with the first events of the
        # window, long before the editor has connected to the robot
        until(qtbot, lambda: all(third.presenter.links.values()), 30, 'connected')
        assert QApplication.activeModalWidget() is None, 'a question was asked'
        assert third.presenter.files.pending_backup() is None
        assert len(third.presenter.waypoints) == 0
        backups_before = sorted(p.name for p in (Path(workspace) / 'backups').iterdir())
        third.window.close()   # nothing changed: no new backup
        assert sorted(p.name for p in (Path(workspace) / 'backups').iterdir()) == \
            backups_before
