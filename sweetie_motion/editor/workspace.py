"""
The editor's own files (no Qt, no ROS): timestamped backups and the tables behind stored names.

``<workspace>/backups/``
    ``<YYYYmmdd-HHMMSS-ffffff>_<name>.yaml``: the whole table (disabled rows, markers, labels,
    actions), written on a timer while there are unsaved changes; only the newest
    :attr:`Workspace.keep` are kept. ``clean_exit`` holds the stamp of the last close that left
    nothing unsaved: a newer backup means the editor ended with unsaved work (killed, crashed,
    or the changes were kept on purpose) and is offered for restore at the next start.
``<workspace>/tables/<name>.yaml``
    The table last saved under ``name``. A stored trajectory holds only the active rows' times
    and positions (a FollowJointTrajectory goal); Load takes the labels, disabled rows, markers
    and actions from here when this table still builds exactly the stored goal (otherwise the
    trajectory changed elsewhere and the stored goal wins).

Saved numbers are rounded to :data:`DECIMALS` decimals: poses read from joint_states and times
scaled by a factor carry float noise (-0.20000000000000012) that nobody wants in a file.
"""

from dataclasses import replace
from datetime import datetime
import math
from pathlib import Path
import re
from typing import Callable, Hashable, List, Optional, Tuple, Union

from sweetie_motion.storage.files import write_atomically
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList
import yaml

#: saved positions [rad] and times [s] are rounded to this many decimals (1 µrad, 1 µs)
DECIMALS = 6
#: the stamp format of backup file names (sorts as it reads)
STAMP = '%Y%m%d-%H%M%S-%f'


def tidy(value: float) -> float:
    """Return ``value`` rounded to :data:`DECIMALS` decimals (and -0.0 as 0.0)."""
    return round(float(value), DECIMALS) + 0.0


def tidy_goal(goal: TrajectoryGoal) -> TrajectoryGoal:
    """Return the goal with its times and positions rounded (see the module docstring)."""
    points = [TrajectoryPoint(tidy(p.time), [tidy(v) for v in p.positions],
                              [tidy(v) for v in p.velocities],
                              [tidy(v) for v in p.accelerations], list(p.effort))
              for p in goal.points]
    return replace(goal, points=points)


def tidy_document(document: dict) -> dict:
    """Return a :meth:`WaypointsList.to_document` document with its numbers rounded."""
    out = dict(document)
    out['waypoints'] = [dict(row, t=tidy(row['t']), positions=[tidy(v) for v in
                                                               row['positions']])
                        for row in document.get('waypoints') or []]
    return out


def dump_table(waypoints: WaypointsList, name: str = '') -> str:
    """Return the YAML text of a whole table (what Dump... and the backups write)."""
    document = tidy_document(waypoints.to_document())
    if name:
        document = {'name': name, **document}
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=100)


def read_table(path: Union[str, Path]) -> Tuple[WaypointsList, str]:
    """
    Read a table dump, a backup, a trajectory file or an old robot's goal file (JSON).

    :return: the list and the name written in the file ('' when none).
    :raises WaypointError: unreadable, or not a table or trajectory file (naming the path).
    """
    from sweetie_motion.storage.migration import goal_from_ros1, MigrationError
    try:
        with open(path, encoding='utf-8') as stream:
            document = yaml.safe_load(stream)   # JSON is YAML: the old robot's files too
        if isinstance(document, dict) and 'trajectory' in document and 'format' not in document:
            # the old robot's FollowJointTrajectory goal (its animations' JSON files)
            return (WaypointsList.from_goal(goal_from_ros1(document, str(path))),
                    Path(path).stem)
        waypoints = WaypointsList.from_document(document)
    except (OSError, yaml.YAMLError) as error:
        raise WaypointError(f'cannot read {path}: {error}') from None
    except (WaypointError, MigrationError) as error:
        raise WaypointError(f'{path}: {error}') from None
    name = document.get('name', '') if isinstance(document, dict) else ''
    return waypoints, name if isinstance(name, str) else ''


def same_goal(first: TrajectoryGoal, second: TrajectoryGoal) -> bool:
    """Return whether two goals have the same joints, times and positions (rounded)."""
    if first.joint_names != second.joint_names or len(first.points) != len(second.points):
        return False
    for a, b in zip(first.points, second.points):
        if tidy(a.time) != tidy(b.time) or [tidy(v) for v in a.positions] != \
                [tidy(v) for v in b.positions]:
            return False
    return True


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


class Workspace:
    """
    The editor's folder of backups and tables.

    :param directory: the folder (created on the first write).
    :param keep: how many backups to keep (the oldest go first).
    """

    def __init__(self, directory: Union[str, Path], keep: int = 20) -> None:
        self.directory = Path(directory).expanduser()
        self.keep = max(1, int(keep))
        #: the timestamped backups of the tables
        self.backup = BackupFolder(self.directory, '.yaml', self.keep)

    @property
    def backup_dir(self) -> Path:
        """Return the folder of the backups."""
        return self.backup.backup_dir

    @property
    def table_dir(self) -> Path:
        """Return the folder of the tables behind stored names."""
        return self.directory / 'tables'

    def backups(self) -> List[Path]:
        """Return the backup files, newest first."""
        return self.backup.files()

    # --- tables behind stored names ------------------------------------------------------------

    def save_table(self, name: str, waypoints: WaypointsList) -> Path:
        """
        Keep the whole table saved under ``name`` (labels, disabled rows, markers, actions).

        :raises OSError: the folder is not writable.
        """
        path = self.table_dir / f'{name}.yaml'
        self.table_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, dump_table(waypoints, name))
        return path

    def table_for(self, name: str, goal: TrajectoryGoal) -> Optional[WaypointsList]:
        """
        Return the table saved under ``name`` if it still builds exactly ``goal``.

        :return: None when there is none, it is unreadable, or the stored goal differs.
        """
        path = self.table_dir / f'{name}.yaml'
        if not path.is_file():
            return None
        try:
            waypoints, _ = read_table(path)
            built = tidy_goal(waypoints.build_goal(whole=True))
        except WaypointError:
            return None
        return waypoints if same_goal(built, goal) else None
