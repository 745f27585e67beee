"""
The waypoint table's support strip: one tick per leg, named by its place, next to the time.

A filled tick is a leg the robot stands on in that row, an empty one a lifted leg, a dashed
one a table without support columns (a click adds them, every leg down). A click on a tick
lifts or sets down that leg in the row; a drag from a tick down or up the strip gives that leg
the same new state in every row from the first to the one under the mouse (one undoable edit
either way, shown on the ticks while the mouse is down). The row's tooltip names every leg by
place and by the robot's name (front left (leg1): supports). Qt only: the model says what a
row's support is (:data:`~sweetie_motion.editor.models.SUPPORT_ROLE`), the presenter changes it.
"""

from typing import Callable, List, Optional, Sequence, Tuple

from PyQt5.QtCore import QEvent, QModelIndex, QObject, QRect, QSize, Qt, QTimer
from PyQt5.QtGui import QColor, QPainter, QPen
from PyQt5.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView
from sweetie_motion.editor.models import initials, SUPPORT, SUPPORT_ROLE

#: a tick's size and the gap between ticks [px]
TICK = (26, 16)
GAP = 3
#: how often a run dragged above or below the table scrolls it a row [ms]
SCROLL_MS = 80
#: the colours of a supporting leg, a lifted one and a missing column
DOWN, UP, NONE = QColor('#2e7d32'), QColor('#ffffff'), QColor('#b0b0b0')


class SupportStripDelegate(QStyledItemDelegate):
    """
    Paints the support strip, and a run being dragged (:attr:`preview`) as it will be.

    The clicks and drags on it are :class:`SupportDrag`'s.
    """

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        #: the run under the mouse: its leg, the state it gets and its rows (None: no run)
        self.preview: Optional[Tuple[str, bool, Sequence[int]]] = None

    @staticmethod
    def width_for(count: int) -> int:
        """Return the strip's width for ``count`` legs [px]."""
        return count * (TICK[0] + GAP) + GAP + 2

    def tick_rects(self, cell: QRect, count: int) -> List[QRect]:
        """Return the rectangles of the ticks of a cell with ``count`` legs."""
        top = cell.top() + max((cell.height() - TICK[1]) // 2, 0)
        return [QRect(cell.left() + GAP + k * (TICK[0] + GAP), top, TICK[0],
                      min(TICK[1], cell.height())) for k in range(count)]

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa
        strip = index.data(SUPPORT_ROLE) or []
        return QSize(self.width_for(len(strip)), TICK[1] + 4)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex
              ) -> None:
        """Paint the row's background (selection) and one tick per leg."""
        style = option.widget.style() if option.widget is not None else None
        if style is not None:
            base = QStyleOptionViewItem(option)
            self.initStyleOption(base, index)
            base.text = ''
            style.drawControl(QStyle.CE_ItemViewItem, base, painter, option.widget)
        strip = index.data(SUPPORT_ROLE) or []
        run = self.preview
        if run is not None and index.row() in run[2]:
            strip = [(leg, place, run[1] if leg == run[0] else on) for leg, place, on in strip]
        painter.save()
        painter.setRenderHint(QPainter.Antialiasing)
        font = painter.font()
        font.setPointSizeF(max(font.pointSizeF() * 0.8, 6.0))
        painter.setFont(font)
        for rect, (leg, place, on) in zip(self.tick_rects(option.rect, len(strip)), strip):
            fill = NONE if on is None else DOWN if on else UP
            pen = QPen(QColor('#606060'))
            if on is None:
                pen.setStyle(Qt.DashLine)
            painter.setPen(pen)
            painter.setBrush(fill)
            painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 3, 3)
            painter.setPen(QColor('white') if on else QColor('#404040'))
            painter.drawText(rect, Qt.AlignCenter, initials(place))
        painter.restore()

    def leg_at(self, cell: QRect, index: QModelIndex, x: int, y: int) -> Optional[str]:
        """Return the leg of the tick at (x, y) in the view's coordinates (None: no tick)."""
        strip = index.data(SUPPORT_ROLE) or []
        for rect, (leg, _, _) in zip(self.tick_rects(cell, len(strip)), strip):
            if rect.adjusted(-1, -3, 1, 3).contains(x, y):
                return leg
        return None

    def editorEvent(self, event, model, option: QStyleOptionViewItem,  # noqa: N802 -- Qt API
                    index: QModelIndex) -> bool:
        """Open no cell editor on the strip (its clicks are :class:`SupportDrag`'s)."""
        return event.type() == QEvent.MouseButtonDblClick


class SupportDrag(QObject):
    """
    Turns a press on a tick, a drag along the strip and the release into one support run.

    An event filter of the table's viewport: a press on a tick starts a run of that leg with
    the state opposite to the tick's; moving the mouse makes it reach from the first row to the
    row under the mouse (the delegate shows it); the release hands it to ``apply(rows, leg,
    on)``. Above or below the table the mouse scrolls it a row every :data:`SCROLL_MS` and the
    run follows the edge row, as a selection does: only rows a person saw join the run.
    Presses elsewhere go to the table as before (selection, editing).

    :param table: the waypoint table.
    :param delegate: the support strip's painter (its ticks, its preview).
    :param apply: called with the rows, the leg and whether it is to support the robot.
    """

    def __init__(self, table: QTableView, delegate: SupportStripDelegate,
                 apply: Callable[[List[int], str, bool], object]) -> None:
        super().__init__(table)
        self.table = table
        self.delegate = delegate
        self.apply = apply
        #: the run's leg, its state and its first row (None: no run)
        self._run: Optional[Tuple[str, bool, int]] = None
        #: where the mouse is, in the viewport [px]
        self._y = 0
        self._scroll = QTimer(self)
        self._scroll.setInterval(SCROLL_MS)
        self._scroll.timeout.connect(self._scroll_on)
        table.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 -- Qt API
        """Start, stretch and end a run; let every other event through."""
        kind = event.type()
        if kind in (QEvent.MouseButtonPress, QEvent.MouseButtonDblClick):
            return event.button() == Qt.LeftButton and self._start(event.pos())
        if self._run is None:
            return False
        if kind == QEvent.MouseMove:
            self._stretch(event.pos().y())
            return True
        if kind == QEvent.MouseButtonRelease and event.button() == Qt.LeftButton:
            self._stretch(event.pos().y())
            self._finish()
            return True
        return False

    def _start(self, pos) -> bool:
        index = self.table.indexAt(pos)
        if not index.isValid() or index.column() != SUPPORT:
            return False
        leg = self.delegate.leg_at(self.table.visualRect(index), index, pos.x(), pos.y())
        if leg is None:
            return False
        state = {name: on for name, _, on in index.data(SUPPORT_ROLE) or []}
        # a leg without a column supports the robot (the default): the run lifts it
        self._run = (leg, state.get(leg) is False, index.row())
        self.delegate.preview = (leg, self._run[1], [index.row()])
        self.table.viewport().update()
        return True

    def _stretch(self, y: int) -> None:
        assert self._run is not None
        leg, on, first = self._run
        self._y = y
        high = self.table.viewport().height()
        outside = not 0 <= y < high
        if outside and not self._scroll.isActive():
            self._scroll.start()
        elif not outside:
            self._scroll.stop()
        row = self.table.rowAt(min(max(y, 0), high - 1))
        if row < 0:   # below the last row
            row = self.table.model().rowCount() - 1
        rows = list(range(min(first, row), max(first, row) + 1))
        if self.delegate.preview is None or list(self.delegate.preview[2]) != rows:
            self.delegate.preview = (leg, on, rows)
            self.table.viewport().update()

    def _scroll_on(self) -> None:
        if self._run is None:
            self._scroll.stop()
            return
        bar = self.table.verticalScrollBar()
        bar.setValue(bar.value() + (bar.singleStep() if self._y > 0 else -bar.singleStep()))
        self._stretch(self._y)

    def _finish(self) -> None:
        assert self._run is not None and self.delegate.preview is not None
        self._scroll.stop()
        leg, on, rows = self.delegate.preview
        self._run = None
        self.delegate.preview = None
        self.table.viewport().update()
        self.apply(list(rows), leg, on)
