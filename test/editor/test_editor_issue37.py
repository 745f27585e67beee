"""
The editor's range edits of issue #37, driven through the window at 1366 x 768.

A drag down the support strip (the X server's mouse where a window manager runs), a named pose
from Insert pose's menu, Mirror and Repeat of rows selected on the row headers, Undo; and the
rows a laptop's screen shows.
"""

from pathlib import Path

from editor_helpers import click, DISPLAY, drag, insert_pose, steady, until
from PyQt5.QtCore import QPoint, Qt
from PyQt5.QtTest import QTest
import pytest
from sweetie_motion.editor.models import SUPPORT
from sweetie_motion.editor.workspace import dump_table
from sweetie_motion.trajectory.waypoints import WaypointsList

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the window's inside on a 1366 x 768 laptop under openbox's title bar [px]
INSIDE = (1366, 740)
LEGS = ['support/leg1', 'support/leg2', 'support/leg3', 'support/leg4']
#: a leg each side and the head
JOINTS = ['joint11', 'joint12', 'joint21', 'joint22', 'joint51', 'joint52', 'joint53']


def table(path: Path, rows: int) -> Path:
    """Write a table of ``rows`` rows 1 s apart, each leg a little different, all legs down."""
    waypoints = WaypointsList(JOINTS + LEGS)
    for k in range(rows):
        waypoints.add_from_state(JOINTS, [0.05 * k, 0.1 * k, -0.02 * k, 0.3, -0.1, 0.1 * k,
                                          0.2], time=float(k))
    path.write_text(dump_table(waypoints))
    return path


def opened(qtbot, editor, path: Path):
    """Size the window as on a laptop and load ``path`` into it."""
    editor.window.resize(*INSIDE)
    steady(qtbot, lambda: editor.window.size().width(), 0.3, 10, 'the window resized')
    assert editor.window.load_file(str(path))
    return editor.window


def tick(window, row: int, leg: str):
    """Return the middle of ``leg``'s tick in ``row`` of the support strip (viewport point)."""
    cell = window.table.visualRect(window.table_model.index(row, SUPPORT))
    legs = [name for name, _, _ in window.table_model.support(row)]
    return window.support_delegate.tick_rects(cell, len(legs))[legs.index(leg)].center()


def legs_column(editor, leg: str):
    index = editor.presenter.waypoints.joints.index(f'support/{leg}')
    return [w.positions[index] for w in editor.presenter.waypoints.waypoints]


def select_rows(qtbot, window, first: int, last: int) -> None:
    """Click row ``first``'s number, then shift-click row ``last``'s, as a person selects."""
    header = window.table.verticalHeader()
    for row, keys in ((first, Qt.NoModifier), (last, Qt.ShiftModifier)):
        middle = QPoint(header.width() // 2,
                        header.sectionViewportPosition(row) + header.sectionSize(row) // 2)
        QTest.mouseClick(header.viewport(), Qt.LeftButton, keys, pos=middle)
    until(qtbot, lambda: window.presenter.table.selection == list(range(first, last + 1)), 5,
          f'rows {first + 1}-{last + 1} selected')


def with_menu_open(qtbot, window, do, timeout: float = 10.0) -> None:
    """Open Insert pose's menu with the mouse, ``do(menu)`` while it is open; it must close."""
    import time
    from PyQt5.QtCore import QTimer
    menu = window.insert_pose_button.menu()
    done = []
    deadline = time.monotonic() + timeout

    def look() -> None:
        # the menu runs an event loop of its own while it is open: found from a timer
        if menu.isVisible():
            done.append(True)
            do(menu)
        elif time.monotonic() < deadline:
            QTimer.singleShot(50, look)
    QTimer.singleShot(50, look)
    click(qtbot, window.insert_pose_button)
    until(qtbot, lambda: done and not menu.isVisible(), timeout, 'the menu opened and closed')


def stop_clicked_beside(qtbot, window):
    """Return what clicks STOP beside an open menu: the X server's mouse where it can."""
    import subprocess
    from PyQt5.QtWidgets import QApplication
    stop = window.stop_all_button
    if QApplication.instance().platformName() != 'xcb' or not DISPLAY['wm']:
        return lambda menu: QTest.keyClick(menu, Qt.Key_F12) or menu.close()
    where = stop.mapToGlobal(stop.rect().center())
    # a hand's click: the button down a moment (xdotool's click is up within a millisecond,
    # before Qt has closed the menu and handed the press on to STOP)
    return lambda menu: subprocess.Popen(['xdotool', 'mousemove', str(where.x()),
                                          str(where.y()), 'mousedown', '1', 'sleep', '0.2',
                                          'mouseup', '1'])


def test_a_drag_along_the_support_strip_sets_a_leg_in_every_row_passed(
        qtbot, robot, editor, tmp_path):
    window = opened(qtbot, editor, table(tmp_path / 'walk.yaml', 16))
    # rows as high as their text, not the style's 30 px: a laptop shows ten and more (with the
    # X server's fonts; offscreen Qt's are larger)
    view = window.table
    assert view.rowHeight(0) == max(view.fontMetrics().height(), 16) + 6
    if DISPLAY['wm']:
        assert view.viewport().height() // view.rowHeight(0) >= 10, \
            f'{view.viewport().height()} px for rows of {view.rowHeight(0)} px'
    # down from the hind left tick of row 2 to row 6: lifted in rows 2-6
    drag(qtbot, view.viewport(), tick(window, 1, 'leg3'), tick(window, 5, 'leg3'))
    until(qtbot, lambda: legs_column(editor, 'leg3')[:8] == [1, 0, 0, 0, 0, 0, 1, 1], 10,
          lambda: f'leg3 lifted in rows 2-6: {legs_column(editor, "leg3")}')
    assert legs_column(editor, 'leg3')[8:] == [1] * 8
    assert legs_column(editor, 'leg4') == [1] * 16
    assert 'leg3 lifted in rows 2-6' in window.message_label.text()
    # up from a lifted tick: set down in the rows passed (from row 6 to row 5)
    drag(qtbot, view.viewport(), tick(window, 5, 'leg3'), tick(window, 4, 'leg3'))
    until(qtbot, lambda: legs_column(editor, 'leg3')[:8] == [1, 0, 0, 0, 1, 1, 1, 1], 10,
          lambda: f'leg3 down again in rows 5-6: {legs_column(editor, "leg3")}')
    # each drag is one step of Undo
    click(qtbot, window.undo_button)
    assert legs_column(editor, 'leg3') == [1, 0, 0, 0, 0, 0, 1, 1] + [1] * 8
    click(qtbot, window.undo_button)
    assert legs_column(editor, 'leg3') == [1] * 16
    # below the table the drag scrolls it, and the run follows the rows that come into sight
    bar = view.verticalScrollBar()
    assert bar.value() == 0
    last_seen = view.rowAt(view.viewport().height() - 1)
    below = tick(window, 2, 'leg4')
    below.setY(view.viewport().height() + 20)
    drag(qtbot, view.viewport(), tick(window, 2, 'leg4'), below,
         held=lambda: until(qtbot, lambda: bar.value() > 0, 10, 'the table scrolled'))
    until(qtbot, lambda: 0 in legs_column(editor, 'leg4'), 10, 'the run applied')
    lifted = [k for k, on in enumerate(legs_column(editor, 'leg4')) if not on]
    assert lifted == list(range(2, lifted[-1] + 1)) and lifted[-1] > last_seen, lifted


def test_insert_pose_mirror_and_repeat_from_the_table(qtbot, robot, editor, tmp_path):
    window = opened(qtbot, editor, table(tmp_path / 'wave.yaml', 4))
    presenter = editor.presenter
    # the stops work beside the open menu: F12, and a click on STOP (which closes the menu)
    with_menu_open(qtbot, window, lambda menu: QTest.keyClick(menu, Qt.Key_F12) or
                   QTest.keyClick(menu, Qt.Key_Escape))
    assert presenter.message.text == 'nothing moves'
    presenter.say('the menu again')
    with_menu_open(qtbot, window, stop_clicked_beside(qtbot, window))
    until(qtbot, lambda: presenter.message.text == 'nothing moves', 5, 'STOP clicked')
    # Insert pose after row 2: the head looks up, the legs stay as in row 2
    select_rows(qtbot, window, 1, 1)
    row2 = presenter.waypoints.pose(1)
    insert_pose(qtbot, window, 'look_up')
    until(qtbot, lambda: len(presenter.waypoints) == 5, 5, 'the pose inserted')
    inserted = presenter.waypoints.pose(2)
    assert presenter.waypoints.waypoints[2].label == 'look_up'
    assert inserted['joint51'] == -0.2 and inserted['joint53'] == 0.5
    assert all(inserted[j] == row2[j] for j in ('joint11', 'joint12', 'joint21', 'joint52'))
    # Mirror rows 2-3 (row 2 stands on three legs): left and right swap, the support with them
    presenter.table.set_support([1], 'leg1', False)
    before = presenter.waypoints.to_document()
    select_rows(qtbot, window, 1, 2)
    click(qtbot, window.mirror_button)
    until(qtbot, lambda: presenter.waypoints.to_document() != before, 5, 'mirrored')
    mirrored = presenter.waypoints.pose(1)
    assert mirrored['joint21'] == pytest.approx(-row2['joint11'])
    assert mirrored['joint22'] == pytest.approx(row2['joint12'])
    assert mirrored['joint52'] == pytest.approx(-row2['joint52'])
    assert (mirrored['support/leg1'], mirrored['support/leg2']) == (1.0, 0.0)
    click(qtbot, window.undo_button)
    assert presenter.waypoints.to_document() == before
    # Repeat rows 1-3 (0, 1, 1.5 s) three times in all: six rows follow them with the same
    # steps, the first a step of 1 s after the range; rows 4-5 come 5 s later
    select_rows(qtbot, window, 0, 2)
    window.repeat_spin.setFocus()
    window.repeat_spin.selectAll()
    QTest.keyClicks(window.repeat_spin, '3')
    click(qtbot, window.repeat_button)
    until(qtbot, lambda: len(presenter.waypoints) == 11, 5, 'the range repeated')
    times = [w.time for w in presenter.waypoints.waypoints]
    assert times == pytest.approx([0, 1, 1.5, 2.5, 3.5, 4, 5, 6, 6.5, 7, 8])
    assert [w.label for w in presenter.waypoints.waypoints[:9]] == ['', '', 'look_up'] * 3
    click(qtbot, window.undo_button)
    assert len(presenter.waypoints) == 5


def test_mirror_is_off_with_the_reason_on_a_robot_without_a_mirror(qtbot):
    from sweetie_motion.editor.app import load_model
    from sweetie_motion.editor.presenter import EditorPresenter
    from sweetie_motion.editor.window import EditorWindow
    presenter = EditorPresenter(lambda request: None, load_model('winding_arm.yaml'))
    window = EditorWindow(presenter, None, {})
    try:
        assert not window.mirror_button.isEnabled()
        assert 'declares no mirror' in window.mirror_button.toolTip()
        assert not window.insert_pose_button.isEnabled()
        assert 'no named poses' in window.insert_pose_button.toolTip()
    finally:
        window._timer.stop()
        window.deleteLater()
