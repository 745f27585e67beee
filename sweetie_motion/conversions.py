"""
All conversions between ROS messages and the core's arrays and dataclasses, in one place.

The pure core never imports a message type; nodes call these functions at the edge.
"""

from array import array
from typing import List, Sequence

from builtin_interfaces.msg import Duration, Time
import numpy as np
from sensor_msgs.msg import JointState


def seconds_to_duration(seconds: float) -> Duration:
    """Return a Duration message for ``seconds`` (non-negative, nanoseconds rounded)."""
    nanoseconds = int(round(max(0.0, float(seconds)) * 1e9))
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
