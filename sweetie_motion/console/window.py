"""
The operator console's main window: layout, and what a person does forwarded to the presenter.

Everything the console decides is in :class:`~sweetie_motion.console.presenter.ConsolePresenter`;
this module builds the widgets, forwards clicks, asks for file names and redraws what the
presenter says changed. Every widget a person (or a test) uses has an objectName.
"""

import os
import time
from typing import Callable, Dict, List, Optional

import numpy as np
from PyQt5.QtCore import Qt, QTimer
from PyQt5.QtGui import QFontDatabase, QKeySequence
from PyQt5.QtWidgets import (
    QFrame, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMainWindow,
    QMessageBox, QPlainTextEdit, QScrollArea, QShortcut, QSizePolicy, QSplitter, QTableWidget,
    QTableWidgetItem, QVBoxLayout, QWidget,
)
from sweetie_motion.console.manual_moves import describe_turns
from sweetie_motion.console.presenter import ConsolePresenter, TOPICS
from sweetie_motion.console.target import picked_target, target_text
from sweetie_motion.console.views import (
    JogPanel, JointSliders, lamp, parts_text, ProgramEditor, TargetPanel,
)
from sweetie_motion.gui.robot_view import RobotView3D
from sweetie_motion.gui.stop_first import StopActions, StopFirst
from sweetie_motion.gui.unsaved import ask_about_unsaved, offer_backup
from sweetie_motion.gui.widgets import fitting_size, MessageArea, push_button, with_timeline

#: how often the adapters' events are taken and the presenter ticks [ms]
PUMP_MS = 50
#: how often the robot view may redraw [ms] (a frame takes about 10 ms of the GUI thread)
VIEW_MS = 100


class ConsoleWindow(QMainWindow):
    """
    The console window.

    :param presenter: the console's state and actions.
    :param events: returns the adapters' new events (the bridge's ``poll``); None: no robot.
    :param where: what the title says the console drives (namespace, chain).
    """

    def __init__(self, presenter: ConsolePresenter,
                 events: Optional[Callable[[], List[object]]] = None, where: str = '') -> None:
        super().__init__()
        self.presenter = presenter
        self.events = events
        self.where = where
        self._shown_chain = ''
        self._show_title()
        self._build()
        #: every stop a person has, whatever the window shows (a question, a close)
        self.stops = StopFirst(self, StopActions(
            stop=presenter.stop, moving=lambda: presenter.moving,
            keep_work=presenter.closing, message=lambda: presenter.message.text,
            say=presenter.say), [self.stop_button], 'sweetie-motion console')
        presenter.subscribe(self._changed)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.pump)
        self._timer.start(PUMP_MS)
        self._view_timer = QTimer(self)
        self._view_timer.timeout.connect(self.robot_view.redraw)
        self._view_timer.start(VIEW_MS)
        for topic in TOPICS:
            if topic != 'message':
                self._changed(topic)
        presenter.say(f'waiting for the motion process {where} (its joint_states) ...'
                      if not presenter.connected else 'the motion process is connected')
        QTimer.singleShot(0, self.offer_backup)

    def jog(self, axis: str, direction: int) -> None:
        """Jog one step; ask first when it would turn a joint far (near a singularity)."""
        p = self.presenter
        turns = p.jog_turns(axis, direction)
        if turns:
            answer = self.stops.question(
                'A large joint turn',
                f'This small step of the tool turns {describe_turns(p.model, turns)} (the '
                'arm is near a singularity: the wrist swings). Move?',
                QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Cancel, name='jog_question')
            if answer != QMessageBox.Yes:
                p.say('jog not made: nothing moved')
                return
        p.jog(axis, direction, confirmed=bool(turns))

    def offer_backup(self) -> None:
        """Offer the backup a console with unsaved edits left behind (at the start)."""
        offer_backup(self.stops, 'The console', self.presenter)

    # --- construction --------------------------------------------------------------------------

    def _build(self) -> None:
        p = self.presenter
        central = QWidget()
        layout = QVBoxLayout(central)
        top = QHBoxLayout()
        self.connection_label = QLabel()
        self.connection_label.setObjectName('connection_label')
        font = self.connection_label.font()
        font.setBold(True)
        self.connection_label.setFont(font)
        self.parts_label = QLabel()
        self.parts_label.setObjectName('parts_label')
        # long states wrap instead of widening the window past a laptop's screen
        for label, stretch in ((self.connection_label, 2), (self.parts_label, 3)):
            label.setWordWrap(True)
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
            top.addWidget(label, stretch)
        self.stop_button = push_button('STOP', 'stop_button', 'stop every motion (Esc while '
                                       'something moves, F12 at any time, also while a '
                                       'question is open)')
        self.stop_button.setStyleSheet('QPushButton { background: #c00000; color: white; '
                                       'font-weight: bold; padding: 4px 18px; }')
        self.stop_button.clicked.connect(p.stop)
        top.addWidget(self.stop_button)
        layout.addLayout(top)

        splitter = QSplitter(Qt.Horizontal)
        splitter.setObjectName('main_splitter')
        # the sliders, the jog and the gripper scroll in a low window (a laptop's 768 px)
        manual = QScrollArea()
        manual.setObjectName('manual_pane')
        manual.setWidgetResizable(True)
        manual.setFrameShape(QFrame.NoFrame)
        manual.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        manual.setWidget(self._build_manual())
        manual.setMinimumWidth(manual.widget().minimumSizeHint().width())
        splitter.addWidget(manual)
        splitter.addWidget(self._build_program())
        splitter.addWidget(self._build_views())
        splitter.setSizes([470, 480, 550])
        layout.addWidget(splitter, 1)

        self.message_label = MessageArea()
        layout.addWidget(self.message_label)
        self.message_log = QPlainTextEdit()
        self.message_log.setObjectName('message_log')
        self.message_log.setReadOnly(True)
        self.message_log.setMaximumBlockCount(500)
        self.message_log.setFixedHeight(90)
        layout.addWidget(self.message_log)
        self.setCentralWidget(central)
        self.resize(*fitting_size(1500, 920))

    def _build_manual(self) -> QWidget:
        p = self.presenter
        column = QWidget()
        layout = QVBoxLayout(column)
        layout.setContentsMargins(0, 0, 0, 0)
        self.sliders = JointSliders(p.model, p.model.list_chains(), p.move_slider,
                                    p.set_slider_chain, p.set_joint_speed)
        layout.addWidget(self.sliders)
        self.jog_panel = JogPanel(self.jog, p.set_jog)
        layout.addWidget(self.jog_panel)
        self.target_panel = TargetPanel(p.preview_target, p.move_to_target)
        self.target_panel.use_current.clicked.connect(self._fill_current_target)
        layout.addWidget(self.target_panel)
        gripper = QGroupBox('Gripper')
        row = QHBoxLayout(gripper)
        self.gripper_label = QLabel()
        self.gripper_label.setObjectName('gripper_state')
        self.gripper_label.setWordWrap(True)
        self.gripper_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        row.addWidget(self.gripper_label, 1)
        self.clamp_button = push_button('Clamp', 'gripper_clamp')
        self.clamp_button.clicked.connect(lambda: p.gripper('clamp'))
        self.release_button = push_button('Release', 'gripper_release')
        self.release_button.clicked.connect(lambda: p.gripper('release'))
        row.addWidget(self.clamp_button)
        row.addWidget(self.release_button)
        layout.addWidget(gripper)
        layout.addStretch(1)
        return column

    def _build_program(self) -> QWidget:
        p = self.presenter
        box = QGroupBox('Program')
        layout = QVBoxLayout(box)
        buttons = QHBoxLayout()
        self.open_button = push_button('Open...', 'open_button', 'read a program file')
        self.open_button.clicked.connect(self.open_program)
        self.save_button = push_button('Save', 'save_button', 'write the program to its file '
                                       '(Ctrl+S)')
        self.save_button.clicked.connect(self.save_program)
        QShortcut(QKeySequence.Save, self, self.save_program)
        self.save_as_button = push_button('Save as...', 'save_as_button',
                                          'write the program to another file')
        self.save_as_button.clicked.connect(self.save_program_as)
        self.check_button = push_button('Check', 'check_button',
                                        'plan every step offline, within the limits and zones')
        self.check_button.clicked.connect(p.check)
        self.run_button = push_button('Run', 'run_button', 'run the program on the robot')
        self.run_button.clicked.connect(p.run)
        self.step_button = push_button('Step', 'step_button', 'run the next step only')
        self.step_button.clicked.connect(p.step)
        self.program_stop_button = push_button(
            'Stop', 'program_stop_button', 'stop the program: the motion decelerates and holds')
        self.program_stop_button.clicked.connect(p.stop)
        self.home_button = push_button('Home', 'home_button', "the chain's home pose, at the "
                                       'joint speed')
        self.home_button.clicked.connect(p.go_home)
        # the file's buttons, then the robot's: one row of eight was 700 px wide
        for button in (self.open_button, self.save_button, self.save_as_button,
                       self.check_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        moves = QHBoxLayout()
        for button in (self.run_button, self.step_button, self.program_stop_button,
                       self.home_button):
            moves.addWidget(button)
        moves.addStretch(1)
        layout.addLayout(moves)
        self.editor = ProgramEditor()
        self.editor.textChanged.connect(lambda: p.set_text(self.editor.toPlainText()))
        layout.addWidget(self.editor, 1)
        self.job_label = QLabel()
        self.job_label.setObjectName('job_label')
        layout.addWidget(self.job_label)
        command = QHBoxLayout()
        command.addWidget(QLabel('command'))
        self.command_line = QLineEdit()
        self.command_line.setObjectName('command_line')
        self.command_line.setPlaceholderText('one command, e.g. MOVL Z800 F100, then Enter')
        self.command_line.returnPressed.connect(self.run_command)
        command.addWidget(self.command_line, 1)
        self.command_button = push_button('Do', 'command_button', 'run the typed command now')
        self.command_button.clicked.connect(self.run_command)
        command.addWidget(self.command_button)
        layout.addLayout(command)
        self.status_label = QLabel()
        self.status_label.setObjectName('program_status')
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.status_label)
        return box

    def _build_views(self) -> QWidget:
        p = self.presenter
        splitter = QSplitter(Qt.Vertical)
        self.robot_view = RobotView3D(p.model, p.chain)
        self.robot_view.picked = self._pick_target
        self.robot_view.setObjectName('robot_view')
        self.robot_view.setMinimumSize(300, 200)
        view, self.preview_slider, self.preview_label = with_timeline(
            self.robot_view, 'preview', 'plan_preview', 'preview: drag to see the checked '
            'program played by the robot (dashed) before Run; nothing moves',
            't = 000.0 / 000.0 s')
        self.preview_slider.setEnabled(False)
        self.preview_slider.valueChanged.connect(self._preview)
        splitter.addWidget(view)
        state = QGroupBox('State')
        layout = QVBoxLayout(state)
        self.tool_label = QLabel()
        self.tool_label.setObjectName('tool_pose')
        self.tool_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(QLabel(f'tool ({p.model.chain_tip(p.chain)} in '
                                f'{p.model.get_chain_links(p.chain)[0]})'))
        layout.addWidget(self.tool_label)
        self.joint_table = QTableWidget(len(p.joints), 2)
        self.joint_table.setObjectName('joint_table')
        self.joint_table.setHorizontalHeaderLabels(['joint', 'position'])
        self.joint_table.verticalHeader().setVisible(False)
        self.joint_table.verticalHeader().setDefaultSectionSize(
            self.joint_table.fontMetrics().height() + 6)
        self.joint_table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.joint_table.setEditTriggers(QTableWidget.NoEditTriggers)
        for row, joint in enumerate(p.joints):
            self.joint_table.setItem(row, 0, QTableWidgetItem(joint))
            self.joint_table.setItem(row, 1, QTableWidgetItem('-'))
        layout.addWidget(self.joint_table)
        splitter.addWidget(state)
        splitter.setSizes([500, 320])
        return splitter

    # --- what a person does --------------------------------------------------------------------

    def open_program(self) -> None:
        """Ask for a program file and read it (after asking about unsaved edits)."""
        if not self._keep_or_give_up_edits('open another program'):
            return
        path = self.stops.ask_file('Open a motion program', self.presenter.source,
                                   'motion programs (*.txt *.prg);;all files (*)')
        if path:
            self.presenter.load_file(path)

    def save_program(self) -> bool:
        """Write the program to its file (ask for one when it has none); return success."""
        if not self.presenter.source:
            return self.save_program_as()
        return self.presenter.save_file(self.presenter.source)

    def save_program_as(self) -> bool:
        """Ask for a file name and write the program; return success."""
        path = self.stops.ask_file('Save the motion program', self.presenter.source,
                                   'motion programs (*.txt *.prg);;all files (*)', save=True,
                                   suffix='txt')
        return bool(path) and self.presenter.save_file(path)

    def run_command(self) -> None:
        """Run the typed command; keep it in the field when refused."""
        if self.presenter.run_line(self.command_line.text()):
            self.command_line.clear()

    def pump(self) -> None:
        """Hand the adapters' events to the presenter and let it tick (the timer calls it)."""
        if self.events is not None:
            for event in self.events():
                self.presenter.handle(event)
        self.presenter.tick()

    def _keep_or_give_up_edits(self, what: str) -> bool:
        """Ask Save / Discard / Cancel about unsaved edits; return whether to go on."""
        p = self.presenter
        if not p.modified:
            return True
        name = os.path.basename(p.source) if p.source else 'The untitled program'
        answer = ask_about_unsaved(self.stops, name, f'Save them before you {what}?')
        if answer == QMessageBox.Save:
            return self.save_program()
        return answer == QMessageBox.Discard

    def closeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Stop what moves first (the robot holds there); then ask about unsaved edits; close."""
        if self.stops.leaving:          # SIGTERM: the work is backed up, nothing is asked
            self._timer.stop()
            self._view_timer.stop()
            super().closeEvent(event)
            return
        if not self.stops.may_close() or not self._keep_or_give_up_edits('close'):
            event.ignore()
            return
        if self.presenter.modified:   # Discard: given up on purpose, not to be offered again
            self.presenter.discard_changes()
        self.presenter.closing()
        if self.presenter.busy or self.presenter.manual is not None:
            self.presenter.stop()
            if self.events is not None:
                for update in self.events():
                    self.presenter.handle(update)
        self._timer.stop()
        self._view_timer.stop()
        super().closeEvent(event)

    # --- redrawing -----------------------------------------------------------------------------

    def _changed(self, topic: str) -> None:
        views: Dict[str, Callable[[], None]] = {
            'state': self._show_state, 'links': self._show_links,
            'sliders': self._show_sliders, 'jog': self._show_jog,
            'program': self._show_program, 'job': self._show_job, 'plan': self._show_plan,
            'message': self._show_message, 'target': self._show_target}
        views[topic]()

    def _show_state(self) -> None:
        p = self.presenter
        for row, (_, text) in enumerate(p.joint_rows()):
            self.joint_table.item(row, 1).setText(text)
        self.tool_label.setText(p.tool_text())
        state = p.gripper_state or 'unknown'
        if not p.links['gripper']:
            state += ' (not connected)'
        self.gripper_label.setText(f'gripper: {state}')
        self._show_sliders_state()
        tool = p.tool_pose()
        self.robot_view.set_pose(p.pose, None if tool is None else tool.position,
                                 'joint_states' if p.connected else
                                 'joint_states (disconnected: the last pose)')

    def _show_sliders_state(self) -> None:
        p = self.presenter
        self.sliders.show_state(p.pose, {j: p.slider_target(j) for j in p.slider_joints},
                                p.joint_speed)

    def _show_links(self) -> None:
        p = self.presenter
        text, style = lamp(p.connected, f'motion process {self.where}'.rstrip())
        self.connection_label.setText(text)
        self.connection_label.setStyleSheet(style)
        self.parts_label.setText(parts_text(p.link_rows()))
        self._show_state()
        self._enable()

    def _show_sliders(self) -> None:
        p = self.presenter
        if p.slider_chain != self._shown_chain:
            self._shown_chain = p.slider_chain
            self.sliders.show_joints(p.slider_chain, p.slider_joints)
        self._show_sliders_state()

    def _show_jog(self) -> None:
        p = self.presenter
        self.jog_panel.show_settings(p.jog_frame, p.translation_step, p.rotation_step,
                                     p.translation_speed, p.rotation_speed)

    def _show_target(self) -> None:
        p = self.presenter
        target = p.target
        self.robot_view.set_ghost(None if target is None else
                                  dict(zip(target.joints, target.positions)))
        self.target_panel.result.setText('' if target is None else target.describe(p.model))
        self._enable()

    def _fill_current_target(self) -> None:
        # the typed form of the pose the console shows: x y z [mm] A B C [deg]
        pose = self.presenter.tool_pose()
        if pose is not None:
            self.target_panel.text.setText(target_text(pose))

    def _pick_target(self, pixel: np.ndarray) -> None:
        # a shift+click in the 3D view: the point there at the depth of the target shown (or
        # of the tool), with the typed orientation, solved as a typed target is
        p = self.presenter
        tool = p.tool_pose()
        if tool is None:
            p.say('target: no joint_states yet: is the motion process running?', 'error')
            return
        depth = p.target.pose.position if p.target is not None else tool.position
        position = self.robot_view.unproject(float(pixel[0]), float(pixel[1]), depth)
        text = target_text(picked_target(position, self.target_panel.text.text(), tool))
        self.target_panel.text.setText(text)
        p.preview_target(text)

    def _show_title(self) -> None:
        p = self.presenter
        name = os.path.basename(p.source) if p.source else 'untitled'
        where = f' - {self.where}' if self.where else ''
        self.setWindowTitle(f'{name}[*] - sweetie-motion console{where}')
        self.setWindowModified(p.modified)

    def _show_program(self) -> None:
        p = self.presenter
        self._show_title()
        if self.editor.toPlainText() != p.text:
            self.editor.setPlainText(p.text)
        self.editor.setReadOnly(p.job is not None and p.job.kind == 'program')
        self.editor.show_lines(p.running_line, p.next_line,
                               p.error_line if p.job is None else 0)
        self._show_status()
        self._enable()

    def _show_job(self) -> None:
        p = self.presenter
        job = p.job
        if job is not None and self.robot_view.ghost is not None:
            # the robot itself moves now: no dashed preview or target beside it
            self.robot_view.set_ghost(None)
            self.preview_slider.blockSignals(True)
            self.preview_slider.setValue(0)
            self.preview_slider.blockSignals(False)
            self.preview_label.setText('')
        if job is None:
            self.job_label.setText(f'next: line {p.next_line}' if p.next_line else 'idle')
        else:
            where = f' - line {job.line}' if job.line else ''
            self.job_label.setText(f'{"stopping " if job.stopping else ""}'
                                   f'{job.description}{where}')
        self._show_program()

    def _show_plan(self) -> None:
        plan = self.presenter.plan
        if plan is None:
            self.robot_view.set_path(None, None)
        else:
            self.robot_view.set_path(plan.tool, plan.waypoints)
        samples = 0 if plan is None else len(plan.positions)
        self.preview_slider.blockSignals(True)
        self.preview_slider.setRange(0, max(samples - 1, 0))
        self.preview_slider.setValue(0)
        self.preview_slider.blockSignals(False)
        self.preview_slider.setEnabled(samples > 1)
        self.preview_label.setText('')
        self._show_status()

    def _preview(self, index: int) -> None:
        """Show the checked program's motion at sample ``index``: the robot there, dashed."""
        p = self.presenter
        plan = p.plan
        if plan is None or not 0 <= index < len(plan.positions):
            return
        self.robot_view.set_ghost(dict(zip(p.joints, plan.positions[index])))
        self.robot_view.redraw()
        last = max(len(plan.positions) - 1, 1)
        self.preview_label.setText(f't = {plan.duration * index / last:.1f} / '
                                   f'{plan.duration:.1f} s')

    def _show_status(self) -> None:
        text, level = self.presenter.program_status()
        self.status_label.setText(text)
        self.status_label.setFont(QFontDatabase.systemFont(
            QFontDatabase.FixedFont if self.presenter.parse_error is not None else
            QFontDatabase.GeneralFont))
        self.status_label.setStyleSheet('color: #c00000' if level == 'error' else '')

    def _show_message(self) -> None:
        message = self.presenter.message
        self.message_label.show_message(message.text, message.level)
        stamp = time.strftime('%H:%M:%S')
        self.message_log.appendPlainText(f'{stamp} {message.level:7s} {message.text}')

    def _enable(self) -> None:
        p = self.presenter
        runs = p.can('run')
        for button in (self.run_button, self.step_button):
            button.setEnabled(runs)
        self.check_button.setEnabled(p.parse_error is None and bool(p.steps))
        self.home_button.setEnabled(p.can('home'))
        self.jog_panel.set_enabled(p.can('jog'))
        self.target_panel.solve_button.setEnabled(p.connected)
        self.target_panel.move_button.setEnabled(p.target is not None and p.can('home'))
        self.clamp_button.setEnabled(p.can('gripper'))
        self.release_button.setEnabled(p.can('gripper'))
        self.command_button.setEnabled(p.connected and p.job is None)
        for slider in self.sliders.sliders.values():
            slider.setEnabled(p.can('sliders'))
        self.open_button.setEnabled(p.job is None or p.job.kind != 'program')
