"""
The commands that edit the editor's table: rows, times, poses, tolerances, the clipboard, speed.

Each command is one undoable edit of the :class:`~sweetie_motion.editor.document.EditorDocument`
(or a refusal that says why, on the :class:`~sweetie_motion.gui.messages.MessageBoard`),
and the rows a person selected are kept here. No Qt, no rclpy.
"""

from dataclasses import dataclass, field
import math
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.requests import PublishMarker
from sweetie_motion.editor.workspace import tidy
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.messages import ActionRefused, MessageBoard, rows_text
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.retime import retime_waypoints
from sweetie_motion.trajectory.waypoints import DEFAULT_STEP, Waypoint, WaypointError, \
    WaypointsList

#: the speed slider's range [%]
SPEED_RANGE = (25, 200)


@dataclass
class _Clip:
    joints: List[str]
    rows: List[Waypoint] = field(default_factory=list)


def parse_number(text: object, what: str, row: Optional[int] = None) -> float:
    """
    Return ``text`` as a finite float.

    :raises ActionRefused: not a number (naming ``what`` and the row).
    """
    try:
        value = float(str(text).strip().replace(',', '.'))
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        where = f' (row {row + 1}, {what})' if row is not None else f' ({what})'
        raise ActionRefused(f'{str(text)!r} is not a number{where}', row, what)
    return value


def real_joints(pose: Mapping[str, float]) -> Dict[str, float]:
    """Return the pose without its support entries (the robot's joints only)."""
    return {j: v for j, v in pose.items() if not j.startswith(SUPPORT_PREFIX)}


class TableCommands:
    """
    The table's edits and selection (see the module docstring).

    :param document: the edited table, its undo history and its name.
    :param board: where the commands say what they did, or why not.
    :param send: hands a request to the bridge (the selected row's marker).
    :param model: the configured RobotModel (limits, Fit to limits); None: no limits.
    :param interpolation: the controller's interpolation (Fit to limits).
    :param pose: returns the robot's newest pose (joint -> position).
    :param support: returns the supporting legs (leg -> on) a new row gets.
    """

    def __init__(self, document: EditorDocument, board: MessageBoard,
                 send: Callable[[object], None], model: Optional[RobotModel], interpolation: str,
                 pose: Callable[[], Mapping[str, float]],
                 support: Callable[[], Mapping[str, bool]]) -> None:
        self.document = document
        self.board = board
        self.send = send
        self.model = model
        self.interpolation = interpolation
        self.pose = pose
        self.support = support
        self.selection: List[int] = []
        #: the speed of the execution [%] (the table is unchanged until Apply)
        self.speed = 100
        self._clip: Optional[_Clip] = None
        document.subscribe(self._keep_selection)

    def _keep_selection(self) -> None:
        # rows an edit removed are no longer selected (before the views hear of the change)
        count = len(self.document.waypoints)
        self.selection = [r for r in self.selection if r < count]

    @property
    def waypoints(self) -> WaypointsList:
        """Return the edited list."""
        return self.document.waypoints

    def edit(self, label: str, change: Callable[[WaypointsList], object], done: str = ''
             ) -> bool:
        """
        Make ``change`` to the table as one undoable edit named ``label``; say ``done`` or why not.

        :return: whether the table changed.
        """
        try:
            self.document.edit(label, change)
        except (WaypointError, ActionRefused) as error:
            return self.board.refused(error)
        self.board.say(done or label)
        return True

    def limits_of(self, joint: str) -> Optional[Tuple[float, float]]:
        """Return the position limits of ``joint`` [rad] (None: no model or not a joint)."""
        if self.model is None or joint.startswith(SUPPORT_PREFIX):
            return None
        try:
            info = self.model.get_joint_info(joint)
        except SweetieMotionError:
            return None
        return float(info.lower), float(info.upper)

    def outside_limits(self, joint: str, value: float) -> Optional[str]:
        """Return why ``value`` is beyond the limits of ``joint`` (None when within)."""
        limits = self.limits_of(joint)
        if limits is None:
            return None
        lower, upper = limits
        if lower - 1e-9 <= value <= upper + 1e-9:
            return None
        return (f'{joint} = {value:.4g} is outside its position limits [{lower:.4g}, '
                f'{upper:.4g}] rad')

    # --- selection -----------------------------------------------------------------------------

    def select(self, rows: Sequence[int]) -> None:
        """Select table rows (0-based); one selected row is published as the marker."""
        count = len(self.waypoints)
        rows = sorted({int(r) for r in rows if 0 <= int(r) < count})
        if rows == self.selection:
            return
        self.selection = rows
        self.board.notify('selection')
        if len(rows) == 1:
            pose = real_joints(self.waypoints.pose(rows[0]))
            self.send(PublishMarker(tuple(pose), tuple(pose.values())))

    @property
    def selected_row(self) -> Optional[int]:
        """Return the last selected row (None without a selection)."""
        return self.selection[-1] if self.selection else None

    def _need_selection(self) -> List[int]:
        if not self.selection:
            raise ActionRefused('select a row first')
        return list(self.selection)

    # --- the trajectory ------------------------------------------------------------------------

    def new_trajectory(self, joints: Optional[Sequence[str]] = None) -> None:
        """
        Start an empty, untitled trajectory (confirm unsaved changes before calling).

        :param joints: its joints; default: the joints of the trajectory before.
        """
        keep = list(self.waypoints.joints) if joints is None else list(joints)
        self.document.replace(WaypointsList(keep), '', clean=True)
        self.selection = []
        self.board.say('new trajectory' + (f' with {len(keep)} joints' if keep else
                                           ': choose its joints in Setup, then add poses'))

    def set_joints(self, joints: Sequence[str]) -> bool:
        """Use ``joints`` (Setup); new joints get their current position in every row."""
        joints = list(joints)
        positions = dict(self.pose())
        return self.edit('change joints', lambda w: w.set_joints(joints, positions),
                         f'the trajectory has {len(joints)} joints')

    def add_pose(self) -> bool:
        """Add the current pose of the trajectory's joints after the selection (or at the end)."""
        if not self.pose():
            return self.board.refused(ActionRefused('no pose yet: is the motion process '
                                                    'running (joint_states)?'))
        if not self.waypoints.joints:
            return self.board.refused(
                ActionRefused("choose the trajectory's joints in Setup first"))
        return self._add_row('add pose', self.pose())

    def add_named_pose(self, name: str, pose: Mapping[str, float]) -> bool:
        """
        Insert a named pose after the selection (or at the end).

        Joints the pose does not name keep the values of the row before (0 in a first row).
        """
        if not self.waypoints.joints:
            return self.board.refused(
                ActionRefused("choose the trajectory's joints in Setup first"))
        row = self.selected_row
        before = len(self.waypoints) - 1 if row is None else row
        # a pose names the joints it is about ("look up": the head); a leg stays where it was
        kept = self.waypoints.pose(before) if before >= 0 else {}
        full = {j: kept.get(j, 0.0) for j in self.waypoints.real_joints()}
        full.update(pose)
        return self._add_row(f'add pose {name}', full, label=name)

    def _add_row(self, what: str, pose: Mapping[str, float], **kwargs: str) -> bool:
        row = self.selected_row
        index = len(self.waypoints) if row is None else row + 1
        names = list(pose)
        positions = [tidy(pose[j]) for j in names]
        # a new row stands on the legs of the row it follows (four Add pose after a row with
        # a lifted leg gave it back each time); the first row, on the default legs
        support = None if index > 0 else {leg: 1.0 if on else 0.0
                                          for leg, on in self.support().items()}

        def change(w: WaypointsList) -> None:
            w.add_from_state(names, positions, index=index, support=support, **kwargs)
        if not self.edit(what, change, f'{what}: row {index + 1}'):
            return False
        self.select([index])
        return True

    def set_support(self, rows: Sequence[int], leg: str, on: bool) -> bool:
        """
        Set whether ``leg`` supports the robot in ``rows`` (one undoable edit).

        A table without support columns gets them first, every leg supporting in every row.
        """
        rows = sorted({int(r) for r in rows})
        if not rows or not 0 <= rows[0] <= rows[-1] < len(self.waypoints):
            return self.board.refused(ActionRefused('choose the rows first'))
        joint = f'{SUPPORT_PREFIX}{leg}'
        legs = [f'{SUPPORT_PREFIX}{chain}' for chain in self.support()]
        if joint not in legs:
            legs.append(joint)

        def change(w: WaypointsList) -> None:
            added = [j for j in legs if j not in w.joints]
            if added:
                w.set_joints(list(w.joints) + added)
            for row in rows:
                w.set_position(row, joint, 1.0 if on else 0.0)
        what = 'supports' if on else 'lifted'
        return self.edit(f'{leg} {what} in {rows_text(rows)}', change,
                         f'{leg} {what} in {rows_text(rows)}')

    def update_pose(self) -> bool:
        """Replace the selected rows' angles by the current pose."""
        try:
            rows = self._need_selection()
        except ActionRefused as error:
            return self.board.refused(error)
        pose = dict(self.pose())

        def change(w: WaypointsList) -> None:
            for row in rows:
                w.set_pose(row, list(pose), [tidy(v) for v in pose.values()])
        return self.edit(f'update {rows_text(rows)}', change)

    def delete_rows(self) -> bool:
        """Delete the selected rows."""
        try:
            rows = self._need_selection()
        except ActionRefused as error:
            return self.board.refused(error)

        def change(w: WaypointsList) -> None:
            for row in sorted(rows, reverse=True):
                w.delete(row)
        if not self.edit(f'delete {rows_text(rows)}', change):
            return False
        left = len(self.waypoints)
        self.select([min(rows[0], left - 1)] if left else [])
        return True

    def duplicate_row(self) -> bool:
        """Copy the selected row right after it."""
        row = self.selected_row
        if row is None:
            return self.board.refused(ActionRefused('select a row first'))
        if not self.edit(f'duplicate row {row + 1}', lambda w: w.duplicate(row)):
            return False
        self.select([row + 1])
        return True

    def set_marker(self, marker: str) -> bool:
        """Put the ``start`` or ``end`` marker on the selected row."""
        row = self.selected_row
        if row is None:
            return self.board.refused(ActionRefused('select a row first'))
        setter = WaypointsList.set_start if marker == 'start' else WaypointsList.set_end
        return self.edit(f'set {marker} on row {row + 1}', lambda w: setter(w, row))

    def set_active(self, row: int, active: bool) -> bool:
        """Enable or disable a row."""
        return self.edit(f'{"enable" if active else "disable"} row {row + 1}',
                         lambda w: w.set_active(row, active))

    def set_time(self, row: int, text: object) -> bool:
        """Set the time of a row from what was typed [s]."""
        try:
            value = parse_number(text, 'time', row)
        except ActionRefused as error:
            return self.board.refused(error)
        return self.edit(f'time of row {row + 1}', lambda w: w.move(row, value),
                         f'row {row + 1} at {value:g} s')

    def set_duration(self, row: int, text: object) -> bool:
        """Set the time from the row before (the rows after keep their spacing) [s]."""
        try:
            value = parse_number(text, 'time from the previous row', row)
        except ActionRefused as error:
            return self.board.refused(error)
        return self.edit(f'time from the previous row of row {row + 1}',
                         lambda w: w.set_duration(row, value),
                         f'row {row + 1} {value:g} s after the row before (the rows after '
                         'moved with it)')

    def set_position(self, row: int, joint: str, text: object) -> bool:
        """Set one angle of a row from what was typed [rad]; refused beyond the limits."""
        try:
            value = parse_number(text, joint, row)
            problem = self.outside_limits(joint, value)
            if problem:
                raise ActionRefused(f'{problem}: row {row + 1} not changed', row, joint)
        except ActionRefused as error:
            return self.board.refused(error)
        return self.edit(f'{joint} in row {row + 1}',
                         lambda w: w.set_position(row, joint, value),
                         f'row {row + 1}: {joint} = {value:g}')

    def set_tolerance(self, kind: str, joint: str, text: object) -> bool:
        """Set a path or goal tolerance [rad] (0: the controller's default, -1: none)."""
        try:
            value = parse_number(text, f'{kind} tolerance of {joint}')
        except ActionRefused as error:
            return self.board.refused(error)
        return self.edit(f'{kind} tolerance of {joint}',
                         lambda w: w.set_tolerance(kind, joint, value))

    def set_tolerance_for_all(self, kind: str, value: float) -> bool:
        """Set the path or goal tolerance of every joint [rad]."""
        return self.edit(f'{kind} tolerance for all',
                         lambda w: w.set_tolerance_for_all(kind, value))

    def set_goal_time_tolerance(self, value: float) -> bool:
        """Set goal_time_tolerance [s] (0: the controller's default)."""
        if math.isclose(value, self.waypoints.goal_time_tolerance):
            return True
        return self.edit('goal time tolerance',
                         lambda w: w.set_goal_time_tolerance(value))

    def shift_times(self, delta: float) -> bool:
        """
        Move the selected rows and every row after them ``delta`` seconds later (or earlier).

        :raises: nothing; a shift that would break the order is refused with the reason.
        """
        try:
            rows = self._need_selection()
            delta = parse_number(delta, 'shift')
        except ActionRefused as error:
            return self.board.refused(error)
        first = rows[0]

        def change(w: WaypointsList) -> None:
            for waypoint in w.waypoints[first:]:
                waypoint.time += delta
            if w.waypoints and w.waypoints[first].time < 0:
                raise ActionRefused(f'row {first + 1} would start at '
                                    f'{w.waypoints[first].time:.3f} s, before 0', first, 'time')
        return self.edit(f'shift rows {first + 1}-{len(self.waypoints)} by {delta:+g} s',
                         change)

    def copy_rows(self) -> bool:
        """Copy the selected rows (for :meth:`paste_rows`)."""
        try:
            rows = self._need_selection()
        except ActionRefused as error:
            return self.board.refused(error)
        source = self.waypoints
        self._clip = _Clip(list(source.joints), [Waypoint(
            list(source.waypoints[r].positions), source.waypoints[r].time,
            source.waypoints[r].active, list(source.waypoints[r].actions),
            source.waypoints[r].label) for r in rows])
        self.board.say(f'copied {rows_text(rows)}')
        return True

    def paste_rows(self) -> bool:
        """Insert the copied rows after the selection (or at the end), later rows shifted."""
        clip = self._clip
        if clip is None or not clip.rows:
            return self.board.refused(ActionRefused('nothing copied: select rows and copy them '
                                                    'first'))
        target = self.waypoints
        missing = [j for j in target.joints if j not in clip.joints]
        if missing:
            return self.board.refused(ActionRefused('the copied rows lack joint(s) '
                                                    f'{", ".join(missing)} of this trajectory'))
        row = self.selected_row
        index = len(target) if row is None else row + 1
        columns = [clip.joints.index(j) for j in target.joints]
        origin = clip.rows[0].time

        def change(w: WaypointsList) -> None:
            before = w.waypoints[index - 1].time if index > 0 else -DEFAULT_STEP
            start = before + DEFAULT_STEP
            pasted = [Waypoint([c.positions[k] for k in columns], start + c.time - origin,
                               c.active, list(c.actions), c.label) for c in clip.rows]
            span = pasted[-1].time - before
            for waypoint in w.waypoints[index:]:
                waypoint.time += span + (DEFAULT_STEP if index < len(w.waypoints) else 0.0)
            for marker in ('_start', '_end'):
                value = getattr(w, marker)
                if value is not None and value >= index:
                    setattr(w, marker, value + len(pasted))
            w.waypoints[index:index] = pasted
        if not self.edit(f'paste {len(clip.rows)} row(s)', change):
            return False
        self.select(range(index, index + len(clip.rows)))
        return True

    def undo(self) -> None:
        """Undo the last edit."""
        label = self.document.undo_label
        if self.document.undo():
            self.board.say(f'undone: {label}')

    def redo(self) -> None:
        """Redo the last undone edit."""
        label = self.document.redo_label
        if self.document.redo():
            self.board.say(f'redone: {label}')

    def reverse(self) -> bool:
        """Reverse the rows (the last keyframe first)."""
        return self.edit('reverse', lambda w: w.reverse())

    def set_speed(self, percent: int) -> None:
        """Set the speed of the execution [%] (the table is unchanged)."""
        low, high = SPEED_RANGE
        self.speed = int(min(max(int(percent), low), high))

    def apply_scale(self) -> bool:
        """Rewrite the times with the speed (and put the speed back to 100 %)."""
        speed = self.speed / 100.0
        if not self.edit(f'apply speed {self.speed} %', lambda w: w.scale_time(1.0 / speed)):
            return False
        self.speed = 100
        return True

    def fit_to_limits(self, keep_pauses: bool = True) -> bool:
        """
        Give the rows (two or more selected: those) the fastest times within the limits.

        One undoable edit; the message shows the durations before and after. With
        ``keep_pauses`` a segment between equal keyframes keeps its duration.
        """
        if self.model is None:
            return self.board.refused(ActionRefused('fit to limits needs the robot model (its '
                                                    'limits)'))
        rows = self.selection if len(self.selection) >= 2 else None
        try:
            retimed, result = retime_waypoints(self.waypoints, self.model, rows=rows,
                                               interpolation=self.interpolation,
                                               keep_pauses=keep_pauses)
        except SweetieMotionError as error:
            return self.board.refused(error)
        for waypoint in retimed.waypoints:
            waypoint.time = tidy(waypoint.time)
        where = f' ({rows_text(rows)})' if rows else ''
        return self.edit('fit to limits', lambda w: w.__dict__.update(retimed.__dict__),
                         result.describe() + where)
