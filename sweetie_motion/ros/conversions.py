"""
All conversions between ROS messages and the core's arrays and dataclasses, in one place.

The pure core never imports a message type; nodes call these functions at the edge.
"""

from array import array
import math
from typing import List, Sequence

from builtin_interfaces.msg import Duration, Time
import numpy as np
from sensor_msgs.msg import JointState
from sweetie_motion.trajectory.arrays import PointCountError, TrajectoryArrays
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import GoalError, ResultCode


def seconds_to_duration(seconds: float) -> Duration:
    """
    Return a Duration message for ``seconds`` (nanoseconds rounded).

    :raises ValueError: negative or not finite (a Duration of a trajectory cannot be).
    """
    seconds = float(seconds)
    if not (seconds >= 0 and math.isfinite(seconds)):
        raise ValueError(f'{seconds} s is not a valid duration (must be finite and >= 0)')
    nanoseconds = int(round(seconds * 1e9))
    return Duration(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def duration_to_seconds(duration) -> float:
    """Return the seconds of a Duration message (ROS 2 ``sec/nanosec`` fields)."""
    return duration.sec + duration.nanosec * 1e-9


def time_to_seconds(stamp: Time) -> float:
    """Return the seconds of a Time message."""
    return stamp.sec + stamp.nanosec * 1e-9


def joint_state(names: Sequence[str], position: np.ndarray, velocity: np.ndarray,
                effort: np.ndarray = None, stamp: Time = None) -> JointState:
    """Build a JointState message from arrays in the order of ``names``."""
    msg = JointState()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = np.asarray(position, dtype=float).tolist()
    msg.velocity = np.asarray(velocity, dtype=float).tolist()
    if effort is not None:
        msg.effort = np.asarray(effort, dtype=float).tolist()
    return msg


def fill_joint_state(msg: JointState, position: np.ndarray, velocity: np.ndarray,
                     effort: np.ndarray = None) -> JointState:
    """Replace the values of a JointState whose names are set (fast: no per-element checks)."""
    msg.position = array('d', np.asarray(position, dtype=float).tobytes())
    msg.velocity = array('d', np.asarray(velocity, dtype=float).tobytes())
    if effort is not None:
        msg.effort = array('d', np.asarray(effort, dtype=float).tobytes())
    return msg


def joint_state_positions(msg: JointState) -> List[float]:
    """Return the positions of a JointState as a list (validated length)."""
    if len(msg.position) != len(msg.name):
        raise ValueError(f'JointState has {len(msg.name)} names but {len(msg.position)} '
                         'positions')
    return list(msg.position)


# --- trajectory goals ----------------------------------------------------------------------------


def goal_from_msg(msg) -> TrajectoryGoal:
    """
    Convert a control_msgs FollowJointTrajectory Goal into a :class:`TrajectoryGoal`.

    :raises GoalError: INVALID_GOAL for what this package does not execute (multi-DOF
        trajectories).
    """
    if msg.multi_dof_trajectory.joint_names or msg.multi_dof_trajectory.points:
        raise GoalError(ResultCode.INVALID_GOAL,
                        'multi-DOF trajectories are not supported (multi_dof_trajectory must '
                        'be empty)')
    trajectory = msg.trajectory
    points = [TrajectoryPoint(duration_to_seconds(p.time_from_start), list(p.positions),
                              list(p.velocities), list(p.accelerations), list(p.effort))
              for p in trajectory.points]

    def tolerances(entries):
        return [JointTolerance(t.name, t.position, t.velocity, t.acceleration) for t in entries]
    return TrajectoryGoal(list(trajectory.joint_names), points,
                          tolerances(msg.path_tolerance), tolerances(msg.goal_tolerance),
                          duration_to_seconds(msg.goal_time_tolerance),
                          trajectory.header.frame_id,
                          time_to_seconds(trajectory.header.stamp))


def goal_to_msg(goal: TrajectoryGoal):
    """Convert a :class:`TrajectoryGoal` into a control_msgs FollowJointTrajectory Goal."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance as JointToleranceMsg
    from trajectory_msgs.msg import JointTrajectoryPoint
    msg = FollowJointTrajectory.Goal()
    msg.trajectory.header.frame_id = goal.frame_id
    msg.trajectory.joint_names = list(goal.joint_names)
    msg.trajectory.points = [JointTrajectoryPoint(
        positions=p.positions, velocities=p.velocities, accelerations=p.accelerations,
        effort=p.effort, time_from_start=seconds_to_duration(p.time)) for p in goal.points]
    msg.path_tolerance = [JointToleranceMsg(name=t.name, position=t.position,
                                            velocity=t.velocity, acceleration=t.acceleration)
                          for t in goal.path_tolerance]
    msg.goal_tolerance = [JointToleranceMsg(name=t.name, position=t.position,
                                            velocity=t.velocity, acceleration=t.acceleration)
                          for t in goal.goal_tolerance]
    msg.goal_time_tolerance = seconds_to_duration(goal.goal_time_tolerance)
    return msg


def goal_to_bytes(goal: TrajectoryGoal) -> bytes:
    """Serialize a goal as a FollowJointTrajectory Goal message (CDR)."""
    from rclpy.serialization import serialize_message
    return serialize_message(goal_to_msg(goal))


def goal_from_bytes(blob: bytes) -> TrajectoryGoal:
    """
    Deserialize a FollowJointTrajectory Goal message (CDR).

    :raises GoalError: INVALID_GOAL when the bytes are not such a message.
    """
    from control_msgs.action import FollowJointTrajectory
    from rclpy.serialization import deserialize_message
    try:
        msg = deserialize_message(bytes(blob), FollowJointTrajectory.Goal)
    except Exception as error:  # noqa: B902 -- rclpy raises a bare RCLError subclass
        raise GoalError(ResultCode.INVALID_GOAL,
                        f'not a serialized FollowJointTrajectory goal: {error}') from None
    return goal_from_msg(msg)


def byte_array_value(blob: bytes) -> List[bytes]:
    """Return ``blob`` as rclpy holds a BYTE_ARRAY parameter value (1-byte bytes objects)."""
    return memoryview(blob).cast('c').tolist()


def goal_arrays_from_msg(msg) -> TrajectoryArrays:
    """
    Convert a FollowJointTrajectory Goal straight into arrays (no per-point objects).

    :raises GoalError: INVALID_GOAL for multi-DOF trajectories and for points with the wrong
        number of values.
    """
    if msg.multi_dof_trajectory.joint_names or msg.multi_dof_trajectory.points:
        raise GoalError(ResultCode.INVALID_GOAL,
                        'multi-DOF trajectories are not supported (multi_dof_trajectory must '
                        'be empty)')
    trajectory = msg.trajectory
    points = trajectory.points

    def tolerances(entries):
        return [JointTolerance(t.name, t.position, t.velocity, t.acceleration) for t in entries]
    try:
        return TrajectoryArrays.from_rows(
            list(trajectory.joint_names),
            [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points],
            [p.positions for p in points], [p.velocities for p in points],
            [p.accelerations for p in points], [p.effort for p in points],
            path_tolerance=tolerances(msg.path_tolerance),
            goal_tolerance=tolerances(msg.goal_tolerance),
            goal_time_tolerance=duration_to_seconds(msg.goal_time_tolerance))
    except PointCountError as error:
        raise GoalError(ResultCode.INVALID_GOAL, str(error)) from None


def pose_from_msg(msg):
    """
    Convert a geometry_msgs/Pose into a :class:`~sweetie_motion.cartesian.frames.Pose`.

    :raises ValueError: a position that is not finite or an orientation that is not a unit
        quaternion.
    """
    from sweetie_motion.cartesian.frames import Pose, quaternion_to_rotation
    position = np.array((msg.position.x, msg.position.y, msg.position.z), dtype=float)
    if not np.all(np.isfinite(position)):
        raise ValueError(f'position is not finite: {position.tolist()}')
    o = msg.orientation
    return Pose(position, quaternion_to_rotation(o.x, o.y, o.z, o.w))


def pose_to_msg(pose):
    """Convert a :class:`~sweetie_motion.cartesian.frames.Pose` into a geometry_msgs/Pose."""
    from geometry_msgs.msg import Pose as PoseMsg
    from sweetie_motion.cartesian.frames import rotation_to_quaternion
    msg = PoseMsg()
    msg.position.x, msg.position.y, msg.position.z = (float(v) for v in pose.position)
    (msg.orientation.x, msg.orientation.y, msg.orientation.z,
     msg.orientation.w) = rotation_to_quaternion(pose.rotation)
    return msg


class PhysicsMessages:
    """
    The messages of a physics robot's state, built once and refilled for each publication.

    Its base on /tf (tf2_msgs/TFMessage, world -> base), as a pose (geometry_msgs/PoseStamped)
    and its feet (sweetie_motion_msgs/FootContacts), all in the world frame. Refilling costs a
    tenth of building them anew (rclpy checks every field set on a new message).

    :param world_frame: the fixed frame ('odom'); :param base_frame: the root link's frame.
    :param legs: the legs, in the order of the states to come.
    """

    def __init__(self, world_frame: str, base_frame: str, legs: Sequence[str]) -> None:
        from geometry_msgs.msg import Point, PoseStamped, TransformStamped, Vector3
        from sweetie_motion_msgs.msg import FootContacts
        from tf2_msgs.msg import TFMessage
        self.transform = TransformStamped(child_frame_id=base_frame)
        self.transform.header.frame_id = world_frame
        self.tf = TFMessage(transforms=[self.transform])
        self.pose = PoseStamped()
        self.pose.header.frame_id = world_frame
        self.contacts = FootContacts(name=list(legs), in_contact=[False] * len(legs),
                                     position=[Point() for _ in legs],
                                     force=[Vector3() for _ in legs])
        self.contacts.header.frame_id = world_frame

    def fill(self, state, stamp: Time) -> None:
        """
        Put a state into the messages.

        :param state: a :class:`~sweetie_motion.physics.bus.PhysicsState` of these legs.
        :param stamp: the time of its tick on the ROS clock.
        """
        x, y, z = state.position.tolist()
        qw, qx, qy, qz = state.orientation.tolist()
        self.transform.header.stamp = self.pose.header.stamp = stamp
        self.contacts.header.stamp = stamp
        t = self.transform.transform
        t.translation.x, t.translation.y, t.translation.z = x, y, z
        t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z = qw, qx, qy, qz
        p = self.pose.pose
        p.position.x, p.position.y, p.position.z = x, y, z
        p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z = qw, qx, qy, qz
        self.contacts.in_contact = state.on_floor.tolist()
        for point, xyz in zip(self.contacts.position, state.contact_points.tolist()):
            point.x, point.y, point.z = xyz
        for force, xyz in zip(self.contacts.force, state.forces.tolist()):
            force.x, force.y, force.z = xyz
