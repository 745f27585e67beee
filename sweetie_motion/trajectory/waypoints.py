"""
WaypointsList: the model of the trajectory editor (R-EDIT-7), a plain class without Qt.

A list of keyframes (waypoints) over a set of joints: each waypoint has the joint angles, a
time from the start, an active flag (disabled rows stay in the table but are not played) and
optional text actions; two markers choose the range that Execute plays. Every edit keeps the
list consistent or raises :class:`~sweetie_motion.trajectory.waypoint_rules.WaypointError`
with a message for the user and changes nothing:

- times strictly increase down the list;
- the start marker is before the end marker, and both are on active rows;
- a marked row cannot be disabled;
- a pose added from a JointState must contain every joint of the list.
"""

import copy
import math
from typing import Any, Dict, List, Mapping, Optional, Sequence

from sweetie_motion.trajectory.goal import (
    JointTolerance, SUPPORT_PREFIX, TrajectoryGoal, TrajectoryPoint,
)
from sweetie_motion.trajectory.waypoint_rules import all_or_nothing, Waypoint, WaypointError
from sweetie_motion.trajectory.waypoint_tolerances import JointsAndTolerances

#: time between a new waypoint and the one before it [s]
DEFAULT_STEP = 1.0
WAYPOINTS_FORMAT = 'sweetie_motion/waypoints 1'


class WaypointsList(JointsAndTolerances):
    """
    The editor's keyframes, tolerances and markers.

    Its parts: :class:`~sweetie_motion.trajectory.waypoint_rules.WaypointRules` (the state,
    reading it, the rules) and
    :class:`~sweetie_motion.trajectory.waypoint_tolerances.JointsAndTolerances` (the joint set
    and the tolerances); here the rows' edits, the whole-list edits, goals and files.

    :param joints: the joints (and ``support/<chain>`` pseudo-joints) of the trajectory.
    """

    def copy(self) -> 'WaypointsList':
        """Return an independent duplicate of the whole list (for undo)."""
        return copy.deepcopy(self)

    # --- rows ----------------------------------------------------------------------------------

    @all_or_nothing
    def add_from_state(self, names: Sequence[str], positions: Sequence[float],
                       time: Optional[float] = None, index: Optional[int] = None,
                       support: Optional[Mapping[str, float]] = None, label: str = '') -> int:
        """
        Add the pose of a JointState (any order, more joints are fine) as a row.

        :param time: its time [s]; default: a step after the row before it.
        :param index: where to insert; default: at the end.
        :param support: values of ``support/<chain>`` pseudo-joints (default: the row before's,
            else 1).
        :return: the index of the new row.
        :raises WaypointError: the state lacks joints of the list (named), or the time does not
            fit between the neighbours.
        """
        if len(names) != len(positions):
            raise WaypointError(f'the pose has {len(names)} names but {len(positions)} '
                                'positions')
        given = dict(zip(names, positions))
        missing = [j for j in self.real_joints() if j not in given]
        if missing:
            raise WaypointError(f'the pose lacks joint(s) {", ".join(missing)}')
        index = len(self.waypoints) if index is None else int(index)
        if not 0 <= index <= len(self.waypoints):
            raise WaypointError(f'cannot insert at row {index + 1}')
        before = self.waypoints[index - 1] if index > 0 else None
        row = []
        for k, joint in enumerate(self.joints):
            if joint.startswith(SUPPORT_PREFIX):
                default = before.positions[k] if before is not None else 1.0
                row.append(float((support or {}).get(joint[len(SUPPORT_PREFIX):], default)))
            else:
                value = float(given[joint])
                if not math.isfinite(value):
                    raise WaypointError(f'the pose has {value} for {joint}')
                row.append(value)
        if time is None:
            time = before.time + DEFAULT_STEP if before is not None else 0.0
            after = self.waypoints[index] if index < len(self.waypoints) else None
            if after is not None and time >= after.time:
                time = (before.time + after.time) / 2 if before is not None else after.time / 2
        waypoint = Waypoint(row, self._check_time(time), label=label)
        self._insert(index, waypoint)
        return index

    def _insert(self, index: int, waypoint: Waypoint) -> None:
        rows = self.waypoints[:index] + [waypoint] + self.waypoints[index:]
        self._check_order(rows)
        self.waypoints = rows
        if self._start is not None and self._start >= index:
            self._start += 1
        if self._end is not None and self._end >= index:
            self._end += 1

    @all_or_nothing
    def delete(self, index: int) -> None:
        """Delete a row (a marker on it goes back to its default)."""
        self._check_index(index)
        del self.waypoints[index]
        for attr in ('_start', '_end'):
            marker = getattr(self, attr)
            if marker is not None:
                setattr(self, attr, None if marker == index else
                        marker - 1 if marker > index else marker)

    @all_or_nothing
    def duplicate(self, index: int) -> int:
        """
        Copy a row right after it, halfway to the next row in time (or a step later).

        :return: the index of the copy.
        """
        self._check_index(index)
        source = self.waypoints[index]
        after = self.waypoints[index + 1] if index + 1 < len(self.waypoints) else None
        time = (source.time + after.time) / 2 if after is not None else \
            source.time + DEFAULT_STEP
        copy_ = Waypoint(list(source.positions), time, source.active, list(source.actions),
                         source.label)
        self._insert(index + 1, copy_)
        return index + 1

    @all_or_nothing
    def move(self, index: int, time: float) -> None:
        """
        Set the time of a row.

        :raises WaypointError: the time would not stay between its neighbours.
        """
        self._check_index(index)
        time = self._check_time(time)
        rows = list(self.waypoints)
        rows[index] = Waypoint(list(rows[index].positions), time, rows[index].active,
                               list(rows[index].actions), rows[index].label)
        self._check_order(rows)
        self.waypoints = rows

    def duration_before(self, index: int) -> float:
        """Return the time from the row before to row ``index`` [s] (the first: from 0)."""
        self._check_index(index)
        before = self.waypoints[index - 1].time if index > 0 else 0.0
        return self.waypoints[index].time - before

    @all_or_nothing
    def set_duration(self, index: int, duration: float) -> None:
        """
        Make the move into row ``index`` take ``duration`` [s].

        That row and every row after it shift by the change, so the rest of the motion keeps
        its timing (play_motion_builder's time-from-previous).

        :raises WaypointError: a duration that is not > 0 (the first row: >= 0).
        """
        self._check_index(index)
        duration = float(duration)
        if not math.isfinite(duration) or duration < 0 or (index > 0 and duration == 0):
            raise WaypointError(f'time from the previous row {duration} must be a number > 0'
                                if index else f'time of the first row {duration} must be a '
                                'number >= 0')
        shift = duration - self.duration_before(index)
        self.waypoints = [Waypoint(list(w.positions), w.time + shift if k >= index else w.time,
                                   w.active, list(w.actions), w.label)
                          for k, w in enumerate(self.waypoints)]

    @all_or_nothing
    def set_position(self, index: int, joint: str, value: float) -> None:
        """Set one joint's angle in a row."""
        self._check_index(index)
        if joint not in self.joints:
            raise WaypointError(f'{joint} is not a joint of this trajectory')
        value = float(value)
        if not math.isfinite(value):
            raise WaypointError(f'{value} is not a valid angle for {joint}')
        self.waypoints[index].positions[self.joints.index(joint)] = value

    @all_or_nothing
    def set_pose(self, index: int, names: Sequence[str], positions: Sequence[float]) -> None:
        """Replace the angles of a row by a pose (joints not given keep their values)."""
        self._check_index(index)
        if len(names) != len(positions):
            raise WaypointError(f'the pose has {len(names)} names but {len(positions)} '
                                'positions')
        for name, value in zip(names, positions):
            if name in self.joints:
                self.waypoints[index].positions[self.joints.index(name)] = float(value)

    @all_or_nothing
    def set_actions(self, index: int, actions: Sequence[str]) -> None:
        """Attach text actions to a row."""
        self._check_index(index)
        self.waypoints[index].actions = [str(a) for a in actions if str(a).strip()]

    @all_or_nothing
    def set_active(self, index: int, active: bool) -> None:
        """
        Enable or disable a row.

        :raises WaypointError: disabling a row that carries a marker.
        """
        self._check_index(index)
        if not active and index in (self._start, self._end):
            marker = 'start' if index == self._start else 'end'
            raise WaypointError(f'row {index + 1} carries the {marker} marker: move the marker '
                                'before disabling it')
        self.waypoints[index].active = bool(active)

    @all_or_nothing
    def set_start(self, index: Optional[int]) -> None:
        """
        Put the start marker on a row (None: back to the first active row).

        :raises WaypointError: on a disabled row, or not before the end marker.
        """
        if index is not None:
            self._check_marker(index, 'start')
            if index >= self.end and len(self.active_indices()) > 1:
                raise WaypointError(f'the start marker must be before the end marker '
                                    f'(row {self.end + 1})')
        self._start = index

    @all_or_nothing
    def set_end(self, index: Optional[int]) -> None:
        """
        Put the end marker on a row (None: back to the last active row).

        :raises WaypointError: on a disabled row, or not after the start marker.
        """
        if index is not None:
            self._check_marker(index, 'end')
            if index <= self.start and len(self.active_indices()) > 1:
                raise WaypointError(f'the end marker must be after the start marker '
                                    f'(row {self.start + 1})')
        self._end = index

    def _check_marker(self, index: int, marker: str) -> None:
        self._check_index(index)
        if not self.waypoints[index].active:
            raise WaypointError(f'row {index + 1} is disabled: enable it before putting the '
                                f'{marker} marker on it')

    # --- whole-list edits ----------------------------------------------------------------------

    @all_or_nothing
    def scale_time(self, factor: float) -> None:
        """
        Multiply every time by ``factor`` (> 0): 2 makes the motion twice as slow.

        :raises WaypointError: factor not positive.
        """
        factor = float(factor)
        if not (factor > 0 and math.isfinite(factor)):
            raise WaypointError(f'time scale {factor} must be > 0')
        for waypoint in self.waypoints:
            waypoint.time *= factor

    @all_or_nothing
    def reverse(self) -> None:
        """Reverse the rows: the last keyframe first, times mirrored, markers kept on rows."""
        if not self.waypoints:
            return
        first, last = self.waypoints[0].time, self.waypoints[-1].time
        n = len(self.waypoints)
        self.waypoints = [Waypoint(list(w.positions), first + last - w.time, w.active,
                                   list(w.actions), w.label) for w in reversed(self.waypoints)]
        start, end = self._start, self._end
        self._start = None if end is None else n - 1 - end
        self._end = None if start is None else n - 1 - start

    # --- goals ---------------------------------------------------------------------------------

    def _tolerances(self, table: Mapping[str, float]) -> List[JointTolerance]:
        return [JointTolerance(j, table[j]) for j in self.joints if j in table]

    def build_goal(self, scale: float = 1.0, backward: bool = False, lead: float = 0.0,
                   whole: bool = False) -> TrajectoryGoal:
        """
        Build the goal of the active rows from the start to the end marker.

        :param scale: speed scale of the execution (2 = twice as fast); the table is unchanged.
        :param backward: play the range from the end marker to the start marker.
        :param lead: time before the first keyframe [s] (an approach from the current pose).
        :param whole: every active row, ignoring the markers (what Save stores).
        :raises WaypointError: no joints, fewer than one active row in the range, bad scale.
        """
        if not self.joints:
            raise WaypointError('the trajectory has no joints: set them up first')
        if not (scale > 0 and math.isfinite(scale)):
            raise WaypointError(f'speed scale {scale} must be > 0')
        if not (lead >= 0 and math.isfinite(lead)):
            raise WaypointError(f'lead time {lead} must be >= 0')
        if whole:
            rows = self.active_indices()
        else:
            rows = [k for k in self.active_indices() if self.start <= k <= self.end]
        if not rows:
            raise WaypointError('no active rows between the start and the end marker')
        chosen = [self.waypoints[k] for k in rows]
        origin = chosen[0].time
        times = [w.time - origin for w in chosen]
        positions = [list(w.positions) for w in chosen]
        if backward:
            total = times[-1]
            times = [total - t for t in reversed(times)]
            positions.reverse()
        points = [TrajectoryPoint(lead + t / scale, p) for t, p in zip(times, positions)]
        return TrajectoryGoal(list(self.joints), points, self._tolerances(self.path_tolerance),
                              self._tolerances(self.goal_tolerance), self.goal_time_tolerance)

    @classmethod
    def from_goal(cls, goal: TrajectoryGoal) -> 'WaypointsList':
        """Return a list holding a goal: every point a row, tolerances kept."""
        waypoints = cls(goal.joint_names)
        waypoints.waypoints = [Waypoint([float(v) for v in p.positions], float(p.time))
                               for p in goal.points]
        waypoints.path_tolerance = {t.name: t.position for t in goal.path_tolerance
                                    if t.position and t.name in goal.joint_names}
        waypoints.goal_tolerance = {t.name: t.position for t in goal.goal_tolerance
                                    if t.position and t.name in goal.joint_names}
        waypoints.goal_time_tolerance = goal.goal_time_tolerance
        waypoints.check()
        return waypoints

    # --- editor files (everything: disabled rows, markers, actions) ----------------------------

    def to_document(self) -> Dict[str, Any]:
        """Return the whole editor state as a plain document (YAML-ready)."""
        return {
            'format': WAYPOINTS_FORMAT, 'joints': list(self.joints),
            'path_tolerance': dict(self.path_tolerance),
            'goal_tolerance': dict(self.goal_tolerance),
            'goal_time_tolerance': self.goal_time_tolerance,
            'start': self._start, 'end': self._end,
            'waypoints': [{'t': w.time, 'positions': list(w.positions), 'active': w.active,
                           'actions': list(w.actions), 'label': w.label}
                          for w in self.waypoints]}

    @classmethod
    def from_document(cls, document: Any) -> 'WaypointsList':
        """
        Rebuild a list from :meth:`to_document` output (or a trajectory file's document).

        :raises WaypointError: the document is not a waypoint list.
        """
        form = document.get('format') if isinstance(document, Mapping) else None
        if isinstance(form, str) and form.startswith('sweetie_motion/trajectory'):
            from sweetie_motion.trajectory.codec import goal_from_document, TrajectoryFileError
            try:
                return cls.from_goal(goal_from_document(document))
            except TrajectoryFileError as error:
                raise WaypointError(str(error)) from None
        if form != WAYPOINTS_FORMAT:
            raise WaypointError('not a sweetie_motion waypoint list')
        try:
            waypoints = cls(document['joints'])
            waypoints.path_tolerance = {str(k): float(v) for k, v in
                                        (document.get('path_tolerance') or {}).items()}
            waypoints.goal_tolerance = {str(k): float(v) for k, v in
                                        (document.get('goal_tolerance') or {}).items()}
            waypoints.goal_time_tolerance = float(document.get('goal_time_tolerance', 0.0))
            rows = []
            for raw in document.get('waypoints') or []:
                positions = [float(v) for v in raw['positions']]
                if len(positions) != len(waypoints.joints):
                    raise WaypointError('a waypoint has the wrong number of positions')
                rows.append(Waypoint(positions, float(raw['t']), bool(raw.get('active', True)),
                                     [str(a) for a in raw.get('actions') or []],
                                     str(raw.get('label', ''))))
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise WaypointError(f'malformed waypoint list: {error}') from None
        waypoints.waypoints = rows
        waypoints._start, waypoints._end = document.get('start'), document.get('end')
        try:
            waypoints.check()
        except WaypointError as error:
            raise WaypointError(f'malformed waypoint list: {error}') from None
        return waypoints
