"""
The editor's message area and the topics its views listen to; no Qt, no rclpy.

Every part of the editor's presenter (:mod:`sweetie_motion.editor.presenter`, the table's
commands, teaching, files) says what it did or why it refused through one
:class:`MessageBoard`, and tells the views what changed through it.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional

from sweetie_motion.errors import SweetieMotionError

#: what listeners are told changed
TOPICS = ('document', 'selection', 'pose', 'links', 'execution', 'servos', 'message', 'names',
          'recording', 'close')


@dataclass
class Message:
    """
    What the message area shows.

    :param level: 'info', 'warning' or 'error'.
    :param row: the table row it is about (0-based), None when none.
    :param column: the table column it is about ('time', a joint), '' when none.
    """

    text: str
    level: str = 'info'
    row: Optional[int] = None
    column: str = ''


class EditorError(SweetieMotionError):
    """
    An action the editor refuses; the message says why.

    :param row: the table row concerned (0-based), None when none.
    :param column: the column concerned, '' when none.
    """

    def __init__(self, message: str, row: Optional[int] = None, column: str = '') -> None:
        self.row = row
        self.column = column
        super().__init__(message)


class MessageBoard:
    """The message area (one message: the newest) and the listeners of :data:`TOPICS`."""

    def __init__(self) -> None:
        self.message = Message('')
        self._listeners: List[Callable[[str], None]] = []

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of :data:`TOPICS` changes."""
        self._listeners.append(listener)

    def notify(self, topic: str) -> None:
        """Tell the listeners that ``topic`` changed."""
        for listener in list(self._listeners):
            listener(topic)

    def say(self, text: str, level: str = 'info', row: Optional[int] = None,
            column: str = '') -> None:
        """Show a message in the message area (it replaces the one before)."""
        self.message = Message(text, level, row, column)
        self.notify('message')

    def refused(self, error: SweetieMotionError) -> bool:
        """Say why an action is not done, with its row and column if any; return False."""
        self.say(str(error), 'error', getattr(error, 'row', None), getattr(error, 'column', ''))
        return False


def rows_count(count: int) -> str:
    """Return e.g. '1 row', '5 rows'."""
    return f'{count} row{"" if count == 1 else "s"}'


def rows_text(rows: List[int]) -> str:
    """Return table rows (0-based) as a person counts them: 'row 3', 'rows 2-4', 'rows 1, 5'."""
    if len(rows) == 1:
        return f'row {rows[0] + 1}'
    return f'rows {rows[0] + 1}-{rows[-1] + 1}' if list(rows) == list(
        range(rows[0], rows[-1] + 1)) else 'rows ' + ', '.join(str(r + 1) for r in rows)
