"""
Qt table models over the presenter's WaypointsList (adapters: only Qt's required methods).

They read the list and hand edits to the presenter, which applies them as undoable edits or
refuses them with a message. A change that keeps the table's shape (an edited cell, Undo of
one) repaints the cells (``dataChanged``): the view keeps its scroll position and its current
cell. Only rows or columns that come or go reset the model.
"""

from typing import Any, Dict, List, Mapping, Optional, Tuple

from PyQt5.QtCore import QAbstractTableModel, QModelIndex, Qt
from PyQt5.QtGui import QBrush, QColor
from sweetie_motion.editor.presenter import EditorPresenter
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX


def initials(place: str) -> str:
    """Return a leg's short name from its place: 'front left' -> 'FL', 'leg1' -> 'leg1'."""
    words = place.split()
    return ''.join(w[0].upper() for w in words) if len(words) > 1 else place


#: fixed columns of the waypoint table before the joints: on/off, marker, the time, the
#: time from the row before (both editable: play_motion_builder shows the latter) and the
#: support strip (one tick per leg, drawn by the window's delegate)
ACTIVE, MARKER, TIME, STEP, SUPPORT = 0, 1, 2, 3, 4
FIXED = 5
#: the data role of the support strip: [(leg, place, on: True/False, None: no column)]
SUPPORT_ROLE = Qt.UserRole + 1


class _PresenterModel(QAbstractTableModel):

    def __init__(self, presenter: EditorPresenter) -> None:
        super().__init__()
        self.presenter = presenter
        self._shape = self._shape_now()

    def _shape_now(self) -> Tuple[int, Tuple[str, ...]]:
        """Return what a reset is needed for: the rows' count and the columns' names."""
        return self.rowCount(), tuple(str(self.headerData(c, Qt.Horizontal))
                                      for c in range(self.columnCount()))

    def refresh(self) -> None:
        """
        Reload everything from the presenter.

        The same rows and columns: the cells and headers are repainted (an edited cell left
        the table scrolled back to row 1 after a reset, and the next double-click landed in
        another cell). Rows or columns that come or go: the model is reset.
        """
        shape = self._shape_now()
        if shape == self._shape:
            rows, columns = self.rowCount(), self.columnCount()
            if rows and columns:
                self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, columns - 1))
                self.headerDataChanged.emit(Qt.Vertical, 0, rows - 1)
            return
        self.beginResetModel()
        self._shape = shape
        self.endResetModel()

    @property
    def _list(self):
        return self.presenter.waypoints


#: the background of a row the motion checks flag, by the finding's severity
CHECK_COLORS = {'warn': QColor(255, 205, 120), 'refuse': QColor(255, 120, 120)}


class WaypointTableModel(_PresenterModel):
    """
    Rows are waypoints; columns: on/off, start/end marker and label, time, one per joint.

    A row the motion checks flag (:attr:`flagged`) has its number marked with a '!', its
    marker and time cells coloured by severity, and the findings as their tooltip.
    """

    def __init__(self, presenter: EditorPresenter,
                 places: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(presenter)
        #: row -> (the worst severity, the findings in words), from the motion checks
        self.flagged: Dict[int, Tuple[str, str]] = {}
        #: where each support leg is on the robot ('leg1' -> 'front left')
        self.places = {leg: (places or {}).get(leg, leg) for leg in presenter.legs}

    def support(self, row: int) -> List[Tuple[str, str, Optional[bool]]]:
        """Return the support strip of ``row``: (leg, place, supports; None: no column)."""
        waypoints = self._list
        values = dict(zip(waypoints.joints, waypoints.waypoints[row].positions))
        out = []
        for leg, place in self.places.items():
            value = values.get(f'{SUPPORT_PREFIX}{leg}')
            out.append((leg, place, None if value is None else value >= 0.5))
        return out

    def support_tip(self, row: int) -> str:
        """Return the support strip's tooltip of ``row``: every leg by place, and its name."""
        lines = []
        for leg, place, on in self.support(row):
            state = 'no support column (click: add them)' if on is None else \
                'supports' if on else 'lifted'
            lines.append(f'{place} ({leg}): {state}')
        return '\n'.join(lines + ['click a tick to lift or set down that leg'])

    def set_flagged(self, flagged: Dict[int, Tuple[str, str]]) -> None:
        """Take the rows the checks flag and repaint them."""
        if flagged == self.flagged:
            return
        self.flagged = dict(flagged)
        if self.rowCount():
            self.headerDataChanged.emit(Qt.Vertical, 0, self.rowCount() - 1)
            self.dataChanged.emit(self.index(0, MARKER), self.index(self.rowCount() - 1, TIME))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else len(self._list)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else FIXED + len(self._list.joints)

    def headerData(self, section: int, orientation, role: int = Qt.DisplayRole) -> Any:  # noqa
        if orientation == Qt.Vertical and section in self.flagged:
            if role == Qt.ToolTipRole:
                return self.flagged[section][1]
            if role == Qt.DisplayRole:
                return f'{section + 1} !'
        if orientation == Qt.Horizontal and section == SUPPORT and role == Qt.ToolTipRole:
            return 'the legs the robot stands on in each row: ' + ', '.join(
                f'{initials(place)} {place} ({leg})' for leg, place in self.places.items())
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Vertical:
            return str(section + 1)
        if section < FIXED:
            return ('on', 'marker', 'time [s]', 'Δt [s]', 'support')[section]
        joints = self._list.joints
        return joints[section - FIXED] if section - FIXED < len(joints) else None

    def column_of(self, joint: str) -> int:
        """Return the column of a joint (or of 'time')."""
        if joint == 'time':
            return TIME
        return FIXED + self._list.joints.index(joint)

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        waypoints = self._list
        if not 0 <= row < len(waypoints) or not 0 <= column < self.columnCount():
            return None
        waypoint = waypoints.waypoints[row]
        if column == ACTIVE:
            return (Qt.Checked if waypoint.active else Qt.Unchecked) \
                if role == Qt.CheckStateRole else None
        if role == Qt.ForegroundRole and not waypoint.active:
            return QBrush(QColor('gray'))
        if column in (MARKER, TIME) and row in self.flagged and \
                role in (Qt.BackgroundRole, Qt.ToolTipRole):
            severity, text = self.flagged[row]
            return QBrush(CHECK_COLORS[severity]) if role == Qt.BackgroundRole else text
        if column == MARKER:
            if role == Qt.DisplayRole:
                marks = [m for m, r in (('start', waypoints.start), ('end', waypoints.end))
                         if r == row]
                return ' '.join(marks) + (f' {waypoint.label}' if waypoint.label else '')
            return None
        if column == TIME:
            if role == Qt.DisplayRole:
                return f'{waypoint.time:.3f}'
            # text, not a float: Qt's float editor rounds to two decimals
            return f'{waypoint.time:.6g}' if role == Qt.EditRole else None
        if column == SUPPORT:
            if role == SUPPORT_ROLE:
                return self.support(row)
            if role == Qt.ToolTipRole:
                return self.support_tip(row)
            if role == Qt.AccessibleTextRole:
                return ', '.join(f'{place} {"up" if on is False else "down"}'
                                 for _, place, on in self.support(row))
            return None
        if column == STEP:
            step = waypoints.duration_before(row)
            if role == Qt.DisplayRole:
                return f'{step:.3f}'
            if role == Qt.ToolTipRole:
                return 'time from the row before: the rows after move with it'
            return f'{step:.6g}' if role == Qt.EditRole else None
        joint = waypoints.joints[column - FIXED]
        value = waypoint.positions[column - FIXED]
        if role == Qt.DisplayRole:
            return f'{value:+.3f}'
        if role == Qt.EditRole:
            return f'{value:.6g}'
        if role in (Qt.BackgroundRole, Qt.ToolTipRole):
            problem = self.presenter.table.outside_limits(joint, value)
            if problem is None:
                return None
            return QBrush(QColor(255, 170, 170)) if role == Qt.BackgroundRole else problem
        return None

    def flags(self, index: QModelIndex) -> Qt.ItemFlags:
        if not index.isValid():
            return Qt.NoItemFlags
        flags = Qt.ItemIsEnabled | Qt.ItemIsSelectable
        if index.column() == ACTIVE:
            return flags | Qt.ItemIsUserCheckable
        if index.column() >= TIME:
            return flags | Qt.ItemIsEditable
        return flags

    def setData(self, index: QModelIndex, value: Any, role: int = Qt.EditRole) -> bool:  # noqa
        if not index.isValid():
            return False
        row, column = index.row(), index.column()
        if column == ACTIVE and role == Qt.CheckStateRole:
            return self.presenter.table.set_active(row, value in (Qt.Checked, 2, True))
        if role != Qt.EditRole:
            return False
        if column == TIME:
            return self.presenter.table.set_time(row, value)
        if column == STEP:
            return self.presenter.table.set_duration(row, value)
        if column >= FIXED:
            return self.presenter.table.set_position(row, self._list.joints[column - FIXED], value)
        return False


class ToleranceTableModel(_PresenterModel):
    """Rows are the joints; columns: path and goal position tolerance (0 = default)."""

    COLUMNS = ('path', 'goal')

    def _joints(self):
        return self._list.real_joints()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else len(self._joints())

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation, role: int = Qt.DisplayRole) -> Any:  # noqa
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Horizontal:
            return f'{self.COLUMNS[section]} tolerance [rad]' if section < 2 else None
        joints = self._joints()
        return joints[section] if section < len(joints) else None

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole) -> Any:
        if not index.isValid() or role not in (Qt.DisplayRole, Qt.EditRole):
            return None
        joints = self._joints()
        if not 0 <= index.row() < len(joints) or not 0 <= index.column() < 2:
            return None
        table = (self._list.path_tolerance, self._list.goal_tolerance)[index.column()]
        value = table.get(joints[index.row()], 0.0)
        if role == Qt.EditRole:
            return f'{value:.6g}'
        return 'default' if value == 0 else 'none' if value == -1 else f'{value:.3f}'

    def flags(self, index: QModelIndex) -> Qt.ItemFlags:
        if not index.isValid():
            return Qt.NoItemFlags
        return Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsEditable

    def setData(self, index: QModelIndex, value: Any, role: int = Qt.EditRole) -> bool:  # noqa
        if not index.isValid() or role != Qt.EditRole:
            return False
        joints = self._joints()
        if not 0 <= index.row() < len(joints) or not 0 <= index.column() < 2:
            return False
        return self.presenter.table.set_tolerance(self.COLUMNS[index.column()],
                                                  joints[index.row()], value)
