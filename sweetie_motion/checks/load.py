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
#: damping of the feet's forces where nothing else decides them [N*m/N]^2
DAMPING = 1e-6
#: the weight of the robot's equilibrium against the servos' torques (a stiff penalty)
EQUILIBRIUM = 1e6
#: the weight that keeps a foot off the floor free of force
FREE = 1e9


@dataclass(frozen=True)
class JointLoad:
    """
    The heaviest moment of one joint during a motion, and how long it holds its stall torque.

    ``held`` is the longest stretch at ``share`` of the stall torque or more; a stretch that
    reaches the motion's end goes on after it (the robot holds its last pose): ``to_end``.
    """

    joint: str
    torque: float           #: [N*m], signed
    rated: float            #: the servo's rated torque [N*m]
    stall: float            #: the servo's stall torque [N*m]
    time: float             #: [s]
    over_rated: float       #: the longest stretch above the rated torque [s]
    held: float = 0.0       #: the longest stretch at stall [s]
    held_from: float = 0.0  #: when it began [s]
    to_end: bool = False    #: it lasts to the motion's end (and on)

    @property
    def percent(self) -> float:
        """Return the peak as a percentage of the rated torque."""
        return 100.0 * abs(self.torque) / self.rated if self.rated > 0 else 0.0

    @property
    def of_stall(self) -> float:
        """Return the peak as a share of the stall torque [-]."""
        return abs(self.torque) / self.stall if self.stall > 0 else 0.0

    def describe(self) -> str:
        """Say it in words for a log or a goal's result."""
        if self.held > 0:
            until = ('to the end of the motion and on, in its last pose' if self.to_end else
                     f'for {self.held:.2f} s')
            return (f'{self.joint} holds its stall torque ({self.stall:.2f} N*m) from t = '
                    f'{self.held_from:.2f} s {until} (peak {abs(self.torque):.2f} N*m at t = '
                    f'{self.time:.2f} s)')
        return (f'{self.joint} needs {abs(self.torque):.2f} N*m at t = {self.time:.2f} s '
                f'({100 * self.of_stall:.0f} % of its stall torque {self.stall:.2f} N*m, '
                f'{self.percent:.0f} % of its rated {self.rated:.2f} N*m)')


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
                up: Optional[np.ndarray] = None,
                contacts: Optional[np.ndarray] = None) -> np.ndarray:
        """
        Return each pose's joint torques [N*m], a column per joint of :attr:`joints`.

        :param positions: joint positions (poses, joints), uniformly sampled in ``times``
            (the accelerations are the positions' second differences).
        :param support: (poses, legs) booleans; None or no legs: the fixed base carries.
        :param up: (poses, 3) the vertical in the base frame (default: its z).
        :param contacts: (poses, legs, 3) where each foot touches the floor (default: its
            contact link's origin).
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
        torques = np.einsum('nji,nji->nj', axes, moment)
        #: the feet's forces (poses, legs, 3) [N] and their levers on the joints (poses,
        #: joints, legs, 3) [m] of the last call (None: no feet carried)
        self.last_forces: Optional[np.ndarray] = None
        self.last_lever: Optional[np.ndarray] = None
        if len(self._feet.joints) and support is not None:
            feet = self._feet.place(rotation, translation) if contacts is None else contacts
            # a foot's force turns joint j by F . (axis_j x (foot - origin_j)) if beyond it
            lever = np.cross(axes[:, :, None, :], feet[:, None, :, :] - origins[:, :, None, :])
            lever *= self._feet_beyond[None, :, :, None]                # (n, J, legs, 3)
            forces = self._foot_forces(feet, bodies, demand, support, up, torques, lever)
            torques = torques - np.einsum('njfi,nfi->nj', lever, forces)
            self.last_forces, self.last_lever = forces, lever
        return torques

    def _foot_forces(self, feet: np.ndarray, bodies: np.ndarray, demand: np.ndarray,
                     support: np.ndarray, up: np.ndarray, torques: np.ndarray,
                     lever: np.ndarray) -> np.ndarray:
        """
        Return the supporting feet's forces (poses, legs, 3).

        They carry the robot (its weight and momentum: the equilibrium, held as a stiff
        penalty, so that two feet carry what they can) and, of the ways to share it, take the
        one that loads the servos least (the least sum of squared joint torques): position
        servos of equal stiffness settle there, as in the physics. A foot that does not
        support carries nothing.
        """
        n, count = feet.shape[:2]
        mass, centre = self._masses.root_mass, self._masses.root_centre
        base = mass * GRAVITY * up                                     # the body's weight
        wrench = np.concatenate((demand.sum(axis=1) + base,
                                 np.cross(bodies, demand).sum(axis=1)
                                 + np.cross(np.broadcast_to(centre, base.shape), base)), axis=1)
        matrix = np.zeros((n, 6, 3 * count))
        eye = np.eye(3)
        for leg in range(count):
            matrix[:, :3, 3 * leg:3 * leg + 3] = eye
            matrix[:, 3:, 3 * leg:3 * leg + 3] = _skew_rows(feet[:, leg])
        servo = lever.reshape(n, lever.shape[1], 3 * count)            # (n, J, 3 legs)
        off = np.repeat(~np.asarray(support, dtype=bool), 3, axis=1).astype(float)
        normal = np.einsum('nji,njk->nik', servo, servo) + \
            EQUILIBRIUM * np.einsum('nji,njk->nik', matrix, matrix)
        normal += (DAMPING + FREE * off)[:, :, None] * np.eye(3 * count)
        right = np.einsum('nji,nj->ni', servo, torques) + \
            EQUILIBRIUM * np.einsum('nji,nj->ni', matrix, wrench)
        share = np.linalg.solve(normal, right[..., None])[..., 0]
        return share.reshape(n, count, 3)

    def heaviest(self, torques: np.ndarray, times: np.ndarray, share: float = 0.98,
                 valid: Optional[np.ndarray] = None) -> List[JointLoad]:
        """
        Return the heaviest moment of each joint; the largest share of its rating first.

        :param share: at this share of its stall torque or more a servo is at stall [-].
        :param valid: (poses,) the poses whose torques mean something (those that stand);
            the others count as neither load nor a break in a stretch at stall.
        """
        times = np.asarray(times, dtype=float)
        step = float(times[1] - times[0]) if len(times) > 1 else 0.0
        valid = np.ones(len(times), dtype=bool) if valid is None else np.asarray(valid, bool)
        loads = []
        for column, joint in enumerate(self.joints):
            values = np.where(valid, np.abs(torques[:, column]), 0.0)
            row = int(np.argmax(values))
            above = values > self.rated[column]
            at_stall = values >= share * self.stall[column]
            start, length = _longest_stretch(at_stall)
            loads.append(JointLoad(joint, float(torques[row, column]) if valid.any() else 0.0,
                                   float(self.rated[column]), float(self.stall[column]),
                                   float(times[row]), _longest_run(above) * step,
                                   length * step, float(times[start]) if length else 0.0,
                                   bool(length) and start + length == len(times)))
        return sorted(loads, key=lambda load: (-(load.to_end or load.held > 0), -load.percent))


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


def _longest_stretch(flags: np.ndarray) -> 'tuple[int, int]':
    """Return (start, length) of the longest run of true values ((0, 0): none)."""
    edges = np.diff(np.concatenate(([0], np.asarray(flags, dtype=int), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    if not len(starts):
        return 0, 0
    longest = int(np.argmax(ends - starts))
    return int(starts[longest]), int(ends[longest] - starts[longest])


def _longest_run(flags: Sequence[bool]) -> int:
    """Return the length of the longest run of true values."""
    edges = np.diff(np.concatenate(([0], np.asarray(flags, dtype=int), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return int((ends - starts).max()) if len(starts) else 0
