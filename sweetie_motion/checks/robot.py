"""
The pinocchio models the checks share, built once from a robot's URDF.

A motion arrives as rows of joint positions, velocities and accelerations in the order of the
robot's joints (:meth:`RobotModelView.list_all_joints`); :class:`CheckRobot` turns them into
pinocchio configurations of a fixed-base model (collision, balance) and of the same robot on a
free-flyer (servo load: the body's weight goes to the supporting feet).
"""

from dataclasses import dataclass
import threading
from typing import Dict, List, Sequence, Tuple

import numpy as np
import pinocchio

from sweetie_motion.errors import UrdfError


class CheckRobot:
    """
    A robot's fixed-base and free-flyer pinocchio models, and its joints' places in them.

    :param urdf_xml: the URDF document.
    :param joints: the robot's joint names, in the order of the motion's columns.
    """

    def __init__(self, urdf_xml: str, joints: Sequence[str]) -> None:
        try:
            self.model = pinocchio.buildModelFromXML(urdf_xml)
            self.floating = pinocchio.buildModelFromXML(urdf_xml, pinocchio.JointModelFreeFlyer())
        except (RuntimeError, ValueError) as error:
            raise UrdfError(f'pinocchio cannot build the URDF: {error}') from None
        self.urdf_xml = urdf_xml
        self.joints: List[str] = list(joints)
        self.data = self.model.createData()
        self.floating_data = self.floating.createData()
        #: column -> (idx_q, idx_v, continuous) in the fixed-base model, for the URDF's joints
        self._places: List[tuple] = []
        for column, name in enumerate(self.joints):
            if not self.model.existJointName(name):
                continue
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nv != 1:
                continue
            self._places.append((column, joint.idx_q, joint.idx_v, joint.nq == 2))
        self._neutral = pinocchio.neutral(self.model)
        self.masses = PointMasses.of(self.model)
        #: the total mass [kg], the body fixed to the root included
        self.mass = self.masses.total
        self.kinematics = BatchKinematics(self)
        self._last = threading.local()

    def placements(self, positions: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """
        Return the joints' world rotations and translations for poses (rows).

        The three checks of one motion ask for the same poses: the last answer is kept (per
        thread) and given again for equal poses.
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        last = getattr(self._last, 'value', None)
        if last is not None and last[0].shape == positions.shape and \
                np.array_equal(last[0], positions):
            return last[1]
        result = self.kinematics.placements(positions)
        self._last.value = (positions.copy(), result)
        return result

    def configurations(self, positions: np.ndarray) -> np.ndarray:
        """Return a fixed-base configuration per row of joint positions."""
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        q = np.tile(self._neutral, (len(positions), 1))
        for column, idx_q, _, continuous in self._places:
            if continuous:  # pinocchio stores (cos, sin)
                q[:, idx_q] = np.cos(positions[:, column])
                q[:, idx_q + 1] = np.sin(positions[:, column])
            else:
                q[:, idx_q] = positions[:, column]
        return q

    def tangents(self, values: np.ndarray) -> np.ndarray:
        """Return fixed-base velocities or accelerations (rows) of joint values (rows)."""
        values = np.atleast_2d(np.asarray(values, dtype=float))
        v = np.zeros((len(values), self.model.nv))
        for column, _, idx_v, _ in self._places:
            v[:, idx_v] = values[:, column]
        return v

    def floating_configuration(self, q: np.ndarray) -> np.ndarray:
        """Return the free-flyer configuration of a fixed-base one: the body at the origin."""
        return np.concatenate(([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], q))

    def floating_tangent(self, v: np.ndarray) -> np.ndarray:
        """Return the free-flyer tangent of a fixed-base one: the body at rest."""
        return np.concatenate((np.zeros(6), v))

    def frame(self, link: str) -> int:
        """Return the fixed-base model's frame id of ``link``."""
        if not self.model.existFrame(link, pinocchio.FrameType.BODY):
            raise UrdfError(f'link {link!r} is not in the URDF')
        return self.model.getFrameId(link, pinocchio.FrameType.BODY)

    def contacts(self, links: Sequence[str]) -> 'LinkPoints':
        """Return the origins of ``links`` (a leg's contact link each), to place per pose."""
        frames = [self.model.frames[self.frame(link)] for link in links]
        return LinkPoints(np.array([f.parentJoint for f in frames], dtype=int),
                          np.array([np.asarray(f.placement.translation) for f in frames]
                                   ).reshape(-1, 3))

    def floating_frame(self, link: str) -> int:
        """Return the free-flyer model's frame id of ``link``."""
        return self.floating.getFrameId(link, pinocchio.FrameType.BODY)

    def joint_columns(self) -> Dict[str, int]:
        """Return joint name -> its fixed-base velocity index, for the driven joints."""
        return {self.joints[column]: idx_v for column, _, idx_v, _ in self._places}


@dataclass(frozen=True)
class LinkPoints:
    """Points fixed on pinocchio joints (a foot's contact point, a link's centre of mass)."""

    joints: np.ndarray      #: (K,) the pinocchio joint each point moves with
    points: np.ndarray      #: (K, 3) each point in its joint's frame [m]

    def place(self, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
        """Return the points (n, K, 3) in the base frame, for joint placements of n poses."""
        return BatchKinematics.points(rotation, translation, self.joints, self.points)


@dataclass(frozen=True)
class PointMasses:
    """
    Each link's mass at its centre of mass: the balance and load checks' model of a robot.

    A link's own rotational inertia is left out (the unit tests measure what that costs).
    """

    centres: LinkPoints     #: the centres of mass of the moving links that have mass
    masses: np.ndarray      #: (K,) their masses [kg]
    root_mass: float        #: the mass fixed to the base [kg]
    root_centre: np.ndarray  #: (3,) its centre of mass in the base frame [m]

    @classmethod
    def of(cls, model: 'pinocchio.Model') -> 'PointMasses':
        """Return the point masses of a fixed-base pinocchio model."""
        bodies = [j for j in range(1, model.njoints) if model.inertias[j].mass > 0]
        root = model.inertias[0]
        return cls(LinkPoints(np.array(bodies, dtype=int),
                              np.array([np.asarray(model.inertias[j].lever)
                                        for j in bodies]).reshape(-1, 3)),
                   np.array([model.inertias[j].mass for j in bodies]),
                   float(root.mass), np.asarray(root.lever, dtype=float))

    @property
    def total(self) -> float:
        """Return the robot's mass [kg]."""
        return float(self.masses.sum()) + self.root_mass

    def centre_of_mass(self, centres: np.ndarray) -> np.ndarray:
        """Return the robot's centre of mass (n, 3) from its links' centres (n, K, 3)."""
        return (np.einsum('nki,k->ni', centres, self.masses)
                + self.root_mass * self.root_centre) / self.total


class BatchKinematics:
    """
    The placements of every pinocchio joint for many poses at once, in numpy.

    One pinocchio call per pose costs little, but reading its placements back into numpy
    costs a Python object per joint and pose (about 30 per pose here); composing the joint
    transforms for all poses at once costs one numpy operation per joint.

    :param robot: the robot whose fixed-base model is used.
    """

    def __init__(self, robot: CheckRobot) -> None:
        model = robot.model
        self.parents = [int(p) for p in model.parents]
        count = model.njoints
        self.rotation0 = np.array([np.array(model.jointPlacements[j].rotation)
                                   for j in range(count)])
        self.translation0 = np.array([np.array(model.jointPlacements[j].translation)
                                      for j in range(count)])
        self.linear = np.zeros((count, 3))
        self.angular = np.zeros((count, 3))
        self.column = np.full(count, -1)
        neutral = pinocchio.neutral(model)
        columns = {name: k for k, name in enumerate(robot.joints)}
        for j in range(1, count):
            joint = model.joints[j]
            data = joint.createData()
            joint.calc(data, neutral)
            motion = np.asarray(data.S, dtype=float).reshape(6, -1)
            if motion.shape[1] == 1:
                self.linear[j], self.angular[j] = motion[:3, 0], motion[3:, 0]
                self.column[j] = columns.get(model.names[j], -1)

    def placements(self, positions: np.ndarray) -> 'tuple[np.ndarray, np.ndarray]':
        """
        Return the joints' world rotations (n, J, 3, 3) and translations (n, J, 3).

        :param positions: joint positions (n, joints), in the robot's joint order.
        """
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        n, count = len(positions), len(self.parents)
        rotation = np.empty((n, count, 3, 3))
        translation = np.empty((n, count, 3))
        rotation[:, 0] = np.eye(3)
        translation[:, 0] = 0.0
        eye = np.eye(3)
        for j in range(1, count):
            angle = positions[:, self.column[j]] if self.column[j] >= 0 else np.zeros(n)
            local = np.broadcast_to(self.rotation0[j], (n, 3, 3))
            offset = np.broadcast_to(self.translation0[j], (n, 3))
            if self.angular[j].any():
                k = _skew(self.angular[j])
                turn = (eye + np.sin(angle)[:, None, None] * k
                        + (1.0 - np.cos(angle))[:, None, None] * (k @ k))
                local = local @ turn
            elif self.linear[j].any():
                offset = offset + np.einsum('ab,b,n->na', self.rotation0[j], self.linear[j],
                                            angle)
            parent = self.parents[j]
            rotation[:, j] = rotation[:, parent] @ local
            translation[:, j] = np.einsum('nab,nb->na', rotation[:, parent], offset) \
                + translation[:, parent]
        return rotation, translation

    @staticmethod
    def points(rotation: np.ndarray, translation: np.ndarray, joints: np.ndarray,
               local: np.ndarray) -> np.ndarray:
        """Return the world positions (n, K, 3) of points ``local`` (K, 3) on ``joints`` (K)."""
        turned = (rotation[:, joints] * local[None, :, None, :]).sum(axis=3)
        return turned + translation[:, joints]


def _skew(axis: np.ndarray) -> np.ndarray:
    x, y, z = axis
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
