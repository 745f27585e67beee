"""Helpers of the editor tests: an editor window on its own node, and a person's actions."""

import contextlib
from pathlib import Path
import sys
import time
from typing import Iterator, List, Optional

import pytest
from ros_util import Process

#: what the session's display is: its name, whether a window manager runs, why not
DISPLAY = {'wm': False, 'reason': '', 'name': ''}


def require_window_manager() -> None:
    """Skip the calling test when no window manager runs (with the reason)."""
    from PyQt5.QtWidgets import QApplication
    app = QApplication.instance()
    if app is not None and app.platformName() != 'xcb':
        pytest.skip(f'needs a window manager; Qt runs on {app.platformName()!r} '
                    f'({DISPLAY["reason"] or "another test made the application first"})')
    if not DISPLAY['wm']:
        pytest.skip(f'needs a window manager: {DISPLAY["reason"]}')


def editor_config(directory: Path) -> Path:
    """Write the motion process config of the editor tests (storage in ``directory``)."""
    from ros_util import HERE
    config = directory / 'editor_test.yaml'
    config.write_text((Path(HERE) / 'config' / 'editor_test.yaml').read_text().replace(
        'STORAGE_DIR', str(directory / 'store')))
    return config


READY = ['motion', 'trajectory_storage', 'follow_joint_state', 'joint_trajectory',
         'torque_main_switch', 'virtual_robot']


def start_motion(config: Path, namespace: str) -> Process:
    """Start `sweetie-motion bringup` as a separate process."""
    return Process([sys.executable, '-m', 'sweetie_motion.cli', 'bringup', '--config',
                    str(config), '--namespace', namespace], f'motion-{namespace}')


def wait_back(robot, namespace: str, timeout: float = 60.0) -> None:
    """
    Wait until every node of the restarted process is active.

    The killed process stays in DDS discovery for a while, so a service looks ready before the
    new one is there and a request may go to the dead one: ask again until the new one answers.
    """
    from lifecycle_msgs.srv import GetState
    deadline = time.monotonic() + timeout
    for name in READY:
        while True:
            assert time.monotonic() < deadline, f'{name} did not come back'
            client = robot.node.create_client(GetState, f'/{namespace}/{name}/get_state')
            try:
                if client.wait_for_service(timeout_sec=1.0):
                    future = client.call_async(GetState.Request())
                    end = time.monotonic() + 2.0
                    while not future.done() and time.monotonic() < end:
                        time.sleep(0.02)
                    if future.done() and future.result().current_state.label == 'active':
                        break
            finally:
                robot.node.destroy_client(client)


class Editor:
    """An editor window on its own rclpy node (what `sweetie-motion editor` builds)."""

    def __init__(self, namespace: str, workspace: Path, extra: Optional[List[str]] = None
                 ) -> None:
        from sweetie_motion.editor.app import build_editor
        from sweetie_motion.ros.background import BackgroundNode
        arguments = ['editor', '--ros-args', '-p', f'namespace:={namespace}',
                     '-p', f'workspace_dir:={workspace}', *(extra or [])]
        self.ros = BackgroundNode('trajectory_editor', arguments)
        parts = build_editor(self.ros.node, streams=self.ros.streams)
        self.window, self.presenter, self.bridge = parts
        self.workspace = workspace

    def find(self, kind, name: str):
        """Return the window's widget named ``name`` (fails the test when there is none)."""
        widget = self.window.findChild(kind, name)
        assert widget is not None, f'the editor has no {kind.__name__} named {name!r}'
        return widget

    def close(self) -> None:
        """
        Take the window away without its close questions, as if the editor were killed.

        Nothing marks a clean close: unsaved changes stay offered at the next start.
        """
        self.window._timer.stop()
        self.window.hide()
        self.window.deleteLater()
        self.ros.close(self.bridge.close)


@contextlib.contextmanager
def open_editor(qtbot, namespace: str, workspace: Path, show: bool = True,
                extra: Optional[List[str]] = None) -> Iterator[Editor]:
    """Open an editor window for the duration of a with-block."""
    editor = Editor(namespace, workspace, extra)
    try:
        if show:
            editor.window.show()
            qtbot.waitExposed(editor.window, timeout=10000)
        yield editor
    finally:
        editor.close()


# --- helpers a test uses as a person would -----------------------------------------------------


def until(qtbot, condition, timeout: float = 15.0, message='condition') -> None:
    """Wait (processing Qt events) until ``condition()`` is true; fail after ``timeout``."""
    from pytestqt.exceptions import TimeoutError as QtTimeoutError
    try:
        qtbot.waitUntil(lambda: bool(condition()), timeout=int(timeout * 1000))
    except QtTimeoutError:
        text = message() if callable(message) else message
        raise AssertionError(f'timed out after {timeout} s waiting for {text}') from None


def steady(qtbot, value, hold: float = 0.5, timeout: float = 15.0, message='a steady value'):
    """
    Wait (processing Qt events) until ``value()`` stayed the same for ``hold`` s; return it.

    For what settles asynchronously (a window manager placing a frame, a layout after a
    change): the value is taken once it stopped changing, not after a fixed time.
    """
    seen = [(time.monotonic(), value())]

    def settled() -> bool:
        now, current = time.monotonic(), value()
        if current != seen[-1][1]:
            seen.append((now, current))
        return now - seen[-1][0] >= hold
    until(qtbot, settled, timeout, lambda: f'{message} (it went {[v for _, v in seen]})')
    return seen[-1][1]


def click(qtbot, widget) -> None:
    """Click a button with the mouse."""
    from PyQt5.QtCore import Qt
    assert widget.isEnabled(), f'{widget.objectName()} is disabled'
    qtbot.mouseClick(widget, Qt.LeftButton)


def answer(qtbot, button, action, timeout: float = 10.0,
           snapshot: Optional[Path] = None) -> str:
    """
    Do ``action`` (which opens a message box) and click ``button`` in the box.

    :param button: a QMessageBox.StandardButton.
    :param snapshot: save a picture of the screen under the box before clicking.
    :return: the box's text.
    """
    from PyQt5.QtCore import QTimer
    from PyQt5.QtWidgets import QApplication, QMessageBox
    seen = []
    deadline = time.monotonic() + timeout

    def press(box) -> None:
        if snapshot is not None:
            frame = box.frameGeometry()
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            QApplication.primaryScreen().grabWindow(
                0, frame.x(), frame.y(), frame.width(), frame.height()).save(str(snapshot))
        seen.append(box.text())
        box.button(button).click()

    def look() -> None:
        # the windows' questions are not modal (the STOP button stays clickable beside them)
        boxes = [w for w in QApplication.topLevelWidgets()
                 if isinstance(w, QMessageBox) and w.isVisible()]
        box = boxes[-1] if boxes else None
        if box is not None and box.button(button) is not None:
            # a box just shown is not painted yet: look at it a moment later
            QTimer.singleShot(500 if snapshot is not None else 0, lambda: press(box))
        elif time.monotonic() < deadline:
            QTimer.singleShot(50, look)
    QTimer.singleShot(50, look)
    action()
    until(qtbot, lambda: seen, timeout, 'the question to answer')
    return seen[0]


def edit_cell(qtbot, editor: Editor, row: int, column: int, text: str) -> None:
    """Double-click a cell of the waypoint table, type ``text`` and press Return."""
    from PyQt5.QtCore import Qt
    from PyQt5.QtWidgets import QLineEdit
    table = editor.window.table
    index = table.model().index(row, column)
    table.scrollTo(index)
    rect = table.visualRect(index)
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(table.viewport(), Qt.LeftButton, pos=rect.center())
    until(qtbot, lambda: table.viewport().findChildren(QLineEdit), 5, 'the cell editor')
    line = table.viewport().findChildren(QLineEdit)[-1]
    line.selectAll()
    qtbot.keyClicks(line, text)
    qtbot.keyClick(line, Qt.Key_Return)
    until(qtbot, lambda: not [e for e in table.viewport().findChildren(QLineEdit)
                              if e.isVisible()], 5, 'the cell editor to close')


def set_robot_pose(qtbot, robot, editor: Editor, pose: dict, tolerance: float = 0.01) -> None:
    """Move the robot to ``pose`` through FollowJointState; wait until the editor sees it."""
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        robot.publish('joint_states_set', list(pose), list(pose.values()))
        qtbot.wait(50)
        current = editor.presenter.current_pose
        if all(abs(current.get(j, 9) - v) < tolerance for j, v in pose.items()):
            return
    raise AssertionError(f'the robot did not reach {pose}: {editor.presenter.current_pose}')


def screenshot(editor: Editor, path: Path) -> Path:
    """Save what a person sees of the window: the screen's pixels when a window manager runs."""
    from PyQt5.QtTest import QTest
    from PyQt5.QtWidgets import QApplication
    window = editor.window
    app = QApplication.instance()
    window.repaint()
    QTest.qWait(300)   # the X server shows the repainted window a moment later
    if app.platformName() == 'xcb' and DISPLAY['wm']:
        frame = window.frameGeometry()
        image = app.primaryScreen().grabWindow(0, frame.x(), frame.y(), frame.width(),
                                               frame.height())
    else:
        image = window.grab()
    path.parent.mkdir(parents=True, exist_ok=True)
    assert image.save(str(path)), f'cannot write {path}'
    return path


#: the joints most editor tests animate: the head and one front leg
JOINTS = ['joint12', 'joint13', 'joint51', 'joint53']
#: key poses within the limits of :data:`JOINTS`
POSES = [
    {'joint12': 0.0, 'joint13': 0.0, 'joint51': 0.0, 'joint53': 0.0},
    {'joint12': -0.6, 'joint13': 0.8, 'joint51': -0.3, 'joint53': 0.3},
    {'joint12': -0.9, 'joint13': 1.1, 'joint51': -0.5, 'joint53': 0.5},
    {'joint12': -0.3, 'joint13': 0.4, 'joint51': -0.2, 'joint53': 0.1},
]


def choose_joints(qtbot, editor: Editor, joints: List[str]) -> None:
    """Tick ``joints`` (or whole groups) in Setup and click Apply joints."""
    window = editor.window
    window.tabs.setCurrentIndex(1)
    window.check_joints(joints)
    click(qtbot, window.apply_joints_button)
    window.tabs.setCurrentIndex(0)


def add_poses(qtbot, robot, editor: Editor, poses: List[dict],
              joints: Optional[List[str]] = None) -> None:
    """Start a new trajectory of ``joints``; move the robot to each pose and click Add pose."""
    window = editor.window
    click(qtbot, window.new_button)
    choose_joints(qtbot, editor, joints or JOINTS)
    for pose in poses:
        set_robot_pose(qtbot, robot, editor, pose)
        rows = len(editor.presenter.waypoints)
        click(qtbot, window.add_pose_button)
        until(qtbot, lambda: len(editor.presenter.waypoints) == rows + 1, 5, 'a new row')


def shown_whole(label) -> bool:
    """Return whether a label's text fits its width (stumble 16: "running 3.0 /", "OF")."""
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def cut_texts(window) -> List[str]:
    """
    Return what a person sees cut in ``window``, in words.

    Every visible label and button whose text is wider (or, wrapped, taller) than the widget.

    A label that elides its text ("..." at the end) with the full text in its tooltip is not
    cut: the person sees that there is more, and where to read it. Painted texts of the 3D view
    are judged by the view itself (``texts``: (full, shown) pairs).
    """
    from PyQt5.QtCore import QRect, Qt
    from PyQt5.QtGui import QFontMetrics
    from PyQt5.QtWidgets import (
        QAbstractButton, QCheckBox, QLabel, QPushButton, QRadioButton, QStyle,
        QStyleOptionButton, QWidget,
    )
    cut = []

    def elided(widget, shown: str, text: str) -> bool:
        return shown.endswith('…') and shown[:-1].rstrip() in text and \
            text in widget.toolTip()

    for widget in window.findChildren(QLabel) + window.findChildren(QAbstractButton):
        if not widget.isVisibleTo(window) or not widget.isVisible():
            continue
        text = widget.text().replace('&&', '\0').replace('&', '').replace('\0', '&')
        if not text.strip() or (isinstance(widget, QLabel) and (
                widget.textFormat() == Qt.RichText or '<' in text)):
            continue
        metrics = widget.fontMetrics()
        name = f'{type(widget).__name__} {widget.objectName() or "(unnamed)"} {text!r}'
        # the text partly under another widget or beyond its pane's edge ("Set robot p", a
        # lone "t"): the text's span (left-aligned labels, centred buttons) must be in sight
        seen = widget.visibleRegion().boundingRect()
        shown = widget.shown_text() if callable(getattr(widget, 'shown_text', None)) else text
        wide = min(max(metrics.horizontalAdvance(line) for line in shown.split('\n')) + 4,
                   widget.width())
        if isinstance(widget, QLabel) and not widget.alignment() & Qt.AlignHCenter:
            left = widget.contentsRect().left() if widget.alignment() & Qt.AlignLeft or \
                not widget.alignment() & Qt.AlignRight else widget.width() - wide
        else:
            left = (widget.width() - wide) // 2
        parent = widget.parentWidget()
        over = [s for s in (parent.findChildren(QWidget) if parent is not None else [])
                if s.parentWidget() is parent and s is not widget and s.isVisible() and
                s.geometry().intersects(widget.geometry()) and
                widget.isAncestorOf(s) is False and not s.isAncestorOf(widget)]
        if over:
            names = ', '.join(o.objectName() or type(o).__name__ for o in over)
            cut.append(f'{name}: lies under {names}')
            continue
        end = min(left + wide, widget.width())
        if not seen.isEmpty() and (seen.left() > left or seen.right() < end - 2 or
                                   seen.height() < min(widget.height(), metrics.height())):
            cut.append(f'{name}: {seen.width()} x {seen.height()} of {widget.width()} x '
                       f'{widget.height()} px in sight')
            continue
        if isinstance(widget, QLabel):
            shown = widget.shown_text() if callable(getattr(widget, 'shown_text', None)) \
                else text
            if shown != text and not elided(widget, shown, text):
                cut.append(f'{name}: shows {shown!r} without the rest in its tooltip')
            room = widget.contentsRect()
            if widget.wordWrap():
                font = widget.font()
                font.setBold(font.bold() or 'bold' in widget.styleSheet())
                needed = QFontMetrics(font).boundingRect(
                    QRect(0, 0, max(room.width() - 4, 1), 1 << 20), Qt.TextWordWrap,
                    shown).height()
                if needed > room.height():
                    cut.append(f'{name}: needs {needed} px high, has {widget.height()}')
            else:
                lines = shown.split('\n')
                wide = max(metrics.horizontalAdvance(line) for line in lines)
                if wide > room.width():
                    cut.append(f'{name}: needs {wide} px, has {room.width()}')
                high = metrics.lineSpacing() * len(lines)
                if high > room.height() + 2:
                    cut.append(f'{name}: needs {high} px high, has {room.height()}')
            continue
        option = QStyleOptionButton()
        widget.initStyleOption(option)
        element = (QStyle.SE_CheckBoxContents if isinstance(widget, QCheckBox) else
                   QStyle.SE_RadioButtonContents if isinstance(widget, QRadioButton) else
                   QStyle.SE_PushButtonContents if isinstance(widget, QPushButton) else None)
        if element is None:
            continue
        room = widget.style().subElementRect(element, option, widget).width()
        wide = metrics.horizontalAdvance(text)
        if wide > room:
            cut.append(f'{name}: needs {wide} px, has {room}')
    for view in window.findChildren(QWidget):
        texts = getattr(view, 'painted_texts', None)
        if view.isVisible() and callable(texts):
            for full, shown in texts():
                if shown != full and not (shown.endswith('…') and full in view.toolTip()):
                    cut.append(f'{type(view).__name__} paints {full!r} as {shown!r}')
    return cut


def insert_pose(qtbot, window, name: str, timeout: float = 10.0) -> None:
    """Open Insert pose's menu with the mouse and click the named pose in it."""
    from PyQt5.QtCore import Qt, QTimer
    from PyQt5.QtTest import QTest
    from PyQt5.QtWidgets import QAction
    menu = window.insert_pose_button.menu()
    action = menu.findChild(QAction, f'insert_pose_{name}')
    assert action is not None, f'Insert pose offers no {name!r}'
    chosen = []
    deadline = time.monotonic() + timeout

    def pick() -> None:
        # the menu runs an event loop of its own while it is open: it is found from a timer
        if menu.isVisible() and not menu.actionGeometry(action).isEmpty():
            chosen.append(name)
            QTest.mouseClick(menu, Qt.LeftButton, pos=menu.actionGeometry(action).center())
        elif time.monotonic() < deadline:
            QTimer.singleShot(50, pick)
        else:
            menu.close()
    QTimer.singleShot(50, pick)
    click(qtbot, window.insert_pose_button)
    until(qtbot, lambda: chosen and not menu.isVisible(), timeout, f'{name} chosen in the menu')


def drag(qtbot, widget, start, end, steps: int = 6, held=None) -> None:
    """
    Press the left button at ``start`` of ``widget``, move to ``end`` and release it there.

    Through the X server's mouse (xdotool) where a window manager runs, as a hand would;
    offscreen, the same mouse events are given to the widget.

    :param held: called at ``end`` before the release (e.g. to wait there for something).
    """
    import subprocess
    from PyQt5.QtCore import QEvent, QPoint, Qt
    from PyQt5.QtGui import QMouseEvent
    from PyQt5.QtTest import QTest
    from PyQt5.QtWidgets import QApplication
    points = [QPoint(start.x() + (end.x() - start.x()) * k // steps,
                     start.y() + (end.y() - start.y()) * k // steps) for k in range(steps + 1)]
    if QApplication.instance().platformName() == 'xcb' and DISPLAY['wm']:
        def xdotool(*args: str) -> None:
            process = subprocess.Popen(['xdotool', *args])
            until(qtbot, lambda: process.poll() is not None, 20, 'xdotool')
            assert process.returncode == 0
        screen = [widget.mapToGlobal(p) for p in points]
        moves = ['mousemove', str(screen[0].x()), str(screen[0].y()), 'sleep', '0.1',
                 'mousedown', '1']
        for p in screen[1:]:
            moves += ['sleep', '0.05', 'mousemove', str(p.x()), str(p.y())]
        xdotool(*moves)
        if held is not None:
            held()
        xdotool('sleep', '0.05', 'mouseup', '1')
        return
    QTest.mousePress(widget, Qt.LeftButton, pos=points[0])
    for p in points[1:]:
        QApplication.sendEvent(widget, QMouseEvent(QEvent.MouseMove, p, Qt.NoButton,
                                                   Qt.LeftButton, Qt.NoModifier))
    if held is not None:
        held()
    QTest.mouseRelease(widget, Qt.LeftButton, pos=points[-1])
