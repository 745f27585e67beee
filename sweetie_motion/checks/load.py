"""
Servo load of a sampled motion.

Each joint's torque from gravity and the motion's own accelerations, against its servo's rated
and stall torque.

Inverse dynamics (pinocchio's RNEA) of the robot on a free-flyer whose body is held still: the
wrench the body then needs comes from the supporting feet, as point contacts sharing it with
the least-squares (minimum-norm) forces; each leg's joints carry their share through the
foot's Jacobian. A robot without legs (an arm) stands on its fixed base: plain RNEA.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np
import pinocchio

from sweetie_motion.checks.robot import CheckRobot


@dataclass(frozen=True)
class JointLoad:
    """The heaviest moment of one joint during a motion."""

    joint: str
    torque: float           #: [N*m], signed
    rated: float            #: the servo's rated torque [N*m]
    stall: float            #: the servo's stall torque [N*m]
    time: float             #: [s]
    over_rated: float       #: the longest stretch above the rated torque [s]

    @property
    def percent(self) -> float:
        """Return the peak as a percentage of the rated torque."""
        return 100.0 * abs(self.torque) / self.rated if self.rated > 0 else 0.0

    def describe(self) -> str:
        """Say it in words for a log or a goal's result."""
        return (f'{self.joint} needs {abs(self.torque):.2f} N*m at t = {self.time:.2f} s '
                f'({self.percent:.0f} % of its rated {self.rated:.2f} N*m, stall '
                f'{self.stall:.2f} N*m; above rated for {self.over_rated:.2f} s)')


class LoadModel:
    """
    Joint torques of sampled motions, and the servos' torques to compare them with.

    :param robot: the robot's models.
    :param ratings: joint -> (rated, stall) torque [N*m]; joints not in it are not loaded
        (virtual joints, joints without a servo).
    :param legs: leg name -> its contact link; empty: the robot stands on its fixed base.
    """

    def __init__(self, robot: CheckRobot, ratings: Dict[str, tuple],
                 legs: Optional[dict] = None) -> None:
        self.robot = robot
        self.legs = list(legs or {})
        self._contacts = [robot.floating_frame(link) for link in (legs or {}).values()]
        columns = robot.joint_columns()
        self.joints = [j for j in ratings if j in columns]
        self._v = np.array([columns[j] for j in self.joints], dtype=int)
        self.rated = np.array([float(ratings[j][0]) for j in self.joints])
        self.stall = np.array([float(ratings[j][1]) for j in self.joints])

    def torques(self, positions: np.ndarray, velocities: np.ndarray,
                accelerations: np.ndarray, support: Optional[np.ndarray] = None) -> np.ndarray:
        """
        Return each pose's joint torques [N*m], a column per joint of :attr:`joints`.

        :param support: (poses, legs) booleans; None or no legs: the fixed base carries.
        """
        robot = self.robot
        q = robot.configurations(positions)
        v = robot.tangents(velocities)
        a = robot.tangents(accelerations)
        out = np.empty((len(q), len(self.joints)))
        if not self._contacts or support is None:
            model, data = robot.model, robot.data
            for row in range(len(q)):
                out[row] = pinocchio.rnea(model, data, q[row], v[row], a[row])[self._v]
            return out
        model, data = robot.floating, robot.floating_data
        frame = pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED
        legs = len(self._contacts)
        taus = np.empty((len(q), model.nv))
        jacobians = np.zeros((len(q), 3 * legs, model.nv))
        for row in range(len(q)):
            qf = robot.floating_configuration(q[row])
            taus[row] = pinocchio.rnea(model, data, qf, robot.floating_tangent(v[row]),
                                       robot.floating_tangent(a[row]))
            pinocchio.computeJointJacobians(model, data, qf)
            pinocchio.updateFramePlacements(model, data)
            for leg, contact in enumerate(self._contacts):
                if support[row, leg]:
                    jacobians[row, 3 * leg:3 * leg + 3] = pinocchio.getFrameJacobian(
                        model, data, contact, frame)[:3]
        # the feet's forces that give the body its wrench, the smallest that do (a lifted
        # foot's rows are zero: it carries nothing)
        forces = np.einsum('nij,nj->ni', np.linalg.pinv(
            np.transpose(jacobians[:, :, :6], (0, 2, 1))), taus[:, :6])
        taus -= np.einsum('nij,ni->nj', jacobians, forces)
        return taus[:, self._v + 6]

    def heaviest(self, torques: np.ndarray, times: np.ndarray) -> List[JointLoad]:
        """Return the heaviest moment of each joint; the largest share of its rating first."""
        times = np.asarray(times, dtype=float)
        step = float(times[1] - times[0]) if len(times) > 1 else 0.0
        loads = []
        for column, joint in enumerate(self.joints):
            row = int(np.argmax(np.abs(torques[:, column])))
            above = np.abs(torques[:, column]) > self.rated[column]
            loads.append(JointLoad(joint, float(torques[row, column]),
                                   float(self.rated[column]), float(self.stall[column]),
                                   float(times[row]), _longest_run(above) * step))
        return sorted(loads, key=lambda load: -load.percent)


def _longest_run(flags: Sequence[bool]) -> int:
    longest = current = 0
    for flag in flags:
        current = current + 1 if flag else 0
        longest = max(longest, current)
    return longest
