"""
The editor's stumbles of issue #37, one test each, driven through the window at 1366 x 768.

The motion process runs on the virtual robot (the session's ``robot``); each test opens its own
editor window (``editor``), sized as on a laptop, and does what the person did: scroll the
table and double-click a cell, choose a file in Load file..., drag the play head, Undo, answer
the unsaved-changes question, pose with the sliders while a row is selected.
"""

from pathlib import Path

from editor_helpers import (
    add_poses, answer, click, POSES, set_robot_pose, steady, until,
)
from PyQt5.QtCore import Qt
from PyQt5.QtTest import QTest
from PyQt5.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox
import pytest
from ros_util import HERE
from sweetie_motion.editor.models import FIXED, STEP, SUPPORT
from sweetie_motion.editor.workspace import dump_table
from sweetie_motion.trajectory.waypoints import WaypointsList

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the laptop's screen; the window's inside under openbox's title bar [px]
LAPTOP = (1366, 768)
INSIDE = (1366, 740)
#: the old robot's animations (its greeting.json; `greeting` is a built-in here too)
OLD_ROBOT = Path(HERE) / 'data' / 'sweetie_movements'
#: the pony's joints a wide table has (a leg, the other front leg, the head)
WIDE = ['joint11', 'joint12', 'joint13', 'joint21', 'joint22', 'joint23', 'joint51',
        'joint52', 'joint53', 'support/leg1', 'support/leg2', 'support/leg3', 'support/leg4']


def on_laptop(qtbot, editor) -> None:
    """Make the window as large as a 1366 x 768 laptop's screen lets it be."""
    editor.window.resize(*INSIDE)
    steady(qtbot, lambda: editor.window.size().width(), 0.3, 10, 'the window resized')


def table_file(path: Path, rows: int, duration: float, joints=WIDE) -> Path:
    """Write a table of ``rows`` rows over ``duration`` s (small values within the limits)."""
    waypoints = WaypointsList(joints)
    real = [j for j in joints if not j.startswith('support/')]
    for k in range(rows):
        waypoints.add_from_state(real, [0.01 * (k % 5)] * len(real),
                                 time=duration * k / (rows - 1))
    path.write_text(dump_table(waypoints))
    return path


def in_dialog(qtbot, kind, handle, action, timeout: float = 60.0) -> None:
    """
    Do ``action`` (which opens a dialog of ``kind`` and waits for it), then ``handle(dialog)``.

    The windows' questions run an event loop of their own until answered: the dialog is
    looked for from Qt's loop (a timer), as a person would find it on the screen.
    """
    import time
    from PyQt5.QtCore import QTimer
    done = []
    deadline = time.monotonic() + timeout

    failed = []

    def give_up() -> None:
        # a dialog left open would hold the test in its event loop for ever: close it
        modal = QApplication.activeModalWidget()
        if modal is not None:
            modal.close()

    def look() -> None:
        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and
                 w.isVisible()]
        if found:
            done.append(found[-1])
            try:
                handle(found[-1])
            except Exception as error:  # noqa: B902 -- said after the dialog is closed
                failed.append(error)
                give_up()
        elif time.monotonic() < deadline:
            QTimer.singleShot(50, look)
        else:
            give_up()
    QTimer.singleShot(50, look)
    action()
    until(qtbot, lambda: done, timeout, f'a {kind.__name__} to open')
    assert not failed, f'handling the {kind.__name__}: {failed[0]!r}'


def double_click_and_type(qtbot, table, pos, text: str) -> None:
    """Double-click the table's viewport at ``pos`` (no scrolling first), type, Return."""
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=pos)
    qtbot.mouseDClick(table.viewport(), Qt.LeftButton, pos=pos)
    until(qtbot, lambda: [e for e in table.viewport().findChildren(QLineEdit) if e.isVisible()],
          5, 'the cell editor')
    line = [e for e in table.viewport().findChildren(QLineEdit) if e.isVisible()][-1]
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key_Return)
    until(qtbot, lambda: not [e for e in table.viewport().findChildren(QLineEdit)
                              if e.isVisible()], 5, 'the cell editor to close')


# --- stumble 1: an edited cell scrolled the table home -----------------------------------------


def test_editing_a_cell_keeps_the_table_scrolled_and_the_cell_current(
        qtbot, robot, editor, tmp_path):
    on_laptop(qtbot, editor)
    window = editor.window
    assert window.load_file(str(table_file(tmp_path / 'wide.yaml', 30, 12.0)))
    table = window.table
    until(qtbot, lambda: 'checking' not in window.check_line.label.text(), 30,
          'the checks of the loaded table')
    # the person scrolls down and to the right, as to the support columns of row 15
    until(qtbot, lambda: table.verticalScrollBar().maximum() > 0 and
          table.horizontalScrollBar().maximum() > 0, 5, 'a table larger than its view')
    table.verticalScrollBar().setValue(table.verticalScrollBar().maximum() // 2)
    table.horizontalScrollBar().setValue(table.horizontalScrollBar().maximum())
    scrolled = (table.horizontalScrollBar().value(), table.verticalScrollBar().value())
    viewport = table.viewport().rect()
    spot = viewport.center()
    target = table.indexAt(spot)
    assert target.isValid() and target.column() >= FIXED
    joint = editor.presenter.waypoints.joints[target.column() - FIXED]
    double_click_and_type(qtbot, table, spot, '0.02' if not joint.startswith('support')
                          else '0')
    row = editor.presenter.waypoints.waypoints[target.row()]
    assert row.positions[target.column() - FIXED] == pytest.approx(
        0.02 if not joint.startswith('support') else 0.0)
    assert (table.horizontalScrollBar().value(), table.verticalScrollBar().value()) == \
        scrolled, 'the edit scrolled the table'
    assert table.currentIndex() == target, 'the current cell moved'
    # the next double-click lands in the cell under the mouse, not in a neighbour
    beside = viewport.center()
    beside.setY(beside.y() + table.rowHeight(target.row()))
    below = table.indexAt(beside)
    assert below.row() == target.row() + 1 and below.column() == target.column()
    double_click_and_type(qtbot, table, beside, '0.03' if not joint.startswith('support')
                          else '0')
    assert editor.presenter.waypoints.waypoints[below.row()].positions[
        below.column() - FIXED] == pytest.approx(0.03 if not joint.startswith('support')
                                                 else 0.0)
    assert table.currentIndex() == below
    # Undo repaints the same way: the table stays where it is
    click(qtbot, window.undo_button)
    assert (table.horizontalScrollBar().value(), table.verticalScrollBar().value()) == \
        scrolled


# --- stumble 3: Load file... showed no JSON; greeting.json took a built-in's name --------------


def test_load_file_offers_the_old_robots_json_and_keeps_a_stored_name_free(
        qtbot, robot, editor):
    on_laptop(qtbot, editor)
    window = editor.window
    until(qtbot, lambda: 'greeting' in editor.presenter.files.names, 15,
          'the stored names (greeting is a built-in)')
    seen = {}

    def choose(dialog) -> None:
        seen['filters'] = dialog.nameFilters()
        seen['first'] = dialog.selectedNameFilter()
        dialog.setDirectory(str(OLD_ROBOT))
        name = dialog.findChild(QLineEdit, 'fileNameEdit')
        QTest.keyClicks(name, 'greeting.json')
        QTest.keyClick(name, Qt.Key_Return)
    in_dialog(qtbot, QFileDialog, choose, lambda: click(qtbot, window.load_file_button))
    assert any('*.json' in f for f in seen['filters']), seen['filters']
    assert '*.json' in seen['first'], 'JSON is not among the files first shown'
    until(qtbot, lambda: len(editor.presenter.waypoints) > 0, 10, 'greeting.json loaded')
    name = window.name_combo.currentText()
    assert name and name != 'greeting', f'the table took the stored name {name!r}'
    assert editor.presenter.document.name == name
    message = window.message_label.text()
    assert "'greeting' is a stored trajectory" in message, message
    assert editor.presenter.document.modified
    # a file whose name is free keeps it (after the unsaved-changes question)
    answer(qtbot, QMessageBox.Discard,
           lambda: window.load_file(str(OLD_ROBOT / 'hoof_wave.json')))
    until(qtbot, lambda: editor.presenter.document.name == 'hoof_wave', 5, 'hoof_wave loaded')
    assert window.name_combo.currentText() == 'hoof_wave'


# --- stumble 8: the play head stayed at 7.69 s past a 4.6 s motion ----------------------------


def test_the_play_head_starts_over_when_another_motion_is_loaded(qtbot, robot, editor,
                                                                 tmp_path):
    on_laptop(qtbot, editor)
    window = editor.window
    assert window.load_file(str(table_file(tmp_path / 'long.yaml', 6, 7.7)))
    slider = window.play_head_slider
    slider.setFocus()
    QTest.keyClick(slider, Qt.Key_End)
    until(qtbot, lambda: window.play_head_time is not None and
          window.play_head_time == pytest.approx(7.7), 5, 'the play head at the end')
    editor.presenter.document.mark_saved('')
    assert window.load_file(str(table_file(tmp_path / 'short.yaml', 4, 4.6)))
    assert window.play_head_time is None, window.play_head_time
    assert slider.value() == 0
    assert window.play_head_label.text() == ''
    assert window.trajectory_plot.play_head is None
    # an edit that shortens the motion keeps the play head within it
    QTest.keyClick(slider, Qt.Key_End)
    until(qtbot, lambda: window.play_head_time == pytest.approx(4.6), 5, 'at the end')
    editor.presenter.table.select([3])
    click(qtbot, window.delete_button)
    until(qtbot, lambda: len(editor.presenter.waypoints) == 3, 5, 'the last row deleted')
    last = editor.presenter.waypoints.waypoints[-1].time
    assert window.play_head_time is None or window.play_head_time <= last + 1e-9


# --- stumble 9: the smaller ones ---------------------------------------------------------------


def test_the_title_follows_the_saved_state_through_undo(qtbot, robot, editor):
    on_laptop(qtbot, editor)
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:2])
    window.name_combo.setEditText('round2_title')
    click(qtbot, window.save_button)
    until(qtbot, lambda: not editor.presenter.document.modified, 10, 'saved')
    assert '*' not in window.windowTitle()
    set_robot_pose(qtbot, robot, editor, POSES[2])
    click(qtbot, window.add_pose_button)
    until(qtbot, lambda: '*' in window.windowTitle(), 5, 'the title marked unsaved')
    assert window.modified_label.text() == 'unsaved changes'
    click(qtbot, window.undo_button)
    until(qtbot, lambda: window.modified_label.text() == '', 5, 'the label cleared')
    assert '*' not in window.windowTitle(), window.windowTitle()
    assert not window.isWindowModified()


def test_the_unsaved_question_of_load_offers_save(qtbot, robot, editor):
    on_laptop(qtbot, editor)
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:2])
    window.name_combo.setEditText('round2_kept')
    click(qtbot, window.save_button)
    until(qtbot, lambda: not editor.presenter.document.modified, 10, 'saved')
    set_robot_pose(qtbot, robot, editor, POSES[2])
    click(qtbot, window.add_pose_button)
    until(qtbot, lambda: len(editor.presenter.waypoints) == 3, 5, 'a third row, unsaved')
    until(qtbot, lambda: 'nod' in editor.presenter.files.names, 15, 'the stored names')

    def load_nod():
        window.name_combo.setEditText('nod')
        click(qtbot, window.load_button)
    # the question has Save; the table is stored under the name it had (not under 'nod', the
    # name typed to load), then nod is loaded
    text = answer(qtbot, QMessageBox.Save, load_nod)
    assert 'unsaved changes' in text and "'round2_kept'" in text, text
    from sweetie_motion.trajectory.codec import load_goal_file
    until(qtbot, lambda: len(load_goal_file(str(robot.storage_dir / 'round2_kept.yaml'))
                             .points) == 3, 10, 'round2_kept stored with its third row')
    until(qtbot, lambda: editor.presenter.document.name == 'nod', 10, 'nod loaded after it')
    assert not editor.presenter.document.modified


def press_when(name: str, button, seen: list, timeout: float = 60.0) -> None:
    """Click ``button`` of the question named ``name`` once it is open (in Qt's loop)."""
    import time
    from PyQt5.QtCore import QTimer
    deadline = time.monotonic() + timeout

    def look() -> None:
        boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and
                 w.isVisible() and w.objectName() == name]
        if boxes and boxes[-1].button(button) is not None:
            seen.append(boxes[-1].text())
            boxes[-1].button(button).click()
        elif time.monotonic() < deadline:
            QTimer.singleShot(50, look)
    QTimer.singleShot(50, look)


def test_save_in_the_close_question_asks_before_it_replaces_a_stored_one(qtbot, robot, editor):
    on_laptop(qtbot, editor)
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:2])
    window.name_combo.setEditText('round2_close')
    click(qtbot, window.save_button)
    until(qtbot, lambda: not editor.presenter.document.modified, 10, 'saved')
    until(qtbot, lambda: 'round2_close' in editor.presenter.files.names, 10, 'listed')
    stored = (robot.storage_dir / 'round2_close.yaml').read_text()
    window.new_trajectory()
    add_poses(qtbot, robot, editor, POSES[1:4])
    window.name_combo.setEditText('round2_close')
    closed, replaced = [], []
    press_when('close_question', QMessageBox.Save, closed)
    press_when('replace_question', QMessageBox.Save, replaced)
    window.close()
    until(qtbot, lambda: closed and replaced, 15, 'the close and the replace questions')
    assert "'round2_close' is stored already" in replaced[0], replaced[0]
    until(qtbot, lambda: not window.isVisible(), 10, 'the window closed after the save')
    assert (robot.storage_dir / 'round2_close.yaml').read_text() != stored


def test_live_and_the_sliders_show_the_robot_while_a_row_is_selected(qtbot, robot, editor):
    on_laptop(qtbot, editor)
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:2])
    view = window.robot_view
    editor.presenter.table.select([0])
    until(qtbot, lambda: view.title == 'row 1', 5, 'the 3D view on row 1')
    # the sliders make the next pose: the 3D view shows the robot they move
    slider = window.sliders.findChild(type(window.play_head_slider), 'slider_joint53')
    assert slider is not None
    slider.setFocus()
    QTest.keyClick(slider, Qt.Key_PageUp)
    until(qtbot, lambda: view.title == 'current pose', 5, 'the 3D view on the robot')
    assert editor.presenter.table.selection == [0], 'the selection (where Add pose goes) went'
    until(qtbot, lambda: abs(view.pose['joint53'] - editor.presenter.current_pose['joint53'])
          < 1e-6 and abs(editor.presenter.current_pose['joint53'] - POSES[1]['joint53']) >
          0.01, 10, 'the view showing the moved head')
    # a click on the row shows the row again; Live shows the robot
    rect = window.table.visualRect(window.table_model.index(0, FIXED))
    qtbot.mouseClick(window.table.viewport(), Qt.LeftButton, pos=rect.center())
    until(qtbot, lambda: view.title == 'row 1', 5, 'the row shown again')
    click(qtbot, window.live_button)
    until(qtbot, lambda: view.title == 'current pose', 5, 'Live shows the robot')


# --- item 2: the support legs at a glance ------------------------------------------------------


def click_tick(qtbot, window, row: int, leg: str) -> None:
    """Click the support strip's tick of ``leg`` in ``row`` with the mouse."""
    table = window.table
    index = window.table_model.index(row, SUPPORT)
    cell = table.visualRect(index)
    legs = [name for name, _, _ in window.table_model.support(row)]
    tick = window.support_delegate.tick_rects(cell, len(legs))[legs.index(leg)]
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=tick.center())


def test_the_support_strip_names_sets_and_carries_the_support_legs(qtbot, robot, editor,
                                                                   tmp_path):
    on_laptop(qtbot, editor)
    window = editor.window
    table, model = window.table, window.table_model
    assert window.load_file(str(table_file(tmp_path / 'wide.yaml', 4, 3.0)))
    # the strip sits next to the time; the support/ columns among the joints are hidden
    assert model.headerData(SUPPORT, Qt.Horizontal) == 'support'
    assert not table.isColumnHidden(SUPPORT)
    hidden = [model.headerData(c, Qt.Horizontal) for c in range(FIXED, model.columnCount())
              if table.isColumnHidden(c)]
    assert hidden == ['support/leg1', 'support/leg2', 'support/leg3', 'support/leg4']
    assert table.columnViewportPosition(SUPPORT) == \
        table.columnViewportPosition(STEP) + table.columnWidth(STEP), 'not beside the time'
    tip = model.headerData(SUPPORT, Qt.Horizontal, Qt.ToolTipRole)
    for words in ('FL front left (leg1)', 'FR front right (leg2)', 'HL hind left (leg3)',
                  'HR hind right (leg4)'):
        assert words in tip, tip
    # a click on FR of row 3 lifts the front right leg there, and only there
    click_tick(qtbot, window, 2, 'leg2')
    joints = editor.presenter.waypoints.joints
    leg2 = joints.index('support/leg2')
    until(qtbot, lambda: editor.presenter.waypoints.waypoints[2].positions[leg2] == 0.0, 5,
          'leg2 lifted in row 3')
    assert [w.positions[leg2] for w in editor.presenter.waypoints.waypoints] == [1, 1, 0, 1]
    assert 'front right (leg2): lifted' in model.data(model.index(2, SUPPORT), Qt.ToolTipRole)
    # the 3D view marks the hooves of the row shown: the front right one lifted
    editor.presenter.table.select([2])
    view = window.robot_view
    until(qtbot, lambda: view.hooves == {'hoof1': True, 'hoof2': False, 'hoof3': True,
                                         'hoof4': True}, 5,
          lambda: f'the hooves of row 3 marked: {view.hooves}')
    # a new row after row 3 stands on row 3's legs (it had all four down: +1.000)
    click(qtbot, window.add_pose_button)
    until(qtbot, lambda: len(editor.presenter.waypoints) == 5, 5, 'a new row')
    assert editor.presenter.waypoints.waypoints[3].positions[leg2] == 0.0
    # Undo takes the click back as one edit
    click(qtbot, window.undo_button)
    click(qtbot, window.undo_button)
    until(qtbot, lambda: [w.positions[leg2] for w in editor.presenter.waypoints.waypoints] ==
          [1, 1, 1, 1], 5, 'both undone')


def test_a_tick_in_a_table_without_support_columns_adds_them(qtbot, robot, editor, tmp_path):
    on_laptop(qtbot, editor)
    window = editor.window
    assert window.load_file(str(table_file(tmp_path / 'head.yaml', 3, 2.0,
                                           ['joint51', 'joint52', 'joint53'])))
    strip = window.table_model.support(0)
    assert [on for _, _, on in strip] == [None] * 4
    click_tick(qtbot, window, 1, 'leg3')
    until(qtbot, lambda: 'support/leg3' in editor.presenter.waypoints.joints, 5,
          'the support columns added')
    assert [on for _, _, on in window.table_model.support(1)] == [True, True, False, True]
    assert [on for _, _, on in window.table_model.support(0)] == [True] * 4


# --- item 3: nothing cut at 1366 x 768 ----------------------------------------------------------


def test_nothing_is_cut_in_the_editor_at_1366x768(qtbot, robot, editor, artifacts_dir):
    from editor_helpers import cut_texts, screenshot
    on_laptop(qtbot, editor)
    window = editor.window
    add_poses(qtbot, robot, editor, POSES[:3])
    until(qtbot, lambda: window.check_line.label.text().startswith('checks:') and
          'checking' not in window.check_line.label.text(), 30, 'the checks verdict')
    # the play head on, a long message: the texts that were cut
    window.show_time(1.0)
    editor.presenter.say('FAILED: the controller aborted the goal at row 3: joint12 deviated '
                         '0.21 rad from its reference (path tolerance 0.1 rad), and the robot '
                         'holds where it stopped; Stop, Execute again or Set robot pose',
                         'error')
    for tab in range(window.tabs.count()):
        window.tabs.setCurrentIndex(tab)
        QApplication.processEvents()
        cut = cut_texts(window)
        assert not cut, f'tab {window.tabs.tabText(tab)}: ' + '\n'.join(cut)
    window.tabs.setCurrentIndex(0)
    screenshot(editor, Path(artifacts_dir) / 'round2' / 'editor_1366x768.png')
