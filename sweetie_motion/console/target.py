"""
A Cartesian target typed in the console, solved by IK and shown before anything moves.

As MoveIt's RViz plugin does with a dragged marker: the person types where the tool should be
(x y z in mm, A B C in ZYZ degrees, as the console shows the tool's pose), the chain's IK
solves it from where the robot is, and the joint result and the robot at that pose are shown;
only Move then moves the robot (a joint move). Pure: no rclpy, no Qt.
"""

from dataclasses import dataclass
import math
from typing import Optional, Sequence, Tuple, Union

import numpy as np

from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.ik import ChainIK
from sweetie_motion.model.robot_model import RobotModel

#: what a target looks like, for the error of one that does not parse
TARGET_FORM = 'x y z [mm] A B C [deg], e.g. 500 -200 800 0 90 180'


class TargetError(SweetieMotionError):
    """A typed target that is not six numbers."""


def parse_target(text: str) -> Pose:
    """
    Return the pose a person typed: ``x y z A B C`` (mm, ZYZ degrees; commas allowed).

    :raises TargetError: not six finite numbers.
    """
    words = text.replace(',', ' ').split()
    try:
        values = [float(word) for word in words]
    except ValueError:
        raise TargetError(f'not a number in {text.strip()!r}: type {TARGET_FORM}') from None
    if len(values) != 6 or not all(math.isfinite(v) for v in values):
        raise TargetError(f'{len(values)} number(s) in {text.strip()!r}: type {TARGET_FORM}')
    x, y, z, alpha, beta, gamma = values
    return Pose.from_mm_zyz(x, y, z, alpha, beta, gamma, degrees=True)


def target_text(pose: Pose) -> str:
    """Return the typed form of a pose: ``x y z`` [mm] ``A B C`` [ZYZ deg], 0.1 apart."""
    return ' '.join(f'{v + 0.0:.1f}' for v in pose.mm_zyz(degrees=True))


def picked_target(position: np.ndarray, typed: str, tool: Pose) -> Pose:
    """
    Return the target at a picked ``position`` [m] with the typed target's orientation.

    A point picked in the 3D view says where, not how: the orientation is the one typed, or,
    when the typed text is not a target, the tool's now (``tool``).
    """
    try:
        rotation = parse_target(typed).rotation
    except TargetError:
        rotation = tool.rotation
    return Pose(np.asarray(position, dtype=float), rotation)


@dataclass(frozen=True)
class TargetSolution:
    """
    What IK made of a target.

    :param pose: the target; :param joints: the chain's joints.
    :param start: where the joints were [rad or m]; :param positions: the solution (on a
        failure, the closest configuration found) [rad or m].
    :param success: within the limits and IK's tolerances.
    :param position_error: [m]; :param orientation_error: [rad]; :param reason: IK's.
    :param beyond: (the target's distance from the shoulder, the chain's reach) [m] when it
        lies beyond reach; None otherwise.
    """

    pose: Pose
    joints: Tuple[str, ...]
    start: Tuple[float, ...]
    positions: Tuple[float, ...]
    success: bool
    position_error: float
    orientation_error: float
    reason: str
    beyond: Optional[Tuple[float, float]] = None

    def describe(self, model: RobotModel) -> str:
        """Say the joint result and how far each joint turns, in the units the console shows."""
        if not self.success and self.beyond is not None:
            distance, reach = self.beyond
            return (f"beyond the arm's reach (about {reach * 1e3:.0f} mm from its shoulder; "
                    f'the target is {distance * 1e3:.0f} mm from it): no pose of the arm gets '
                    'the tool there')
        if not self.success:
            return (f'no IK solution within the joint limits ({self.reason}): the closest is '
                    f'{self.position_error * 1e3:.1f} mm and '
                    f'{math.degrees(self.orientation_error):.1f} deg away')
        parts = []
        for joint, start, end in zip(self.joints, self.start, self.positions):
            prismatic = model.get_joint_info(joint).joint_type == 'prismatic'
            factor, unit = (1e3, 'mm') if prismatic else (180.0 / math.pi, 'deg')
            parts.append(f'{joint} {end * factor:+.1f} ({(end - start) * factor:+.1f}) {unit}')
        return ', '.join(parts)


def compact_joints(solution: 'TargetSolution', model: RobotModel) -> str:
    """
    Return a solution's joint values on one short line: 'joint1..joint6: +0.0 +59.9 ... deg'.

    The console's target panel shows this under the typed pose (the message area and the
    tooltip say each joint's turn too): a line, so that the panel keeps its height.
    """
    units = set()
    values = []
    for joint, end in zip(solution.joints, solution.positions):
        prismatic = model.get_joint_info(joint).joint_type == 'prismatic'
        factor, unit = (1e3, 'mm') if prismatic else (180.0 / math.pi, 'deg')
        units.add(unit)
        values.append(f'{end * factor:+.1f}' + (f' {unit}' if prismatic else ''))
    names = f'{solution.joints[0]}..{solution.joints[-1]}' if len(solution.joints) > 1 else \
        solution.joints[0]
    return f'{names}: {" ".join(values)}' + (' deg' if 'deg' in units else '')


class TargetSolver:
    """
    Solves typed targets for one chain, from where the robot is (the closest solution).

    :param model: the configured robot model; :param chain: the chain the console moves.
    """

    def __init__(self, model: RobotModel, chain: str) -> None:
        self.model = model
        self.chain = chain
        self.joints = tuple(model.list_joints(chain))
        self.ik = ChainIK(model, chain)

    def solve(self, pose: Pose, start: Union[Sequence[float], np.ndarray]) -> TargetSolution:
        """Solve ``pose`` (chain base frame) seeded from ``start`` (the joints now)."""
        target = np.eye(4)
        target[:3, :3] = pose.rotation
        target[:3, 3] = pose.position
        result = self.ik.solve(target, np.asarray(start, dtype=float))
        return TargetSolution(pose, self.joints, tuple(float(v) for v in start),
                              tuple(float(v) for v in result.position), result.success,
                              result.position_error, result.orientation_error, result.reason,
                              self.ik.beyond_reach(pose.position))
