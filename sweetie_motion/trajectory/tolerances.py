"""
Tolerances of a goal, resolved per joint against the controller's defaults.

Rules (control_msgs): a tolerance of 0 or a missing entry means the controller's default;
-1 means no limit; empty lists are MoveIt's "none given" (all defaults). goal_time_tolerance 0
means the default, which is always finite: a goal never waits forever.
"""

from dataclasses import dataclass, field
import math
from typing import Dict, Mapping, Optional, Sequence, Union

import numpy as np

from sweetie_motion.trajectory.arrays import TrajectoryArrays
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal


@dataclass(frozen=True)
class ToleranceDefaults:
    """
    A controller's default tolerances.

    :param path: position error allowed while moving [rad]; 0 = not checked.
    :param goal: position error allowed at the end [rad]; 0 = not checked.
    :param goal_time: time allowed after the end to reach the goal [s], > 0.
    :param joints: joint -> {'path': x, 'goal': y} overriding the defaults of that joint.
    """

    path: float = 0.3
    goal: float = 0.05
    goal_time: float = 1.0
    joints: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def of(self, joint: str, kind: str) -> float:
        """Return the default ``kind`` ('path' or 'goal') position tolerance of ``joint``."""
        return float(self.joints.get(joint, {}).get(kind, getattr(self, kind)))


def _resolve(value: Optional[float], default: float) -> float:
    if value is None or value == 0:
        return default if default > 0 else math.inf
    return math.inf if value < 0 else value


@dataclass(frozen=True)
class Violation:
    """A tolerance violation: which joint, of what, by how much."""

    joint: str
    quantity: str
    error: float
    limit: float

    def __str__(self) -> str:
        unit = 'rad/s' if self.quantity == 'velocity' else 'rad'
        return (f'{self.joint}: {self.quantity} error {self.error:.4f} {unit} exceeds '
                f'{self.limit:.4f} {unit}')


class Tolerances:
    """
    Resolved tolerances of a goal, per joint (in the order given), inf = not checked.

    :param joints: the joints, in the order of the arrays passed to the checks.
    :param goal: a goal or its arrays: their tolerances are read.
    """

    def __init__(self, joints: Sequence[str], goal: Union[TrajectoryGoal, TrajectoryArrays],
                 defaults: ToleranceDefaults) -> None:
        self.joints = list(joints)
        path: Dict[str, JointTolerance] = {t.name: t for t in goal.path_tolerance}
        final: Dict[str, JointTolerance] = {t.name: t for t in goal.goal_tolerance}
        self.path_position = np.array([_resolve(getattr(path.get(j), 'position', None),
                                                defaults.of(j, 'path')) for j in joints])
        self.path_velocity = np.array([_resolve(getattr(path.get(j), 'velocity', None), 0.0)
                                       for j in joints])
        self.goal_position = np.array([_resolve(getattr(final.get(j), 'position', None),
                                                defaults.of(j, 'goal')) for j in joints])
        self.goal_velocity = np.array([_resolve(getattr(final.get(j), 'velocity', None), 0.0)
                                       for j in joints])
        self.goal_time = goal.goal_time_tolerance if goal.goal_time_tolerance > 0 else \
            defaults.goal_time

    def _first(self, kind: str, errors: np.ndarray, limits: np.ndarray) -> Optional[Violation]:
        over = np.abs(errors) > limits
        if not over.any():
            return None
        k = int(np.argmax(np.where(over, np.abs(errors) - limits, -np.inf)))
        return Violation(self.joints[k], kind, float(abs(errors[k])), float(limits[k]))

    def path_violation(self, desired: np.ndarray, actual: np.ndarray,
                       desired_velocity: np.ndarray, actual_velocity: np.ndarray
                       ) -> Optional[Violation]:
        """Return the worst path violation (position first, then velocity), or None."""
        return (self._first('position', actual - desired, self.path_position) or
                self._first('velocity', actual_velocity - desired_velocity,
                            self.path_velocity))

    def goal_violation(self, desired: np.ndarray, actual: np.ndarray,
                       actual_velocity: np.ndarray) -> Optional[Violation]:
        """Return the worst goal violation at the end, or None when the goal is reached."""
        return (self._first('position', actual - desired, self.goal_position) or
                self._first('velocity', actual_velocity, self.goal_velocity))

    def start_violation(self, start: np.ndarray, current: np.ndarray) -> Optional[Violation]:
        """Return the joint whose first keyframe is farther than its path tolerance."""
        return self._first('position', current - start, self.path_position)
