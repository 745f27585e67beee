"""
The waypoint table's support strip: one tick per leg, named by its place, next to the time.

A filled tick is a leg the robot stands on in that row, an empty one a lifted leg, a dashed
one a table without support columns (a click adds them, every leg down). A click on a tick
lifts or sets down that leg in the row (one undoable edit); the row's tooltip names every leg
by place and by the robot's name (front left (leg1): supports). Qt only: the model says what a
row's support is (:data:`~sweetie_motion.editor.models.SUPPORT_ROLE`), the presenter changes it.
"""

from typing import Callable, List, Optional

from PyQt5.QtCore import QEvent, QModelIndex, QRect, QSize, Qt
from PyQt5.QtGui import QColor, QPainter, QPen
from PyQt5.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem
from sweetie_motion.editor.models import initials, SUPPORT_ROLE

#: a tick's size and the gap between ticks [px]
TICK = (26, 16)
GAP = 3
#: the colours of a supporting leg, a lifted one and a missing column
DOWN, UP, NONE = QColor('#2e7d32'), QColor('#ffffff'), QColor('#b0b0b0')


class SupportStripDelegate(QStyledItemDelegate):
    """
    Paints the support strip and turns a click on a tick into ``toggle(row, leg, on)``.

    :param toggle: called with the row, the leg and whether it is to support the robot.
    """

    def __init__(self, toggle: Callable[[int, str, bool], object], parent=None) -> None:
        super().__init__(parent)
        self.toggle = toggle

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
        """Lift or set down the leg whose tick was clicked."""
        if event.type() != QEvent.MouseButtonRelease or event.button() != Qt.LeftButton:
            return event.type() == QEvent.MouseButtonDblClick   # no editor opens here
        leg = self.leg_at(option.rect, index, event.pos().x(), event.pos().y())
        if leg is None:
            return False
        state = {name: on for name, _, on in index.data(SUPPORT_ROLE) or []}
        # a leg without a column supports the robot (the default): a click lifts it
        self.toggle(index.row(), leg, state.get(leg) is False)
        return True
