"""
The editor's play head: the pose the controller would play at any time of the table.

Scrubbing the play head shows the interpolated motion between the rows in the 3D view and a
line on the plot, as an animation tool's timeline does. Pure: no Qt, no rclpy.
"""

from typing import Dict, Optional, Tuple

import numpy as np

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.analysis import goal_motion, GoalMotion
from sweetie_motion.trajectory.waypoints import WaypointsList

#: what decides a table's motion (:func:`table_key`): rows' bytes, joints, interpolation
TableKey = Tuple[bytes, Tuple[str, ...], str]


def table_key(waypoints: WaypointsList, interpolation: str) -> TableKey:
    """Return what decides a table's motion: its active rows' times and values, its joints."""
    rows = [waypoints.waypoints[k] for k in waypoints.active_indices()]
    values = np.array([[w.time] + list(w.positions) for w in rows], dtype=float)
    return values.tobytes(), tuple(waypoints.joints), interpolation


class PlayHead:
    """
    Samples the active rows' trajectory as the trajectory controller interpolates it.

    The motion is built again only when the rows change (a scrub samples it in microseconds).
    """

    def __init__(self) -> None:
        self._key: Optional[Tuple[bytes, Tuple[str, ...], str]] = None
        self._motion: Optional[GoalMotion] = None
        self._origin = 0.0

    def span(self, waypoints: WaypointsList) -> Optional[Tuple[float, float]]:
        """Return the table times [s] of the first and the last active row (None: no rows)."""
        active = waypoints.active_indices()
        if not active:
            return None
        rows = waypoints.waypoints
        return rows[active[0]].time, rows[active[-1]].time

    def pose_at(self, waypoints: WaypointsList, time: float,
                interpolation: str = 'akima') -> Dict[str, float]:
        """
        Return the joints' positions at table time ``time`` [s] (clipped to the rows' span).

        Empty when the rows make no trajectory (fewer than one active row, times out of order).
        """
        motion = self._motion_of(waypoints, interpolation)
        if motion is None:
            return {}
        position, _, _ = motion.spline.sample(float(time) - self._origin)
        return {joint: float(value) for joint, value in zip(motion.joints, position)}

    def _motion_of(self, waypoints: WaypointsList, interpolation: str) -> Optional[GoalMotion]:
        rows = [waypoints.waypoints[k] for k in waypoints.active_indices()]
        key = table_key(waypoints, interpolation)
        if key != self._key:
            self._key = key
            self._motion = None
            if rows:
                try:
                    self._motion = goal_motion(waypoints.build_goal(whole=True), interpolation)
                except (SweetieMotionError, ValueError):  # e.g. times out of order
                    self._motion = None
                # build_goal counts from the first active row; the table from its own zero
                self._origin = rows[0].time
        return self._motion
