"""
The editor window's actions that need a question or a file dialog: new, load, save, accept.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

import os
from typing import Callable, Optional

from PyQt5.QtWidgets import QMessageBox
from sweetie_motion.editor.widgets import joint_groups
from sweetie_motion.gui.messages import rows_count
from sweetie_motion.gui.unsaved import offer_backup

#: what Load file... offers: our tables and trajectories, and the old robot's animations
LOAD_FILE_FILTERS = ('tables and trajectories (*.yaml *.yml *.json);;YAML (*.yaml *.yml);;'
                     "the old robot's animations (*.json);;all files (*)")


class WindowActions:
    """
    The editor window's actions that ask first.

    What a person asks of the window that needs a question or a file dialog first (unsaved
    changes, a recording to keep), and the controls that change settings.

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    def _ask_discard(self, what: str, then: Optional[Callable[[], object]] = None,
                     name: Optional[str] = None) -> bool:
        """
        Ask Save / Discard / Cancel about unsaved changes before ``what``; return whether to go on.

        :param then: what to do once Save stored the table (the asked action); without it, or
            without a name to save under, the question offers only Discard and Cancel.
        :param name: the name Save stores the table under (default: the name selector's).
        """
        if not self.presenter.document.modified:
            return True
        name = (self.name_combo.currentText() if name is None else name).strip()
        buttons = QMessageBox.Discard | QMessageBox.Cancel
        if then is not None and name:
            buttons |= QMessageBox.Save
        saved = f' (Save stores them as {name!r} first.)' if then is not None and name else \
            ' (To keep them, name the trajectory and Save first.)' if then is not None else ''
        answer = self.stops.question('Unsaved changes',
                                     f'The trajectory has unsaved changes. Discard them and '
                                     f'{what}?{saved}', buttons, QMessageBox.Cancel,
                                     name='discard_question')
        if answer == QMessageBox.Save:
            self.save(then=then, name=name)
        return answer == QMessageBox.Discard

    def _keep_or_give_up_recording(self) -> bool:
        """Ask before recorded keyframes that wait for Accept are given up; return whether to."""
        recording = self.presenter.teaching.recording
        if recording is None or recording.waypoints is None:
            return True
        answer = self.stops.question(
            'Recorded keyframes', f'The {len(recording.waypoints)} recorded keyframes are not '
            'accepted into the table yet. Discard them and close? (Cancel, then Accept '
            'keyframes in Record, keeps them.)', QMessageBox.Discard | QMessageBox.Cancel,
            QMessageBox.Cancel, name='recording_question')
        return answer == QMessageBox.Discard

    def new_trajectory(self) -> None:
        """Start an empty trajectory (after asking about unsaved changes)."""
        if self._ask_discard('start a new trajectory', self._new_trajectory):
            self._new_trajectory()

    def _new_trajectory(self) -> None:
        self.presenter.table.new_trajectory()
        self.name_combo.setEditText('')
        if not self.presenter.waypoints.joints:
            self.tabs.setCurrentIndex(1)

    def load(self) -> None:
        """Load the named trajectory from the storage node."""
        name = self.name_combo.currentText()
        # the selector holds the name to load: Save keeps the table under its own name
        if self._ask_discard(f'load {name.strip()!r}', lambda: self.presenter.files.load(name),
                             self.presenter.document.name):
            self.presenter.files.load(name)

    def save(self, close_after: bool = False,
             then: Optional[Callable[[], object]] = None, name: Optional[str] = None) -> None:
        """
        Save under the name in the selector; ask before another stored one is replaced.

        :param close_after: the window closes once the storage has it.
        :param then: what follows once the storage has it (see :meth:`_ask_discard`).
        :param name: the name to save under (default: the selector's).
        """
        if name is None:
            name = self.name_combo.currentText().strip() or (
                self.presenter.document.name if close_after else '')
        name = name.strip()
        overwrite = self.presenter.files.overwrites(name)
        if overwrite:
            answer = self.stops.question(
                'Replace a stored trajectory',
                f'A trajectory named {name!r} is stored already. Replace it with this table? '
                f'(If {name!r} is a built-in animation, your copy hides it until '
                f'`sweetie-motion delete {name}`.)', QMessageBox.Save | QMessageBox.Cancel,
                QMessageBox.Cancel, name='replace_question')
            if answer != QMessageBox.Save:
                self.presenter.say(f'not saved: {name!r} kept as it was')
                return
        self.presenter.files.save(name, overwrite=overwrite, close_after=close_after,
                                  then=then)

    def accept_recording(self) -> None:
        """Make the recorded keyframes the table; ask before the table's rows are replaced."""
        rows = self.presenter.teaching.replaces()
        replace = False
        if rows:
            recording = self.presenter.teaching.recording
            count = len(recording.waypoints) if recording is not None and \
                recording.waypoints is not None else 0
            answer = self.stops.question(
                'Replace the table',
                f'Accept replaces the {rows_count(rows)} of the table with the {count} '
                'recorded keyframes (Undo brings the rows back). Replace them?',
                QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Cancel,
                name='replace_table_question')
            if answer != QMessageBox.Yes:
                self.presenter.say('the recording is kept: Accept or Discard')
                return
            replace = True
        self.presenter.teaching.accept(replace=replace)

    def add_named_pose(self, name: str) -> None:
        """Insert the named pose ``name`` after the selected row (Insert pose's menu)."""
        if name not in self.poses:
            self.presenter.say(f'no named pose {name!r} (config/poses.yaml)', 'error')
            return
        self.presenter.table.add_named_pose(name, self.poses[name])

    def dump(self, path: Optional[str] = None) -> bool:
        """Write the whole table to a YAML file (asks for the name without ``path``)."""
        if path is None:
            path = self.stops.ask_file('Dump the table', '', 'YAML (*.yaml)', save=True,
                                       suffix='yaml')
            if not path:
                return False
        return self.presenter.files.dump(path)

    def load_file(self, path: Optional[str] = None) -> bool:
        """
        Read a table or trajectory file: ours (YAML) or the old robot's (JSON).

        Asks for the file without ``path``, then about unsaved changes.
        """
        if path is None:
            path = self.stops.ask_file('Load a table', '', LOAD_FILE_FILTERS)
            if not path:
                return False
        chosen = path
        if not self._ask_discard(f'load {os.path.basename(path)}',
                                 lambda: self.presenter.files.load_file(chosen)):
            return False
        return self.presenter.files.load_file(path)

    def restore_backup(self, path: Optional[str] = None) -> bool:
        """Restore a backup (asks for it without ``path``)."""
        if path is None:
            directory = str(self.presenter.workspace.backup_dir) \
                if self.presenter.workspace is not None else ''
            path = self.stops.ask_file('Restore a backup', directory, 'YAML (*.yaml)')
            if not path:
                return False
        if not self._ask_discard('restore the backup'):
            return False
        return self.presenter.files.restore_backup(path)

    def offer_backup(self) -> None:
        """Offer the backup a session with unsaved changes left behind (at the start)."""
        offer_backup(self.stops, 'The editor', self.presenter.files)

    def _speed_changed(self, value: int) -> None:
        self.presenter.table.set_speed(value)
        self.speed_label.setText(f'speed {value} %')

    def _apply_scale(self) -> None:
        if self.presenter.table.apply_scale():
            self.speed_slider.setValue(self.presenter.table.speed)

    def _servos_clicked(self, checked: bool) -> None:
        self.presenter.set_servos_off(checked)
        self.servo_indicator.setText('servos: switching...')
        # the button follows the answer (ServoState), not the click
        self.servos_button.blockSignals(True)
        self.servos_button.setChecked(bool(self.presenter.servos_off))
        self.servos_button.blockSignals(False)

    def _support_changed(self) -> None:
        self.presenter.set_support(self.publish_support_check.isChecked(),
                                   {leg: check.isChecked()
                                    for leg, check in self.leg_checks.items()})

    def _record(self) -> None:
        groups = dict(joint_groups(self.model))
        joints = [j for group, check in self.record_checks.items() if check.isChecked()
                  for j in groups.get(group, [])]
        self.presenter.teaching.start(joints, self.record_tolerance.value(),
                                      self.record_free_check.isChecked(),
                                      self.record_smoothing.value())
