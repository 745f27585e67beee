"""
Widgets of the editor and the console windows: sliders, messages, labels, buttons, timelines.

Layout only: they show what they are given and report what a person does through callables.
"""

import contextlib
import math
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from PyQt5.QtCore import QRect, Qt, QTimer
from PyQt5.QtGui import QFontMetrics, QPainter
from PyQt5.QtWidgets import (
    QApplication, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QSlider, QVBoxLayout, QWidget,
)


def with_timeline(view: QWidget, title: str, name: str, tip: str, longest: str,
                  *extra: QWidget) -> Tuple[QWidget, QSlider, QLabel]:
    """
    Return ``view`` with a timeline under it: (the pane, the slider, the label of its time).

    The editor's play head and the console's preview: a titled horizontal slider over a
    motion's time (object name ``name``), its time label (``name + '_time'``, as wide as
    ``longest`` needs) and ``extra`` widgets after them.
    """
    pane = QWidget()
    layout = QVBoxLayout(pane)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(view, 1)
    slider = QSlider(Qt.Horizontal)
    slider.setObjectName(name)
    slider.setToolTip(tip)
    label = fixed_width_label(f'{name}_time', '', longest)
    row = QHBoxLayout()
    row.addWidget(QLabel(title))
    row.addWidget(slider, 1)
    row.addWidget(label)
    for widget in extra:
        row.addWidget(widget)
    layout.addLayout(row)
    return pane, slider, label


class SliderRow:
    """
    One joint's slider, the one widget of the editor's and the console's sliders.

    Its name, a QSlider over [``lower``, ``upper``] in ``scale`` steps per unit (never beyond
    a limit: the ends are rounded inwards) and a value label (``slider_<joint>``,
    ``slider_value_<joint>`` for tests and style sheets). ``moved(joint, value)`` is called
    when a person moves it, never when :meth:`show` moves it.

    :param shown: called with every value the slider takes (e.g. to write the label).
    """

    def __init__(self, joint: str, lower: float, upper: float, scale: float, tip: str,
                 value: QLabel, moved: Callable[[str, float], None],
                 shown: Optional[Callable[[float], None]] = None) -> None:
        self.joint = joint
        self.scale = float(scale)
        self.name = QLabel(joint)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setObjectName(f'slider_{joint}')
        self.slider.setRange(math.ceil(lower * scale - 1e-9), math.floor(upper * scale + 1e-9))
        self.slider.setToolTip(tip)
        self.value = value
        self.value.setObjectName(f'slider_value_{joint}')
        self._moved, self._shown = moved, shown
        self._showing = False
        self.slider.valueChanged.connect(self._changed)

    @property
    def widgets(self) -> Tuple[QWidget, QWidget, QWidget]:
        """Return the name, the slider and the value label, in their grid order."""
        return self.name, self.slider, self.value

    def set_position(self, position: float) -> None:
        """Move the slider as a person would (``moved`` is called) [rad or m]."""
        self.slider.setValue(int(round(position * self.scale)))

    def show(self, position: float) -> None:
        """Show a position without reporting it as a person's move [rad or m]."""
        self._showing = True
        try:
            self.slider.setValue(int(round(position * self.scale)))
        finally:
            self._showing = False

    def _changed(self, steps: int) -> None:
        position = steps / self.scale
        if self._shown is not None:
            self._shown(position)
        if not self._showing:
            self._moved(self.joint, position)


class MessageArea(QLabel):
    """
    The editor's message line: the outcome of the last action, refusals in red.

    It wraps long messages instead of widening the window (a QLabel without wrapping asks for
    the width of its text, and the window grows to give it), and keeps the height of
    :data:`LINES` lines whatever the message, so that the window's panels do not jump when a
    message wraps; a message longer than that ends in "…" (a long Execute result wrapped
    below the window's edge) and the whole text is its tooltip (and :attr:`full_text`).
    """

    COLORS = {'info': '#202020', 'warning': '#8a5a00', 'error': '#c00000'}
    #: the lines the message area always has room for
    LINES = 2

    def __init__(self) -> None:
        super().__init__('')
        self.setObjectName('message_label')
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.level = 'info'
        self.show_message('')

    def show_message(self, text: str, level: str = 'info') -> None:
        """Show ``text`` (replacing the message before)."""
        self.level = level
        #: the whole message (what is shown may end in "…")
        self.full_text = text
        self.setToolTip(text)
        self.setStyleSheet(f'color: {self.COLORS.get(level, "#202020")}; padding: 2px;'
                           + (' font-weight: bold;' if level == 'error' else ''))
        # the bold font of an error is the taller one: the height holds for every level
        bold = self.font()
        bold.setBold(True)
        # the lines, the padding (2 px each side) and the label's margin
        self.setFixedHeight(QFontMetrics(bold).lineSpacing() * self.LINES + 10)
        self._fit()

    def text(self) -> str:
        """Return the whole message (:meth:`shown_text`: what the area shows of it)."""
        return getattr(self, 'full_text', super().text())

    def shown_text(self) -> str:
        """Return the message as shown (its start and "…" when it is longer than the area)."""
        return super().text()

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Fit the message to the new width."""
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Show the whole message, or the longest start of it that fits, ending in "…"."""
        text = getattr(self, 'full_text', '')
        font = self.font()
        font.setBold(self.level == 'error')
        metrics = QFontMetrics(font)
        room = QRect(0, 0, max(self.contentsRect().width() - 4, 1), 1 << 20)
        # LINES lines, not one more (a line's box is a little taller than its spacing)
        lines = metrics.lineSpacing() * (self.LINES + 0.5)

        def fits(shown: str) -> bool:
            return metrics.boundingRect(room, Qt.TextWordWrap, shown).height() <= lines
        if not text or self.width() <= 0 or fits(text):
            self.setText(text)
            return
        low, high = 0, len(text)
        while low < high:                      # the longest start that fits with "…"
            middle = (low + high + 1) // 2
            if fits(text[:middle].rstrip() + '…'):
                low = middle
            else:
                high = middle - 1
        self.setText(text[:low].rstrip() + '…')


class ElidedLabel(QLabel):
    """
    A one-line label that never asks for its text's width: what does not fit is elided.

    :meth:`text` is the whole text; the label paints as much as fits with "…" at the end,
    and then its tooltip starts with the whole text (at 1366 x 768 the checks' line read
    "load 1", the play head's time a lone "t"). :meth:`setToolTip` sets what the tooltip says
    besides.
    """

    def __init__(self, text: str = '', name: str = '') -> None:
        super().__init__(text)
        if name:
            self.setObjectName(name)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self._details = ''
        self._fit()

    def shown_text(self) -> str:
        """Return the text as painted (elided when the label is narrower than it)."""
        return self.fontMetrics().elidedText(self.text(), Qt.ElideRight,
                                             max(self.contentsRect().width(), 0))

    def setText(self, text: str) -> None:  # noqa: N802 -- Qt API
        """Show ``text`` (elided if it does not fit)."""
        super().setText(text)
        self._fit()

    def setToolTip(self, text: str) -> None:  # noqa: N802 -- Qt API
        """Say ``text`` in the tooltip (after the whole text when it is elided)."""
        self._details = text
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Elide again for the new width."""
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        text, details = self.text(), self._details
        elided = bool(text) and self.shown_text() != text
        tip = text if elided and text not in details else ''
        tip = '\n'.join(t for t in (tip, details) if t)
        if self.toolTip() != tip:
            super().setToolTip(tip)
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 -- Qt API
        """Paint the text elided to the width."""
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment()),
                                  self.palette(), self.isEnabled(), self.shown_text(),
                                  self.foregroundRole())
        painter.end()


def fixed_width_label(name: str, text: str = '', longest: str = '') -> QLabel:
    """
    Return a label as wide as ``longest`` needs in its font, asking for no more.

    Its texts must fit ``longest`` (a width in pixels cut "running 3.0 / 4.0 s" where the
    font was wider than the one it was chosen with); what does not fit goes in the tooltip.
    """
    label = ElidedLabel(text, name)
    if longest:
        # a fixed width: a minimum with an ignored size hint let the layout lay the play
        # head's time under the Live button (a lone "t" at 1366 x 768)
        margins = label.contentsMargins()
        label.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Preferred)
        label.setFixedWidth(label.fontMetrics().horizontalAdvance(longest) + 8 +
                            margins.left() + margins.right())
    return label


def checked(items: Sequence[Tuple[str, bool]]) -> List[str]:
    """Return the names whose flag is set."""
    return [name for name, on in items if on]


def push_button(text: str, name: str, tip: str = '') -> QPushButton:
    """Return a push button with an object name (tests and style sheets find it by name)."""
    button = QPushButton(text)
    button.setObjectName(name)
    if tip:
        button.setToolTip(tip)
    return button


def close_after(window: QWidget, seconds: float, screenshot: Optional[str] = None) -> None:
    """
    Close ``window`` after ``seconds`` of the Qt loop, saving a screenshot of it first.

    The ``--quit-after`` and ``--screenshot`` options of the editor and the console.

    :param screenshot: a PNG file to write (its folder is created), or None.
    """
    def finish() -> None:
        if screenshot:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            window.grab().save(screenshot)
            print(f'screenshot: {screenshot}')
        window.close()
    QTimer.singleShot(int(seconds * 1000), finish)


def fitting_size(width: int, height: int) -> Tuple[int, int]:
    """
    Return the window size to start with: ``width`` x ``height``, or the screen's free area.

    A window opened larger than the screen (1366 x 768 on many laptops) has its edges, and
    what is there, off the screen.
    """
    screen = QApplication.primaryScreen()
    if screen is None:
        return width, height
    free = screen.availableGeometry()
    # the window manager's frame and title bar are outside the size given
    return min(width, free.width() - 16), min(height, free.height() - 40)


@contextlib.contextmanager
def busy_cursor() -> Iterator[None]:
    """Show the busy (wait) cursor over the application while the block runs."""
    QApplication.setOverrideCursor(Qt.WaitCursor)
    try:
        yield
    finally:
        QApplication.restoreOverrideCursor()
