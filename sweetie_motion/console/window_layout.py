"""
The console window's layout: the manual moves, the program, the views, and their wiring.

A part of :class:`~sweetie_motion.console.window.ConsoleWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

from typing import Tuple

from PyQt5.QtCore import Qt
from PyQt5.QtGui import QKeySequence
from PyQt5.QtWidgets import (
    QFrame, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit, QScrollArea,
    QShortcut, QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)
from sweetie_motion.console.program_text import RECONFIGURING
from sweetie_motion.console.views import (JogPanel, JointSliders, PANEL_MARGINS, ProgramEditor,
                                          TargetPanel)
from sweetie_motion.gui.robot_view import RobotView3D
from sweetie_motion.gui.widgets import fitting_size, MessageArea, push_button, with_timeline


class ConsoleLayout:
    """
    The console window's frame and wiring.

    The window's panes, built once: the manual moves (sliders, jog, target), the program
    (its buttons, editor and command line) and the views (the robot in 3D, the joints, the
    tool), with which signal calls what.

    A mixin of :class:`~sweetie_motion.console.window.ConsoleWindow`.
    """

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
        # the stops act at the press (an emergency stop's habit): see the editor's layout
        self.stop_button.pressed.connect(p.stop)
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
        layout.setSpacing(2)   # with the solved target's line, the gripper still in sight
        self.sliders = JointSliders(p.model, p.model.list_chains(), p.move_slider,
                                    p.set_slider_chain, p.set_joint_speed)
        layout.addWidget(self.sliders)
        self.jog_panel = JogPanel(self.jog, p.set_jog)
        layout.addWidget(self.jog_panel)
        self.target_panel = TargetPanel(p.preview_target, p.move_to_target)
        self.target_panel.use_current.clicked.connect(self._fill_current_target)
        layout.addWidget(self.target_panel)
        gripper = QGroupBox('Gripper')
        gripper.setObjectName('gripper_panel')
        row = QHBoxLayout(gripper)
        row.setContentsMargins(*PANEL_MARGINS)
        self.gripper_label = QLabel()
        self.gripper_label.setObjectName('gripper_state')
        self.gripper_label.setWordWrap(True)
        self.gripper_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        row.addWidget(self.gripper_label, 1)
        self.clamp_button = push_button('Clamp', 'gripper_clamp')
        self.clamp_button.clicked.connect(lambda: p.gripper('clamp'))
        self.release_button = push_button('Release', 'gripper_release')
        self.release_button.clicked.connect(lambda: p.gripper('release'))
        for button in (self.clamp_button, self.release_button):
            # as narrow as their words: the state beside them stays on one line
            button.setFixedWidth(button.fontMetrics().horizontalAdvance(button.text()) + 24)
            row.addWidget(button)
        layout.addWidget(gripper)
        layout.addStretch(1)
        return column

    def _build_program(self) -> QWidget:
        p = self.presenter
        box = QGroupBox('Program')
        layout = QVBoxLayout(box)
        for row in self._build_program_buttons():
            layout.addLayout(row)
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

    def _build_program_buttons(self) -> Tuple[QHBoxLayout, QHBoxLayout]:
        """Build the program's buttons: the file's row and the robot's row."""
        p = self.presenter
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
        self.run_button.clicked.connect(self.run_program)
        self.resume_button = push_button('Resume', 'resume_button', 'go on with a stopped '
                                         'program at the line it stopped on, from where the '
                                         'arm is (Run starts from the top)')
        self.resume_button.clicked.connect(p.resume)
        self.step_button = push_button('Step', 'step_button', 'run the next step only')
        self.step_button.clicked.connect(self.step_program)
        self.program_stop_button = push_button(
            'Stop', 'program_stop_button', 'stop the program: the motion decelerates and holds')
        self.program_stop_button.pressed.connect(p.stop)
        self.home_button = push_button('Home', 'home_button', "the chain's home pose, at the "
                                       'joint speed')
        self.home_button.clicked.connect(p.go_home)
        buttons = QHBoxLayout()
        # the file's buttons, then the robot's: one row of eight was 700 px wide
        for button in (self.open_button, self.save_button, self.save_as_button,
                       self.check_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        moves = QHBoxLayout()
        for button in (self.run_button, self.resume_button, self.step_button,
                       self.program_stop_button, self.home_button):
            moves.addWidget(button)
        moves.addStretch(1)
        return buttons, moves

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
            f'000.0 s / 000.0 s \N{EM DASH} line 000{RECONFIGURING}')
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
