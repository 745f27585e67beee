"""
The console's widgets: the program editor, the joint sliders, the jog panel, the target.

Layout only: they show what they are given and report what a person does through callables.
"""

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from PyQt5.QtCore import QRect, QSize, Qt
from PyQt5.QtGui import (
    QColor, QFontDatabase, QPainter, QTextCursor, QTextFormat,
)
from PyQt5.QtWidgets import (
    QButtonGroup, QComboBox, QDoubleSpinBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel,
    QLineEdit, QPlainTextEdit, QPushButton, QRadioButton, QSizePolicy, QSlider, QSpinBox,
    QTextEdit, QVBoxLayout, QWidget,
)
from sweetie_motion.console.manual_moves import (
    AXES, display_unit, JOINT_SPEED_RANGE, ROTATION_SPEED_RANGE, ROTATION_STEPS, slider_range,
    TRANSLATION_SPEED_RANGE, TRANSLATION_STEPS,
)
from sweetie_motion.gui.widgets import push_button, SliderRow
from sweetie_motion.model.robot_model import RobotModel

#: slider steps per display unit (0.1 deg, 0.1 mm)
STEPS_PER_UNIT = 10


class _LineNumbers(QWidget):
    """The program editor's gutter: line numbers."""

    def __init__(self, editor: 'ProgramEditor') -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802 -- Qt API
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802 -- Qt API
        self.editor.paint_gutter(event)


class ProgramEditor(QPlainTextEdit):
    """
    The program's text with line numbers; the running, next and faulty lines highlighted.

    Running: yellow; next (a paused program goes on there): light blue; error: light red.
    """

    COLORS = {'running': '#fff2a8', 'next': '#d6e9ff', 'error': '#ffc9c9'}

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName('program_editor')
        self.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.setPlaceholderText('; a motion program, one command per line, e.g.\nHOME\n'
                                'MOVL X1037 Y0 Z735 A0 B90 C180 F250\nGRIP CLAMP\nWAIT 0.5')
        self.highlighted: Dict[str, int] = {}
        self._gutter = _LineNumbers(self)
        self.blockCountChanged.connect(lambda _: self._fit_gutter())
        self.updateRequest.connect(self._scroll_gutter)
        self._fit_gutter()

    def gutter_width(self) -> int:
        """Return the gutter's width [px] for the number of lines."""
        digits = len(str(max(1, self.blockCount())))
        return 8 + self.fontMetrics().horizontalAdvance('9') * max(digits, 2)

    def _fit_gutter(self) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        super().resizeEvent(event)
        rect = self.contentsRect()
        self._gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(),
                                       rect.height()))

    def paint_gutter(self, event) -> None:
        """Paint the line numbers of the visible lines (the error line's in red)."""
        painter = QPainter(self._gutter)
        painter.fillRect(event.rect(), QColor('#eeeeee'))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            if block.isVisible():
                painter.setPen(QColor('#c00000') if number == self.highlighted.get('error')
                               else QColor('#808080'))
                painter.drawText(0, top, self._gutter.width() - 4, height, Qt.AlignRight,
                                 str(number))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    def show_lines(self, running: int = 0, next_line: int = 0, error: int = 0) -> None:
        """Highlight lines (1-based; 0: none)."""
        self.highlighted = {k: v for k, v in (('running', running), ('next', next_line),
                                              ('error', error)) if v}
        selections = []
        for kind in ('next', 'running', 'error'):
            line = self.highlighted.get(kind)
            block = self.document().findBlockByNumber(line - 1) if line else None
            if block is None or not block.isValid():
                continue
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(self.COLORS[kind]))
            selection.format.setProperty(QTextFormat.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        self.setExtraSelections(selections)
        self._gutter.update()
        focus = running or error
        if focus:
            block = self.document().findBlockByNumber(focus - 1)
            if block.isValid() and not self.hasFocus():
                cursor = QTextCursor(block)
                self.setTextCursor(cursor)
                self.ensureCursorVisible()


class JointSliders(QGroupBox):
    """
    The sliders of one chain's joints over their limits, with a speed setting.

    A slider shows the robot's measured position, or the target a person set while the joint
    moves there; each label reads measured (-> target).

    :param model: the configured RobotModel.
    :param chains: the chains a person may choose from.
    :param moved: called with (joint, position [rad or m]) when a person moves a slider.
    :param chain_chosen: called with a chain's name.
    :param speed_set: called with the speed [% of the joints' velocity limits].
    """

    def __init__(self, model: RobotModel, chains: Sequence[str],
                 moved: Callable[[str, float], None], chain_chosen: Callable[[str], None],
                 speed_set: Callable[[int], None]) -> None:
        super().__init__('Joints')
        self.setObjectName('joint_sliders')
        self.model = model
        self.moved = moved
        self.rows: Dict[str, SliderRow] = {}
        self.sliders: Dict[str, QSlider] = {}
        self.values: Dict[str, QLabel] = {}
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel('chain'))
        self.chain_combo = QComboBox()
        self.chain_combo.setObjectName('slider_chain')
        self.chain_combo.addItems(list(chains))
        self.chain_combo.currentTextChanged.connect(chain_chosen)
        top.addWidget(self.chain_combo, 1)
        top.addWidget(QLabel('speed'))
        self.speed = QSpinBox()
        self.speed.setObjectName('joint_speed')
        self.speed.setRange(*JOINT_SPEED_RANGE)
        self.speed.setSuffix(' %')
        self.speed.setToolTip("of each joint's velocity limit (the sliders and Home)")
        self.speed.valueChanged.connect(speed_set)
        top.addWidget(self.speed)
        layout.addLayout(top)
        self.grid = QGridLayout()
        layout.addLayout(self.grid)

    def show_joints(self, chain: str, joints: Sequence[str]) -> None:
        """Rebuild the sliders for ``joints`` of ``chain``."""
        if self.chain_combo.currentText() != chain:
            self.chain_combo.setCurrentText(chain)
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.rows, self.sliders, self.values = {}, {}, {}
        for row, joint in enumerate(joints):
            unit, factor = display_unit(self.model, joint)
            lower, upper = slider_range(self.model, joint)
            value = QLabel('-')
            value.setMinimumWidth(value.fontMetrics().horizontalAdvance('+000.0 -> +000.0 deg'))
            slider_row = SliderRow(joint, lower, upper, factor * STEPS_PER_UNIT,
                                   f'{joint}: [{lower * factor:.1f}, {upper * factor:.1f}] '
                                   f'{unit}', value, self.moved)
            slider_row.slider.setSingleStep(STEPS_PER_UNIT)
            slider_row.slider.setPageStep(STEPS_PER_UNIT * 10)
            for column, widget in enumerate(slider_row.widgets):
                self.grid.addWidget(widget, row, column)
            self.rows[joint] = slider_row
            self.sliders[joint] = slider_row.slider
            self.values[joint] = value

    def set_position(self, joint: str, position: float) -> None:
        """Move a slider as a person would (it sends the target) [rad or m]."""
        self.rows[joint].set_position(position)

    def show_state(self, measured: Mapping[str, float], targets: Mapping[str, Optional[float]],
                   speed: int) -> None:
        """Show the robot's positions and the targets (None: the joint is not moved)."""
        if self.speed.value() != speed:
            self.speed.setValue(speed)
        for joint, slider_row in self.rows.items():
            unit, factor = display_unit(self.model, joint)
            value, target = measured.get(joint), targets.get(joint)
            shown = target if target is not None else value
            if shown is not None and not slider_row.slider.isSliderDown():
                slider_row.show(shown)
            text = '-' if value is None else f'{value * factor:+.1f}'
            if target is not None:
                text += f' -> {target * factor:+.1f}'
            self.values[joint].setText(f'{text} {unit}')


#: the margins of the manual pane's boxes [px]: left, top, right, bottom (Qt's 9-11 px each
#: left the gripper under the fold of a laptop's 768 px)
PANEL_MARGINS = (6, 4, 6, 4)
#: the narrowest a jog button gets [px] ('rx +' and its frame)
COMPACT_BUTTON = 40


class JogPanel(QGroupBox):
    """
    Cartesian jog: ±x/y/z and ±rx/ry/rz (turns about x, y, z) in the base or the tool frame.

    :param jog: called with (axis, +1 or -1).
    :param settings: called with keyword settings (frame, translation_step, rotation_step,
        translation_speed, rotation_speed), see ConsolePresenter.set_jog.
    """

    def __init__(self, jog: Callable[[str, int], None], settings: Callable[..., bool]) -> None:
        super().__init__('Cartesian jog')
        self.setObjectName('jog_panel')
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*PANEL_MARGINS)
        frames = QHBoxLayout()
        frames.addWidget(QLabel('frame'))
        self.frame_group = QButtonGroup(self)
        self.frame_buttons: Dict[str, QRadioButton] = {}
        for frame, text in (('base', 'base'), ('tool', 'tool')):
            button = QRadioButton(text)
            button.setObjectName(f'jog_frame_{frame}')
            button.toggled.connect(lambda on, f=frame: on and settings(frame=f))
            self.frame_group.addButton(button)
            self.frame_buttons[frame] = button
            frames.addWidget(button)
        frames.addStretch(1)
        layout.addLayout(frames)
        form = QGridLayout()
        self.translation_step = QComboBox()
        self.translation_step.setObjectName('jog_translation_step')
        self.translation_step.addItems([f'{s:g}' for s in TRANSLATION_STEPS])
        self.translation_step.currentTextChanged.connect(
            lambda text: text and settings(translation_step=float(text)))
        self.rotation_step = QComboBox()
        self.rotation_step.setObjectName('jog_rotation_step')
        self.rotation_step.addItems([f'{s:g}' for s in ROTATION_STEPS])
        self.rotation_step.currentTextChanged.connect(
            lambda text: text and settings(rotation_step=float(text)))
        self.translation_speed = QDoubleSpinBox()
        self.translation_speed.setObjectName('jog_translation_speed')
        self.translation_speed.setRange(*TRANSLATION_SPEED_RANGE)
        self.translation_speed.setDecimals(0)
        self.translation_speed.valueChanged.connect(
            lambda value: settings(translation_speed=value))
        self.rotation_speed = QDoubleSpinBox()
        self.rotation_speed.setObjectName('jog_rotation_speed')
        self.rotation_speed.setRange(*ROTATION_SPEED_RANGE)
        self.rotation_speed.setDecimals(0)
        self.rotation_speed.valueChanged.connect(lambda value: settings(rotation_speed=value))
        form.addWidget(QLabel('step'), 0, 0)
        form.addWidget(self.translation_step, 0, 1)
        form.addWidget(QLabel('mm'), 0, 2)
        form.addWidget(self.rotation_step, 0, 3)
        form.addWidget(QLabel('deg'), 0, 4)
        form.addWidget(QLabel('speed'), 1, 0)
        form.addWidget(self.translation_speed, 1, 1)
        form.addWidget(QLabel('mm/s'), 1, 2)
        form.addWidget(self.rotation_speed, 1, 3)
        form.addWidget(QLabel('deg/s'), 1, 4)
        layout.addLayout(form)
        layout.addLayout(self._jog_buttons(jog))

    def _jog_buttons(self, jog: Callable[[str, int], None]) -> QGridLayout:
        """Return the grid of jog buttons: - and + of every axis."""
        buttons = QGridLayout()
        self.buttons: Dict[Tuple[str, int], QPushButton] = {}
        for k, axis in enumerate(AXES):
            for column, direction in ((0, -1), (1, 1)):
                sign = '+' if direction > 0 else '-'
                button = QPushButton(f'{axis} {sign}')
                button.setObjectName(f'jog_{axis}_{"plus" if direction > 0 else "minus"}')
                button.setToolTip(f'{"move along" if k < 3 else "turn about"} '
                                  f'{"xyz"[k % 3]} by one step ({sign})')
                button.clicked.connect(lambda _, a=axis, d=direction: jog(a, d))
                # six to a row share the pane's width instead of widening it
                button.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
                button.setMinimumWidth(COMPACT_BUTTON)
                # translations on one row, turns on the next: two rows, not three, so that
                # the target and the gripper fit under the jog on a laptop's 768 px
                buttons.addWidget(button, k // 3, (k % 3) * 2 + column)
                self.buttons[(axis, direction)] = button
        return buttons

    def show_settings(self, frame: str, translation_step: float, rotation_step: float,
                      translation_speed: float, rotation_speed: float) -> None:
        """Show the presenter's settings (without calling back)."""
        widgets = (self.frame_group, self.translation_step, self.rotation_step,
                   self.translation_speed, self.rotation_speed)
        blocked = [w.blockSignals(True) for w in widgets]
        for button in self.frame_buttons.values():
            button.blockSignals(True)
        try:
            self.frame_buttons[frame].setChecked(True)
            _choose(self.translation_step, translation_step)
            _choose(self.rotation_step, rotation_step)
            self.translation_speed.setValue(translation_speed)
            self.rotation_speed.setValue(rotation_speed)
        finally:
            for widget, was in zip(widgets, blocked):
                widget.blockSignals(was)
            for button in self.frame_buttons.values():
                button.blockSignals(False)

    def set_enabled(self, enabled: bool) -> None:
        """Enable or disable the jog buttons."""
        for button in self.buttons.values():
            button.setEnabled(enabled)


def _choose(combo: QComboBox, value: float) -> None:
    text = f'{value:g}'
    if combo.findText(text) < 0:
        combo.addItem(text)
    combo.setCurrentText(text)


def lamp(up: bool, text: str) -> Tuple[str, str]:
    """Return the text and style of a connected (green) / disconnected (red) lamp."""
    return (f'● {text}: {"connected" if up else "disconnected"}',
            'color: #1a7f1a' if up else 'color: #c00000')


def parts_text(rows: List[Tuple[str, bool]]) -> str:
    """Return the parts' states in one line ('✓' up, '✗' down)."""
    return '   '.join(f'{"✓" if up else "✗"} {name}' for name, up in rows)


class TargetPanel(QGroupBox):
    """
    A Cartesian target typed, solved by IK and shown before Move moves the robot there.

    :param solve: called with the typed text; :param move: called to go to the solution.
    """

    def __init__(self, solve: Callable[[str], None], move: Callable[[], None]) -> None:
        super().__init__('Go to a tool pose')
        self.setObjectName('target_panel')
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*PANEL_MARGINS)
        self.text = QLineEdit()
        self.text.setObjectName('target_pose')
        self.text.setPlaceholderText('x y z [mm] A B C [deg]')
        self.text.setToolTip('the tool pose to go to, as the pose above shows it; Enter or '
                             'Solve shows the joints first, Move goes there')
        self.text.returnPressed.connect(lambda: solve(self.text.text()))
        # the pose and its buttons on one row: the panel and the gripper under it fit a
        # laptop's 768 px without scrolling
        row = QHBoxLayout()
        row.addWidget(self.text, 1)
        self.use_current = push_button('Current', 'target_current',
                                       'fill in the tool pose now (then edit it)')
        self.solve_button = push_button('Solve', 'target_solve',
                                        'inverse kinematics from where the robot is; nothing '
                                        'moves')
        self.solve_button.clicked.connect(lambda: solve(self.text.text()))
        self.move_button = push_button('Move', 'target_move',
                                       'a joint move to the solution shown (dashed)')
        self.move_button.clicked.connect(move)
        for button in (self.use_current, self.solve_button, self.move_button):
            # as narrow as their words: the typed pose gets the rest of the row
            button.setFixedWidth(button.fontMetrics().horizontalAdvance(button.text()) + 24)
            row.addWidget(button)
        layout.addLayout(row)
        self.result = QLabel()
        self.result.setObjectName('target_result')
        self.result.setWordWrap(True)
        self.result.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Minimum)
        layout.addWidget(self.result)
