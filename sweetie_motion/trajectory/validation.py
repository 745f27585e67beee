"""
Validation of trajectory goals, with the result code and the message a client should get.

Every rule raises :class:`GoalError` carrying a control_msgs FollowJointTrajectory result code
and a precise error string (which joint, which point, which value).
"""

from dataclasses import dataclass
from enum import IntEnum
import math
from typing import Iterable, List, Optional, Sequence, Set, TYPE_CHECKING, Union

import numpy as np

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.arrays import PointCountError, TrajectoryArrays
from sweetie_motion.trajectory.goal import SUPPORT_PREFIX, TrajectoryGoal

if TYPE_CHECKING:  # the model (pinocchio, coal) is not loaded by a client that only stores goals
    from sweetie_motion.model.robot_model import RobotModelView

#: tolerance in the limit checks: keyframes saved at a limit survive a float round trip
LIMIT_EPSILON = 1e-6


class ResultCode(IntEnum):
    """Result codes of control_msgs/action/FollowJointTrajectory (same values)."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class PlayCode(IntEnum):
    """The extra result codes of sweetie_motion_msgs/action/PlayTrajectory."""

    NOT_FOUND = -10
    CONTROLLER_UNAVAILABLE = -11
    CANCELED = -12


class GoalError(SweetieMotionError):
    """A goal is refused or failed: the result code and the message for the client."""

    def __init__(self, code: int, message: str) -> None:
        self.code = int(code)
        super().__init__(message)

    @property
    def code_name(self) -> str:
        """Return the name of the result code ('INVALID_GOAL', 'NOT_FOUND', ...)."""
        for enum in (ResultCode, PlayCode):
            try:
                return enum(self.code).name
            except ValueError:
                continue
        return str(self.code)


class GoalJointsError(GoalError):
    """
    A goal names joints that do not exist or that the controller does not drive.

    :param joints: those joints; :param reason: what is wrong with them.
    """

    def __init__(self, joints: Sequence[str], reason: str) -> None:
        self.joints = list(joints)
        super().__init__(RESULT_CODES[GoalJointsError], reason)


class PositionLimitError(GoalError):
    """
    Waypoints of a goal lie outside the position limits of their joints.

    :param violations: every :class:`LimitViolation` (joint, point, value, lower, upper).
    """

    def __init__(self, violations: Sequence['LimitViolation']) -> None:
        self.violations = list(violations)
        more = f' (and {len(self.violations) - 1} more)' if len(self.violations) > 1 else ''
        super().__init__(RESULT_CODES[PositionLimitError],
                         f'waypoint outside the position limits: {self.violations[0]}{more}')


#: the one table from the goal errors of this module to control_msgs result codes; other
#: refusals of a goal (its structure, sizes, times) are GoalError(INVALID_GOAL, reason)
RESULT_CODES = {GoalJointsError: int(ResultCode.INVALID_JOINTS),
                PositionLimitError: int(ResultCode.INVALID_GOAL)}


@dataclass(frozen=True)
class LimitViolation:
    """A keyframe outside the position limits of its joint."""

    joint: str
    point: int
    value: float
    lower: float
    upper: float

    def __str__(self) -> str:
        side = f'> upper limit {self.upper:.4g}' if self.value > self.upper else \
            f'< lower limit {self.lower:.4g}'
        return f'{self.joint} point {self.point} = {self.value:.4g} {side}'


GoalLike = Union[TrajectoryGoal, TrajectoryArrays]


def as_arrays(goal: GoalLike) -> TrajectoryArrays:
    """
    Return the array form of a goal (itself if it is one).

    :raises GoalError: INVALID_GOAL when a point has the wrong number of values.
    """
    if isinstance(goal, TrajectoryArrays):
        return goal
    try:
        return TrajectoryArrays.from_goal(goal)
    except PointCountError as error:
        raise GoalError(ResultCode.INVALID_GOAL, str(error)) from None


def check_structure(goal: GoalLike) -> TrajectoryArrays:
    """
    Check what needs no robot model: points, sizes, numbers, times, tolerances.

    :return: the goal's arrays (checked).
    :raises GoalError: INVALID_GOAL with the reason (for the first point with a problem).
    """
    names = goal.joint_names
    if not (goal.size if isinstance(goal, TrajectoryArrays) else goal.points):
        raise GoalError(ResultCode.INVALID_GOAL, 'the trajectory has no points')
    if not names:
        raise GoalError(ResultCode.INVALID_GOAL, 'the trajectory has no joint names')
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GoalError(ResultCode.INVALID_GOAL,
                        f'duplicate joint names: {", ".join(duplicates)}')
    arrays = as_arrays(goal)
    problems = []  # (point, rank within the point, message): the first point is reported
    for rank, (values, label) in enumerate(((arrays.positions, 'position'),
                                            (arrays.velocities, 'velocity'),
                                            (arrays.accelerations, 'acceleration'),
                                            (arrays.effort, 'effort'))):
        if values is None:
            continue
        bad = ~np.isfinite(values)
        if bad.any():
            k, j = (int(i) for i in np.argwhere(bad)[0])
            problems.append((k, rank,
                             f'point {k}: {label} of {names[j]} is {float(values[k, j])}'))
    times = arrays.times
    invalid = ~np.isfinite(times) | (times < 0)
    if invalid.any():
        k = int(np.argmax(invalid))
        problems.append((k, 4, f'point {k}: time_from_start {float(times[k])} is negative or '
                               'not finite'))
    with np.errstate(invalid='ignore'):
        early = np.flatnonzero(~(np.diff(times) > 0)) + 1
    if len(early):
        k = int(early[0])
        problems.append((k, 5, f'point {k}: time_from_start {times[k]:.4f} s is not after '
                               f'point {k - 1} ({times[k - 1]:.4f} s): times must increase '
                               'strictly'))
    if problems:
        raise GoalError(ResultCode.INVALID_GOAL, min(problems)[2])
    if not math.isfinite(goal.goal_time_tolerance) or goal.goal_time_tolerance < 0:
        raise GoalError(ResultCode.INVALID_GOAL,
                        f'goal_time_tolerance {goal.goal_time_tolerance} must be >= 0')
    for kind, entries in (('path', goal.path_tolerance), ('goal', goal.goal_tolerance)):
        for entry in entries:
            for field in ('position', 'velocity', 'acceleration'):
                value = getattr(entry, field)
                if not math.isfinite(value) or (value < 0 and value != -1):
                    raise GoalError(
                        ResultCode.INVALID_GOAL,
                        f'{kind}_tolerance of {entry.name}: {field} {value} is invalid '
                        '(0 = default, -1 = no limit, else > 0)')
    return arrays


def check_limits(goal: GoalLike, model: 'RobotModelView') -> List[LimitViolation]:
    """Return every keyframe outside its joint's URDF position limits (joint by joint)."""
    arrays = as_arrays(goal)
    lower, upper = model.position_limits()
    columns, indices = [], []
    for column, name in enumerate(arrays.joint_names):
        index = model.get_joint_index(name)
        if index >= 0:
            columns.append(column)
            indices.append(index)
    if not columns or not arrays.size:
        return []
    values = arrays.positions[:, columns]
    lo, hi = lower[indices], upper[indices]
    outside = (values < lo - LIMIT_EPSILON) | (values > hi + LIMIT_EPSILON)
    return [LimitViolation(arrays.joint_names[columns[j]], int(k), float(values[k, j]),
                           float(lo[j]), float(hi[j]))
            for j, k in sorted((int(j), int(k)) for k, j in np.argwhere(outside))]


def validate_goal(goal: GoalLike, model: 'RobotModelView',
                  controlled: Optional[Iterable[str]] = None) -> TrajectoryArrays:
    """
    Validate a goal for execution.

    :param controlled: joints the executing controller may drive (default: any joint).
    :return: the goal's arrays (checked).
    :raises GoalError: INVALID_JOINTS for unknown or foreign joints; INVALID_GOAL for
        structure, numbers, times, tolerances and position limits.
    """
    chains = set(model.list_chains())
    unknown = []
    for name in goal.joint_names:
        if name.startswith(SUPPORT_PREFIX):
            if name[len(SUPPORT_PREFIX):] not in chains:
                unknown.append(name)
        elif model.get_joint_index(name) < 0:
            unknown.append(name)
    if unknown:
        raise GoalJointsError(unknown, f'unknown joint(s): {", ".join(unknown)}')
    if controlled is not None:
        allowed: Set[str] = set(controlled)
        foreign = [j for j in goal.joints() if j not in allowed]
        if foreign:
            raise GoalJointsError(foreign, f'joint(s) {", ".join(foreign)} are not driven by '
                                           'this controller')
    arrays = check_structure(goal)
    for kind, entries in (('path', goal.path_tolerance), ('goal', goal.goal_tolerance)):
        strangers = [t.name for t in entries if model.get_joint_index(t.name) < 0
                     and not t.name.startswith(SUPPORT_PREFIX)]
        if strangers:
            raise GoalJointsError(strangers, f'{kind}_tolerance names unknown joint(s): '
                                             f'{", ".join(strangers)}')
    violations = check_limits(arrays, model)
    if violations:
        raise PositionLimitError(violations)
    return arrays
