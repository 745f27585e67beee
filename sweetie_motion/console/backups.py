"""
The console's backups of a motion program with unsaved edits, as the editor keeps its tables.

Every ``period`` seconds while the program has edits that are in no file, its text is written
as ``<workspace>/backups/<stamp>_<name>.txt`` (the newest ``keep`` stay); a close that leaves
nothing unsaved marks a clean exit; otherwise (the console killed, a crash, the power gone) the
newest backup is offered at the next start. No Qt, no rclpy.
"""

from pathlib import Path
from typing import Callable, Optional

from sweetie_motion.editor.workspace import BackupFolder

#: the default folder of the console's backups
DEFAULT_WORKSPACE = '~/.local/share/sweetie_motion/console'


class ProgramBackups:
    """
    When to back a program up, and what a close or a start does with the backups.

    :param folder: where the backups go.
    :param period: shortest time between two backups [s].
    :param clock: monotonic clock [s].
    """

    def __init__(self, folder: BackupFolder, period: float,
                 clock: Callable[[], float]) -> None:
        self.folder = folder
        self.period = float(period)
        self.clock = clock
        self._last = clock()
        self._backed_up: Optional[str] = None
        #: the last write error ('' : none), said once
        self.error = ''

    def due(self, text: str, modified: bool) -> bool:
        """Return whether ``text`` is to be backed up now."""
        return modified and text != self._backed_up and \
            self.clock() - self._last >= self.period

    def write(self, text: str, name: str) -> Optional[Path]:
        """
        Back ``text`` up now.

        :return: the file, or None when it could not be written (:attr:`error` says why).
        """
        try:
            path = self.folder.write(text, name)
        except OSError as error:
            self.error = str(error)
            return None
        self.error = ''
        self._backed_up = text
        self._last = self.clock()
        return path

    def closing(self, text: str, name: str, modified: bool) -> None:
        """
        Record a close.

        Clean when nothing is unsaved (edits given up count as saved), else a last backup of
        what is kept unsaved.
        """
        try:
            if not modified:
                self.folder.mark_clean_exit()
            elif text != self._backed_up:
                self.write(text, name)
        except OSError as error:
            self.error = str(error)

    def pending(self) -> Optional[Path]:
        """Return the backup a session left with unsaved edits (None: nothing lost)."""
        return self.folder.pending()

    def describe(self, path: Path) -> str:
        """Return e.g. "'square' of 2026-12-02 07:10:00"."""
        return self.folder.describe(path, untitled='an untitled program')

    def ignore(self) -> None:
        """Do not offer the pending backup again (it stays in the folder)."""
        try:
            self.folder.mark_clean_exit()
        except OSError as error:
            self.error = str(error)
