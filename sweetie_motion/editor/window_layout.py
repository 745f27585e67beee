"""
The editor window's layout: its panes, menu, command buttons, and the wiring of their signals.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

from typing import Dict

from PyQt5.QtCore import Qt
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import (
    QAction, QCheckBox, QComboBox, QFrame, QGridLayout, QGroupBox, QHBoxLayout, QLabel,
    QScrollArea, QSlider, QSplitter, QTabWidget, QVBoxLayout, QWidget,
)
from sweetie_motion.editor.physics_line import PhysicsLine
from sweetie_motion.editor.table_commands import SPEED_RANGE
from sweetie_motion.editor.views import CheckLine, TrajectoryPlot
from sweetie_motion.editor.widgets import JointSliders, LinkPanel
from sweetie_motion.gui.robot_view import RobotView3D
from sweetie_motion.gui.widgets import fitting_size, fixed_width_label, MessageArea, push_button

#: the longest texts of the result and the servos labels (their widths are made for these)
RESULT_LONGEST = 'running 888.8 / 888.8 s'
SERVOS_LONGEST = 'servos (88 chains): OFF'
#: the tabs' pane is never narrower than its tabs need, up to this [px]
TABS_WIDEST = 720


class WindowLayout:
    """
    The editor window's frame: panes, menu, command buttons and signals.

    The window's frame, built once: the top row, the menu, the tabs' pane beside the plot and
    the robot view, the command buttons, and which signal calls what.

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    def _build(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(self._build_top())
        splitter = QSplitter(Qt.Horizontal)
        splitter.setObjectName('main_splitter')
        self.main_splitter = splitter
        splitter.addWidget(self._build_tabs_pane())
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

    def _build_tabs_pane(self) -> QScrollArea:
        """Build the tabs (Waypoints, Setup, Record) in their pane."""
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
        return tabs_pane

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
        self.mirror_button.clicked.connect(p.row_tools.mirror_rows)
        self.repeat_button.clicked.connect(
            lambda: p.row_tools.repeat_rows(self.repeat_spin.value()))
        self.apply_joints_button.clicked.connect(lambda: p.table.set_joints(self.checked_joints()))
        self.path_all_button.clicked.connect(
            lambda: p.table.set_tolerance_for_all('path', self.path_all.value()))
        self.goal_all_button.clicked.connect(
            lambda: p.table.set_tolerance_for_all('goal', self.goal_all.value()))
        self.goal_time.editingFinished.connect(
            lambda: p.table.set_goal_time_tolerance(self.goal_time.value()))
        self.execute_button.clicked.connect(
            lambda: p.execute(anyway=self.anyway_check.isChecked()))
        # the stops act at the press, as an emergency stop does: a click's release comes a
        # tenth of a second later, and later still while the window is busy redrawing
        self.stop_button.pressed.connect(p.stop)
        self.stop_all_button.pressed.connect(p.stop_motion)
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
