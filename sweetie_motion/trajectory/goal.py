"""
A joint trajectory goal as plain data (the pure twin of control_msgs FollowJointTrajectory.Goal).

Everything that stores, edits, validates or plays trajectories works on these dataclasses;
:mod:`sweetie_motion.ros.conversions` converts them to and from messages at the ROS edge.
Times are seconds from the start of the trajectory.
"""

from dataclasses import dataclass, field, replace
import math
from typing import Dict, List, Mapping, Optional, Sequence

#: Joint names starting with this prefix are contact flags of a chain, not joints.
SUPPORT_PREFIX = 'support/'


@dataclass
class TrajectoryPoint:
    """
    One waypoint.

    :param time: time from the start [s].
    :param positions: [rad or m], one per joint of the goal.
    :param velocities: empty or one per joint [rad/s].
    :param accelerations: empty or one per joint [rad/s^2].
    :param effort: empty or one per joint.
    """

    time: float
    positions: List[float]
    velocities: List[float] = field(default_factory=list)
    accelerations: List[float] = field(default_factory=list)
    effort: List[float] = field(default_factory=list)


@dataclass
class JointTolerance:
    """A tolerance of one joint: 0 = the server's default, -1 = no limit."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass
class TrajectoryGoal:
    """
    A FollowJointTrajectory goal.

    :param joint_names: joints (and ``support/<chain>`` pseudo-joints), in point order.
    :param goal_time_tolerance: 0 = the server's default [s].
    :param frame_id: header frame of the trajectory (kept, not interpreted).
    :param start_time: header stamp of the trajectory [s]; 0 = start now.
    """

    joint_names: List[str]
    points: List[TrajectoryPoint]
    path_tolerance: List[JointTolerance] = field(default_factory=list)
    goal_tolerance: List[JointTolerance] = field(default_factory=list)
    goal_time_tolerance: float = 0.0
    frame_id: str = ''
    start_time: float = 0.0

    @property
    def duration(self) -> float:
        """Return the time of the last point [s] (0 without points)."""
        return self.points[-1].time if self.points else 0.0

    def joints(self) -> List[str]:
        """Return the names of the real joints: the support pseudo-joints left out."""
        return [j for j in self.joint_names if not j.startswith(SUPPORT_PREFIX)]

    def support_chains(self) -> List[str]:
        """Return the chains named by ``support/<chain>`` pseudo-joints."""
        return [j[len(SUPPORT_PREFIX):] for j in self.joint_names if j.startswith(SUPPORT_PREFIX)]

    def column(self, joint: str) -> List[float]:
        """Return the positions of one joint across all points."""
        k = self.joint_names.index(joint)
        return [p.positions[k] for p in self.points]

    def subset(self, joints: Sequence[str]) -> 'TrajectoryGoal':
        """Return a goal restricted to ``joints`` (in the given order), tolerances included."""
        keep = [self.joint_names.index(j) for j in joints]

        def pick(values: List[float]) -> List[float]:
            return [values[k] for k in keep] if values else []
        points = [TrajectoryPoint(p.time, pick(p.positions), pick(p.velocities),
                                  pick(p.accelerations), pick(p.effort)) for p in self.points]
        wanted = set(joints)
        return replace(self, joint_names=list(joints), points=points,
                       path_tolerance=[t for t in self.path_tolerance if t.name in wanted],
                       goal_tolerance=[t for t in self.goal_tolerance if t.name in wanted])

    def scaled(self, speed: float) -> 'TrajectoryGoal':
        """
        Return the goal played ``speed`` times as fast (times divided, rates multiplied).

        :raises ValueError: speed not positive and finite.
        """
        if not (speed > 0 and math.isfinite(speed)):
            raise ValueError(f'speed scale must be > 0, got {speed}')
        points = [TrajectoryPoint(p.time / speed, list(p.positions),
                                  [v * speed for v in p.velocities],
                                  [a * speed * speed for a in p.accelerations], list(p.effort))
                  for p in self.points]
        return replace(self, points=points)

    def backward(self) -> 'TrajectoryGoal':
        """Return the goal played backwards (last keyframe first, the same lead-in time)."""
        if not self.points:
            return replace(self)
        mirror = self.points[0].time + self.duration
        points = [TrajectoryPoint(mirror - p.time, list(p.positions), [-v for v in p.velocities],
                                  list(p.accelerations), list(p.effort))
                  for p in reversed(self.points)]
        return replace(self, points=points)

    def shifted(self, delay: float) -> 'TrajectoryGoal':
        """Return the goal with every point ``delay`` seconds later."""
        points = [replace(p, time=p.time + delay) for p in self.points]
        return replace(self, points=points)

    def first_pose(self) -> Dict[str, float]:
        """Return joint -> position of the first point (real joints only)."""
        if not self.points:
            return {}
        return {j: v for j, v in zip(self.joint_names, self.points[0].positions)
                if not j.startswith(SUPPORT_PREFIX)}

    def tolerance(self, kind: str, joint: str) -> Optional[JointTolerance]:
        """Return the path or goal tolerance entry of ``joint`` (None if absent)."""
        entries = self.path_tolerance if kind == 'path' else self.goal_tolerance
        return next((t for t in entries if t.name == joint), None)


#: the approach to a trajectory's first keyframe moves at this fraction of the velocity limits
APPROACH_SPEED = 0.5
#: a pose closer than this to the first keyframe needs no approach [rad]
APPROACH_EPSILON = 0.005
#: the shortest approach [s]
APPROACH_MINIMUM = 0.3


def approach_time(target: Mapping[str, float], current: Mapping[str, float],
                  velocity_limits: Mapping[str, float]) -> float:
    """
    Return how long a smooth approach from ``current`` to ``target`` should take [s].

    0 when every joint is already there; otherwise enough time for the slowest joint at
    :data:`APPROACH_SPEED` of its velocity limit (a cubic blend peaks at 1.5 times the mean
    speed), at least :data:`APPROACH_MINIMUM`.
    """
    duration = 0.0
    for joint, value in target.items():
        if joint not in current:
            continue
        distance = abs(value - current[joint])
        if distance > APPROACH_EPSILON:
            limit = velocity_limits.get(joint, 1.0)
            speed = APPROACH_SPEED * (limit if math.isfinite(limit) and limit > 0 else 1.0)
            duration = max(duration, 1.5 * distance / speed)
    return max(duration, APPROACH_MINIMUM) if duration > 0 else 0.0


#: the speed scales a stored trajectory may be played at (0 means 1)
MIN_SPEED, MAX_SPEED = 0.05, 20.0


def approached(goal: TrajectoryGoal, current: Mapping[str, float],
               velocity_limits: Mapping[str, float]) -> TrajectoryGoal:
    """
    Return a stored goal shifted so that it starts with a smooth approach from ``current``.

    What ``play_trajectory`` sends its controller: the first keyframe moves to the
    :func:`approach_time` from the current pose (the controller interpolates from the
    current pose, which it puts at t = 0); a goal already there is unchanged.

    :param current: joint -> position of the robot's reference pose [rad].
    :param velocity_limits: joint -> velocity limit [rad/s].
    """
    if not goal.points:
        return goal
    duration = approach_time(goal.first_pose(), current, velocity_limits)
    if duration == 0.0:
        return goal
    return goal.shifted(duration - goal.points[0].time)
