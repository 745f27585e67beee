"""
Edits of a selected range of rows as a whole: Mirror (left and right) and Repeat.

Each is one undoable edit of the table through
:class:`~sweetie_motion.editor.table_commands.TableCommands` (or a refusal that says why).
Mirror swaps what the robot's description declares symmetric
(:mod:`sweetie_motion.model.mirror`); a robot without a ``mirror:`` section has no Mirror, and
:attr:`RowTools.mirror_refusal` says so for the window's disabled button. No Qt, no rclpy.
"""

from typing import Any, Dict, List, Optional

from sweetie_motion.editor.table_commands import TableCommands
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.messages import ActionRefused, rows_count, rows_text
from sweetie_motion.model.mirror import mirror_of, Symmetry
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.waypoint_rules import Waypoint
from sweetie_motion.trajectory.waypoints import DEFAULT_STEP, WaypointsList

#: how often Repeat may play a range at most (a typo of 100 would make a table of hundreds)
REPEAT_MAX = 20


class RowTools:
    """
    Mirror and Repeat of the selected rows (see the module docstring).

    :param table: the table's edits and selection.
    :param model: the configured RobotModel (its ``mirror:``); None: no Mirror.
    """

    def __init__(self, table: TableCommands, model: Any) -> None:
        self.table = table
        self.symmetry: Optional[Symmetry] = None
        #: why Mirror cannot be used ('' : it can)
        self.mirror_refusal = ''
        try:
            self.symmetry = mirror_of(model) if model is not None else None
        except SweetieMotionError as error:
            self.mirror_refusal = f'Mirror is off: the mirror: of the robot description: {error}'
        if model is None:
            self.mirror_refusal = 'Mirror is off: the editor has no robot model'
        elif self.symmetry is None and not self.mirror_refusal:
            self.mirror_refusal = ('Mirror is off: the robot description declares no mirror: '
                                   '(which joints are symmetric left and right)')

    def _selected(self) -> List[int]:
        if not self.table.selection:
            raise ActionRefused('select a row first')
        return list(self.table.selection)

    # --- Mirror --------------------------------------------------------------------------------

    def mirrored_pose(self, pose: Dict[str, float]) -> Dict[str, float]:
        """
        Return a row's pose mirrored left and right, the support flags swapped with their legs.

        :raises ActionRefused: no mirror, or the row lacks the mirror of one of its joints.
        """
        symmetry = self.symmetry
        if symmetry is None:
            raise ActionRefused(self.mirror_refusal)
        out, lacking = {}, []
        for joint, value in pose.items():
            if joint.startswith(SUPPORT_PREFIX):
                other = SUPPORT_PREFIX + symmetry.chain(joint[len(SUPPORT_PREFIX):])
            else:
                other, value = symmetry.joint(joint), symmetry.value(joint, value)
            out[other] = value
            if other not in pose:
                lacking.append(f'{other} (the mirror of {joint})')
        if lacking:
            raise ActionRefused(f'Mirror needs {", ".join(lacking)} in the trajectory: add '
                                'it in Setup')
        return out

    def mirror_rows(self) -> bool:
        """Mirror the selected rows left and right (one undoable edit)."""
        try:
            rows = self._selected()
            waypoints = self.table.waypoints
            poses = {row: self.mirrored_pose(waypoints.pose(row)) for row in rows}
            for row, pose in poses.items():
                for joint, value in pose.items():
                    problem = self.table.outside_limits(joint, value)
                    if problem:
                        raise ActionRefused(f'{problem} in the mirror of row {row + 1}: not '
                                            'mirrored', row, joint)
        except ActionRefused as error:
            return self.table.board.refused(error)

        def change(w: WaypointsList) -> None:
            for row, pose in poses.items():
                w.set_pose(row, list(pose), list(pose.values()))
        return self.table.edit(f'mirror {rows_text(rows)}', change,
                               f'{rows_text(rows)} mirrored left and right')

    # --- Repeat --------------------------------------------------------------------------------

    def repeat_rows(self, times: int) -> bool:
        """
        Play the selected range ``times`` times in all: its copies follow it (one edit).

        The range is the rows from the first selected to the last. Each copy keeps the rows'
        times from the row before (Δt); its first row comes the first row's Δt after the
        range's end (the range's first inner Δt when it starts the table at 0 s). The rows
        after the range move later by as much; an end marker on the range's last row moves to
        the last copy's, so that Execute plays the repeats.
        """
        try:
            rows = self._selected()
            times = int(times)
            if not 2 <= times <= REPEAT_MAX:
                raise ActionRefused(f'repeat 2 to {REPEAT_MAX} times, not {times}')
        except (ActionRefused, ValueError) as error:
            return self.table.board.refused(ActionRefused(str(error)))
        first, last = rows[0], rows[-1]

        def change(w: WaypointsList) -> None:
            source = w.waypoints[first:last + 1]
            lead = w.duration_before(first)
            if lead <= 0:
                lead = source[1].time - source[0].time if len(source) > 1 else DEFAULT_STEP
            period = source[-1].time - source[0].time + lead
            copies = [Waypoint(list(r.positions), r.time + k * period, r.active,
                               list(r.actions), r.label)
                      for k in range(1, times) for r in source]
            for waypoint in w.waypoints[last + 1:]:
                waypoint.time += (times - 1) * period
            for marker in ('_start', '_end'):
                value = getattr(w, marker)
                if value is not None and (value > last or marker == '_end' and value == last):
                    setattr(w, marker, value + len(copies))
            w.waypoints[last + 1:last + 1] = copies
            w.check()
        count = (times - 1) * (last - first + 1)
        span = rows_text(list(range(first, last + 1)))
        if not self.table.edit(f'repeat {span} {times} times', change,
                               f'{span} repeated {times} times ({rows_count(count)} added)'):
            return False
        self.table.select(range(last + 1, last + 1 + count))
        return True
