"""
The editor window's redrawing: what each of the presenter's topics redraws.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

import time
from typing import Callable, Dict, List, Optional

from PyQt5.QtCore import QEventLoop, QItemSelectionModel
from PyQt5.QtWidgets import QApplication, QTableWidgetItem
from sweetie_motion.editor.models import FIXED
from sweetie_motion.editor.play_head import table_key
from sweetie_motion.gui.robot_view import RobotView3D
from sweetie_motion.gui.widgets import busy_cursor
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX

#: the robot view of the current pose is redrawn at most this often [s]
ROBOT_VIEW_PERIOD = 0.1


class WindowRedraw:
    """
    The editor window's views of the presenter's state.

    The views of the presenter's state: the table, the selection, the plot, the robot view,
    the links, the execution, the servos, the message, the names and the recording.

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    def _changed(self, topic: str) -> None:
        self._views[topic]()

    def busy(self, what: str, action: Callable[[], object]) -> None:
        """
        Run an action that takes a while (Fit to limits: 1-2 s on 100 rows) under a busy sign.

        ``what`` is shown in the message line and the cursor is the busy one until it ends;
        clicks meanwhile wait in Qt's queue.
        """
        self.presenter.say(what)
        QApplication.processEvents(QEventLoop.ExcludeUserInputEvents)   # show it first
        with busy_cursor():
            action()

    def views_pending(self) -> bool:
        """Return whether the plot is still to be drawn (or shown) after a change."""
        return self._plot_due or self.trajectory_plot.drawing

    def draw_views(self) -> None:
        """Have the plot drawn if a change asked for it (in its worker: nothing waits)."""
        self._views_due.stop()
        if not self._plot_due:
            return
        self._plot_due = False
        self._draw_plot()

    def _show_document(self) -> None:
        p = self.presenter
        current = self.table.currentIndex()
        # a reset (rows that came or went) scrolls the view home: it stays where it was, and
        # the selection is scrolled to only if it is out of sight
        scrolled = (self.table.horizontalScrollBar().value(),
                    self.table.verticalScrollBar().value())
        self._syncing = True   # a reset empties the view's selection: keep the presenter's
        try:
            self.table_model.refresh()
            self.tolerance_model.refresh()
            self._hide_support_columns()
            if p.document.generation == self._shown_generation:
                self.table.horizontalScrollBar().setValue(scrolled[0])
                self.table.verticalScrollBar().setValue(scrolled[1])
        finally:
            self._syncing = False
        replaced = p.document.generation != self._shown_generation
        if replaced:
            # another motion (New, Load, a file, a backup): the play head starts over
            self._shown_generation = p.document.generation
            self._end_scrub()
        else:
            self._keep_play_head_in_span()
        self._show_selection(current.column() if current.isValid() else 0)
        self.setWindowTitle(p.title)
        self.modified_label.setText('unsaved changes' if p.document.modified else '')
        for widget in (self.undo_button, self.undo_action):
            widget.setEnabled(p.document.can_undo)
            widget.setToolTip(f'undo {p.document.undo_label} (Ctrl+Z)')
        for widget in (self.redo_button, self.redo_action):
            widget.setEnabled(p.document.can_redo)
            widget.setToolTip(f'redo {p.document.redo_label} (Ctrl+Y)')
        self.goal_time.blockSignals(True)
        self.goal_time.setValue(p.waypoints.goal_time_tolerance)
        self.goal_time.blockSignals(False)
        if p.document.name != self._shown_name or replaced:
            self._shown_name = p.document.name
            if p.document.name or replaced:
                self.name_combo.setEditText(p.document.name)
        self._fill_joint_tree()
        self.sliders.show_animation_joints(p.waypoints.joints)
        self._show_plot()
        self._request_checks()

    def _show_selection(self, column: Optional[int] = None) -> None:
        rows = self.presenter.table.selection
        model = self.table.selectionModel()
        self._syncing = True
        try:
            model.clearSelection()
            for row in rows:
                model.select(self.table_model.index(row, 0),
                             QItemSelectionModel.Select | QItemSelectionModel.Rows)
            if rows:
                keep = column if column is not None else max(self.table.currentIndex().column(),
                                                             0)
                model.setCurrentIndex(self.table_model.index(rows[-1], keep),
                                      QItemSelectionModel.NoUpdate)
                self.table.scrollTo(self.table_model.index(rows[-1], keep))
        finally:
            self._syncing = False
        self._show_plot()
        self._show_robot(force=True)

    def _selection_changed(self, *args) -> None:
        if self._syncing:
            return
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        self.presenter.table.select(rows)

    def _show_plot(self) -> None:
        self._plot_due = True
        self._views_due.start()

    def _draw_plot(self) -> None:
        p = self.presenter
        row = p.table.selected_row
        cursor = p.waypoints.waypoints[row].time if row is not None else None
        self.trajectory_plot.show_trajectory(p.waypoints, self._plotted_joints(),
                                             interpolation=p.interpolation, cursor=cursor)

    def _plotted_joints(self) -> List[str]:
        """Return the joints to plot: the selected columns', else the current one's first."""
        joints = self.presenter.waypoints.joints
        model = self.table.selectionModel()
        columns = sorted(index.column() for index in model.selectedColumns())
        current = self.table.currentIndex()
        if not columns and current.isValid():
            columns = [current.column()]
        chosen = [joints[c - FIXED] for c in columns if FIXED <= c < FIXED + len(joints)]
        # then the table's order: the plot keeps its joints while the values change
        return chosen + [j for j in joints if j not in chosen]

    def _show_robot(self, force: bool = False) -> None:
        p = self.presenter
        now = time.monotonic()
        # a selected row is shown, else the play head's pose, except while a motion runs: then
        # the robot, as it moves
        scrubbing = self.play_head_time is not None and p.execution is None
        showing_row = (p.table.selected_row is not None or scrubbing) and \
            p.execution is None and not self._live
        if not force and (showing_row or now - self._robot_view_time < ROBOT_VIEW_PERIOD):
            return
        self._robot_view_time = now
        # the QPainter view takes the pose at once: a frame costs about a millisecond
        pose = dict(p.current_pose)
        row = p.table.selected_row if p.execution is None and not self._live else None
        if row is not None:
            pose.update(p.waypoints.pose(row))
        elif scrubbing:
            pose.update(self._play_head.pose_at(p.waypoints, self.play_head_time,
                                                p.interpolation))
        title = (f'row {row + 1}' if row is not None else
                 f'play head: t = {self.play_head_time:.2f} s' if scrubbing else
                 'current pose' if p.current_pose
                 else 'no joint_states: the model at zero, not the robot')
        if isinstance(self.robot_view, RobotView3D):
            self.robot_view.set_pose({j: v for j, v in pose.items()
                                      if not j.startswith(SUPPORT_PREFIX)}, title=title)
            # the checks' marks of the moment shown: a row's time or the play head's
            moment = (p.waypoints.waypoints[row].time if row is not None else
                      self.play_head_time if scrubbing else None)
            checked = self.table_checker.result if self.table_checker is not None else None
            self.robot_view.set_marks(checked.marks_at(moment) if checked is not None and
                                      moment is not None else None)
            self.robot_view.set_hooves(self._hooves_at(row, moment))
            # after Simulate, a moment of the table shows the pony where the physics had it;
            # the robot itself is drawn where the physics robot has it (tilted, fallen)
            if moment is not None:
                self.robot_view.set_base(self.physics_line.base_at(
                    table_key(p.waypoints, p.interpolation), moment)
                    if self.physics_line is not None else None)
            else:
                self.robot_view.set_base(p.base_pose)
            self.robot_view.redraw()

    def _hooves_at(self, row: Optional[int], moment: Optional[float]
                   ) -> Optional[Dict[str, bool]]:
        """
        Return the hooves the 3D view marks, as contact link -> supports.

        The shown row's support (at the play head, the row's before it); None: the robot is
        shown, or the table has no support columns.
        """
        waypoints = self.presenter.waypoints
        if self.model is None or moment is None or not len(waypoints):
            return None
        if row is None:
            before = [k for k in waypoints.active_indices()
                      if waypoints.waypoints[k].time <= moment + 1e-9]
            row = before[-1] if before else None
        if row is None:
            return None
        hooves = {}
        for leg, _, on in self.table_model.support(row):
            contact = self.model.get_chain_property(leg, 'contact') \
                if leg in self.model.list_chains() else None
            if contact and on is not None:
                hooves[str(contact)] = on
        return hooves or None

    def _show_pose(self) -> None:
        first = self.joint_tree.topLevelItemCount() == 0
        self.sliders.show_pose(self.presenter.current_pose)
        if first:
            self._fill_joint_tree()
        self._show_robot()

    def _show_links(self) -> None:
        p = self.presenter
        self.links_panel.show_links(p.links)
        self._show_execution()
        self.save_button.setEnabled(p.links.get('storage', False))
        self.load_button.setEnabled(p.links.get('storage', False))
        self.servos_button.setEnabled(p.links.get('servos', False))
        self._show_servos()

    def _show_execution(self) -> None:
        p = self.presenter
        running = p.execution is not None
        if running != self._robot_follows:
            # the 3D view follows the robot while a motion runs, then shows the row again
            self._robot_follows = running
            self._show_robot(force=True)
        self.execute_button.setEnabled(p.can_execute)
        # a table the checks or the physics refuse: Execute is red and says why
        self.execute_button.setStyleSheet('QPushButton { color: #c00000; font-weight: bold; }'
                                          if p.refusal else '')
        self.execute_button.setToolTip(f'refused: {p.refusal}' if p.refusal else
                                       'play the start..end range on the robot')
        self.anyway_check.setVisible(bool(p.refusal) and p.virtual_robot)
        self.stop_button.setEnabled(p.running)
        execution = p.execution
        if execution is None:
            self.result_label.setText(p.last_outcome.split(':')[0])
            self.result_label.setToolTip(p.last_outcome)
        elif execution.stopping:
            self.result_label.setText('stopping...')
        elif execution.accepted:
            self.result_label.setText(f'running {execution.progress:.1f} / '
                                      f'{execution.duration:.1f} s')
        else:
            self.result_label.setText('running...')

    def _show_servos(self) -> None:
        p = self.presenter
        off = p.servos_off
        if off is None:
            text, color = 'servos: ?', 'gray'
        else:
            chains = sorted(p.free_chains or ())
            which = ('' if not chains else f' ({chains[0]})' if len(chains) == 1 else
                     f' ({len(chains)} chains)')
            text, color = (f'servos{which}: OFF', 'red') if off else ('servos: ON', 'green')
        self.servo_indicator.setText(text)
        self.servo_indicator.setStyleSheet(f'color: {color}')
        freed = (f'off: {", ".join(sorted(p.free_chains))} (pose by hand)\n'
                 if off and p.free_chains else '')
        self.servo_indicator.setToolTip(freed + p.servo_message)
        self.servos_button.blockSignals(True)
        self.servos_button.setChecked(bool(off))
        self.servos_button.setText('Servos on' if off else 'Servos off')
        self.servos_button.blockSignals(False)

    def _show_message(self) -> None:
        message = self.presenter.message
        self.message_label.show_message(message.text, message.level)
        if message.level == 'error' and message.row is not None and \
                message.row < len(self.presenter.waypoints):
            column = 0
            try:
                column = self.table_model.column_of(message.column) if message.column else 0
            except ValueError:
                column = 0
            self.table.scrollTo(self.table_model.index(message.row, column))

    def _show_names(self) -> None:
        current = self.name_combo.currentText()
        self.name_combo.blockSignals(True)
        self.name_combo.clear()
        self.name_combo.addItems(self.presenter.files.names)
        self.name_combo.setEditText(current)
        self.name_combo.blockSignals(False)

    def _show_recording(self) -> None:
        recording = self.presenter.teaching.recording
        active = recording is not None and recording.fit is None
        waiting = recording is not None and recording.fit is not None
        self.record_button.setEnabled(recording is None)
        self.stop_record_button.setEnabled(active)
        self.accept_record_button.setEnabled(waiting)
        self.discard_record_button.setEnabled(waiting)
        if not waiting:
            self.record_table.setRowCount(0)
            self.record_summary.setText('recording... move the robot' if active else '')
            return
        fit = recording.fit
        joints = recording.waypoints.joints
        self.record_summary.setText(fit.describe(joints))
        self.record_table.setRowCount(len(joints))
        for row, joint in enumerate(joints):
            for column, text in enumerate((joint, f'{fit.max_deviation[row]:.4f}',
                                           f'{fit.tolerance[row]:.3f}',
                                           f'{fit.noise[row]:.4f}')):
                self.record_table.setItem(row, column, QTableWidgetItem(text))

    def _show_close(self) -> None:
        self.close()
