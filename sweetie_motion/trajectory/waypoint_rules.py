"""
The rules of the editor's waypoint list: its rows and markers, and the checks that keep them.

:class:`WaypointRules` holds a list's state (joints, rows, tolerances, markers), reads it, and
checks every rule (see :mod:`sweetie_motion.trajectory.waypoints`); an edit decorated with
:func:`all_or_nothing` is checked after it and undone when it breaks one. Pure: no Qt.
"""

import copy
from dataclasses import dataclass, field
import functools
import math
from typing import Dict, List, Optional, Sequence

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX


class WaypointError(SweetieMotionError):
    """An edit would break the waypoint list; the message tells the user why."""


def all_or_nothing(method):
    """Make an edit all-or-nothing: on WaypointError the list is left as it was."""
    @functools.wraps(method)
    def edit(self, *args, **kwargs):
        saved = self.__dict__.copy()
        saved['waypoints'] = copy.deepcopy(self.waypoints)
        saved['path_tolerance'] = dict(self.path_tolerance)
        saved['goal_tolerance'] = dict(self.goal_tolerance)
        saved['joints'] = list(self.joints)
        try:
            result = method(self, *args, **kwargs)
            self.check()
        except (WaypointError, TypeError, ValueError) as error:
            self.__dict__.update(saved)
            if isinstance(error, WaypointError):
                raise
            raise WaypointError(f'invalid value: {error}') from None
        return result
    return edit


@dataclass
class Waypoint:
    """
    One keyframe of the editor.

    :param positions: one per joint of the list [rad].
    :param time: time from the start [s].
    :param active: disabled rows are kept but not played.
    :param actions: text commands attached to this keyframe (played by higher levels).
    :param label: a name, e.g. of the named pose it came from.
    """

    positions: List[float]
    time: float
    active: bool = True
    actions: List[str] = field(default_factory=list)
    label: str = ''


class WaypointRules:
    """
    A waypoint list's state, what reads it, and the rules it keeps.

    :param joints: the joints (and ``support/<chain>`` pseudo-joints) of the trajectory.
    """

    def __init__(self, joints: Sequence[str] = ()) -> None:
        self.joints: List[str] = list(joints)
        self.waypoints: List[Waypoint] = []
        self.path_tolerance: Dict[str, float] = {}
        self.goal_tolerance: Dict[str, float] = {}
        self.goal_time_tolerance = 0.0
        self._start: Optional[int] = None
        self._end: Optional[int] = None

    # --- reading -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.waypoints)

    @property
    def start(self) -> int:
        """Return the index of the start marker (default: the first active row)."""
        if self._start is not None:
            return self._start
        active = self.active_indices()
        return active[0] if active else 0

    @property
    def end(self) -> int:
        """Return the index of the end marker (default: the last active row)."""
        if self._end is not None:
            return self._end
        active = self.active_indices()
        return active[-1] if active else max(0, len(self.waypoints) - 1)

    def active_indices(self) -> List[int]:
        """Return the indices of the active rows."""
        return [k for k, w in enumerate(self.waypoints) if w.active]

    def pose(self, index: int) -> Dict[str, float]:
        """Return joint -> position of a row."""
        self._check_index(index)
        return dict(zip(self.joints, self.waypoints[index].positions))

    def real_joints(self) -> List[str]:
        """Return the joints without the ``support/<chain>`` pseudo-joints."""
        return [j for j in self.joints if not j.startswith(SUPPORT_PREFIX)]

    # --- checks --------------------------------------------------------------------------------

    def check(self) -> None:
        """
        Check every rule of the list (see the module docstring).

        :raises WaypointError: naming the first broken rule.
        """
        duplicates = sorted({j for j in self.joints if self.joints.count(j) > 1})
        if duplicates:
            raise WaypointError(f'joints listed twice: {", ".join(duplicates)}')
        for k, waypoint in enumerate(self.waypoints):
            if len(waypoint.positions) != len(self.joints):
                raise WaypointError(f'row {k + 1} has {len(waypoint.positions)} angles for '
                                    f'{len(self.joints)} joints')
            for joint, value in zip(self.joints, waypoint.positions):
                if not math.isfinite(value):
                    raise WaypointError(f'row {k + 1}: {value} is not a valid value for {joint}')
            if not math.isfinite(waypoint.time) or waypoint.time < 0:
                raise WaypointError(f'row {k + 1}: time {waypoint.time} must be a number >= 0')
        self._check_order(self.waypoints)
        for marker, index in (('start', self._start), ('end', self._end)):
            if index is None:
                continue
            if not (isinstance(index, int) and not isinstance(index, bool)
                    and 0 <= index < len(self.waypoints)):
                raise WaypointError(f'the {marker} marker is on row {index!r}, which does not '
                                    'exist')
            if not self.waypoints[index].active:
                raise WaypointError(f'row {index + 1} carries the {marker} marker and cannot '
                                    'be disabled')
        if len(self.active_indices()) > 1 and self.start >= self.end:
            raise WaypointError(f'the start marker (row {self.start + 1}) must stay before the '
                                f'end marker (row {self.end + 1})')
        for kind, table in (('path', self.path_tolerance), ('goal', self.goal_tolerance)):
            for joint, value in table.items():
                if joint not in self.joints:
                    raise WaypointError(f'{kind} tolerance of {joint}, which is not a joint of '
                                        'this trajectory')
                if not math.isfinite(value) or (value < 0 and value != -1):
                    raise WaypointError(f'{kind} tolerance {value} of {joint} must be >= 0, '
                                        'or -1 for no limit')
        if not math.isfinite(self.goal_time_tolerance) or self.goal_time_tolerance < 0:
            raise WaypointError(f'goal time tolerance {self.goal_time_tolerance} must be >= 0')

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.waypoints):
            raise WaypointError(f'there is no row {index + 1} (the list has '
                                f'{len(self.waypoints)} rows)')

    @staticmethod
    def _check_time(time: float) -> float:
        time = float(time)
        if not math.isfinite(time) or time < 0:
            raise WaypointError(f'time {time} must be a number >= 0')
        return time

    def _check_order(self, waypoints: List[Waypoint]) -> None:
        for k in range(1, len(waypoints)):
            if waypoints[k].time <= waypoints[k - 1].time:
                raise WaypointError(
                    f'times must increase down the list: row {k + 1} ({waypoints[k].time:.3f} '
                    f's) is not after row {k} ({waypoints[k - 1].time:.3f} s)')
