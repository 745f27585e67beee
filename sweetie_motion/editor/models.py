"""
Qt table models over the edited WaypointsList.

Only Qt's required methods; edits go through the document (undoable, validated) and the views
are refreshed with a model reset.
"""

from typing import Any, Optional

from PyQt5.QtCore import QAbstractTableModel, QModelIndex, Qt
from PyQt5.QtGui import QBrush, QColor
from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.model.robot_model import RobotModelView

#: fixed columns of the waypoint table before the joints
ACTIVE, MARKER, TIME = 0, 1, 2
FIXED = 3


class WaypointTableModel(QAbstractTableModel):
    """
    Rows are waypoints; columns: on/off, start/end marker, time, then one per joint.

    :param limits: robot model view used to flag angles outside the position limits.
    """

    def __init__(self, document: EditorDocument, limits: Optional[RobotModelView] = None
                 ) -> None:
        super().__init__()
        self.document = document
        self.limits = limits
        document.changed.connect(self.refresh)

    def refresh(self) -> None:
        """Reload everything from the document."""
        self.beginResetModel()
        self.endResetModel()

    @property
    def _list(self):
        return self.document.waypoints

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else len(self._list)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 -- Qt API
        return 0 if parent.isValid() else FIXED + len(self._list.joints)

    def headerData(self, section: int, orientation, role: int = Qt.DisplayRole) -> Any:  # noqa
        if role != Qt.DisplayRole:
            return None
        if orientation == Qt.Vertical:
            return str(section + 1)
        if section < FIXED:
            return ('on', 'marker', 'time [s]')[section]
        joints = self._list.joints
        return joints[section - FIXED] if section - FIXED < len(joints) else None

    def _outside_limits(self, joint: str, value: float) -> bool:
        if self.limits is None:
            return False
        index = self.limits.get_joint_index(joint)
        if index < 0:
            return False
        lower, upper = self.limits.position_limits()
        return not lower[index] - 1e-6 <= value <= upper[index] + 1e-6

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
        if column == MARKER:
            if role == Qt.DisplayRole:
                marks = []
                if row == waypoints.start:
                    marks.append('start')
                if row == waypoints.end:
                    marks.append('end')
                return ' '.join(marks) + (f' {waypoint.label}' if waypoint.label else '')
            return None
        if column == TIME:
            if role == Qt.DisplayRole:
                return f'{waypoint.time:.3f}'
            # text, not a float: Qt's float editor rounds to two decimals
            return f'{waypoint.time:.6g}' if role == Qt.EditRole else None
        joint = waypoints.joints[column - FIXED]
        value = waypoint.positions[column - FIXED]
        if role == Qt.DisplayRole:
            return f'{value:+.3f}'
        if role == Qt.EditRole:
            return f'{value:.6g}'
        if role == Qt.BackgroundRole and self._outside_limits(joint, value):
            return QBrush(QColor(255, 170, 170))
        if role == Qt.ToolTipRole and self._outside_limits(joint, value):
            return f'{joint} = {value:.4f} is outside its position limits'
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
            active = value in (Qt.Checked, 2, True)
            return self.document.edit(f'{"enable" if active else "disable"} row {row + 1}',
                                      lambda w: w.set_active(row, active))
        if role != Qt.EditRole:
            return False
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.document.refused.emit(f'{value!r} is not a number')
            return False
        if column == TIME:
            return self.document.edit(f'time of row {row + 1}', lambda w: w.move(row, number))
        joint = self._list.joints[column - FIXED]
        return self.document.edit(f'{joint} in row {row + 1}',
                                  lambda w: w.set_position(row, joint, number))


class ToleranceTableModel(QAbstractTableModel):
    """Rows are the joints; columns: path and goal position tolerance (0 = default)."""

    COLUMNS = ('path', 'goal')

    def __init__(self, document: EditorDocument) -> None:
        super().__init__()
        self.document = document
        document.changed.connect(self.refresh)

    def refresh(self) -> None:
        """Reload everything from the document."""
        self.beginResetModel()
        self.endResetModel()

    def _joints(self):
        return self.document.waypoints.real_joints()

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
        table = (self.document.waypoints.path_tolerance,
                 self.document.waypoints.goal_tolerance)[index.column()]
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
        kind = self.COLUMNS[index.column()]
        joint = self._joints()[index.row()]
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.document.refused.emit(f'{value!r} is not a number')
            return False
        return self.document.edit(f'{kind} tolerance of {joint}',
                                  lambda w: w.set_tolerance(kind, joint, number))
