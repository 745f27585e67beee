"""
Backups of a window's unsaved work, and whether the last close lost any; no Qt, no ROS.

The editor backs up its tables, the console its programs, the same way
(:class:`UnsavedBackups` over a :class:`BackupFolder`); the questions a window asks about them
are in :mod:`sweetie_motion.gui.unsaved`.
"""

from datetime import datetime
import math
from pathlib import Path
import re
from typing import Callable, Hashable, List, Optional, Union

from sweetie_motion.storage.files import write_atomically

#: the stamp format of backup file names (sorts as it reads)
STAMP = '%Y%m%d-%H%M%S-%f'


class BackupFolder:
    """
    Timestamped backups of a person's unsaved work, and whether the last close lost any.

    ``<folder>/<YYYYmmdd-HHMMSS-ffffff>_<name><suffix>`` (the newest :attr:`keep` are kept)
    and ``<folder>/../clean_exit`` (the stamp of the last close that left nothing unsaved). The
    editor keeps tables here, the console programs.

    :param directory: the window's folder (the backups go to its ``backups/``).
    :param suffix: the backups' file suffix ('.yaml', '.txt').
    :param keep: how many backups to keep (the oldest go first).
    """

    def __init__(self, directory: Union[str, Path], suffix: str = '.yaml',
                 keep: int = 20) -> None:
        self.directory = Path(directory).expanduser()
        self.suffix = suffix
        self.keep = max(1, int(keep))
        self._pattern = re.compile(r'(\d{8}-\d{6}-\d{6})_([A-Za-z0-9_]*)' + re.escape(suffix))

    @property
    def backup_dir(self) -> Path:
        """Return the folder of the backups."""
        return self.directory / 'backups'

    def write(self, text: str, name: str = '', now: Optional[datetime] = None) -> Path:
        """
        Write ``text`` as a new backup of ``name``; drop the oldest beyond :attr:`keep`.

        :return: the new file.
        :raises OSError: the folder is not writable.
        """
        stamp = (now or datetime.now()).strftime(STAMP)
        safe = re.sub(r'[^A-Za-z0-9_]', '_', name)[:64]
        path = self.backup_dir / f'{stamp}_{safe}{self.suffix}'
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text)
        for old in self.files()[self.keep:]:
            try:
                old.unlink()
            except OSError:
                pass
        return path

    def files(self) -> List[Path]:
        """Return the backup files, newest first."""
        if not self.backup_dir.is_dir():
            return []
        found = [p for p in self.backup_dir.iterdir() if self._pattern.fullmatch(p.name)]
        return sorted(found, key=lambda p: p.name, reverse=True)

    def stamp_of(self, path: Path) -> str:
        """Return the stamp of a backup file name ('' for another file)."""
        match = self._pattern.fullmatch(path.name)
        return match.group(1) if match else ''

    def describe(self, path: Path, untitled: str = 'an untitled trajectory') -> str:
        """Return e.g. "'wave' of 2025-01-31 14:05:09" for a backup file."""
        match = self._pattern.fullmatch(path.name)
        if not match:
            return path.name
        when = datetime.strptime(match.group(1), STAMP).strftime('%Y-%m-%d %H:%M:%S')
        return f'{repr(match.group(2)) if match.group(2) else untitled} of {when}'

    def mark_clean_exit(self, now: Optional[datetime] = None) -> None:
        """Record a close that left nothing unsaved: older backups are not offered again."""
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.directory / 'clean_exit', (now or datetime.now()).strftime(STAMP))

    def pending(self) -> Optional[Path]:
        """Return the newest backup written after the last clean close (None: nothing lost)."""
        backups = self.files()
        if not backups:
            return None
        try:
            clean = (self.directory / 'clean_exit').read_text().strip()
        except OSError:
            clean = ''
        return backups[0] if self.stamp_of(backups[0]) > clean else None


class UnsavedBackups:
    """
    When a window backs a person's unsaved work up, and what a close or a start does with it.

    The editor backs up its tables, the console its programs, the same way: the first tick
    after an edit that no backup holds writes one, then at most one every ``period``; a close
    that leaves nothing unsaved is clean (the backups are not offered again), any other close
    (kept edits, a close forced without asking) writes a last backup; the next start offers
    the newest backup written after the last clean close. The work is known by a *version*
    (the editor's document revision, the console's text): a version backed up already is not
    written again.

    :param folder: where the backups go.
    :param period: shortest time between two backups [s].
    :param clock: monotonic clock [s].
    :param untitled: how a backup of unnamed work is described.
    """

    def __init__(self, folder: BackupFolder, period: float, clock: Callable[[], float],
                 untitled: str) -> None:
        self.folder = folder
        self.period = float(period)
        self.clock = clock
        self.untitled = untitled
        self._last = -math.inf
        self._version: Hashable = None
        #: the last write error ('': none)
        self.error = ''
        self._said = ''

    def due(self, version: Hashable, modified: bool) -> bool:
        """Return whether the work at ``version`` is to be backed up now."""
        return modified and version != self._version and \
            self.clock() - self._last >= self.period

    def write(self, text: str, name: str, version: Hashable) -> Optional[Path]:
        """
        Back the work up now: ``text`` is what it is at ``version``.

        :return: the file, or None when it could not be written (:attr:`error` says why).
        """
        try:
            path = self.folder.write(text, name)
        except OSError as error:
            self.error = str(error)
            return None
        self.error = ''
        self._version = version
        self._last = self.clock()
        return path

    def closing(self, modified: bool, version: Hashable, text: Callable[[], str],
                name: str) -> None:
        """
        Record a close: clean when nothing is unsaved, else a last backup of what is kept.

        :param modified: unsaved edits are kept (edits given up count as saved).
        :param text: makes the backup's text (only called when one is written).
        """
        try:
            if not modified:
                self.folder.mark_clean_exit()
            elif version != self._version:
                self.write(text(), name, version)
        except OSError as error:
            self.error = str(error)

    def unsaid_error(self) -> str:
        """Return the write error once, when it is new ('': none, or said already)."""
        error = self.error if self.error != self._said else ''
        self._said = self.error
        return error

    def pending(self) -> Optional[Path]:
        """Return the backup a session left with unsaved work (None: nothing lost)."""
        return self.folder.pending()

    def describe(self, path: Path) -> str:
        """Return e.g. "'square' of 2026-12-02 07:10:00"."""
        return self.folder.describe(path, untitled=self.untitled)

    def ignore(self) -> None:
        """Do not offer the pending backup again (it stays in the folder)."""
        try:
            self.folder.mark_clean_exit()
        except OSError as error:
            self.error = str(error)
