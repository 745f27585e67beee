"""
Migration of the old robot's animations: ROS 1 FollowJointTrajectoryGoal files as JSON.

The old stack saved goals with rospy_message_converter: ``time_from_start: {secs, nsecs}``,
``header.seq``, tolerances by joint name, ``support/legN`` pseudo-joints. This module reads
them into :class:`TrajectoryGoal`, reports waypoints outside the position limits by joint,
point and value, and can clamp them into the limits, reporting each change.
"""

from dataclasses import dataclass, field, replace
import json
from pathlib import Path
from typing import Any, List, Mapping, Tuple, Union

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.paths import describe_file_error
from sweetie_motion.trajectory.codec import parse_tolerances
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import check_limits, LimitViolation


class MigrationError(SweetieMotionError):
    """A file is not an old-format trajectory goal."""


def _duration(value: Any, where: str) -> float:
    if isinstance(value, Mapping):
        try:
            return float(value.get('secs', value.get('sec', 0))) + \
                float(value.get('nsecs', value.get('nanosec', 0))) * 1e-9
        except (TypeError, ValueError):
            raise MigrationError(f'{where}: not a duration: {value!r}') from None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MigrationError(f'{where}: not a duration: {value!r}') from None


def goal_from_ros1(document: Any, where: str = 'goal') -> TrajectoryGoal:
    """
    Convert a ROS 1 FollowJointTrajectoryGoal (as rospy_message_converter wrote it).

    :raises MigrationError: naming what is missing or malformed.
    """
    trajectory = document.get('trajectory') if isinstance(document, Mapping) else None
    if not isinstance(trajectory, Mapping):
        raise MigrationError(f'{where}: not a FollowJointTrajectoryGoal (no "trajectory")')
    names = trajectory.get('joint_names')
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise MigrationError(f'{where}: trajectory.joint_names must be a list of names')
    points = []
    for k, raw in enumerate(trajectory.get('points') or []):
        if not isinstance(raw, Mapping):
            raise MigrationError(f'{where}: point {k} is not a mapping')

        def values(key: str) -> List[float]:
            try:
                return [float(v) for v in raw.get(key) or []]
            except (TypeError, ValueError):
                raise MigrationError(f'{where}: point {k}: {key} are not numbers') from None
        points.append(TrajectoryPoint(_duration(raw.get('time_from_start', 0), f'{where}: '
                                                f'point {k}'), values('positions'),
                                      values('velocities'), values('accelerations'),
                                      values('effort')))

    def tolerances(key: str) -> List[JointTolerance]:
        return parse_tolerances(document.get(key), f'{where}: {key}', MigrationError)
    header = trajectory.get('header') or {}
    return TrajectoryGoal(list(names), points, tolerances('path_tolerance'),
                          tolerances('goal_tolerance'),
                          _duration(document.get('goal_time_tolerance', 0),
                                    f'{where}: goal_time_tolerance'),
                          str(header.get('frame_id', '') if isinstance(header, Mapping)
                              else ''))


def load_ros1_json(path: Union[str, Path]) -> TrajectoryGoal:
    """
    Read an old-format goal file.

    :raises MigrationError: unreadable, not JSON, or not a goal.
    """
    path = Path(path)
    try:
        with open(path, encoding='utf-8') as stream:
            document = json.load(stream)
    except json.JSONDecodeError as error:
        raise MigrationError(f'{path}:{error.lineno}:{error.colno}: not JSON: {error.msg}') \
            from None
    except (OSError, UnicodeDecodeError) as error:
        raise MigrationError(describe_file_error(path, error)) from None
    return goal_from_ros1(document, str(path))


@dataclass
class ClampReport:
    """What clamping changed: one line per waypoint moved into the limits."""

    changes: List[str] = field(default_factory=list)


def clamp_to_limits(goal: TrajectoryGoal, model: RobotModelView
                    ) -> Tuple[TrajectoryGoal, List[LimitViolation]]:
    """Return the goal with every waypoint moved into its joint's limits, and what moved."""
    violations = check_limits(goal, model)
    if not violations:
        return goal, []
    points = [replace(p, positions=list(p.positions)) for p in goal.points]
    for violation in violations:
        column = goal.joint_names.index(violation.joint)
        points[violation.point].positions[column] = min(max(violation.value, violation.lower),
                                                        violation.upper)
    return replace(goal, points=points), violations
