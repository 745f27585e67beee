"""
Stop first, ask second: every stop a person has works whatever a window shows (Qt).

Shared by the editor and the console. :class:`StopFirst` guards one main window:

- **Keys**: Esc stops while something moves, F12 (:data:`STOP_KEY`) always, in the window and
  in every dialog of the application, whatever has the keyboard focus.
- **The STOP buttons act at the press** (the windows connect their ``pressed`` signal), as an
  emergency stop does: a click's release follows a tenth of a second later, and later still
  while the window is busy (the stop matrix saw 0.1-0.2 s between press and release).
- **Popups do not block the stop**: a press on the STOP button while a menu or a combo box's
  list is open closes it and stops, in one click (the popup would take the click alone).
- **Questions do not block the stop**: :meth:`StopFirst.ask` and :meth:`StopFirst.ask_file`
  show a question that is not modal to the window system, so the STOP button stays clickable;
  the rest of the window takes no input while one is open, as if it were modal. A question
  opened while the robot moves says so.
- **Closing stops first**: the window's close button (and SIGINT, Ctrl+C in the terminal)
  first stop what moves, wait for the controller's confirmation (at most
  :data:`STOP_CONFIRM_TIMEOUT`), say "stopped first: ..." in the window and the terminal, and only
  then ask about unsaved work. SIGTERM stops the same way, then backs unsaved work up and
  leaves without asking. A second Ctrl+C while a question is open (or while the stop is
  awaited) leaves at once, backing unsaved work up.

The window gives the guard its stop, what moves, its stop widgets and how to keep unsaved work
(:class:`StopActions`); what a stop does is the presenter's.
"""

from dataclasses import dataclass
import os
import signal
import socket
import sys
import time
from typing import Callable, List, Optional, Sequence

from PyQt5.QtCore import QEvent, QEventLoop, QObject, QSocketNotifier, Qt, QTimer
from PyQt5.QtWidgets import (
    QAbstractButton, QApplication, QDialog, QFileDialog, QMessageBox, QShortcut, QWidget,
)

#: the key that stops everything, anywhere in the application (Esc stops only while moving)
STOP_KEY = Qt.Key_F12
#: how long a close waits for the controller to confirm the stop [s]
STOP_CONFIRM_TIMEOUT = 5.0
#: how often the guard looks whether a stop it waits for is done [ms]
POLL_MS = 50
#: the input a question keeps from the rest of the window
_INPUT_EVENTS = frozenset({
    QEvent.MouseButtonPress, QEvent.MouseButtonRelease, QEvent.MouseButtonDblClick,
    QEvent.Wheel, QEvent.KeyPress, QEvent.KeyRelease, QEvent.Shortcut, QEvent.ShortcutOverride,
    QEvent.ContextMenu, QEvent.TouchBegin, QEvent.DragEnter, QEvent.Drop})
#: what a question says while the robot moves, and once it was stopped
MOVING_NOTE = 'The robot is moving: STOP, Esc or F12 stops it now.'
STOPPED_NOTE = 'The robot was stopped: it holds.'


class _MovingNote:
    """Keeps a question's first line saying whether the robot moves (while it is open)."""

    def __init__(self, dialog: QDialog, moving: Callable[[], bool]) -> None:
        self.box = dialog if isinstance(dialog, QMessageBox) else None
        self.moving = moving
        self.text = self.box.text() if self.box is not None else ''
        self.shown: Optional[bool] = None
        self.timer = QTimer(dialog)
        self.timer.timeout.connect(self.update)
        if self.box is not None:
            self.update()
            self.timer.start(POLL_MS)

    def update(self) -> None:
        moving = self.moving()
        if self.shown is None and not moving:
            return                      # a question asked at rest says nothing of the robot
        if moving != self.shown:
            self.shown = moving
            self.box.setText(f'{MOVING_NOTE if moving else STOPPED_NOTE}\n\n{self.text}')

    def stop(self) -> None:
        self.timer.stop()


@dataclass
class StopActions:
    """
    What a window lets its guard do.

    :param stop: stops everything the window started (the robot decelerates and holds).
    :param moving: returns whether something the window started moves now.
    :param keep_work: records a close without asking: unsaved work gets a last backup.
    :param message: returns what the window's message area says now.
    :param say: shows a line in the window's message area (with a level).
    """

    stop: Callable[[], object]
    moving: Callable[[], bool]
    keep_work: Callable[[], None]
    message: Callable[[], str]
    say: Callable[[str, str], None]


class StopFirst(QObject):
    """
    The stops of one main window (see the module docstring).

    :param window: the main window; :param actions: what the window lets the guard do;
    :param stop_widgets: widgets that stay usable while a question is open (the STOP button).
    :param name: the program's name in the terminal's lines ('sweetie-motion console').
    """

    def __init__(self, window: QWidget, actions: StopActions,
                 stop_widgets: Sequence[QWidget], name: str) -> None:
        super().__init__(window)
        self.window = window
        self.actions = actions
        self.stop_widgets: List[QWidget] = list(stop_widgets)
        self.name = name
        #: the questions open now (innermost last)
        self.questions: List[QDialog] = []
        #: a close waits for this stop (the time it gives up waiting), None: none
        self._closing_by: Optional[float] = None
        #: how the awaited close ends: 'ask' (close, asking about unsaved work) or 'leave'
        self._close_kind = 'ask'
        self._interrupted = False
        #: the window leaves without asking (SIGTERM, a second Ctrl+C): closes ask nothing
        self.leaving = False
        self._last_key = None
        self._notifier: Optional[QSocketNotifier] = None
        QApplication.instance().installEventFilter(self)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._poll)
        self._timer.start(POLL_MS)

    # --- stopping -------------------------------------------------------------------------------

    def stop(self, why: str = '') -> None:
        """Stop everything the window started (a person's stop); say why in the terminal."""
        self.actions.stop()
        if why:     # after the stop: a terminal that is slow to take the line must not delay it
            self._tell(why)

    def _tell(self, text: str) -> None:
        print(f'{self.name}: {text}', file=sys.stderr, flush=True)

    def may_close(self) -> bool:
        """
        Return whether the window may close now (its closeEvent asks first).

        While something moves, it is stopped first and the window closes once the controller
        confirmed it; while a question is open, the window stays (the question is answered
        first).
        """
        if self.leaving:
            return True
        if self._closing_by is not None and self.actions.moving():
            return False
        if self.questions:
            if self.actions.moving():
                self.stop('closing: stopping the robot first')
            self.actions.say('answer the question first; then close again', 'warning')
            return False
        if self.actions.moving():
            self._await_stop('ask', 'closing: stopping the robot first')
            return False
        return True

    def _await_stop(self, kind: str, why: str) -> None:
        self._close_kind = kind
        self._closing_by = time.monotonic() + STOP_CONFIRM_TIMEOUT
        self.stop(why)

    def _poll(self) -> None:
        if self._closing_by is None:
            return
        moving = self.actions.moving()
        if moving and time.monotonic() < self._closing_by:
            return
        self._closing_by = None
        if moving:
            text = (f'no confirmation of the stop within {STOP_CONFIRM_TIMEOUT:g} s: the robot '
                    'may still be moving')
            self.actions.say(text, 'error')
            self._tell(text)
        else:
            self._tell(f'stopped first: {self.actions.message()}')
        if self._close_kind == 'leave':
            self.leave()
        else:
            QTimer.singleShot(0, self.window.close)

    def leave(self) -> None:
        """Leave now without asking: unsaved work gets a last backup (the next start offers it)."""
        self.actions.keep_work()
        self._tell('unsaved work, if any, is backed up: the next start offers it')
        self.leaving = True
        # the questions open end as cancelled (nothing they would do is done), then the window
        # closes as a window does, asking nothing
        for question in list(self.questions):
            question.reject()
        QTimer.singleShot(0, self.window.close)

    # --- questions ------------------------------------------------------------------------------

    def ask(self, dialog: QDialog) -> int:
        """
        Show ``dialog`` and return its result once answered, without blocking the stop.

        A QMessageBox returns the standard button clicked (Cancel or No when closed), any other
        dialog QDialog.Accepted or Rejected.
        """
        dialog.setWindowModality(Qt.NonModal)
        note = _MovingNote(dialog, self.actions.moving)
        loop = QEventLoop()
        dialog.finished.connect(loop.quit)
        self.questions.append(dialog)
        try:
            dialog.show()
            dialog.raise_()
            dialog.activateWindow()
            if dialog.isVisible():
                loop.exec_()
        finally:
            self.questions.remove(dialog)
            note.stop()
            if not self.questions and self._closing_by is None:
                self._interrupted = False   # a later Ctrl+C starts over
        if isinstance(dialog, QMessageBox):
            clicked = dialog.clickedButton()
            button = dialog.standardButton(clicked) if clicked is not None else \
                QMessageBox.NoButton
            if button == QMessageBox.NoButton:
                buttons = dialog.standardButtons()
                button = QMessageBox.Cancel if buttons & QMessageBox.Cancel else QMessageBox.No
            return int(button)
        return dialog.result()

    def question(self, title: str, text: str, buttons: int, default: int,
                 informative: str = '', name: str = 'question') -> int:
        """Show a QMessageBox with ``buttons``; return the standard button answered."""
        box = QMessageBox(QMessageBox.Question, title, text, buttons, self.window)
        box.setObjectName(name)
        if informative:
            box.setInformativeText(informative)
        box.setDefaultButton(default)
        return self.ask(box)

    def ask_file(self, caption: str, directory: str, filters: str, save: bool = False,
                 suffix: str = '') -> str:
        """
        Ask for a file to open (or, ``save``, to write); return its path ('' : none chosen).

        Qt's own dialog (not the desktop's), so that the stop stays reachable beside it; a file
        to be replaced is asked about by :meth:`question` (Qt's own question would be modal).

        :param suffix: added to a typed name without one when saving ('txt').
        """
        dialog = QFileDialog(self.window, caption, directory, filters)
        dialog.setObjectName('file_dialog')
        dialog.setOption(QFileDialog.DontUseNativeDialog, True)
        if save:
            dialog.setAcceptMode(QFileDialog.AcceptSave)
            dialog.setFileMode(QFileDialog.AnyFile)
            dialog.setOption(QFileDialog.DontConfirmOverwrite, True)
            if suffix:
                dialog.setDefaultSuffix(suffix)
        else:
            dialog.setFileMode(QFileDialog.ExistingFile)
        if self.ask(dialog) != QDialog.Accepted:
            return ''
        files = dialog.selectedFiles()
        path = files[0] if files else ''
        if save and path and suffix and not os.path.splitext(os.path.basename(path))[1] and \
                not os.path.isdir(path):
            # Qt's default suffix is not added to every typed name (a bare "wave" was saved
            # as "wave"): added here, before the question whether a file is replaced
            path = f'{path}.{suffix}'
        if save and path and os.path.exists(path):
            answer = self.question('Replace a file', f'{path} exists already. Replace it?',
                                   QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Cancel,
                                   name='replace_file_question')
            if answer != QMessageBox.Yes:
                self.actions.say(f'not saved: {os.path.basename(path)} kept as it was', 'info')
                return ''
        return path

    # --- keys and input -------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 -- Qt API
        """Stop on the stop keys anywhere; keep input from the window while a question is open."""
        kind = event.type()
        if kind == QEvent.KeyPress:
            key = event.key()
            if key in (STOP_KEY, Qt.Key_Escape) and not event.isAutoRepeat():
                # a key event travels up the widgets that ignore it: one stop per press
                press = (event.timestamp(), key)
                if press != self._last_key:
                    self._last_key = press
                    if key == STOP_KEY or self.actions.moving():
                        self.actions.stop()
                if key == STOP_KEY:
                    return True
        if kind == QEvent.MouseButtonPress and self._stop_beside_popup(event):
            return True
        if self.questions and kind in _INPUT_EVENTS and self._in_window(watched):
            return True
        return False

    def _stop_beside_popup(self, event: QEvent) -> bool:
        """
        Click the stop widget pressed while a popup (a menu, a combo box's list) is open.

        An open popup takes every press, and one outside it only closes it: STOP needed a
        second click. Return whether the press was on a stop widget (it is used up then).
        """
        if QApplication.activePopupWidget() is None or event.button() != Qt.LeftButton:
            return False
        where = event.globalPos()
        pressed = [w for w in self.stop_widgets if w.isVisible() and w.isEnabled() and
                   w.rect().contains(w.mapFromGlobal(where))]
        if not pressed:
            return False
        for _ in range(8):   # a submenu's popups close from the innermost
            popup = QApplication.activePopupWidget()
            if popup is None:
                break
            popup.close()
        if isinstance(pressed[0], QAbstractButton):
            pressed[0].click()
        else:
            self.actions.stop()
        return True

    def _in_window(self, watched: QObject) -> bool:
        """Return whether ``watched`` is a part of the window other than its stop widgets."""
        widget = watched
        if isinstance(watched, QShortcut):
            widget = watched.parentWidget()
        if not isinstance(widget, QWidget) or widget.window() is not self.window:
            return False
        return not any(w is widget or w.isAncestorOf(widget) for w in self.stop_widgets)

    # --- signals --------------------------------------------------------------------------------

    def handle_signals(self) -> None:
        """
        Take SIGINT and SIGTERM (the main thread; after rclpy.init, whose handlers they replace).

        Python runs a handler only when the interpreter runs: the signal also wakes Qt's loop
        through a socket (signal.set_wakeup_fd), so the stop starts at once.
        """
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        self._sockets = (reader, writer)
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        self._notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Read, self)
        self._notifier.activated.connect(self._drain_wakeups)
        signal.signal(signal.SIGINT, lambda *_: self.interrupted())
        signal.signal(signal.SIGTERM, lambda *_: self.terminated())

    def release(self) -> None:
        """Give SIGINT and SIGTERM back to Python's defaults (the window is gone)."""
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            for end in self._sockets:
                end.close()
            self._notifier = None

    def _drain_wakeups(self) -> None:
        try:
            while self._sockets[0].recv(64):
                pass
        except OSError:
            pass

    def interrupted(self) -> None:
        """Ctrl+C in the terminal: stop first; then close as the close button does."""
        if self._interrupted and (self.questions or self._closing_by is not None):
            self._tell('interrupted again: leaving without asking')
            self.stop()
            self.leave()
            return
        self._interrupted = True
        moving = self.actions.moving()
        if self.questions:
            if moving:
                self.stop('Ctrl+C: stopping the robot first')
            self._tell('Ctrl+C: a question is open in the window: answer it (Ctrl+C again '
                       'leaves without asking; unsaved work is backed up)')
            return
        if moving:
            self._await_stop('ask', 'Ctrl+C: stopping the robot first, then closing the '
                             'window')
            return
        self._tell('Ctrl+C: closing the window')
        QTimer.singleShot(0, self.window.close)

    def terminated(self) -> None:
        """SIGTERM: stop first; then leave without asking (unsaved work is backed up)."""
        if self.actions.moving():
            self._await_stop('leave', 'SIGTERM: stopping the robot first, then leaving')
            return
        self._tell(f'SIGTERM: leaving (pid {os.getpid()})')
        self.leave()


def release_window(window: QWidget) -> None:
    """
    Destroy a closed main window and all it holds now, while the QApplication still lives.

    Left to the garbage collector, a window in a reference cycle (its presenter's listeners
    hold it) can be destroyed after the application at the interpreter's exit, which crashes
    Qt (exit code -11 after a clean close).
    """
    from PyQt5 import sip
    stops = getattr(window, 'stops', None)
    if isinstance(stops, StopFirst):
        stops.release()
    if not sip.isdeleted(window):
        sip.delete(window)
