"""
The edited trajectory: a WaypointsList with undo/redo and the unsaved-changes state.

Every edit runs through :meth:`EditorDocument.edit`: it is applied to the list, refused as a
whole when it breaks a rule (the message goes to the user), and pushed on the undo stack as a
before/after snapshot. The Qt table models only read the list and call edit().
"""

from typing import Callable, Optional

from PyQt5.QtCore import pyqtSignal, pyqtSlot, QObject
from PyQt5.QtWidgets import QUndoCommand, QUndoStack
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList


class _Snapshot(QUndoCommand):
    """An edit as the list before and after it."""

    def __init__(self, document: 'EditorDocument', label: str, before: WaypointsList,
                 after: WaypointsList) -> None:
        super().__init__(label)
        self._document = document
        self._before = before
        self._after = after

    def redo(self) -> None:
        self._document._set(self._after.copy())

    def undo(self) -> None:
        self._document._set(self._before.copy())


class EditorDocument(QObject):
    """The trajectory being edited."""

    #: the list changed (an edit, undo, redo, load)
    changed = pyqtSignal()
    #: an edit was refused: the reason
    refused = pyqtSignal(str)

    def __init__(self) -> None:
        super().__init__()
        self.waypoints = WaypointsList()
        self.name = ''
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)

    @pyqtSlot(bool)
    def _clean_changed(self, clean: bool) -> None:
        # a bound slot (not a lambda): Qt drops the connection when the document goes away
        self.changed.emit()

    def _set(self, waypoints: WaypointsList) -> None:
        self.waypoints = waypoints
        self.changed.emit()

    def edit(self, label: str, change: Callable[[WaypointsList], Optional[object]]) -> bool:
        """
        Apply ``change`` to the list as one undoable edit.

        :return: True when applied; False when refused (:attr:`refused` carries the reason and
            the list is as before).
        """
        before = self.waypoints.copy()
        try:
            change(self.waypoints)
        except WaypointError as error:
            self.waypoints = before
            self.refused.emit(str(error))
            self.changed.emit()
            return False
        after = self.waypoints.copy()
        self.undo_stack.push(_Snapshot(self, label, before, after))
        return True

    def replace(self, waypoints: WaypointsList, name: str, clean: bool = True) -> None:
        """Start over with another list (load): the undo history is cleared."""
        self.undo_stack.clear()
        self.name = name
        self._set(waypoints)
        if clean:
            self.undo_stack.setClean()

    @property
    def modified(self) -> bool:
        """Return whether there are unsaved changes."""
        return not self.undo_stack.isClean()

    def mark_saved(self, name: str) -> None:
        """Record that the list was saved under ``name``."""
        self.name = name
        self.undo_stack.setClean()
        self.changed.emit()
