"""
The joints and the tolerances of the editor's waypoint list: every edit all or nothing.

Pure: no Qt.
"""

import math
from typing import Dict, Mapping, Optional, Sequence

from sweetie_motion.trajectory.goal import SUPPORT_PREFIX
from sweetie_motion.trajectory.waypoint_rules import all_or_nothing, WaypointError, WaypointRules


class JointsAndTolerances(WaypointRules):
    """A waypoint list's joint set, path and goal tolerances and goal time tolerance."""

    @all_or_nothing
    def set_joints(self, joints: Sequence[str],
                   positions: Optional[Mapping[str, float]] = None) -> None:
        """
        Change the joint set: removed joints leave every row, new joints enter every row.

        :param positions: the position of each new joint in every row (e.g. the current
            pose); a new ``support/<chain>`` defaults to 1 (supporting).
        :raises WaypointError: duplicates, or no position for a new joint while rows exist.
        """
        joints = list(joints)
        duplicates = sorted({j for j in joints if joints.count(j) > 1})
        if duplicates:
            raise WaypointError(f'joints listed twice: {", ".join(duplicates)}')
        positions = dict(positions or {})
        new = [j for j in joints if j not in self.joints]
        missing = [j for j in new if j not in positions and not j.startswith(SUPPORT_PREFIX)]
        if missing and self.waypoints:
            raise WaypointError(f'give a position for the new joint(s) {", ".join(missing)}')
        old = {j: k for k, j in enumerate(self.joints)}
        for waypoint in self.waypoints:
            waypoint.positions = [waypoint.positions[old[j]] if j in old else
                                  float(positions.get(j, 1.0)) for j in joints]
        self.joints = joints
        for table in (self.path_tolerance, self.goal_tolerance):
            for joint in [j for j in table if j not in joints]:
                del table[joint]

    @all_or_nothing
    def set_tolerance(self, kind: str, joint: str, value: float) -> None:
        """
        Set the path or goal tolerance of a joint (0 = the controller's default, -1 = none).

        :raises WaypointError: unknown joint or invalid value.
        """
        table = self._tolerance_table(kind)
        if joint not in self.joints:
            raise WaypointError(f'{joint} is not a joint of this trajectory')
        value = float(value)
        if not math.isfinite(value) or (value < 0 and value != -1):
            raise WaypointError(f'tolerance {value} must be >= 0, or -1 for no limit')
        if value == 0:
            table.pop(joint, None)
        else:
            table[joint] = value

    @all_or_nothing
    def set_tolerance_for_all(self, kind: str, value: float) -> None:
        """Set the path or goal tolerance of every joint."""
        for joint in self.real_joints():
            self.set_tolerance(kind, joint, value)

    def _tolerance_table(self, kind: str) -> Dict[str, float]:
        if kind == 'path':
            return self.path_tolerance
        if kind == 'goal':
            return self.goal_tolerance
        raise WaypointError(f'unknown tolerance kind {kind!r} (path or goal)')

    @all_or_nothing
    def set_goal_time_tolerance(self, value: float) -> None:
        """Set goal_time_tolerance [s] (0 = the controller's default)."""
        value = float(value)
        if not math.isfinite(value) or value < 0:
            raise WaypointError(f'goal time tolerance {value} must be >= 0')
        self.goal_time_tolerance = value
