"""
The edited trajectory: a WaypointsList with undo/redo and the unsaved-changes state (no Qt).

Every edit runs through :meth:`EditorDocument.edit`: it is applied to a copy of the list and
refused as a whole when it breaks a rule (:class:`~sweetie_motion.trajectory.waypoints.
WaypointError`, the list stays as it was); an applied edit is one entry of the history (the
list before and after it). Listeners are told after the history has moved, so that "can
redo" is already true when they look (a listener told before the move saw Redo greyed).
"""

from dataclasses import dataclass
from typing import Callable, List, Optional

from sweetie_motion.trajectory.waypoints import WaypointsList


@dataclass
class _Step:
    label: str
    before: WaypointsList
    after: WaypointsList


class EditorDocument:
    """
    The trajectory being edited, its name, its history and whether it is saved.

    :param limit: the most edits kept for undo.
    """

    def __init__(self, limit: int = 200) -> None:
        self.waypoints = WaypointsList()
        self.name = ''
        #: the stored trajectory this list came from or was saved as ('' : new, a file, a backup)
        self.stored_name = ''
        self.limit = limit
        self._steps: List[_Step] = []
        self._index = 0            # steps[:index] are done
        # the list object that is saved: lists are never changed in place (an edit works on a
        # copy), so identity tells whether the shown list is the saved one
        self._clean: Optional[WaypointsList] = self.waypoints
        #: grows with every change of the list (edit, undo, redo, replace): for backups
        self.revision = 0
        #: grows when another list replaces the edited one (New, Load, a file, a backup)
        self.generation = 0
        self._listeners: List[Callable[[], None]] = []

    # --- listeners -----------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every change (edit, undo, redo, replace, save)."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    # --- edits ---------------------------------------------------------------------------------

    def edit(self, label: str, change: Callable[[WaypointsList], object]) -> object:
        """
        Apply ``change`` to the list as one undoable edit.

        :param label: what the edit does ('time of row 3'), shown by Undo and Redo.
        :param change: called with a copy of the list; it may call several list methods.
        :return: what ``change`` returned.
        :raises WaypointError: the edit breaks a rule; nothing changed.
        """
        before = self.waypoints
        working = before.copy()
        result = change(working)
        working.check()
        del self._steps[self._index:]
        self._steps.append(_Step(label, before, working))
        if len(self._steps) > self.limit:
            del self._steps[0]
        self._index = len(self._steps)
        self._set(working)
        return result

    def _set(self, waypoints: WaypointsList) -> None:
        self.waypoints = waypoints
        self.revision += 1
        self._changed()

    def undo(self) -> bool:
        """Undo the last edit; return False when there is none."""
        if not self.can_undo:
            return False
        self._index -= 1
        self._set(self._steps[self._index].before)
        return True

    def redo(self) -> bool:
        """Redo the last undone edit; return False when there is none."""
        if not self.can_redo:
            return False
        self._index += 1
        self._set(self._steps[self._index - 1].after)
        return True

    @property
    def can_undo(self) -> bool:
        """Return whether there is an edit to undo."""
        return self._index > 0

    @property
    def can_redo(self) -> bool:
        """Return whether there is an undone edit to redo."""
        return self._index < len(self._steps)

    @property
    def undo_label(self) -> str:
        """Return what Undo would undo ('' when nothing)."""
        return self._steps[self._index - 1].label if self.can_undo else ''

    @property
    def redo_label(self) -> str:
        """Return what Redo would redo ('' when nothing)."""
        return self._steps[self._index].label if self.can_redo else ''

    def replace(self, waypoints: WaypointsList, name: str, clean: bool = True) -> None:
        """
        Start over with another list (New, Load, a restored backup): the history is cleared.

        :param clean: the list is what is stored under ``name`` (False: a file or a backup,
            which counts as unsaved).
        """
        self._steps.clear()
        self._index = 0
        self.generation += 1
        self._clean = waypoints if clean else None
        self.name = name
        self.stored_name = name if clean else ''
        self._set(waypoints)

    # --- saved state ---------------------------------------------------------------------------

    @property
    def modified(self) -> bool:
        """Return whether there are unsaved changes."""
        return self._clean is not self.waypoints

    def mark_saved(self, name: str, saved: Optional[WaypointsList] = None) -> None:
        """
        Record that the list was saved under ``name``.

        :param saved: :attr:`waypoints` when the save was sent (edits made while it was on
            the way stay unsaved); default: the list now.
        """
        self.name = name
        self.stored_name = name
        self._clean = self.waypoints if saved is None else saved
        self._changed()
