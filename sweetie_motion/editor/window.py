"""
The trajectory editor's main window (R-EDIT-1..8): it only builds widgets and wires them.

The model is the document's WaypointsList (undoable edits); ROS goes through the bridge; poses
arrive in a buffer that a QTimer drains. Every widget a person (or a test) uses has an
objectName.
"""

import math
from pathlib import Path
from typing import Dict, List, Optional

from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
    QGroupBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QMainWindow, QMessageBox,
    QPushButton, QSlider, QSplitter, QTableView, QTabWidget, QVBoxLayout, QWidget,
)
from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.models import ToleranceTableModel, WaypointTableModel
from sweetie_motion.editor.views import RobotView, TrajectoryPlot
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import approach_time, SUPPORT_PREFIX
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList
import yaml

SPEED_STEPS = 100  # the speed slider: 25..200 % of the speed


class EditorWindow(QMainWindow):
    """
    The editor window.

    :param bridge: the ROS side (an :class:`~sweetie_motion.editor.bridge.EditorBridge`).
    :param model: the robot model (limits, robot view); None works without them.
    :param poses: named poses {name: {joint: position}}.
    """

    def __init__(self, bridge, model: Optional[RobotModel] = None,
                 poses: Optional[Dict[str, Dict[str, float]]] = None) -> None:
        super().__init__()
        self.bridge = bridge
        self.model = model
        self.poses = poses or {}
        self.document = EditorDocument()
        self.current_pose: Dict[str, float] = {}
        self.support_legs: List[str] = list(bridge.parameter('legs'))
        self.setWindowTitle('sweetie_motion trajectory editor')
        self._build()
        self._wire()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._drain)
        self._timer.start(100)
        self._support_timer = QTimer(self)
        self._support_timer.timeout.connect(self._publish_support)
        self._support_timer.start(500)
        self._refresh_everything()

    # --- construction --------------------------------------------------------------------------

    def _button(self, text: str, name: str, tip: str = '') -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        if tip:
            button.setToolTip(tip)
        return button

    def _build(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        # trajectory selector
        top = QHBoxLayout()
        top.addWidget(QLabel('Trajectory:'))
        self.name_combo = QComboBox()
        self.name_combo.setObjectName('trajectory_name')
        self.name_combo.setEditable(True)
        self.name_combo.setMinimumWidth(200)
        top.addWidget(self.name_combo)
        self.load_button = self._button('Load', 'load_button', 'load from the storage node')
        self.save_button = self._button('Save', 'save_button', 'save to the storage node')
        self.refresh_button = self._button('Refresh', 'refresh_button', 'list stored names')
        self.dump_button = self._button('Dump...', 'dump_button', 'write the table to a file')
        self.load_file_button = self._button('Load file...', 'load_file_button',
                                             'read a table or trajectory file')
        self.undo_button = self._button('Undo', 'undo_button')
        self.redo_button = self._button('Redo', 'redo_button')
        for widget in (self.load_button, self.save_button, self.refresh_button,
                       self.dump_button, self.load_file_button, self.undo_button,
                       self.redo_button):
            top.addWidget(widget)
        self.modified_label = QLabel('')
        self.modified_label.setObjectName('modified_label')
        top.addWidget(self.modified_label)
        top.addStretch(1)
        layout.addLayout(top)

        splitter = QSplitter(Qt.Horizontal)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._build_waypoints_tab(), 'Waypoints')
        self.tabs.addTab(self._build_setup_tab(), 'Setup')
        splitter.addWidget(self.tabs)
        views = QSplitter(Qt.Vertical)
        self.trajectory_plot = TrajectoryPlot(self.model)
        self.trajectory_plot.setObjectName('trajectory_plot')
        self.robot_view = RobotView(self.model)
        self.robot_view.setObjectName('robot_view')
        views.addWidget(self.trajectory_plot)
        views.addWidget(self.robot_view)
        splitter.addWidget(views)
        splitter.setSizes([700, 500])
        layout.addWidget(splitter, 1)
        layout.addLayout(self._build_commands())
        self.message_label = QLabel('')
        self.message_label.setObjectName('message_label')
        self.message_label.setWordWrap(True)
        layout.addWidget(self.message_label)
        self.setCentralWidget(central)
        self.resize(1300, 850)

    def _build_waypoints_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.table = QTableView()
        self.table.setObjectName('waypoint_table')
        self.table_model = WaypointTableModel(self.document, self.model)
        self.table.setModel(self.table_model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_pose_button = self._button('Add pose', 'add_pose_button',
                                            'add the current pose after the selected row')
        self.delete_button = self._button('Delete', 'delete_button')
        self.duplicate_button = self._button('Duplicate', 'duplicate_button')
        self.start_button = self._button('Set start', 'start_button')
        self.end_button = self._button('Set end', 'end_button')
        self.update_pose_button = self._button('Update pose', 'update_pose_button',
                                               'replace the row by the current pose')
        self.set_pose_button = self._button('Set robot pose', 'set_pose_button',
                                            'move the robot to the selected row')
        for widget in (self.add_pose_button, self.delete_button, self.duplicate_button,
                       self.start_button, self.end_button, self.update_pose_button,
                       self.set_pose_button):
            row.addWidget(widget)
        layout.addLayout(row)
        named = QHBoxLayout()
        named.addWidget(QLabel('Named pose:'))
        self.named_pose_combo = QComboBox()
        self.named_pose_combo.setObjectName('named_pose_combo')
        self.named_pose_combo.addItems(sorted(self.poses))
        named.addWidget(self.named_pose_combo)
        self.add_named_pose_button = self._button('Add named pose', 'add_named_pose_button')
        named.addWidget(self.add_named_pose_button)
        named.addStretch(1)
        layout.addLayout(named)
        return tab

    def _build_setup_tab(self) -> QWidget:
        tab = QWidget()
        layout = QHBoxLayout(tab)
        joints = QVBoxLayout()
        joints.addWidget(QLabel('Joints (from joint_states):'))
        self.joint_list = QListWidget()
        self.joint_list.setObjectName('setup_joints')
        joints.addWidget(self.joint_list, 1)
        self.apply_joints_button = self._button(
            'Apply joints', 'apply_joints_button',
            'new joints get their current position in every row')
        joints.addWidget(self.apply_joints_button)
        layout.addLayout(joints, 1)
        tolerances = QVBoxLayout()
        self.tolerance_table = QTableView()
        self.tolerance_table.setObjectName('tolerance_table')
        self.tolerance_model = ToleranceTableModel(self.document)
        self.tolerance_table.setModel(self.tolerance_model)
        tolerances.addWidget(self.tolerance_table, 1)
        form = QFormLayout()
        self.path_all = QDoubleSpinBox()
        self.path_all.setObjectName('path_all')
        self.goal_all = QDoubleSpinBox()
        self.goal_all.setObjectName('goal_all')
        for spin in (self.path_all, self.goal_all):
            spin.setRange(-1.0, 10.0)
            spin.setDecimals(3)
            spin.setSingleStep(0.05)
        self.path_all_button = self._button('Set for all', 'path_all_button')
        self.goal_all_button = self._button('Set for all', 'goal_all_button')
        path_row, goal_row = QHBoxLayout(), QHBoxLayout()
        path_row.addWidget(self.path_all)
        path_row.addWidget(self.path_all_button)
        goal_row.addWidget(self.goal_all)
        goal_row.addWidget(self.goal_all_button)
        form.addRow('path tolerance (0 default, -1 none)', path_row)
        form.addRow('goal tolerance (0 default, -1 none)', goal_row)
        self.goal_time = QDoubleSpinBox()
        self.goal_time.setObjectName('goal_time')
        self.goal_time.setRange(0.0, 60.0)
        self.goal_time.setDecimals(2)
        form.addRow('goal time tolerance [s] (0 default)', self.goal_time)
        tolerances.addLayout(form)
        layout.addLayout(tolerances, 1)
        return tab

    def _build_commands(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        run = QGroupBox('Execute')
        run_layout = QHBoxLayout(run)
        self.execute_button = self._button('Execute', 'execute_button',
                                           'play the start..end range on the robot')
        self.stop_button = self._button('Stop', 'stop_button')
        self.backward_check = QCheckBox('backward')
        self.backward_check.setObjectName('backward_check')
        self.reverse_button = self._button('Reverse', 'reverse_button',
                                           'reverse the table (undoable)')
        self.speed_slider = QSlider(Qt.Horizontal)
        self.speed_slider.setObjectName('speed_slider')
        self.speed_slider.setRange(25, 200)
        self.speed_slider.setValue(SPEED_STEPS)
        self.speed_slider.setMinimumWidth(120)
        self.speed_label = QLabel('speed 100 %')
        self.speed_label.setObjectName('speed_label')
        self.apply_scale_button = self._button('Apply scale', 'apply_scale_button',
                                               'rewrite the times with this speed')
        self.result_label = QLabel('')
        self.result_label.setObjectName('result_label')
        for widget in (self.execute_button, self.stop_button, self.backward_check,
                       self.reverse_button, self.speed_slider, self.speed_label,
                       self.apply_scale_button, self.result_label):
            run_layout.addWidget(widget)
        bar.addWidget(run, 3)
        servos = QGroupBox('Servos')
        servo_layout = QHBoxLayout(servos)
        self.servos_button = self._button('Servos off', 'servos_button',
                                          'free the servos to pose the robot by hand')
        self.servos_button.setCheckable(True)
        self.servo_indicator = QLabel('servos: ?')
        self.servo_indicator.setObjectName('servo_indicator')
        servo_layout.addWidget(self.servos_button)
        servo_layout.addWidget(self.servo_indicator)
        bar.addWidget(servos, 1)
        support = QGroupBox('Support legs')
        support_layout = QHBoxLayout(support)
        self.publish_support_check = QCheckBox('Publish contact list')
        self.publish_support_check.setObjectName('publish_support_check')
        support_layout.addWidget(self.publish_support_check)
        self.leg_checks: Dict[str, QCheckBox] = {}
        for leg in self.support_legs:
            check = QCheckBox(leg)
            check.setObjectName(f'leg_{leg}')
            check.setChecked(True)
            self.leg_checks[leg] = check
            support_layout.addWidget(check)
        bar.addWidget(support, 2)
        return bar

    def _wire(self) -> None:
        doc = self.document
        doc.changed.connect(self._refresh_everything)
        doc.refused.connect(self.say)
        self.undo_button.clicked.connect(doc.undo_stack.undo)
        self.redo_button.clicked.connect(doc.undo_stack.redo)
        self.load_button.clicked.connect(self.load_trajectory)
        self.save_button.clicked.connect(self.save_trajectory)
        self.refresh_button.clicked.connect(self.bridge.list_trajectories)
        self.dump_button.clicked.connect(lambda: self.dump_to_file())
        self.load_file_button.clicked.connect(lambda: self.load_from_file())
        self.add_pose_button.clicked.connect(self.add_current_pose)
        self.delete_button.clicked.connect(lambda: self._row_edit(
            'delete row', lambda w, r: w.delete(r)))
        self.duplicate_button.clicked.connect(lambda: self._row_edit(
            'duplicate row', lambda w, r: w.duplicate(r)))
        self.start_button.clicked.connect(lambda: self._row_edit(
            'set start', lambda w, r: w.set_start(r)))
        self.end_button.clicked.connect(lambda: self._row_edit(
            'set end', lambda w, r: w.set_end(r)))
        self.update_pose_button.clicked.connect(self.update_row_from_pose)
        self.set_pose_button.clicked.connect(self.set_robot_pose)
        self.add_named_pose_button.clicked.connect(self.add_named_pose)
        self.apply_joints_button.clicked.connect(self.apply_joints)
        self.path_all_button.clicked.connect(lambda: doc.edit(
            'path tolerance for all', lambda w: w.set_tolerance_for_all(
                'path', self.path_all.value())))
        self.goal_all_button.clicked.connect(lambda: doc.edit(
            'goal tolerance for all', lambda w: w.set_tolerance_for_all(
                'goal', self.goal_all.value())))
        self.goal_time.editingFinished.connect(self._goal_time_edited)
        self.execute_button.clicked.connect(self.execute)
        self.stop_button.clicked.connect(self.bridge.stop)
        self.reverse_button.clicked.connect(lambda: doc.edit('reverse', lambda w: w.reverse()))
        self.speed_slider.valueChanged.connect(
            lambda value: self.speed_label.setText(f'speed {value} %'))
        self.apply_scale_button.clicked.connect(self.apply_scale)
        self.servos_button.toggled.connect(self._servos_toggled)
        self.publish_support_check.toggled.connect(lambda _: self._publish_support())
        for check in self.leg_checks.values():
            check.toggled.connect(lambda _: self._publish_support())
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.table_model.modelReset.connect(self._restore_selection)
        bridge = self.bridge
        bridge.executed.connect(self._executed)
        bridge.progress.connect(lambda t, d: self.result_label.setText(
            f'running {t:.1f} / {d:.1f} s'))
        bridge.servos.connect(self._servo_state)
        bridge.listed.connect(self._listed)
        bridge.loaded.connect(self._loaded)
        bridge.saved.connect(self._saved)
        bridge.message.connect(self.say)

    # --- helpers -------------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """Show a message to the user (status bar and the message line)."""
        self.message_label.setText(text)
        self.statusBar().showMessage(text, 10000)

    @property
    def waypoints(self) -> WaypointsList:
        """Return the edited list."""
        return self.document.waypoints

    def selected_row(self) -> Optional[int]:
        """Return the selected row, None without a selection."""
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def select_row(self, row: int) -> None:
        """Select a row of the table."""
        if 0 <= row < len(self.waypoints):
            self.table.selectRow(row)

    def _row_edit(self, label: str, change) -> None:
        row = self.selected_row()
        if row is None:
            self.say('select a row first')
            return
        self.document.edit(f'{label} {row + 1}', lambda w: change(w, row))

    def _drain(self) -> None:
        pose = self.bridge.latest_pose()
        if pose is None:
            return
        names, positions = pose
        first = not self.current_pose
        self.current_pose = dict(zip(names, positions))
        if first:  # the robot is up: now the joints and the stored names are known
            self._refresh_joint_list()
            self.bridge.list_trajectories()

    def _refresh_joint_list(self) -> None:
        chosen = set(self.waypoints.joints)
        self.joint_list.clear()
        available = list(self.current_pose) + [f'{SUPPORT_PREFIX}{leg}'
                                               for leg in self.support_legs]
        for name in available + [j for j in self.waypoints.joints if j not in available]:
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setCheckState(Qt.Checked if name in chosen else Qt.Unchecked)
            self.joint_list.addItem(item)

    def _refresh_everything(self) -> None:
        name = self.document.name or 'untitled'
        mark = ' *' if self.document.modified else ''
        self.modified_label.setText('unsaved changes' if mark else '')
        self.setWindowTitle(f'{name}{mark} - sweetie_motion trajectory editor')
        self.undo_button.setEnabled(self.document.undo_stack.canUndo())
        self.redo_button.setEnabled(self.document.undo_stack.canRedo())
        self.goal_time.blockSignals(True)
        self.goal_time.setValue(self.waypoints.goal_time_tolerance)
        self.goal_time.blockSignals(False)
        if self.joint_list.count() == 0 or {self.joint_list.item(k).text() for k in range(
                self.joint_list.count()) if self.joint_list.item(k).checkState()} != set(
                self.waypoints.joints):
            self._refresh_joint_list()
        self._update_views()

    def _restore_selection(self) -> None:
        row = getattr(self, '_last_row', None)
        if row is not None and len(self.waypoints):
            self.table.selectRow(min(row, len(self.waypoints) - 1))

    def _update_views(self) -> None:
        row = self.selected_row()
        cursor = self.waypoints.waypoints[row].time if row is not None and row < len(
            self.waypoints) else None
        self.trajectory_plot.show_trajectory(self.waypoints, cursor=cursor)
        pose = dict(self.current_pose)
        if row is not None and row < len(self.waypoints):
            pose.update(self.waypoints.pose(row))
        self.robot_view.show_pose({j: v for j, v in pose.items()
                                   if not j.startswith(SUPPORT_PREFIX)},
                                  f'row {row + 1}' if row is not None else 'current pose')

    def _selection_changed(self, *args) -> None:
        row = self.selected_row()
        self._last_row = row
        if row is not None and row < len(self.waypoints):
            pose = self.waypoints.pose(row)
            real = {j: v for j, v in pose.items() if not j.startswith(SUPPORT_PREFIX)}
            self.bridge.publish_marker(list(real), list(real.values()))
        self._update_views()

    # --- waypoints -----------------------------------------------------------------------------

    def _support_values(self) -> Dict[str, float]:
        return {leg: 1.0 if check.isChecked() else 0.0 for leg, check in
                self.leg_checks.items()}

    def add_current_pose(self) -> bool:
        """Add the current pose (joint_states) after the selected row (or at the end)."""
        if not self.current_pose:
            self.say('no pose yet: is the motion process running (joint_states)?')
            return False
        if not self.waypoints.joints:
            joints = list(self.current_pose)
            if not self.document.edit('set joints', lambda w: w.set_joints(joints)):
                return False
        row = self.selected_row()
        index = None if row is None else row + 1
        names, positions = list(self.current_pose), list(self.current_pose.values())
        support = self._support_values()
        done = self.document.edit('add pose', lambda w: w.add_from_state(
            names, positions, index=index, support=support))
        if done:
            self.select_row(len(self.waypoints) - 1 if index is None else index)
        return done

    def update_row_from_pose(self) -> None:
        """Replace the selected row's angles by the current pose."""
        names, positions = list(self.current_pose), list(self.current_pose.values())
        self._row_edit('update row', lambda w, r: w.set_pose(r, names, positions))

    def add_named_pose(self) -> None:
        """Add a named pose (joints it does not name keep the current pose)."""
        name = self.named_pose_combo.currentText()
        if name not in self.poses:
            self.say('choose a named pose')
            return
        joints = self.model.list_all_joints() if self.model is not None else \
            list(self.current_pose)
        pose = dict.fromkeys(joints, 0.0)  # a named pose: the joints it does not name are 0
        pose.update(self.poses[name])
        if not self.waypoints.joints:
            self.document.edit('set joints', lambda w: w.set_joints(list(pose)))
        row = self.selected_row()
        index = None if row is None else row + 1
        self.document.edit(f'add pose {name}', lambda w: w.add_from_state(
            list(pose), list(pose.values()), index=index, label=name))

    def set_robot_pose(self) -> None:
        """Move the robot to the selected row (joint_states_set, FollowJointState)."""
        row = self.selected_row()
        if row is None:
            self.say('select a row first')
            return
        pose = {j: v for j, v in self.waypoints.pose(row).items()
                if not j.startswith(SUPPORT_PREFIX)}
        self.bridge.set_pose(list(pose), list(pose.values()))
        self.say(f'robot pose set to row {row + 1}')

    def apply_joints(self) -> None:
        """Use the checked joints; new ones get the current pose in every row."""
        joints = [self.joint_list.item(k).text() for k in range(self.joint_list.count())
                  if self.joint_list.item(k).checkState() == Qt.Checked]
        positions = dict(self.current_pose)
        self.document.edit('change joints', lambda w: w.set_joints(joints, positions))

    def _goal_time_edited(self) -> None:
        value = self.goal_time.value()
        if not math.isclose(value, self.waypoints.goal_time_tolerance):
            self.document.edit('goal time tolerance',
                               lambda w: w.set_goal_time_tolerance(value))

    def apply_scale(self) -> None:
        """Rewrite the times with the speed of the slider (and put the slider back to 100 %)."""
        speed = self.speed_slider.value() / SPEED_STEPS
        if self.document.edit(f'apply speed {speed:.2f}',
                              lambda w: w.scale_time(1.0 / speed)):
            self.speed_slider.setValue(SPEED_STEPS)

    # --- commands ------------------------------------------------------------------------------

    def build_execution_goal(self):
        """Return the goal Execute sends: the range, speed, direction and an approach."""
        speed = self.speed_slider.value() / SPEED_STEPS
        backward = self.backward_check.isChecked()
        goal = self.waypoints.build_goal(scale=speed, backward=backward)
        limits = {}
        if self.model is not None:
            limits = dict(zip(self.model.list_all_joints(), self.model.velocity_limits()))
        lead = approach_time(goal.first_pose(), self.current_pose, limits)
        return goal.shifted(lead) if lead > 0 else goal

    def execute(self) -> None:
        """Play the start..end range on the robot; the result shows when it ends."""
        try:
            goal = self.build_execution_goal()
        except WaypointError as error:
            self.say(str(error))
            return
        self.result_label.setText('running...')
        self.execute_button.setEnabled(False)
        self.bridge.execute(goal)

    def _executed(self, succeeded: bool, code: int, message: str) -> None:
        self.execute_button.setEnabled(True)
        text = f'succeeded: {message}' if succeeded else f'FAILED ({code}): {message}'
        self.result_label.setText(text)
        self.say(text)

    def _servos_toggled(self, off: bool) -> None:
        self.servos_button.setText('Servos on' if off else 'Servos off')
        self.servo_indicator.setText('servos: switching...')
        self.bridge.set_torque_off(off)

    def _servo_state(self, off: bool, message: str) -> None:
        self.servo_indicator.setText('servos: OFF (pose by hand)' if off else 'servos: ON')
        self.servo_indicator.setStyleSheet('color: red' if off else 'color: green')
        self.servos_button.blockSignals(True)
        self.servos_button.setChecked(off)
        self.servos_button.setText('Servos on' if off else 'Servos off')
        self.servos_button.blockSignals(False)
        if message:
            self.statusBar().showMessage(message, 5000)

    def _publish_support(self) -> None:
        if self.publish_support_check.isChecked():
            self.bridge.publish_support(self._support_values())

    # --- storage and files ---------------------------------------------------------------------

    def _listed(self, names: list) -> None:
        current = self.name_combo.currentText()
        self.name_combo.blockSignals(True)
        self.name_combo.clear()
        self.name_combo.addItems(names)
        self.name_combo.setEditText(current)
        self.name_combo.blockSignals(False)

    def load_trajectory(self) -> None:
        """Load the named trajectory from the storage node (the reply arrives later)."""
        name = self.name_combo.currentText().strip()
        if not name:
            self.say('type or choose a trajectory name')
            return
        if self.document.modified and not self._confirm_discard():
            return
        self.bridge.load(name)

    def _confirm_discard(self) -> bool:
        if getattr(self, 'assume_yes', False):
            return True
        answer = QMessageBox.question(self, 'Unsaved changes',
                                      'Discard the unsaved changes?')
        return answer == QMessageBox.Yes

    def _loaded(self, name: str, goal, error: str) -> None:
        if goal is None:
            self.say(f'load {name}: {error}')
            return
        self.document.replace(WaypointsList.from_goal(goal), name)
        self.say(f'loaded {name!r}: {len(goal.points)} keyframes')

    def save_trajectory(self) -> None:
        """Save the whole table (active rows, speed scale ignored) under the chosen name."""
        from sweetie_motion.storage.files import check_name
        name = self.name_combo.currentText().strip()
        try:
            check_name(name)
            goal = self.waypoints.build_goal(whole=True)
        except SweetieMotionError as error:
            self.say(f'cannot save: {error}')
            return
        self._saving = name
        self.bridge.save(name, goal)

    def _saved(self, name: str, ok: bool, message: str) -> None:
        if ok:
            self.document.mark_saved(name)
            self.say(f'saved {name!r}')
            self.bridge.list_trajectories()
        else:
            self.say(f'save {name!r} refused: {message}')

    def dump_to_file(self, path: Optional[str] = None) -> Optional[Path]:
        """Write the whole table (markers, disabled rows, actions) to a YAML file."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, 'Dump the table', '',
                                                  'YAML (*.yaml)')
            if not path:
                return None
        from sweetie_motion.storage.files import write_atomically
        text = yaml.safe_dump(self.waypoints.to_document(), sort_keys=False,
                              default_flow_style=None, width=100)
        write_atomically(Path(path), text)
        self.say(f'wrote {path}')
        return Path(path)

    def load_from_file(self, path: Optional[str] = None) -> bool:
        """Read a table dump or a trajectory file."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, 'Load a table', '', 'YAML (*.yaml)')
            if not path:
                return False
        try:
            with open(path, encoding='utf-8') as stream:
                document = yaml.safe_load(stream)
            waypoints = WaypointsList.from_document(document)
        except (OSError, yaml.YAMLError, WaypointError) as error:
            self.say(f'cannot load {path}: {error}')
            return False
        self.document.replace(waypoints, Path(path).stem, clean=False)
        self.say(f'loaded {path}')
        return True

    def backup(self) -> Optional[Path]:
        """Save the table to the backup file (on close)."""
        if not len(self.waypoints) and not self.waypoints.joints:
            return None
        path = Path(self.bridge.parameter('backup_file')).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        return self.dump_to_file(str(path))

    def closeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        try:
            self.backup()
        except OSError as error:
            self.say(f'backup failed: {error}')
        super().closeEvent(event)
