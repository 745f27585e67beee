"""
The questions a window asks about unsaved work: Save / Discard / Cancel, and restore a backup.

The backups themselves (no Qt) are in :mod:`sweetie_motion.gui.backups`.
"""

from typing import Optional, Protocol

from PyQt5.QtWidgets import QMessageBox
from sweetie_motion.gui.stop_first import StopFirst


def ask_about_unsaved(stops: StopFirst, what: str, question: str) -> int:
    """
    Ask Save / Discard / Cancel about unsaved changes (Save is the default); return the answer.

    :param stops: the window's guard (the question leaves the stop reachable).
    :param what: what has them ("The untitled program"); :param question: the line below.
    """
    box = QMessageBox(QMessageBox.Warning, 'Unsaved changes', f'{what} has unsaved changes.',
                      QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, stops.window)
    box.setObjectName('close_question')
    box.setInformativeText(question)
    box.setDefaultButton(QMessageBox.Save)
    return stops.ask(box)


class RestorableWork(Protocol):
    """What :func:`offer_backup` needs of a window's presenter (the editor's, the console's)."""

    def pending_backup(self) -> Optional[str]:
        """Return the backup an earlier session left with unsaved work (None: none)."""

    def describe_backup(self, path: str) -> str:
        """Return what the backup holds."""

    def restore_backup(self, path: str) -> bool:
        """Take the backup as the unsaved work."""

    def ignore_backup(self) -> None:
        """Do not offer the backup again."""


def offer_backup(stops: StopFirst, window: str, presenter: RestorableWork) -> None:
    """
    Offer the backup an earlier session left with unsaved work, at a window's start.

    :param stops: the window's guard (the question leaves the stop reachable).
    :param window: 'The editor', 'The console' (the question names it).
    """
    path = presenter.pending_backup()
    if path is None:
        return
    answer = stops.question(
        'Restore unsaved work?', f'{window} ended with unsaved changes: restore the backup of '
        f'{presenter.describe_backup(path)}?', QMessageBox.Yes | QMessageBox.No,
        QMessageBox.Yes, name='restore_question')
    if stops.leaving:
        return              # the window leaves (SIGTERM): the backup is offered next time
    if answer == QMessageBox.Yes:
        presenter.restore_backup(path)
    else:
        presenter.ignore_backup()
