"""
Servo load of a sampled motion.

Each joint's torque from gravity and the motion's own accelerations, against its servo's rated
and stall torque.

The body is held still and the robot's weight and momentum come from the supporting feet, as
point contacts sharing them with the least-squares (minimum-norm) forces; a joint carries
what lies beyond it less what the feet beyond it push. A robot without legs (an arm) stands
on its fixed base.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from sweetie_motion.checks.robot import CheckRobot

#: standard gravity [m/s^2]
GRAVITY = 9.81
#: damping of the feet's least-squares forces (a foot or two cannot hold every moment)
DAMPING = 1e-9


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

    Newton-Euler of point masses (each link's mass at its centre of mass, as the balance
    check has it), for all poses at once in numpy: a joint carries the gravity and the
    accelerations of every link beyond it, less the forces of the supporting feet beyond it.
    The unit tests hold it against pinocchio's RNEA.

    :param robot: the robot's models.
    :param ratings: joint -> (rated, stall) torque [N*m] of its servo; joints not in it are
        not loaded (virtual joints, joints without a servo).
    :param legs: leg name -> its contact link; empty: the robot stands on its fixed base.
    """

    def __init__(self, robot: CheckRobot, ratings: Dict[str, tuple],
                 legs: Optional[dict] = None) -> None:
        model = robot.model
        self.robot = robot
        self.legs = list(legs or {})
        names = list(model.names)
        self.joints = [j for j in ratings if j in names and j in robot.joints]
        self._joint_ids = np.array([names.index(j) for j in self.joints], dtype=int)
        self.rated = np.array([float(ratings[j][0]) for j in self.joints])
        self.stall = np.array([float(ratings[j][1]) for j in self.joints])
        self._axes = robot.kinematics.angular[self._joint_ids]
        self._masses = robot.masses
        self._feet = robot.contacts(list((legs or {}).values()))
        # which bodies and feet lie beyond each loaded joint
        self._beyond = self._descendants(model, self._masses.centres.joints)
        self._feet_beyond = self._descendants(model, self._feet.joints)

    def _descendants(self, model, joints: np.ndarray) -> np.ndarray:
        """Return (loaded joints, joints) 1.0 where a joint lies beyond a loaded one."""
        return np.array([[_descends(model, int(b), j) for b in joints]
                         for j in self._joint_ids], dtype=float).reshape(
                             len(self.joints), len(joints))

    def torques(self, positions: np.ndarray, times: np.ndarray,
                support: Optional[np.ndarray] = None,
                up: Optional[np.ndarray] = None) -> np.ndarray:
        """
        Return each pose's joint torques [N*m], a column per joint of :attr:`joints`.

        :param positions: joint positions (poses, joints), uniformly sampled in ``times``
            (the accelerations are the positions' second differences).
        :param support: (poses, legs) booleans; None or no legs: the fixed base carries.
        :param up: (poses, 3) the vertical in the base frame (default: its z).
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        n = len(positions)
        rotation, translation = self.robot.placements(positions)
        bodies = self._masses.centres.place(rotation, translation)
        acceleration = np.zeros_like(bodies)
        if n >= 3:
            step = float(times[1] - times[0])
            acceleration = np.gradient(np.gradient(bodies, step, axis=0), step, axis=0)
        up = np.tile([0.0, 0.0, 1.0], (n, 1)) if up is None else up
        # what each link needs: its mass times its acceleration against gravity
        demand = self._masses.masses[None, :, None] * (acceleration + GRAVITY * up[:, None, :])
        origins = translation[:, self._joint_ids]                      # (n, J, 3)
        axes = np.einsum('njab,jb->nja', rotation[:, self._joint_ids], self._axes)
        force = np.einsum('jb,nbi->nji', self._beyond, demand)
        moment = np.einsum('jb,nbi->nji', self._beyond, np.cross(bodies, demand)) - \
            np.cross(origins, force)
        if len(self._feet.joints) and support is not None:
            feet = self._feet.place(rotation, translation)
            forces = self._foot_forces(feet, bodies, demand, support, up)
            moment -= np.einsum('jf,nfi->nji', self._feet_beyond, np.cross(feet, forces)) - \
                np.cross(origins, np.einsum('jf,nfi->nji', self._feet_beyond, forces))
        return np.einsum('nji,nji->nj', axes, moment)

    def _foot_forces(self, feet: np.ndarray, bodies: np.ndarray, demand: np.ndarray,
                     support: np.ndarray, up: np.ndarray) -> np.ndarray:
        """Return the supporting feet's forces (poses, legs, 3): the least that carry it."""
        n, count = feet.shape[:2]
        mass, lever = self._masses.root_mass, self._masses.root_centre
        base = mass * GRAVITY * up                                     # the body's weight
        wrench = np.concatenate((demand.sum(axis=1) + base,
                                 np.cross(bodies, demand).sum(axis=1)
                                 + np.cross(np.broadcast_to(lever, base.shape), base)), axis=1)
        matrix = np.zeros((n, 6, 3 * count))
        eye = np.eye(3)
        for leg in range(count):
            on = support[:, leg].astype(float)[:, None, None]
            matrix[:, :3, 3 * leg:3 * leg + 3] = eye * on
            matrix[:, 3:, 3 * leg:3 * leg + 3] = _skew_rows(feet[:, leg]) * on
        # the least forces: A^T (A A^T)^-1 w, damped a little for fewer than three feet (a
        # closed form for a thousand poses at once; a pseudo-inverse per pose cost 10 times more)
        square = np.einsum('nij,nkj->nik', matrix, matrix) + DAMPING * np.eye(6)
        share = np.linalg.solve(square, wrench[..., None])[..., 0]
        forces = np.einsum('nji,nj->ni', matrix, share)
        return forces.reshape(n, count, 3)

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


def _descends(model, joint: int, ancestor: int) -> bool:
    """Return whether ``joint`` is ``ancestor`` or lies beyond it in the kinematic tree."""
    while joint > 0:
        if joint == ancestor:
            return True
        joint = int(model.parents[joint])
    return False


def _skew_rows(vectors: np.ndarray) -> np.ndarray:
    """Return the cross-product matrices (n, 3, 3) of vectors (n, 3)."""
    x, y, z = vectors[:, 0], vectors[:, 1], vectors[:, 2]
    zero = np.zeros_like(x)
    return np.stack((np.stack((zero, -z, y), axis=1), np.stack((z, zero, -x), axis=1),
                     np.stack((-y, x, zero), axis=1)), axis=1)


def _longest_run(flags: Sequence[bool]) -> int:
    """Return the length of the longest run of true values."""
    edges = np.diff(np.concatenate(([0], np.asarray(flags, dtype=int), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max()) if len(starts) else 0
