"""
The trajectory editor's main window: layout, and clicks forwarded to the presenter.

Everything the editor decides is in :class:`~sweetie_motion.editor.presenter.EditorPresenter`;
this module builds the widgets, forwards what a person does, asks the questions only a dialog
can (unsaved changes, restore a backup, file names) and redraws what the presenter says
changed. Every widget a person (or a test) uses has an objectName.
"""

import os
import time
from typing import Callable, Dict, List, Mapping, Optional

from PyQt5.QtCore import QEventLoop, QItemSelectionModel, Qt, QTimer
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import (
    QAbstractItemView, QAction, QApplication, QCheckBox, QComboBox, QDoubleSpinBox,
    QFormLayout, QFrame, QGridLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QMainWindow,
    QMessageBox, QScrollArea, QSlider, QSplitter, QTableView, QTableWidget, QTableWidgetItem,
    QTabWidget, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)
from sweetie_motion.editor.models import (
    ACTIVE, FIXED, SUPPORT, ToleranceTableModel, WaypointTableModel,
)
from sweetie_motion.editor.physics_line import PhysicsLine
from sweetie_motion.editor.play_head import PlayHead, table_key
from sweetie_motion.editor.presenter import EditorPresenter
from sweetie_motion.editor.support_strip import SupportStripDelegate
from sweetie_motion.editor.table_checks import RowFinding, TableChecker
from sweetie_motion.editor.table_commands import SPEED_RANGE
from sweetie_motion.editor.teaching import RECORD_SMOOTHING
from sweetie_motion.editor.views import CheckLine, TrajectoryPlot
from sweetie_motion.editor.widgets import joint_groups, JointSliders, LinkPanel
from sweetie_motion.gui.messages import rows_count
from sweetie_motion.gui.robot_view import RobotView3D
from sweetie_motion.gui.stop_first import StopActions, StopFirst
from sweetie_motion.gui.unsaved import ask_about_unsaved, offer_backup
from sweetie_motion.gui.widgets import (
    busy_cursor, fitting_size, fixed_width_label, MessageArea, push_button, with_timeline,
)
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.keyframes import DEFAULT_TOLERANCE

#: how often the adapters' events are taken and the presenter ticks [ms]
PUMP_MS = 50
#: the robot view of the current pose is redrawn at most this often [s]
ROBOT_VIEW_PERIOD = 0.1
#: positions of the play head's slider over the active rows' span
PLAY_HEAD_STEPS = 1000
#: the plot is drawn this long after the last change that needs it [ms]
VIEWS_DELAY_MS = 60
#: the longest texts of the result and the servos labels (their widths are made for these)
RESULT_LONGEST = 'running 888.8 / 888.8 s'
SERVOS_LONGEST = 'servos (88 chains): OFF'
#: the tabs' pane is never narrower than its tabs need, up to this [px]
TABS_WIDEST = 720
#: what Load file... offers: our tables and trajectories, and the old robot's animations
LOAD_FILE_FILTERS = ('tables and trajectories (*.yaml *.yml *.json);;YAML (*.yaml *.yml);;'
                     "the old robot's animations (*.json);;all files (*)")


class EditorWindow(QMainWindow):
    """
    The editor window.

    :param presenter: the editor's state and actions.
    :param events: returns the adapters' new events (the bridge's ``poll``); None: no robot.
    :param poses: named poses {name: {joint: position}}.
    """

    def __init__(self, presenter: EditorPresenter,
                 events: Optional[Callable[[], List[object]]] = None,
                 poses: Optional[Mapping[str, Mapping[str, float]]] = None) -> None:
        super().__init__()
        self.presenter = presenter
        self.model = presenter.model
        self.events = events
        self.poses = dict(poses or {})
        self._syncing = False
        #: the document name last put into the name selector: a name the user types there is
        #: kept through edits of the table, and replaced only when the document's name changes
        self._shown_name = ''
        #: the document's generation shown (another one: a motion replaced the table)
        self._shown_generation = -1
        self._robot_view_time = 0.0
        self._robot_follows = False
        #: the 3D view shows the robot though a row is selected (Live, or a slider moved)
        self._live = False
        #: the motion checks of the table, run in a thread after each change (no model: none)
        self.table_checker = TableChecker(self.model) if self.model is not None else None
        self.setWindowTitle(presenter.title)
        self._build()
        #: every stop a person has, whatever the window shows (a question, a close)
        self.stops = StopFirst(self, StopActions(
            stop=presenter.stop_motion, moving=lambda: presenter.moving,
            keep_work=presenter.files.closing, message=lambda: presenter.message.text,
            say=presenter.say), [self.stop_all_button], 'trajectory editor')
        self._wire()
        #: what each of the presenter's topics redraws (every topic has one)
        self._views: Dict[str, Callable[[], None]] = {
            'document': self._show_document, 'selection': self._selection_shown,
            'pose': self._show_pose, 'links': self._show_links,
            'execution': self._show_execution, 'servos': self._show_servos,
            'message': self._show_message, 'names': self._show_names,
            'recording': self._show_recording, 'close': self._show_close}
        # the plot takes a quarter of a second to draw: drawn once when the edits of this
        # turn of the event loop are done, not once per change (an Add pose drew it 3 times)
        self._views_due = QTimer(self)
        self._views_due.setSingleShot(True)
        self._views_due.setInterval(VIEWS_DELAY_MS)
        self._views_due.timeout.connect(self.draw_views)
        self._plot_due = False
        presenter.subscribe(self._changed)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.pump)
        self._timer.start(PUMP_MS)
        for topic in ('document', 'links', 'execution', 'servos', 'names', 'recording'):
            self._changed(topic)
        QTimer.singleShot(0, self.offer_backup)

    # --- construction --------------------------------------------------------------------------

    def _build(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(self._build_top())
        splitter = QSplitter(Qt.Horizontal)
        splitter.setObjectName('main_splitter')
        self.main_splitter = splitter
        self.tabs = QTabWidget()
        self.tabs.setObjectName('tabs')
        self.tabs.addTab(self._build_waypoints_tab(), 'Waypoints')
        self.tabs.addTab(self._build_setup_tab(), 'Setup')
        self.tabs.addTab(self._build_record_tab(), 'Record')
        # the tabs scroll sideways in a narrow pane instead of widening the window
        tabs_pane = QScrollArea()
        tabs_pane.setObjectName('tabs_pane')
        tabs_pane.setWidgetResizable(True)
        tabs_pane.setFrameShape(QFrame.NoFrame)
        tabs_pane.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        tabs_pane.setWidget(self.tabs)
        # ... but at 1366 x 768 it is as wide as the tabs need: "Set robot pose" read
        # "Set robot", cut by the pane's edge
        tabs_pane.setMinimumWidth(min(self.tabs.minimumSizeHint().width(), TABS_WIDEST))
        splitter.addWidget(tabs_pane)
        self.sliders = JointSliders(self.model, self._slider_moved)
        splitter.addWidget(self.sliders)
        views = QSplitter(Qt.Vertical)
        self.trajectory_plot = TrajectoryPlot(self.model)
        self.trajectory_plot.setObjectName('trajectory_plot')
        # the QPainter view of the console: a frame in a millisecond (a matplotlib 3D figure
        # took 0.3 s, and every Add pose waited for it)
        self.robot_view = RobotView3D(self.model) if self.model is not None else \
            QLabel('no robot model: no robot view')
        self.robot_view.setObjectName('robot_view')
        for canvas in (self.trajectory_plot, self.robot_view):
            canvas.setMinimumSize(200, 150)
        timeline = QWidget()
        timeline_layout = QVBoxLayout(timeline)
        timeline_layout.setContentsMargins(0, 0, 0, 0)
        timeline_layout.addWidget(self._build_play_head(), 1)
        self.check_line = CheckLine()
        self.check_line.show_button.clicked.connect(lambda: self.show_next_finding())
        timeline_layout.addWidget(self.check_line)
        #: Simulate: the table on the robot in the physics engine (no model: none)
        self.physics_line = PhysicsLine(self.model) if self.model is not None else None
        if self.physics_line is not None:
            self.physics_line.simulate_button.toggled.connect(self._simulate_toggled)
            self.physics_line.show_button.clicked.connect(self.show_next_physics_finding)
            timeline_layout.addWidget(self.physics_line)
        views.addWidget(timeline)
        views.addWidget(self.robot_view)
        splitter.addWidget(views)
        splitter.setSizes([660, 260, 460])
        layout.addWidget(splitter, 1)
        layout.addLayout(self._build_commands())
        self.links_panel = LinkPanel()
        layout.addWidget(self.links_panel)
        self.message_label = MessageArea()
        layout.addWidget(self.message_label)
        self.setCentralWidget(central)
        self._build_menu()
        self.resize(*fitting_size(1400, 860))

    def _build_top(self) -> QHBoxLayout:
        top = QHBoxLayout()
        top.addWidget(QLabel('Trajectory:'))
        self.name_combo = QComboBox()
        self.name_combo.setObjectName('trajectory_name')
        self.name_combo.setEditable(True)
        self.name_combo.setMinimumWidth(180)
        self.name_combo.setInsertPolicy(QComboBox.NoInsert)
        top.addWidget(self.name_combo)
        self.new_button = push_button('New', 'new_button', 'start an empty trajectory (Ctrl+N)')
        self.load_button = push_button('Load', 'load_button', 'load from the storage node')
        self.save_button = push_button('Save', 'save_button', 'save to the storage node (Ctrl+S)')
        self.refresh_button = push_button('Refresh', 'refresh_button', 'list the stored names')
        self.dump_button = push_button('Dump...', 'dump_button', 'write the table to a file')
        self.load_file_button = push_button('Load file...', 'load_file_button',
                                            'read a table or trajectory file')
        self.undo_button = push_button('Undo', 'undo_button', 'Ctrl+Z')
        self.redo_button = push_button('Redo', 'redo_button', 'Ctrl+Y')
        for widget in (self.new_button, self.load_button, self.save_button,
                       self.refresh_button, self.dump_button, self.load_file_button,
                       self.undo_button, self.redo_button):
            top.addWidget(widget)
        self.modified_label = QLabel('')
        self.modified_label.setObjectName('modified_label')
        top.addWidget(self.modified_label)
        top.addStretch(1)
        self.stop_all_button = push_button(
            'STOP', 'stop_all_button', 'stop everything the editor moves: Execute, a '
            'recording, Set robot pose (Esc while something moves, F12 at any time, also '
            'while a question is open)')
        self.stop_all_button.setStyleSheet('QPushButton { background: #c00000; color: white; '
                                           'font-weight: bold; padding: 4px 18px; }')
        top.addWidget(self.stop_all_button)
        return top

    def _build_menu(self) -> None:
        def action(menu, text: str, name: str, shortcut, slot) -> QAction:
            item = QAction(text, self)
            item.setObjectName(name)
            if shortcut:
                keys = shortcut if isinstance(shortcut, list) else [shortcut]
                item.setShortcuts([QKeySequence(k) for k in keys])
            item.triggered.connect(slot)
            menu.addAction(item)
            return item
        bar = self.menuBar()
        file_menu = bar.addMenu('&File')
        action(file_menu, '&New trajectory', 'new_action', QKeySequence.New, self.new_trajectory)
        action(file_menu, '&Save', 'save_action', QKeySequence.Save, self.save)
        action(file_menu, '&Load', 'load_action', None, self.load)
        action(file_menu, '&Dump to file...', 'dump_action', None, lambda: self.dump())
        action(file_menu, 'Load &file...', 'load_file_action', None, lambda: self.load_file())
        action(file_menu, '&Restore a backup...', 'restore_action', None,
               lambda: self.restore_backup())
        action(file_menu, '&Quit', 'quit_action', QKeySequence.Quit, self.close)
        edit = bar.addMenu('&Edit')
        self.undo_action = action(edit, '&Undo', 'undo_action', QKeySequence.Undo,
                                  self.presenter.table.undo)
        self.redo_action = action(edit, '&Redo', 'redo_action', ['Ctrl+Y', 'Ctrl+Shift+Z'],
                                  self.presenter.table.redo)
        edit.addSeparator()
        action(edit, '&Copy rows', 'copy_action', QKeySequence.Copy,
               self.presenter.table.copy_rows)
        action(edit, '&Paste rows', 'paste_action', QKeySequence.Paste,
               self.presenter.table.paste_rows)
        action(edit, '&Delete rows', 'delete_action', QKeySequence.Delete,
               self.presenter.table.delete_rows)
        # the table takes Ctrl+C / Delete itself when it has the focus: let the actions have them
        for item in self.findChildren(QAction):
            item.setShortcutContext(Qt.WindowShortcut)

    def _build_waypoints_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.table = QTableView()
        self.table.setObjectName('waypoint_table')
        self.table_model = WaypointTableModel(self.presenter, self.leg_places())
        self.table.setModel(self.table_model)
        # the support strip next to the time: one tick per leg (the support/ columns it
        # shows are hidden among the joints)
        self.support_delegate = SupportStripDelegate(
            lambda row, leg, on: self.presenter.table.set_support([row], leg, on), self.table)
        self.table.setItemDelegateForColumn(SUPPORT, self.support_delegate)
        self.table.horizontalHeader().resizeSection(
            SUPPORT, SupportStripDelegate.width_for(len(self.presenter.legs)))
        # the on/off box needs no more than its header
        self.table.horizontalHeader().resizeSection(
            ACTIVE, self.table.fontMetrics().horizontalAdvance('on') + 30)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        # the row numbers' column is as wide as a flagged row's ("123 !") from the start: the
        # columns do not shift (nor the table scroll) when the checks flag or clear a row
        header = self.table.verticalHeader()
        header.setMinimumWidth(header.fontMetrics().horizontalAdvance('888 !') + 12)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_pose_button = push_button('Add pose', 'add_pose_button',
                                           "add the current pose of the trajectory's joints after "
                                           'the selected row')
        self.delete_button = push_button('Delete', 'delete_button',
                                         'delete the selected rows (Del)')
        self.duplicate_button = push_button('Duplicate', 'duplicate_button')
        self.start_button = push_button('Set start', 'start_button')
        self.end_button = push_button('Set end', 'end_button')
        self.update_pose_button = push_button('Update pose', 'update_pose_button',
                                              'replace the selected rows by the current pose')
        self.set_pose_button = push_button('Set robot pose', 'set_pose_button',
                                           'move the robot to the selected row')
        for widget in (self.add_pose_button, self.delete_button, self.duplicate_button,
                       self.start_button, self.end_button, self.update_pose_button,
                       self.set_pose_button):
            row.addWidget(widget)
        layout.addLayout(row)
        times = QHBoxLayout()
        times.addWidget(QLabel('Shift from the selection by'))
        self.shift_spin = QDoubleSpinBox()
        self.shift_spin.setObjectName('shift_spin')
        self.shift_spin.setRange(-60.0, 60.0)
        self.shift_spin.setDecimals(2)
        self.shift_spin.setSingleStep(0.1)
        self.shift_spin.setSuffix(' s')
        self.shift_spin.setValue(0.5)
        times.addWidget(self.shift_spin)
        self.shift_button = push_button('Shift times', 'shift_button',
                                        'move the selected rows and all after them in time')
        times.addWidget(self.shift_button)
        self.fit_button = push_button('Fit to limits', 'fit_button',
                                      'the fastest times within the velocity and acceleration '
                                      'limits (of the selected rows, or of all)')
        times.addWidget(self.fit_button)
        self.keep_pauses_check = QCheckBox('keep pauses')
        self.keep_pauses_check.setObjectName('keep_pauses_check')
        # a pause between equal keyframes is an author's choice: kept unless unticked
        self.keep_pauses_check.setChecked(True)
        self.keep_pauses_check.setToolTip('segments between equal keyframes keep their '
                                          'duration (untick to shorten them too)')
        times.addWidget(self.keep_pauses_check)
        times.addStretch(1)
        layout.addLayout(times)
        named = QHBoxLayout()
        named.addWidget(QLabel('Named pose:'))
        self.named_pose_combo = QComboBox()
        self.named_pose_combo.setObjectName('named_pose_combo')
        self.named_pose_combo.addItems(sorted(self.poses))
        named.addWidget(self.named_pose_combo)
        self.add_named_pose_button = push_button('Add named pose', 'add_named_pose_button')
        named.addWidget(self.add_named_pose_button)
        named.addStretch(1)
        layout.addLayout(named)
        return tab

    def leg_places(self) -> Dict[str, str]:
        """Return where each support leg is ('leg1' -> 'front left'; the robot's config)."""
        places = {}
        for leg in self.presenter.legs:
            place = None
            if self.model is not None:
                try:
                    place = self.model.get_chain_property(leg, 'place')
                except Exception:  # noqa: B902 -- a leg the model does not know keeps its name
                    place = None
            places[leg] = str(place) if place else leg
        return places

    def _hide_support_columns(self) -> None:
        """Hide the support/ columns among the joints: the strip shows and sets them."""
        joints = self.presenter.waypoints.joints
        for column, joint in enumerate(joints, start=FIXED):
            self.table.setColumnHidden(column, joint.startswith(SUPPORT_PREFIX))
        self.table.setColumnHidden(SUPPORT, not self.presenter.legs)
        self.table.horizontalHeader().resizeSection(
            SUPPORT, SupportStripDelegate.width_for(len(self.presenter.legs)))

    def _build_setup_tab(self) -> QWidget:
        tab = QWidget()
        layout = QHBoxLayout(tab)
        joints = QVBoxLayout()
        joints.addWidget(QLabel("The trajectory's joints:"))
        self.joint_tree = QTreeWidget()
        self.joint_tree.setObjectName('setup_joints')
        self.joint_tree.setHeaderHidden(True)
        joints.addWidget(self.joint_tree, 1)
        self.apply_joints_button = push_button(
            'Apply joints', 'apply_joints_button',
            'new joints get their current position in every row')
        joints.addWidget(self.apply_joints_button)
        layout.addLayout(joints, 1)
        tolerances = QVBoxLayout()
        self.tolerance_table = QTableView()
        self.tolerance_table.setObjectName('tolerance_table')
        self.tolerance_model = ToleranceTableModel(self.presenter)
        self.tolerance_table.setModel(self.tolerance_model)
        # the headers ("path tolerance [rad]") must show whole
        self.tolerance_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeToContents)
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
        self.path_all_button = push_button('Set for all', 'path_all_button')
        self.goal_all_button = push_button('Set for all', 'goal_all_button')
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

    def _build_record_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(QLabel('Teach by demonstration: free the servos, move the robot (by '
                                'hand, or with the sliders on the virtual robot), and the '
                                'recording becomes the fewest keyframes within the tolerance.'))
        layout.itemAt(0).widget().setWordWrap(True)
        chains = QGroupBox('Record these joints')
        chain_layout = QHBoxLayout(chains)
        self.record_checks: Dict[str, QCheckBox] = {}
        for group, _ in joint_groups(self.model):
            check = QCheckBox(group)
            check.setObjectName(f'record_{group}')
            chain_layout.addWidget(check)
            self.record_checks[group] = check
        chain_layout.addStretch(1)
        layout.addWidget(chains)
        form = QFormLayout()
        self.record_tolerance = QDoubleSpinBox()
        self.record_tolerance.setObjectName('record_tolerance')
        self.record_tolerance.setRange(0.001, 0.5)
        self.record_tolerance.setDecimals(3)
        self.record_tolerance.setSingleStep(0.005)
        self.record_tolerance.setValue(DEFAULT_TOLERANCE)
        self.record_tolerance.setSuffix(' rad')
        form.addRow('tolerance', self.record_tolerance)
        self.record_smoothing = QDoubleSpinBox()
        self.record_smoothing.setObjectName('record_smoothing')
        self.record_smoothing.setRange(0.0, 0.5)
        self.record_smoothing.setDecimals(3)
        self.record_smoothing.setSingleStep(0.01)
        self.record_smoothing.setValue(RECORD_SMOOTHING)
        self.record_smoothing.setSuffix(' s')
        form.addRow('smoothing (half-window)', self.record_smoothing)
        self.record_free_check = QCheckBox('servos off while recording')
        self.record_free_check.setObjectName('record_free_check')
        self.record_free_check.setChecked(True)
        form.addRow('', self.record_free_check)
        layout.addLayout(form)
        buttons = QHBoxLayout()
        self.record_button = push_button('Record', 'record_button')
        self.stop_record_button = push_button('Stop recording', 'stop_record_button')
        self.accept_record_button = push_button('Accept keyframes', 'accept_record_button',
                                                'replace the table by the keyframes (undoable)')
        self.discard_record_button = push_button('Discard', 'discard_record_button')
        for widget in (self.record_button, self.stop_record_button, self.accept_record_button,
                       self.discard_record_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.record_summary = QLabel('')
        self.record_summary.setObjectName('record_summary')
        self.record_summary.setWordWrap(True)
        layout.addWidget(self.record_summary)
        self.record_table = QTableWidget(0, 4)
        self.record_table.setObjectName('record_table')
        self.record_table.setHorizontalHeaderLabels(
            ['joint', 'max deviation [rad]', 'tolerance [rad]', 'noise [rad]'])
        self.record_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        layout.addWidget(self.record_table, 1)
        return tab

    def _build_commands(self) -> QGridLayout:
        # two rows: in one, the three groups were 1620 px wide (a laptop has 1366)
        bar = QGridLayout()
        run = QGroupBox('Execute')
        run_layout = QHBoxLayout(run)
        self.execute_button = push_button('Execute', 'execute_button',
                                          'play the start..end range on the robot')
        self.stop_button = push_button('Stop', 'stop_button')
        self.anyway_check = QCheckBox('anyway')
        self.anyway_check.setObjectName('execute_anyway_check')
        self.anyway_check.setToolTip('execute a table the checks or the physics refuse (only on '
                                     'a virtual robot, for experiments)')
        self.backward_check = QCheckBox('backward')
        self.backward_check.setObjectName('backward_check')
        self.reverse_button = push_button('Reverse', 'reverse_button',
                                          'reverse the table (undoable)')
        self.speed_slider = QSlider(Qt.Horizontal)
        self.speed_slider.setObjectName('speed_slider')
        self.speed_slider.setRange(*SPEED_RANGE)
        self.speed_slider.setValue(100)
        self.speed_slider.setMinimumWidth(100)
        self.speed_slider.setMaximumWidth(180)
        self.speed_label = QLabel('speed 100 %')
        self.speed_label.setObjectName('speed_label')
        self.apply_scale_button = push_button('Apply scale', 'apply_scale_button',
                                              'rewrite the times with this speed')
        # short states only ("running 1.2 / 4.0 s"); the full result goes to the message area
        self.result_label = fixed_width_label('result_label', '', RESULT_LONGEST)
        for widget in (self.execute_button, self.anyway_check, self.stop_button,
                       self.backward_check,
                       self.reverse_button, self.speed_slider, self.speed_label,
                       self.apply_scale_button, self.result_label):
            run_layout.addWidget(widget)
        bar.addWidget(run, 0, 0, 1, 2)
        servos = QGroupBox('Servos')
        servo_layout = QHBoxLayout(servos)
        self.servos_button = push_button('Servos off', 'servos_button',
                                         'free the servos to pose the robot by hand')
        self.servos_button.setCheckable(True)
        self.servo_indicator = fixed_width_label('servo_indicator', 'servos: ?', SERVOS_LONGEST)
        servo_layout.addWidget(self.servos_button)
        servo_layout.addWidget(self.servo_indicator)
        bar.addWidget(servos, 1, 0)
        support = QGroupBox('Support legs')
        support_layout = QHBoxLayout(support)
        self.publish_support_check = QCheckBox('Publish contact list')
        self.publish_support_check.setObjectName('publish_support_check')
        support_layout.addWidget(self.publish_support_check)
        self.leg_checks: Dict[str, QCheckBox] = {}
        for leg in self.presenter.legs:
            check = QCheckBox(leg)
            check.setObjectName(f'leg_{leg}')
            check.setChecked(True)
            self.leg_checks[leg] = check
            support_layout.addWidget(check)
        bar.addWidget(support, 1, 1)
        bar.setColumnStretch(1, 1)
        return bar

    def _wire(self) -> None:
        p = self.presenter
        self.new_button.clicked.connect(self.new_trajectory)
        self.load_button.clicked.connect(self.load)
        self.save_button.clicked.connect(self.save)
        self.refresh_button.clicked.connect(p.files.refresh_names)
        self.dump_button.clicked.connect(lambda: self.dump())
        self.load_file_button.clicked.connect(lambda: self.load_file())
        self.undo_button.clicked.connect(p.table.undo)
        self.redo_button.clicked.connect(p.table.redo)
        self.add_pose_button.clicked.connect(p.table.add_pose)
        self.delete_button.clicked.connect(p.table.delete_rows)
        self.duplicate_button.clicked.connect(p.table.duplicate_row)
        self.start_button.clicked.connect(lambda: p.table.set_marker('start'))
        self.end_button.clicked.connect(lambda: p.table.set_marker('end'))
        self.update_pose_button.clicked.connect(p.table.update_pose)
        self.set_pose_button.clicked.connect(p.set_robot_pose)
        self.shift_button.clicked.connect(lambda: p.table.shift_times(self.shift_spin.value()))
        self.fit_button.clicked.connect(lambda: self.busy(
            'fitting to the limits ...', lambda: p.table.fit_to_limits(
                self.keep_pauses_check.isChecked())))
        self.add_named_pose_button.clicked.connect(self.add_named_pose)
        self.apply_joints_button.clicked.connect(lambda: p.table.set_joints(self.checked_joints()))
        self.path_all_button.clicked.connect(
            lambda: p.table.set_tolerance_for_all('path', self.path_all.value()))
        self.goal_all_button.clicked.connect(
            lambda: p.table.set_tolerance_for_all('goal', self.goal_all.value()))
        self.goal_time.editingFinished.connect(
            lambda: p.table.set_goal_time_tolerance(self.goal_time.value()))
        self.execute_button.clicked.connect(
            lambda: p.execute(anyway=self.anyway_check.isChecked()))
        self.stop_button.clicked.connect(p.stop)
        self.stop_all_button.clicked.connect(p.stop_motion)
        self.backward_check.toggled.connect(p.set_backward)
        self.reverse_button.clicked.connect(p.table.reverse)
        self.speed_slider.valueChanged.connect(self._speed_changed)
        self.apply_scale_button.clicked.connect(self._apply_scale)
        self.servos_button.clicked.connect(self._servos_clicked)
        self.publish_support_check.toggled.connect(lambda _: self._support_changed())
        for check in self.leg_checks.values():
            check.toggled.connect(lambda _: self._support_changed())
        self.record_button.clicked.connect(self._record)
        self.stop_record_button.clicked.connect(p.teaching.stop)
        self.accept_record_button.clicked.connect(self.accept_recording)
        self.discard_record_button.clicked.connect(p.teaching.discard)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        # a click on the selected row after Live shows that row again
        self.table.pressed.connect(lambda _: self._selection_shown() if self._live else None)
        # the plot shows the joint of the column a person is on
        self.table.selectionModel().currentColumnChanged.connect(lambda *_: self._show_plot())

    # --- the pump ------------------------------------------------------------------------------

    def pump(self) -> None:
        """Hand the adapters' events to the presenter and let it tick (the timer calls it)."""
        if self.events is not None:
            for event in self.events():
                self.presenter.handle(event)
        self.presenter.tick()
        self._take_checks()
        if self.physics_line is not None and self.physics_line.take() is not None:
            self._show_findings()
        self.trajectory_plot.take()

    # --- the motion checks ---------------------------------------------------------------------

    def _request_checks(self) -> None:
        p = self.presenter
        if self.table_checker is not None and self.table_checker.request(
                p.waypoints, p.interpolation):
            self.check_line.checking()
        if self.physics_line is not None and self.physics_line.on:
            self.physics_line.request(p.waypoints, p.interpolation, p.document.name)

    def _simulate_toggled(self, on: bool) -> None:
        if on:
            self._request_checks()

    def _take_checks(self) -> None:
        result = self.table_checker.poll() if self.table_checker is not None else None
        if result is None:
            return
        self.check_line.show_result(result)
        self._show_findings()

    def _findings(self) -> List[RowFinding]:
        """Return the findings of the checks and of the simulation of the table shown."""
        checked = self.table_checker.result if self.table_checker is not None else None
        key = table_key(self.presenter.waypoints, self.presenter.interpolation)
        found = list(checked.findings) if checked is not None and checked.key == key else []
        if self.physics_line is not None:
            found += self.physics_line.findings(key)
        return found

    def _show_findings(self) -> None:
        """Flag the rows of the findings and mark their times on the plot."""
        flagged = {}
        rows: Dict[int, List[RowFinding]] = {}
        for finding in self._findings():
            rows.setdefault(finding.row, []).append(finding)
        for row, findings in rows.items():
            severity = 'refuse' if any(f.finding.severity == 'refuse' for f in findings) \
                else 'warn'
            flagged[row] = (severity, '\n'.join(f.describe() for f in findings))
        self.table_model.set_flagged(flagged)
        self.trajectory_plot.set_findings([(f.time, f.finding.severity)
                                           for f in self._findings()])
        refused = [f for f in self._findings() if f.finding.severity == 'refuse']
        physics = bool(refused) and refused[0].finding.check == 'physics'
        self.presenter.set_refusal(
            f'{"the physics refuses" if physics else "the checks refuse"} it: '
            f'{refused[0].describe()}' if refused else '')
        self._show_robot(force=True)

    def show_next_finding(self, check: Optional[str] = None) -> None:
        """
        Move the play head to the next finding after it (of the checks, or only of ``check``).

        :param check: 'physics' for the simulation's findings; None: the motion checks'.
        """
        found = [f for f in self._findings()
                 if (f.finding.check == 'physics') == (check == 'physics')]
        span = self._play_head.span(self.presenter.waypoints)
        if not found or span is None:
            return
        times = sorted({f.time for f in found})
        now = self.play_head_time
        later = [t for t in times if now is None or t > now + 1e-3]
        self.show_time(later[0] if later else times[0])

    def show_next_physics_finding(self) -> None:
        """Move the play head to the next finding of the simulation (the fall, a stall)."""
        self.show_next_finding('physics')

    def show_time(self, time: float) -> None:
        """Put the play head at table time ``time`` [s] (clipped to the active rows' span)."""
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            return
        first, last = span
        fraction = (time - first) / (last - first) if last > first else 0.0
        value = int(round(min(max(fraction, 0.0), 1.0) * PLAY_HEAD_STEPS))
        if value == self.play_head_slider.value():
            self._scrub(value)
        else:
            self.play_head_slider.setValue(value)   # scrubs
        # the slider's steps are coarser than a sample: the exact time
        self.play_head_time = min(max(time, first), last)
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)
        self._show_robot(force=True)

    # --- redrawing -----------------------------------------------------------------------------

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

    def _build_play_head(self) -> QWidget:
        """Return the plot with the play head under it: a timeline over the active rows."""
        self._play_head = PlayHead()
        #: the play head's table time [s] (None: the 3D view shows the robot)
        self.play_head_time: Optional[float] = None
        self.live_button = push_button('Live', 'play_head_live', 'the 3D view shows the '
                                       'robot, also while a row is selected (the play head '
                                       'goes; a row clicked is shown again)')
        self.live_button.clicked.connect(self._go_live)
        pane, self.play_head_slider, self.play_head_label = with_timeline(
            self.trajectory_plot, 'play head', 'play_head', 'the play head: drag it to see the '
            'motion between the rows in the 3D view and on the plot', 't = 000.00 s',
            self.live_button)
        self.play_head_slider.setRange(0, PLAY_HEAD_STEPS)
        self.play_head_slider.valueChanged.connect(self._scrub)
        return pane

    def _scrub(self, value: int) -> None:
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            return
        first, last = span
        self.play_head_time = first + (last - first) * value / PLAY_HEAD_STEPS
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)
        self._live = False
        if self.presenter.table.selected_row is not None:
            self.presenter.table.select([])   # the play head's pose, not a row's
        self._show_robot(force=True)

    def _go_live(self) -> None:
        """Show the robot in the 3D view: no play head, and not the selected row."""
        self._live = True
        self._end_scrub()

    def _slider_moved(self, joint: str, value: float) -> object:
        """Move the robot as a person asks: the 3D view shows the robot, not the row."""
        if not self._live:
            self._live = True
            self._end_scrub()
        return self.presenter.move_joint(joint, value)

    def _selection_shown(self) -> None:
        """Show the rows the presenter selected (a click, Add pose) in the 3D view again."""
        self._live = False
        self._show_selection()

    def _end_scrub(self) -> None:
        self.play_head_time = None
        self.play_head_label.setText('')
        self.play_head_slider.blockSignals(True)
        self.play_head_slider.setValue(0)
        self.play_head_slider.blockSignals(False)
        self.trajectory_plot.set_play_head(None)
        self._show_robot(force=True)

    def _keep_play_head_in_span(self) -> None:
        """Keep the play head within the active rows after an edit (it goes with them)."""
        if self.play_head_time is None:
            return
        span = self._play_head.span(self.presenter.waypoints)
        if span is None:
            self._end_scrub()
            return
        first, last = span
        self.play_head_time = min(max(self.play_head_time, first), last)
        fraction = (self.play_head_time - first) / (last - first) if last > first else 0.0
        self.play_head_slider.blockSignals(True)
        self.play_head_slider.setValue(int(round(fraction * PLAY_HEAD_STEPS)))
        self.play_head_slider.blockSignals(False)
        self.play_head_label.setText(f't = {self.play_head_time:.2f} s')
        self.trajectory_plot.set_play_head(self.play_head_time)

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

    # --- the joint tree of Setup ---------------------------------------------------------------

    def _fill_joint_tree(self) -> None:
        p = self.presenter
        available = p.available_joints()
        chosen = set(p.waypoints.joints)
        wanted = list(available) + [j for j in p.waypoints.joints if j not in available]
        if self._tree_joints() == wanted and set(self.checked_joints()) == chosen:
            return
        self.joint_tree.blockSignals(True)
        self.joint_tree.clear()
        groups = [(g, [j for j in js if j in wanted]) for g, js in joint_groups(self.model)]
        grouped = {j for _, js in groups for j in js}
        support = [j for j in wanted if j.startswith(SUPPORT_PREFIX)]
        rest = [j for j in wanted if j not in grouped and j not in support]
        for group, joints in groups + [('support', support), ('more', rest)]:
            if not joints:
                continue
            parent = QTreeWidgetItem([group])
            parent.setFlags(parent.flags() | Qt.ItemIsUserCheckable | Qt.ItemIsAutoTristate)
            self.joint_tree.addTopLevelItem(parent)
            for joint in joints:
                item = QTreeWidgetItem([joint])
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(0, Qt.Checked if joint in chosen else Qt.Unchecked)
                parent.addChild(item)
            parent.setExpanded(False)
        self.joint_tree.blockSignals(False)

    def _tree_joints(self) -> List[str]:
        out = []
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            out += [parent.child(c).text(0) for c in range(parent.childCount())]
        return out

    def checked_joints(self) -> List[str]:
        """Return the joints checked in Setup, in the tree's order."""
        out = []
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            out += [parent.child(c).text(0) for c in range(parent.childCount())
                    if parent.child(c).checkState(0) == Qt.Checked]
        return out

    def check_joints(self, groups_or_joints: List[str]) -> None:
        """Check groups (all their joints) or single joints in Setup, uncheck the others."""
        wanted = set(groups_or_joints)
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            for c in range(parent.childCount()):
                child = parent.child(c)
                on = parent.text(0) in wanted or child.text(0) in wanted
                child.setCheckState(0, Qt.Checked if on else Qt.Unchecked)

    # --- actions that need the window ----------------------------------------------------------

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

    def add_named_pose(self) -> None:
        """Add the chosen named pose."""
        name = self.named_pose_combo.currentText()
        if name not in self.poses:
            self.presenter.say('choose a named pose', 'error')
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

    def closeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Stop what moves first; then ask Save / Discard / Cancel about unsaved changes."""
        p = self.presenter
        if self.stops.leaving:          # SIGTERM: the work is backed up, nothing is asked
            event.accept()
            return
        if not self.stops.may_close() or not self._keep_or_give_up_recording():
            event.ignore()
            return
        if not p.document.modified:
            p.files.closing()
            event.accept()
            return
        answer = ask_about_unsaved(self.stops, p.document.name or 'The untitled trajectory',
                                   'Save them to the storage before closing?')
        if answer == QMessageBox.Discard:
            p.files.closing(discard=True)
            event.accept()
        elif answer == QMessageBox.Save:
            # closes when the storage has it (the presenter says 'close'); stays if refused;
            # a stored name (a built-in's) is asked about as Save asks
            self.save(close_after=True)
            event.ignore()
        else:
            event.ignore()
