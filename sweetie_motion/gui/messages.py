"""
The windows' one message vocabulary and their message board; no Qt, no rclpy.

The editor and the console say what an action did, or why they refused it, alike: a
:class:`Message` on a :class:`MessageBoard`, a refusal raised as :class:`ActionRefused`. The
editor's messages point at a table cell (``row``, ``column``), the console's at a program line
(``line``). The board also tells a presenter's listeners what changed (the presenter's topics).
"""

from dataclasses import dataclass
from typing import Callable, List, Optional

from sweetie_motion.errors import SweetieMotionError


@dataclass
class Message:
    """
    What the message area shows.

    :param level: 'info', 'warning' or 'error'.
    :param row: the editor's table row it is about (0-based), None when none.
    :param column: the editor's table column it is about ('time', a joint), '' when none.
    :param line: the console's program line it is about (1-based), 0 when none.
    """

    text: str
    level: str = 'info'
    row: Optional[int] = None
    column: str = ''
    line: int = 0


class ActionRefused(SweetieMotionError):
    """
    An action a window refuses; the message says why.

    :param row: the editor's table row concerned (0-based), None when none.
    :param column: the editor's table column concerned, '' when none.
    :param line: the console's program line concerned (1-based), 0 when none.
    """

    def __init__(self, message: str, row: Optional[int] = None, column: str = '',
                 line: int = 0) -> None:
        self.row = row
        self.column = column
        self.line = int(line)
        super().__init__(message)


class MessageBoard:
    """
    The message area (one message: the newest), its log, and the presenter's listeners.

    :param kept: how many of the newest messages :attr:`log` keeps (0: no log).
    """

    def __init__(self, kept: int = 0) -> None:
        self.message = Message('')
        self.kept = int(kept)
        #: the newest messages said, oldest first (at most :attr:`kept`)
        self.log: List[Message] = []
        self._listeners: List[Callable[[str], None]] = []

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of the presenter's topics changes."""
        self._listeners.append(listener)

    def notify(self, topic: str) -> None:
        """Tell the listeners that ``topic`` changed."""
        for listener in list(self._listeners):
            listener(topic)

    def say(self, text: str, level: str = 'info', row: Optional[int] = None,
            column: str = '', line: int = 0) -> None:
        """Show a message in the message area (it replaces the one before; the log keeps it)."""
        self.message = Message(text, level, row, column, line)
        if self.kept:
            self.log.append(self.message)
            del self.log[:-self.kept]
        self.notify('message')

    def clear(self) -> None:
        """Empty the message area (the log keeps what was said)."""
        self.message = Message('')
        self.notify('message')

    def refused(self, error: SweetieMotionError) -> bool:
        """Say why an action is not done, with its row, column or line if any; return False."""
        self.say(str(error), 'error', getattr(error, 'row', None), getattr(error, 'column', ''),
                 getattr(error, 'line', 0))
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
