"""
The editor window's tabs: Waypoints (the table), Setup (the joints) and Record.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

from typing import Dict, List

from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import (
    QAbstractItemView, QCheckBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout,
    QHeaderView, QLabel, QMenu, QSpinBox, QTableView, QTableWidget, QTreeWidget,
    QTreeWidgetItem, QVBoxLayout, QWidget,
)
from sweetie_motion.editor.models import (
    ACTIVE, FIXED, SUPPORT, ToleranceTableModel, WaypointTableModel,
)
from sweetie_motion.editor.row_tools import REPEAT_MAX
from sweetie_motion.editor.support_strip import SupportDrag, SupportStripDelegate, TICK
from sweetie_motion.editor.teaching import RECORD_SMOOTHING
from sweetie_motion.editor.widgets import joint_groups
from sweetie_motion.gui.widgets import push_button
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.keyframes import DEFAULT_TOLERANCE


class WindowTabs:
    """
    The editor window's tabs and Setup's joint tree.

    The three tabs, built once, and the joint tree of Setup (which joints the trajectory has).

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    def _build_waypoints_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(self._build_table(), 1)
        layout.addLayout(self._build_row_buttons())
        layout.addLayout(self._build_times_row())
        layout.addLayout(self._build_range_row())
        return tab

    def _build_range_row(self) -> QHBoxLayout:
        """Build Insert pose (the named poses), Mirror and Repeat."""
        row = QHBoxLayout()
        self.insert_pose_button = push_button(
            'Insert pose', 'insert_pose_button', 'insert a named pose (config/poses.yaml) after '
            "the selected row; the joints it does not name keep that row's values")
        menu = QMenu(self.insert_pose_button)
        menu.setObjectName('insert_pose_menu')
        for name in sorted(self.poses):
            action = menu.addAction(name)
            action.setObjectName(f'insert_pose_{name}')
            action.triggered.connect(lambda _, chosen=name: self.add_named_pose(chosen))
        self.insert_pose_button.setMenu(menu)
        self.insert_pose_button.setEnabled(bool(self.poses))
        if not self.poses:
            self.insert_pose_button.setToolTip('no named poses: config/poses.yaml has none, or '
                                               'cannot be read')
        row.addWidget(self.insert_pose_button)
        tools = self.presenter.row_tools
        self.mirror_button = push_button(
            'Mirror L/R', 'mirror_button', tools.mirror_refusal or
            'swap left and right in the selected rows, as the mirror: of the robot '
            'description says (the support legs too; undoable)')
        self.mirror_button.setEnabled(not tools.mirror_refusal)
        row.addWidget(self.mirror_button)
        self.repeat_button = push_button('Repeat', 'repeat_button',
                                         'play the selected rows this many times in all: their '
                                         'copies follow them, with the same steps (undoable)')
        row.addWidget(self.repeat_button)
        self.repeat_spin = QSpinBox()
        self.repeat_spin.setObjectName('repeat_spin')
        self.repeat_spin.setRange(2, REPEAT_MAX)
        self.repeat_spin.setSuffix(' times')
        row.addWidget(self.repeat_spin)
        row.addStretch(1)
        return row

    def _build_table(self) -> QTableView:
        """Build the waypoint table with its support strip."""
        self.table = QTableView()
        self.table.setObjectName('waypoint_table')
        self.table_model = WaypointTableModel(self.presenter, self.leg_places())
        self.table.setModel(self.table_model)
        # the support strip next to the time: one tick per leg (the support/ columns it
        # shows are hidden among the joints)
        self.support_delegate = SupportStripDelegate(self.table)
        self.table.setItemDelegateForColumn(SUPPORT, self.support_delegate)
        # a click on a tick, or a drag down the strip: one edit of that leg in those rows
        self.support_drag = SupportDrag(self.table, self.support_delegate,
                                        self.presenter.table.set_support)
        self.table.horizontalHeader().resizeSection(
            SUPPORT, SupportStripDelegate.width_for(len(self.presenter.legs)))
        # the on/off box needs no more than its header
        self.table.horizontalHeader().resizeSection(
            ACTIVE, self.table.fontMetrics().horizontalAdvance('on') + 30)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        # the row numbers' column is as wide as a flagged row's ("123 !") from the start: the
        # columns do not shift (nor the table scroll) when the checks flag or clear a row
        header = self.table.verticalHeader()
        header.setMinimumWidth(header.fontMetrics().horizontalAdvance('888 !') + 12)
        # rows as high as a line of text (and a support tick) need, not the style's 30 px:
        # 10 rows in sight at 1366 x 768 instead of 8
        high = max(self.table.fontMetrics().height(), TICK[1]) + 6
        header.setMinimumSectionSize(high)
        header.setDefaultSectionSize(high)
        return self.table

    def _build_row_buttons(self) -> QHBoxLayout:
        """Build the buttons that add, delete and change the selected rows."""
        row = QHBoxLayout()
        self.add_pose_button = push_button('Add pose', 'add_pose_button',
                                           "add the current pose of the trajectory's joints after "
                                           'the selected row')
        self.delete_button = push_button('Delete', 'delete_button',
                                         'delete the selected rows (Del)')
        self.duplicate_button = push_button('Duplicate', 'duplicate_button')
        self.start_button = push_button('Set start', 'start_button')
        self.end_button = push_button('Set end', 'end_button')
        self.update_pose_button = push_button('Update pose', 'update_pose_button',
                                              'replace the selected rows by the current pose')
        self.set_pose_button = push_button('Set robot pose', 'set_pose_button',
                                           'move the robot to the selected row')
        for widget in (self.add_pose_button, self.delete_button, self.duplicate_button,
                       self.start_button, self.end_button, self.update_pose_button,
                       self.set_pose_button):
            row.addWidget(widget)
        return row

    def _build_times_row(self) -> QHBoxLayout:
        """Build the controls that shift and fit the rows' times."""
        times = QHBoxLayout()
        times.addWidget(QLabel('Shift from the selection by'))
        self.shift_spin = QDoubleSpinBox()
        self.shift_spin.setObjectName('shift_spin')
        self.shift_spin.setRange(-60.0, 60.0)
        self.shift_spin.setDecimals(2)
        self.shift_spin.setSingleStep(0.1)
        self.shift_spin.setSuffix(' s')
        self.shift_spin.setValue(0.5)
        times.addWidget(self.shift_spin)
        self.shift_button = push_button('Shift times', 'shift_button',
                                        'move the selected rows and all after them in time')
        times.addWidget(self.shift_button)
        self.fit_button = push_button('Fit to limits', 'fit_button',
                                      'the fastest times within the velocity and acceleration '
                                      'limits (of the selected rows, or of all)')
        times.addWidget(self.fit_button)
        self.keep_pauses_check = QCheckBox('keep pauses')
        self.keep_pauses_check.setObjectName('keep_pauses_check')
        # a pause between equal keyframes is an author's choice: kept unless unticked
        self.keep_pauses_check.setChecked(True)
        self.keep_pauses_check.setToolTip('segments between equal keyframes keep their '
                                          'duration (untick to shorten them too)')
        times.addWidget(self.keep_pauses_check)
        times.addStretch(1)
        return times

    def leg_places(self) -> Dict[str, str]:
        """Return where each support leg is ('leg1' -> 'front left'; the robot's config)."""
        places = {}
        for leg in self.presenter.legs:
            place = None
            if self.model is not None:
                try:
                    place = self.model.get_chain_property(leg, 'place')
                except Exception:  # noqa: B902 -- a leg the model does not know keeps its name
                    place = None
            places[leg] = str(place) if place else leg
        return places

    def _hide_support_columns(self) -> None:
        """Hide the support/ columns among the joints: the strip shows and sets them."""
        joints = self.presenter.waypoints.joints
        for column, joint in enumerate(joints, start=FIXED):
            self.table.setColumnHidden(column, joint.startswith(SUPPORT_PREFIX))
        self.table.setColumnHidden(SUPPORT, not self.presenter.legs)
        self.table.horizontalHeader().resizeSection(
            SUPPORT, SupportStripDelegate.width_for(len(self.presenter.legs)))

    def _build_setup_tab(self) -> QWidget:
        tab = QWidget()
        layout = QHBoxLayout(tab)
        joints = QVBoxLayout()
        joints.addWidget(QLabel("The trajectory's joints:"))
        self.joint_tree = QTreeWidget()
        self.joint_tree.setObjectName('setup_joints')
        self.joint_tree.setHeaderHidden(True)
        joints.addWidget(self.joint_tree, 1)
        self.apply_joints_button = push_button(
            'Apply joints', 'apply_joints_button',
            'new joints get their current position in every row')
        joints.addWidget(self.apply_joints_button)
        layout.addLayout(joints, 1)
        tolerances = QVBoxLayout()
        self.tolerance_table = QTableView()
        self.tolerance_table.setObjectName('tolerance_table')
        self.tolerance_model = ToleranceTableModel(self.presenter)
        self.tolerance_table.setModel(self.tolerance_model)
        # the headers ("path tolerance [rad]") must show whole
        self.tolerance_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeToContents)
        tolerances.addWidget(self.tolerance_table, 1)
        form = QFormLayout()
        self.path_all = QDoubleSpinBox()
        self.path_all.setObjectName('path_all')
        self.goal_all = QDoubleSpinBox()
        self.goal_all.setObjectName('goal_all')
        for spin in (self.path_all, self.goal_all):
            spin.setRange(-1.0, 10.0)
            spin.setDecimals(3)
            spin.setSingleStep(0.05)
        self.path_all_button = push_button('Set for all', 'path_all_button')
        self.goal_all_button = push_button('Set for all', 'goal_all_button')
        path_row, goal_row = QHBoxLayout(), QHBoxLayout()
        path_row.addWidget(self.path_all)
        path_row.addWidget(self.path_all_button)
        goal_row.addWidget(self.goal_all)
        goal_row.addWidget(self.goal_all_button)
        form.addRow('path tolerance (0 default, -1 none)', path_row)
        form.addRow('goal tolerance (0 default, -1 none)', goal_row)
        self.goal_time = QDoubleSpinBox()
        self.goal_time.setObjectName('goal_time')
        self.goal_time.setRange(0.0, 60.0)
        self.goal_time.setDecimals(2)
        form.addRow('goal time tolerance [s] (0 default)', self.goal_time)
        tolerances.addLayout(form)
        layout.addLayout(tolerances, 1)
        return tab

    def _build_record_tab(self) -> QWidget:
        tab = QWidget()
        layout = QVBoxLayout(tab)
        layout.addWidget(QLabel('Teach by demonstration: free the servos, move the robot (by '
                                'hand, or with the sliders on the virtual robot), and the '
                                'recording becomes the fewest keyframes within the tolerance.'))
        layout.itemAt(0).widget().setWordWrap(True)
        chains = QGroupBox('Record these joints')
        chain_layout = QHBoxLayout(chains)
        self.record_checks: Dict[str, QCheckBox] = {}
        for group, _ in joint_groups(self.model):
            check = QCheckBox(group)
            check.setObjectName(f'record_{group}')
            chain_layout.addWidget(check)
            self.record_checks[group] = check
        chain_layout.addStretch(1)
        layout.addWidget(chains)
        layout.addLayout(self._build_record_settings())
        buttons = QHBoxLayout()
        self.record_button = push_button('Record', 'record_button')
        self.stop_record_button = push_button('Stop recording', 'stop_record_button')
        self.accept_record_button = push_button('Accept keyframes', 'accept_record_button',
                                                'replace the table by the keyframes (undoable)')
        self.discard_record_button = push_button('Discard', 'discard_record_button')
        for widget in (self.record_button, self.stop_record_button, self.accept_record_button,
                       self.discard_record_button):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.record_summary = QLabel('')
        self.record_summary.setObjectName('record_summary')
        self.record_summary.setWordWrap(True)
        layout.addWidget(self.record_summary)
        self.record_table = QTableWidget(0, 4)
        self.record_table.setObjectName('record_table')
        self.record_table.setHorizontalHeaderLabels(
            ['joint', 'max deviation [rad]', 'tolerance [rad]', 'noise [rad]'])
        self.record_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        layout.addWidget(self.record_table, 1)
        return tab

    def _build_record_settings(self) -> QFormLayout:
        """Build the recording's tolerance, smoothing and servos-off settings."""
        form = QFormLayout()
        self.record_tolerance = QDoubleSpinBox()
        self.record_tolerance.setObjectName('record_tolerance')
        self.record_tolerance.setRange(0.001, 0.5)
        self.record_tolerance.setDecimals(3)
        self.record_tolerance.setSingleStep(0.005)
        self.record_tolerance.setValue(DEFAULT_TOLERANCE)
        self.record_tolerance.setSuffix(' rad')
        form.addRow('tolerance', self.record_tolerance)
        self.record_smoothing = QDoubleSpinBox()
        self.record_smoothing.setObjectName('record_smoothing')
        self.record_smoothing.setRange(0.0, 0.5)
        self.record_smoothing.setDecimals(3)
        self.record_smoothing.setSingleStep(0.01)
        self.record_smoothing.setValue(RECORD_SMOOTHING)
        self.record_smoothing.setSuffix(' s')
        form.addRow('smoothing (half-window)', self.record_smoothing)
        self.record_free_check = QCheckBox('servos off while recording')
        self.record_free_check.setObjectName('record_free_check')
        self.record_free_check.setChecked(True)
        form.addRow('', self.record_free_check)
        return form

    def _fill_joint_tree(self) -> None:
        p = self.presenter
        available = p.available_joints()
        chosen = set(p.waypoints.joints)
        wanted = list(available) + [j for j in p.waypoints.joints if j not in available]
        if self._tree_joints() == wanted and set(self.checked_joints()) == chosen:
            return
        self.joint_tree.blockSignals(True)
        self.joint_tree.clear()
        groups = [(g, [j for j in js if j in wanted]) for g, js in joint_groups(self.model)]
        grouped = {j for _, js in groups for j in js}
        support = [j for j in wanted if j.startswith(SUPPORT_PREFIX)]
        rest = [j for j in wanted if j not in grouped and j not in support]
        for group, joints in groups + [('support', support), ('more', rest)]:
            if not joints:
                continue
            parent = QTreeWidgetItem([group])
            parent.setFlags(parent.flags() | Qt.ItemIsUserCheckable | Qt.ItemIsAutoTristate)
            self.joint_tree.addTopLevelItem(parent)
            for joint in joints:
                item = QTreeWidgetItem([joint])
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(0, Qt.Checked if joint in chosen else Qt.Unchecked)
                parent.addChild(item)
            parent.setExpanded(False)
        self.joint_tree.blockSignals(False)

    def _tree_joints(self) -> List[str]:
        out = []
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            out += [parent.child(c).text(0) for c in range(parent.childCount())]
        return out

    def checked_joints(self) -> List[str]:
        """Return the joints checked in Setup, in the tree's order."""
        out = []
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            out += [parent.child(c).text(0) for c in range(parent.childCount())
                    if parent.child(c).checkState(0) == Qt.Checked]
        return out

    def check_joints(self, groups_or_joints: List[str]) -> None:
        """Check groups (all their joints) or single joints in Setup, uncheck the others."""
        wanted = set(groups_or_joints)
        for k in range(self.joint_tree.topLevelItemCount()):
            parent = self.joint_tree.topLevelItem(k)
            for c in range(parent.childCount()):
                child = parent.child(c)
                on = parent.text(0) in wanted or child.text(0) in wanted
                child.setCheckState(0, Qt.Checked if on else Qt.Unchecked)
