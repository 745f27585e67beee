"""
A trajectory's points as arrays: the form that validation and planning work on.

:class:`~sweetie_motion.trajectory.goal.TrajectoryGoal` keeps points as objects, which suits
editing and files; a goal of 10 000 points x 32 joints is 320 000 floats, and checking them one
by one in Python takes a tenth of a second. Here they are (k, n) arrays, built once (from a
goal's points or straight from a message's ``array('d')`` fields) and checked with numpy.
Building them checks the counts per point with the messages the client gets.
"""

from array import array
from dataclasses import dataclass, field
from typing import Any, cast, List, Optional, Sequence

import numpy as np

from sweetie_motion.trajectory.goal import JointTolerance, SUPPORT_PREFIX, TrajectoryGoal

#: the per-point fields besides positions: (attribute, label in messages)
OPTIONAL_FIELDS = ('velocities', 'accelerations', 'effort')


class PointCountError(ValueError):
    """A point has the wrong number of values (the message names the point)."""


@dataclass(eq=False)
class TrajectoryArrays:
    """
    The points of a trajectory as arrays, plus what a goal says besides them.

    :param joint_names: joints (and ``support/<chain>`` pseudo-joints), in column order.
    :param times: time from start of each point, shape (k,) [s].
    :param positions: shape (k, n).
    :param velocities: shape (k, n), or None when no point has velocities.
    :param accelerations: shape (k, n) or None.
    :param effort: shape (k, n) or None.
    """

    joint_names: List[str]
    times: np.ndarray
    positions: np.ndarray
    velocities: Optional[np.ndarray] = None
    accelerations: Optional[np.ndarray] = None
    effort: Optional[np.ndarray] = None
    path_tolerance: List[JointTolerance] = field(default_factory=list)
    goal_tolerance: List[JointTolerance] = field(default_factory=list)
    goal_time_tolerance: float = 0.0

    @property
    def size(self) -> int:
        """Return the number of points."""
        return len(self.times)

    def joints(self) -> List[str]:
        """Return the names of the real joints: the support pseudo-joints left out."""
        return [j for j in self.joint_names if not j.startswith(SUPPORT_PREFIX)]

    def support_chains(self) -> List[str]:
        """Return the chains named by ``support/<chain>`` pseudo-joints."""
        return [j[len(SUPPORT_PREFIX):] for j in self.joint_names if j.startswith(SUPPORT_PREFIX)]

    def columns(self, names: Sequence[str]) -> List[int]:
        """Return the column of each name."""
        index = {name: k for k, name in enumerate(self.joint_names)}
        return [index[name] for name in names]

    @classmethod
    def from_rows(cls, joint_names: Sequence[str], times: Sequence[float],
                  positions: Sequence[Sequence[float]],
                  velocities: Sequence[Sequence[float]],
                  accelerations: Sequence[Sequence[float]],
                  effort: Sequence[Sequence[float]], **goal: Any) -> 'TrajectoryArrays':
        """
        Stack per-point rows (lists, tuples or ``array('d')``), checking their lengths.

        :param goal: the other fields (tolerances, goal_time_tolerance).
        :raises PointCountError: a row has the wrong length, or velocities/accelerations are
            given for some points only; the message names the first such point.
        """
        names = list(joint_names)
        n = len(names)
        k = len(positions)
        problems = []  # (point, rank within the point, message)
        lengths = np.fromiter((len(row) for row in positions), dtype=np.intp, count=k)
        bad = np.flatnonzero(lengths != n)
        if len(bad):
            p = int(bad[0])
            problems.append((p, 0, f'point {p} has {int(lengths[p])} positions for {n} joints'))
        stacked = {}
        for rank, (name, rows) in enumerate(zip(OPTIONAL_FIELDS,
                                                (velocities, accelerations, effort)), 1):
            lengths = np.fromiter((len(row) for row in rows), dtype=np.intp, count=k)
            bad = np.flatnonzero((lengths != 0) & (lengths != n))
            if len(bad):
                p = int(bad[0])
                problems.append((p, rank,
                                 f'point {p} has {int(lengths[p])} {name} for {n} joints'))
            given = lengths != 0
            if name != 'effort' and k and given.any() and not given.all():
                p = int(np.flatnonzero(given != given[0])[0])
                problems.append((p, 4 + rank,
                                 f'point {p}: {name} must be given for every point or none'))
            stacked[name] = given.all() if k else False
        if problems:
            raise PointCountError(min(problems)[2])
        return cls(names, np.asarray(times, dtype=float).reshape(k),
                   _stack(positions, k, n),
                   _stack(velocities, k, n) if stacked['velocities'] else None,
                   _stack(accelerations, k, n) if stacked['accelerations'] else None,
                   _stack(effort, k, n) if stacked['effort'] else None, **goal)

    @classmethod
    def from_goal(cls, goal: TrajectoryGoal) -> 'TrajectoryArrays':
        """
        Return the arrays of a goal's points.

        :raises PointCountError: as :meth:`from_rows`.
        """
        points = goal.points
        return cls.from_rows(goal.joint_names, [p.time for p in points],
                             [p.positions for p in points], [p.velocities for p in points],
                             [p.accelerations for p in points], [p.effort for p in points],
                             path_tolerance=list(goal.path_tolerance),
                             goal_tolerance=list(goal.goal_tolerance),
                             goal_time_tolerance=goal.goal_time_tolerance)


def _stack(rows: Sequence[Sequence[float]], k: int, n: int) -> np.ndarray:
    if k == 0 or n == 0:
        return np.zeros((k, n))
    if all(hasattr(row, 'typecode') and row.typecode == 'd' for row in rows[:1]):
        try:  # array('d') rows (message fields): one copy of their bytes, no float objects
            # join raises TypeError if a later row is not a buffer: the fallback takes it.
            buffers = cast(Sequence[array], rows)
            return np.frombuffer(b''.join(buffers), dtype=np.float64).reshape(k, n)
        except (TypeError, ValueError):
            pass
    return np.array(rows, dtype=float).reshape(k, n)
