"""
The editor's own widgets: its joint sliders (grouped, filtered) and its links' lamps.

The widgets the console shares are in :mod:`sweetie_motion.gui.widgets`.

Layout only: they show what they are given and report what a person does through callables.
"""

import time
from typing import Callable, Dict, List, Mapping, Sequence, Tuple

from PyQt5.QtWidgets import (
    QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QScrollArea, QSlider,
    QVBoxLayout, QWidget,
)
from sweetie_motion.editor.presenter import PART_NAMES, PARTS
from sweetie_motion.gui.widgets import push_button, SliderRow

#: slider steps per radian
STEPS = 1000
#: after a person moved a slider, it shows its target rather than the measured pose this long [s]
HOLD = 1.5


#: the choices of the sliders' scope
ANIMATION_JOINTS, ALL_JOINTS = "the animation's joints", 'all joints'


def joint_groups(model) -> List[Tuple[str, List[str]]]:
    """
    Return (group, joints) of the robot model's resource groups, the joints an author poses.

    Groups, not chains, because chains overlap (``nose`` shares the head's joints); joints of
    no group come last under 'other'.
    """
    if model is None:
        return []
    seen = set()
    groups = []
    for group in model.list_groups():
        joints = [j for j in model.get_group_joints(group)
                  if model.is_posable(j) and j not in seen]
        seen.update(joints)
        if joints:
            groups.append((group, joints))
    rest = [j for j in model.list_all_joints() if j not in seen and model.is_posable(j)]
    if rest:
        groups.append(('other', rest))
    return groups


class ResetLabel(QLabel):
    """A label that calls ``reset`` when double-clicked (a slider's value: back to 0)."""

    def __init__(self, text: str, reset: Callable[[], None]) -> None:
        super().__init__(text)
        self.reset = reset

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Reset the slider."""
        self.reset()


class JointSliders(QScrollArea):
    """
    One slider per joint, grouped like joint_state_publisher_gui, over the joint's limits.

    :param model: the configured RobotModel (joints, groups, position limits).
    :param moved: called with (joint, position [rad]) when a person moves a slider.
    """

    def __init__(self, model, moved: Callable[[str, float], None]) -> None:
        super().__init__()
        self.setObjectName('joint_sliders')
        self.setWidgetResizable(True)
        self.moved = moved
        self.rows: Dict[str, SliderRow] = {}
        self.sliders: Dict[str, QSlider] = {}
        self.values: Dict[str, QLabel] = {}
        self._touched: Dict[str, float] = {}
        #: per joint, the widgets of its row (hidden together by the filter), per group its box
        self._rows: Dict[str, Tuple[QWidget, ...]] = {}
        self._boxes: Dict[str, Tuple[QGroupBox, List[str]]] = {}
        self._animation: List[str] = []
        inner = QWidget()
        layout = QVBoxLayout(inner)
        # which sliders: the animation's joints (so that the head's are not below the fold of
        # 32 sliders) or all, and a name filter, as joint_state_publisher_gui users expect
        filters = QHBoxLayout()
        self.scope = QComboBox()
        self.scope.setObjectName('slider_scope')
        self.scope.addItems([ANIMATION_JOINTS, ALL_JOINTS])
        self.scope.currentTextChanged.connect(lambda _: self._filter())
        self.name_filter = QLineEdit()
        self.name_filter.setObjectName('slider_filter')
        self.name_filter.setPlaceholderText('filter: joint or group')
        self.name_filter.setClearButtonEnabled(True)
        self.name_filter.textChanged.connect(lambda _: self._filter())
        self.zero_button = push_button('Zero', 'sliders_zero', 'move the joints shown to 0 '
                                       '(the robot follows; each slider: double-click its '
                                       'value)')
        self.zero_button.clicked.connect(self.zero_shown)
        # two rows: in one, the filter and Zero were cut in the editor's 280 px pane
        filters.addWidget(self.scope, 1)
        filters.addWidget(self.zero_button)
        layout.addLayout(filters)
        layout.addWidget(self.name_filter)
        for group, joints in joint_groups(model):
            layout.addWidget(self._group_box(model, group, joints))
        layout.addStretch(1)
        self.setWidget(inner)
        self.setMinimumWidth(260)

    def _group_box(self, model, group: str, joints: Sequence[str]) -> QGroupBox:
        """Return a group's box of sliders, one row per joint: name, slider, value."""
        box = QGroupBox(group)
        box.setObjectName(f'sliders_{group}')
        self._boxes[group] = (box, list(joints))
        grid = QGridLayout(box)
        for row, joint in enumerate(joints):
            info = model.get_joint_info(joint)
            value = ResetLabel('+0.000', lambda j=joint: self.set_position(j, 0.0))
            value.setToolTip(f'{joint} [rad]: double-click to move it to 0')
            value.setMinimumWidth(value.fontMetrics().horizontalAdvance('+0.000 '))
            slider_row = SliderRow(
                joint, info.lower, info.upper, STEPS,
                f'{joint}: [{info.lower:.3f}, {info.upper:.3f}] rad', value, self._moved,
                lambda v, label=value: label.setText(f'{v:+.3f}'))
            slider_row.slider.setSingleStep(STEPS // 100)
            slider_row.slider.setPageStep(STEPS // 10)
            for column, widget in enumerate(slider_row.widgets):
                grid.addWidget(widget, row, column)
            self._rows[joint] = slider_row.widgets
            self.rows[joint] = slider_row
            self.sliders[joint] = slider_row.slider
            self.values[joint] = value
        return box

    def show_animation_joints(self, joints: Sequence[str]) -> None:
        """Take the animation's joints (shown alone while the scope says so)."""
        self._animation = [j for j in joints if j in self.sliders]
        self._filter()

    def zero_shown(self) -> None:
        """Move every joint whose slider is shown to 0, as joint_state_publisher_gui's Center."""
        for joint in self.visible_joints():
            self.set_position(joint, 0.0)

    def visible_joints(self) -> List[str]:
        """Return the joints whose sliders the filter shows."""
        return [j for j, row in self._rows.items() if not row[1].isHidden()]

    def _filter(self) -> None:
        scoped = self.scope.currentText() == ANIMATION_JOINTS and bool(self._animation)
        only = set(self._animation) if scoped else None
        text = self.name_filter.text().strip().lower()
        for group, (box, joints) in self._boxes.items():
            shown = 0
            for joint in joints:
                visible = (only is None or joint in only) and (
                    not text or text in joint.lower() or text in group.lower())
                for widget in self._rows[joint]:
                    widget.setVisible(visible)
                shown += visible
            box.setVisible(shown > 0)

    def _moved(self, joint: str, position: float) -> None:
        self._touched[joint] = time.monotonic()
        self.moved(joint, position)

    def set_position(self, joint: str, position: float) -> None:
        """Move a slider as a person would (it sends the pose)."""
        self.rows[joint].set_position(position)

    def show_pose(self, pose: Mapping[str, float]) -> None:
        """Show the robot's pose on the sliders a person is not moving."""
        now = time.monotonic()
        for joint, row in self.rows.items():
            if joint not in pose or row.slider.isSliderDown() or \
                    now - self._touched.get(joint, -HOLD) < HOLD:
                continue
            row.show(pose[joint])


class LinkPanel(QWidget):
    """Connected / disconnected lamps for the parts of the robot the editor uses."""

    def __init__(self) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.labels: Dict[str, QLabel] = {}
        for part in PARTS:
            label = QLabel()
            label.setObjectName(f'link_{part}')
            layout.addWidget(label)
            self.labels[part] = label
        layout.addStretch(1)
        self.show_links(dict.fromkeys(PARTS, False))

    def show_links(self, links: Mapping[str, bool]) -> None:
        """Show each part as connected (green, ✓) or disconnected (red, ✗; the tooltip says)."""
        for part, label in self.labels.items():
            up = bool(links.get(part))
            # short: four long lamps made the window wider than a laptop's screen
            label.setText(f'● {PART_NAMES[part]} {"✓" if up else "✗"}')
            label.setToolTip(f'{PART_NAMES[part]}: {"connected" if up else "disconnected"}')
            label.setStyleSheet('color: #1a7f1a' if up else 'color: #c00000')
