"""
Run the editor or the console exactly as `sweetie-motion editor|console` does, driven by a test.

    python window_harness.py console|editor [the command's options ...]

The product's own ``main`` runs: its window, its ROS node, its signal handlers. This script only
adds a reader of standard input, in Qt's loop, that takes one command a line and answers on
standard output with one line ``harness: {json}``:

- ``state``: whether something moves, the questions open, the title, the message;
- ``geometry NAME``: the widget's rectangle on the screen (``question``: the newest question
  open; ``window``: the main window), for real input through the X server (xdotool);
- ``click NAME``: a click on the widget (QTest, queued: a question it opens does not hold the
  reader); ``answer BUTTON``: a standard button of the newest question (Cancel, Discard, ...);
- ``text NAME TEXT``: set a line edit's or an editable combo box's text;
- ``append TEXT``: the console's program gets a line (an unsaved edit);
- ``choose PATH``: the file dialog open takes PATH (as if typed and accepted);
- ``select ROW``: the editor's table selects a row;
- ``slider JOINT VALUE``: a joint slider moved to VALUE (what dragging it asks of the
  presenter);
- ``activate``: raise the main window and give it the keyboard focus;
- ``screenshot PATH``: the whole screen into a PNG (to see what a failing case saw).

Signals, keys and clicks that test the stops come from outside: kill(2) and xdotool.
"""

import json
import os
import sys

from PyQt5.QtCore import QPoint, QSocketNotifier, Qt, QTimer
from PyQt5.QtTest import QTest
from PyQt5.QtWidgets import (
    QApplication, QComboBox, QDialog, QFileDialog, QLineEdit, QMainWindow, QMessageBox, QWidget,
)


class Harness:
    """The reader of the test's commands for the window of this process."""

    def __init__(self) -> None:
        self.window = None
        self.buffer = b''
        os.set_blocking(0, False)
        self.notifier = QSocketNotifier(0, QSocketNotifier.Read)
        self.notifier.activated.connect(self.read)

    def main_window(self):
        if self.window is None:
            windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMainWindow)]
            self.window = windows[0] if windows else None
        return self.window

    def read(self) -> None:
        try:
            chunk = os.read(0, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self.notifier.setEnabled(False)
            return
        self.buffer += chunk
        while b'\n' in self.buffer:
            line, self.buffer = self.buffer.split(b'\n', 1)
            self.answer(line.decode().strip())

    def answer(self, line: str) -> None:
        word, _, rest = line.partition(' ')
        try:
            reply = getattr(self, f'do_{word}')(rest)
        except Exception as error:  # noqa: B902 -- the test reads what went wrong
            reply = {'error': f'{type(error).__name__}: {error}'}
        print('harness: ' + json.dumps(reply), flush=True)

    # --- commands ------------------------------------------------------------------------------

    def questions(self):
        return [w for w in QApplication.topLevelWidgets()
                if isinstance(w, QDialog) and w.isVisible()]

    def widget(self, name: str) -> QWidget:
        if name == 'window':
            return self.main_window()
        if name == 'question':
            open_ = self.questions()
            if not open_:
                raise LookupError('no question is open')
            return open_[-1]
        found = self.main_window().findChild(QWidget, name)
        if found is None:
            raise LookupError(f'no widget named {name!r}')
        return found

    def do_state(self, _: str) -> dict:
        window = self.main_window()
        presenter = window.presenter
        return {'moving': bool(presenter.moving), 'title': window.windowTitle(),
                'links': {k: bool(v) for k, v in presenter.links.items()},
                'modified': window.isWindowModified(), 'message': presenter.message.text,
                'questions': [q.objectName() for q in self.questions()],
                'question_text': [q.text() for q in self.questions()
                                  if isinstance(q, QMessageBox)],
                'rows': len(presenter.waypoints) if hasattr(presenter, 'waypoints') else 0}

    def do_geometry(self, name: str) -> dict:
        widget = self.widget(name)
        corner = widget.mapToGlobal(QPoint(0, 0))
        return {'x': corner.x(), 'y': corner.y(), 'width': widget.width(),
                'height': widget.height(), 'visible': widget.isVisible(),
                'enabled': widget.isEnabled()}

    def do_click(self, name: str) -> dict:
        widget = self.widget(name)
        QTimer.singleShot(0, lambda: QTest.mouseClick(widget, Qt.LeftButton))
        return {'clicked': name}

    def do_answer(self, button: str) -> dict:
        box = self.widget('question')
        if not isinstance(box, QMessageBox):
            box.reject()
            return {'rejected': box.objectName()}
        target = box.button(getattr(QMessageBox, button))
        if target is None:
            raise LookupError(f'the question has no {button} button')
        QTimer.singleShot(0, target.click)
        return {'answered': button}

    def do_text(self, rest: str) -> dict:
        name, _, text = rest.partition(' ')
        widget = self.widget(name)
        if isinstance(widget, QComboBox):
            widget.setEditText(text)
        elif isinstance(widget, QLineEdit):
            widget.setText(text)
        else:
            raise TypeError(f'{name} takes no text')
        return {'text': text}

    def do_append(self, text: str) -> dict:
        self.main_window().editor.appendPlainText(text)
        return {'appended': text}

    def do_choose(self, path: str) -> dict:
        dialog = self.widget('question')
        if not isinstance(dialog, QFileDialog):
            raise TypeError(f'the question open is a {type(dialog).__name__}, not a file dialog')
        # what a person types into the name field, then Enter (Qt's own dialog)
        edit = dialog.findChild(QLineEdit, 'fileNameEdit')
        edit.selectAll()

        def type_it() -> None:
            QTest.keyClicks(edit, path)
            QTest.keyClick(edit, Qt.Key_Return)
        QTimer.singleShot(0, type_it)
        return {'chosen': path}

    def do_select(self, row: str) -> dict:
        self.main_window().table.selectRow(int(row))
        return {'selected': int(row)}

    def do_slider(self, rest: str) -> dict:
        joint, value = rest.split()
        window = self.main_window()
        presenter = window.presenter
        move = getattr(presenter, 'move_joint', None) or presenter.move_slider
        QTimer.singleShot(0, lambda: move(joint, float(value)))
        return {'slider': joint}

    def do_screenshot(self, path: str) -> dict:
        QApplication.primaryScreen().grabWindow(0).save(path)
        return {'screenshot': path}

    def do_activate(self, _: str) -> dict:
        window = self.main_window()
        window.raise_()
        window.activateWindow()
        return {'active': window.isActiveWindow()}


def main() -> int:
    which, argv = sys.argv[1], sys.argv[2:]
    harness = Harness.__new__(Harness)
    harness.app = QApplication([f'sweetie-motion {which}'])   # the product's run() takes it
    harness.__init__()
    print(f'harness: {json.dumps({"pid": os.getpid()})}', flush=True)
    if which == 'console':
        from sweetie_motion.console.app import main as run
    else:
        from sweetie_motion.editor.app import main as run
    try:
        return run(argv)
    finally:
        harness.notifier.setEnabled(False)


if __name__ == '__main__':
    sys.exit(main())
