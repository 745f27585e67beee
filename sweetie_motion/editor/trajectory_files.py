"""
The editor's trajectories in the storage and in files, and the backups of unsaved work.

Save (asking before it replaces another stored trajectory), Load by name, Dump and read a
table file, the stored names, and the timestamped backups that make a killed editor lose
nothing (:class:`~sweetie_motion.editor.workspace.UnsavedBackups`). The storage answers through
the bridge's events (:meth:`TrajectoryFiles.listed`, :meth:`loaded`, :meth:`saved`). No Qt, no
rclpy.
"""

from pathlib import Path
from typing import Callable, List, Optional, Tuple

from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.requests import (
    ListTrajectories, LoadTrajectory, SaveTrajectory, TrajectoriesListed, TrajectoryLoaded,
    TrajectorySaved,
)
from sweetie_motion.editor.table_commands import TableCommands
from sweetie_motion.editor.workspace import dump_table, read_table, tidy_goal, Workspace
from sweetie_motion.gui.backups import UnsavedBackups
from sweetie_motion.gui.messages import ActionRefused, MessageBoard
from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList


class TrajectoryFiles:
    """
    Storage, files and backups of the edited table (see the module docstring).

    :param board: where it says what it did, or why not.
    :param send: hands a request to the bridge.
    :param document: the edited table and its name.
    :param table: the table's selection (cleared when a table comes in).
    :param workspace: backups and the tables behind stored names; None: none are written.
    :param backups: when the table is backed up (None: never).
    :param storage_up: returns whether the trajectory storage answers.
    """

    def __init__(self, board: MessageBoard, send: Callable[[object], None],
                 document: EditorDocument, table: TableCommands,
                 workspace: Optional[Workspace], backups: Optional[UnsavedBackups],
                 storage_up: Callable[[], bool]) -> None:
        self.board = board
        self.send = send
        self.document = document
        self.table = table
        self.workspace = workspace
        self.backups = backups
        self.storage_up = storage_up
        #: the stored names, sorted
        self.names: List[str] = []
        #: the last list failed (a busy or restarting storage): ask again at the next chance
        self.names_stale = False
        #: the save on its way: its name, the list sent, what follows it once stored
        self._saving: Optional[Tuple[str, WaypointsList, Optional[Callable[[], None]]]] = None

    def refresh_names(self) -> None:
        """Ask the storage for its names."""
        self.names_stale = False
        self.send(ListTrajectories())

    def load(self, name: str) -> bool:
        """Load a stored trajectory (confirm unsaved changes before calling)."""
        name = name.strip()
        try:
            check_name(name)
        except TrajectoryFileError as error:
            return self.board.refused(error)
        if not self.storage_up():
            return self.board.refused(ActionRefused('the trajectory storage is not connected'))
        self.send(LoadTrajectory(name))
        self.board.say(f'loading {name!r}...')
        return True

    def overwrites(self, name: str) -> bool:
        """Return whether saving under ``name`` replaces another stored trajectory."""
        name = name.strip()
        return name in self.names and name != self.document.stored_name

    def save(self, name: str, close_after: bool = False, overwrite: bool = False,
             then: Optional[Callable[[], None]] = None) -> bool:
        """
        Save the whole table (active rows; speed ignored) under ``name``.

        :param close_after: the window closes once the storage has it.
        :param overwrite: replace another stored trajectory of that name (ask first: a
            built-in one is shadowed by the copy until ``sweetie-motion delete NAME``).
        :param then: called once the storage has it and nothing was edited meanwhile (what
            the person asked for after "Save" in the unsaved-changes question: Load, New).
        """
        if close_after:
            then = self._close
        name = name.strip()
        try:
            check_name(name)
            if self.overwrites(name) and not overwrite:
                raise ActionRefused(f'{name!r} is stored already: confirm that it is replaced, '
                                    'or choose another name')
            goal = tidy_goal(self.document.waypoints.build_goal(whole=True))
            if goal.points[-1].time <= 0.0:
                raise ActionRefused('a motion needs time: the last active row is at 0 s (give '
                                    'it a time, or add a row after it)')
            if not self.storage_up():
                raise ActionRefused('the trajectory storage is not connected: Dump... to a file')
            if self._saving is not None:
                raise ActionRefused(f'saving {self._saving[0]!r} is on its way')
        except (TrajectoryFileError, WaypointError, ActionRefused) as error:
            return self.board.refused(ActionRefused(f'cannot save: {error}'))
        self._saving = (name, self.document.waypoints, then)
        self.send(SaveTrajectory(name, goal))
        self.board.say(f'saving {name!r}...')
        return True

    def dump(self, path: str) -> bool:
        """Write the whole table (disabled rows, markers, labels, actions) to a YAML file."""
        from sweetie_motion.storage.files import write_atomically
        try:
            write_atomically(path, dump_table(self.document.waypoints, self.document.name))
        except OSError as error:
            return self.board.refused(ActionRefused(f'cannot write {path}: {error}'))
        self.board.say(f'wrote {path}')
        return True

    def load_file(self, path: str) -> bool:
        """
        Read a table dump, a backup, a trajectory file or the old robot's JSON (unsaved).

        The table is named after the file, unless that name is stored already (the old
        robot's ``greeting.json`` and the built-in ``greeting``): then it gets a free name
        (``greeting_2``) and the message says why, so that Save does not aim at the stored one
        unnoticed.
        """
        try:
            waypoints, name = read_table(path)
        except WaypointError as error:
            return self.board.refused(ActionRefused(f'cannot load {error}'))
        wanted = name or Path(path).stem
        try:
            check_name(wanted)
        except TrajectoryFileError:
            wanted = ''
        given = self.free_name(wanted) if wanted else ''
        self.document.replace(waypoints, given, clean=False)
        self.table.select([])
        if given != wanted:
            self.board.say(f'loaded {path}: {len(waypoints)} rows, named {given!r}: {wanted!r} '
                           'is a stored trajectory (maybe a built-in one), which Save under '
                           'that name would replace', 'warning')
        else:
            self.board.say(f'loaded {path}: {len(waypoints)} rows')
        return True

    # --- backups and closing -----------------------------------------------------------------

    def pending_backup(self) -> Optional[str]:
        """Return the backup left by a session that ended with unsaved changes (or None)."""
        path = self.backups.pending() if self.backups is not None else None
        return str(path) if path is not None else None

    def describe_backup(self, path: str) -> str:
        """Return what a backup holds, for the question whether to restore it."""
        return self.backups.describe(Path(path)) if self.backups is not None else Path(path).name

    def restore_backup(self, path: str) -> bool:
        """Restore a backup (it counts as unsaved)."""
        try:
            waypoints, name = read_table(path)
        except WaypointError as error:
            return self.board.refused(ActionRefused(f'cannot restore {error}'))
        self.document.replace(waypoints, name, clean=False)
        self.board.say(f'restored the backup {path}')
        return True

    def ignore_backup(self) -> None:
        """Do not offer the pending backup again (it stays in the backup folder)."""
        if self.backups is not None:
            self.backups.ignore()
            self._say_backup_error()

    def backup_now(self) -> Optional[str]:
        """Write a backup of the table now; return its path (None: no workspace or failed)."""
        if self.backups is None:
            return None
        name = self.document.name
        path = self.backups.write(dump_table(self.document.waypoints, name), name,
                                  self.document.revision)
        self._say_backup_error()
        return str(path) if path is not None else None

    def back_up_if_due(self) -> None:
        """Back the table up if it has unsaved changes no backup holds and the period is over."""
        if self.backups is not None and self.backups.due(self.document.revision,
                                                         self.document.modified):
            self.backup_now()

    def _say_backup_error(self) -> None:
        error = self.backups.unsaid_error() if self.backups is not None else ''
        if error:
            self.board.say(f'backup failed: {error}', 'warning')

    def closing(self, discard: bool = False) -> None:
        """
        Record that the window closes.

        Nothing unsaved (or ``discard``) is a clean close: the backups are not offered at the
        next start. Unsaved changes kept on purpose (a close forced without asking) get a last
        backup.
        """
        if self.backups is None:
            return
        name = self.document.name
        self.backups.closing(self.document.modified and not discard, self.document.revision,
                             lambda: dump_table(self.document.waypoints, name), name)
        self._say_backup_error()

    def _safely(self, action: Callable[[], object]) -> None:
        try:
            action()
        except OSError as error:
            self.board.say(f'cannot write the editor workspace: {error}', 'warning')

    # --- the storage's answers ----------------------------------------------------------------

    def listed(self, event: TrajectoriesListed) -> None:
        if event.error:
            self.names_stale = True
            self.board.say(f'cannot list the stored trajectories: {event.error}', 'warning')
            return
        self.names = sorted(event.names)
        self.board.notify('names')

    def loaded(self, event: TrajectoryLoaded) -> None:
        if event.goal is None:
            self.board.refused(ActionRefused(f'load {event.name!r}: {event.error}'))
            return
        table = self.workspace.table_for(event.name, tidy_goal(event.goal)) \
            if self.workspace is not None else None
        try:
            waypoints = table if table is not None else WaypointsList.from_goal(event.goal)
        except WaypointError as error:
            self.board.refused(ActionRefused(f'load {event.name!r}: {error}'))
            return
        self.document.replace(waypoints, event.name)
        self.table.select([])
        extra = ' (with its labels and disabled rows)' if table is not None else ''
        self.board.say(f'loaded {event.name!r}: {len(waypoints)} rows{extra}')

    def saved(self, event: TrajectorySaved) -> None:
        saving, self._saving = self._saving, None
        if event.error:
            self.board.refused(ActionRefused(f'save {event.name!r} refused: {event.error}'))
            return
        saved = saving[1] if saving is not None else self.document.waypoints
        self.document.mark_saved(event.name, saved)
        workspace = self.workspace
        if workspace is not None:
            self._safely(lambda: workspace.save_table(event.name, saved))
        self.board.say(f'saved {event.name!r}')
        self.refresh_names()
        if saving is not None and saving[2] is not None and not self.document.modified:
            saving[2]()

    def _close(self) -> None:
        self.board.notify('close')

    def free_name(self, name: str) -> str:
        """Return ``name``, or ``name_2``, ``name_3``... when it is stored already."""
        if name not in self.names:
            return name
        base = name[:60]
        number = 2
        while f'{base}_{number}' in self.names:
            number += 1
        return f'{base}_{number}'
