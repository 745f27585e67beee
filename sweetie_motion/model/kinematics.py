"""
Chain kinematics on pinocchio: forward kinematics and Jacobians of RobotModel chains.

One pinocchio Model per URDF, built once; one pinocchio Data per thread (pinocchio's
Model/Data split), so that several components may ask for kinematics concurrently.
Iterative solvers (inverse kinematics) use a :class:`ChainEvaluator`: the model reduced to one
chain's joints and re-rooted at the chain's first link, so that one pinocchio call gives the
tip pose and Jacobian directly in the chain's base frame.
"""

import threading
from typing import Dict, Iterable, Mapping, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike
import pinocchio

from sweetie_motion.errors import ChainDeclarationError, UrdfError


class ChainKinematics:
    """Forward kinematics and Jacobians of chains of one URDF."""

    def __init__(self, urdf_xml: str) -> None:
        try:
            self.model = pinocchio.buildModelFromXML(urdf_xml)
        except (RuntimeError, ValueError) as error:
            raise UrdfError(f'pinocchio cannot build the URDF: {error}') from None
        self._local = threading.local()
        self._neutral = pinocchio.neutral(self.model)
        self._evaluators: Dict[tuple, 'ChainEvaluator'] = {}
        self._evaluators_lock = threading.Lock()

    def _data(self) -> pinocchio.Data:
        data = getattr(self._local, 'data', None)
        if data is None:
            data = self._local.data = self.model.createData()
        return data

    def _frame(self, link: str) -> int:
        if not self.model.existFrame(link, pinocchio.FrameType.BODY):
            raise ChainDeclarationError(f'link {link!r} is not a body frame of the model')
        return self.model.getFrameId(link, pinocchio.FrameType.BODY)

    def _configuration(self, joints: Sequence[str], position: ArrayLike) -> np.ndarray:
        position = np.asarray(position, dtype=float)
        if position.shape != (len(joints),):
            raise ValueError(f'expected {len(joints)} joint positions, got {position.shape}')
        q = self._neutral.copy()
        for name, value in zip(joints, position):
            joint = self.model.joints[self.model.getJointId(name)]
            if joint.nq == 2:  # continuous joint: pinocchio stores (cos, sin)
                q[joint.idx_q] = np.cos(value)
                q[joint.idx_q + 1] = np.sin(value)
            else:
                q[joint.idx_q] = value
        return q

    def _placements(self, chain, position, link):
        data = self._data()
        q = self._configuration(chain.joints, position)
        pinocchio.forwardKinematics(self.model, data, q)
        pinocchio.updateFramePlacements(self.model, data)
        base = data.oMf[self._frame(chain.spec.first_link)]
        tip_id = self._frame(link)
        return data, q, base, tip_id

    def forward(self, chain, position: ArrayLike, link: str) -> np.ndarray:
        """Return the 4x4 pose of ``link`` in the frame of the chain's first link."""
        _, _, base, tip_id = self._placements(chain, position, link)
        return (base.actInv(self._data().oMf[tip_id])).homogeneous.copy()

    def jacobian(self, chain, position: ArrayLike, link: str) -> np.ndarray:
        """Return the 6 x n Jacobian of ``link`` in the axes of the chain's first link."""
        data, q, base, tip_id = self._placements(chain, position, link)
        full = pinocchio.computeFrameJacobian(
            self.model, data, q, tip_id, pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        rotation = base.rotation.T
        columns = [self.model.joints[self.model.getJointId(name)].idx_v for name in chain.joints]
        jac = full[:, columns]
        return np.vstack((rotation @ jac[:3], rotation @ jac[3:]))

    def _pose_configuration(self, pose: Mapping[str, float]) -> np.ndarray:
        names = [name for name in pose if self.model.existJointName(name)]
        return self._configuration(names, [pose[name] for name in names])

    def link_placements(self, links: Iterable[str], pose: Mapping[str, float]
                        ) -> Dict[str, np.ndarray]:
        """Return the 4x4 pose of each of ``links`` in the root frame for ``pose``."""
        data = self._data()
        pinocchio.framesForwardKinematics(self.model, data, self._pose_configuration(pose))
        placements = {}
        for link in links:
            if self.model.existFrame(link, pinocchio.FrameType.BODY):
                frame = self.model.getFrameId(link, pinocchio.FrameType.BODY)
                placements[link] = data.oMf[frame].homogeneous.copy()
        return placements

    def link_positions(self, links: Iterable[str], pose: Mapping[str, float]
                       ) -> Dict[str, np.ndarray]:
        """Return the origin [m] of each of ``links`` in the root frame for ``pose``."""
        return {link: placement[:3, 3]
                for link, placement in self.link_placements(links, pose).items()}

    def center_of_mass(self, pose: Mapping[str, float]) -> Tuple[float, np.ndarray]:
        """Return the total mass [kg] and the centre of mass [m] in the root frame."""
        data = self._data()
        moving = np.array(pinocchio.centerOfMass(self.model, data,
                                                 self._pose_configuration(pose)), dtype=float)
        # pinocchio leaves out the bodies fixed to the root (the pony's body: base_link_inertia)
        root = self.model.inertias[0]
        mass = float(data.mass[0]) + root.mass
        if mass <= 0.0:
            return 0.0, np.zeros(3)
        return mass, (moving * float(data.mass[0]) + np.asarray(root.lever) * root.mass) / mass

    def evaluator(self, chain, link: str) -> 'ChainEvaluator':
        """
        Return the (cached) :class:`ChainEvaluator` of ``link`` on ``chain``.

        :param chain: the chain (as RobotModel stores it: ``joints`` and ``spec.first_link``).
        :param link: a body frame whose pose depends on the chain's joints (usually the tip).
        :raises ChainDeclarationError: ``link`` or the chain's first link is not a body frame.
        """
        key = (chain.spec.first_link, tuple(chain.joints), link)
        evaluator = self._evaluators.get(key)
        if evaluator is None:
            with self._evaluators_lock:
                evaluator = self._evaluators.get(key)
                if evaluator is None:
                    self._frame(chain.spec.first_link)
                    self._frame(link)
                    evaluator = ChainEvaluator(self.model, chain.joints, chain.spec.first_link,
                                               link)
                    self._evaluators[key] = evaluator
        return evaluator


class ChainEvaluator:
    """
    Pose and Jacobian of one link of one chain, for iterative solvers.

    The pinocchio model is reduced to the chain's joints (the others are locked at zero: they
    move the chain's first link and its tip alike, so the relative pose does not depend on
    them) and re-rooted at the chain's first link, so that the world frame of the reduced
    model *is* the chain's base frame. Read-only after construction; every caller thread uses
    its own pinocchio Data (:meth:`create_data`, or the thread-local one of :meth:`forward`).

    Positions are in chain order [rad or m]; continuous joints take an angle (pinocchio's
    (cos, sin) pair is filled here).
    """

    def __init__(self, model: pinocchio.Model, joints: Sequence[str], first_link: str,
                 link: str) -> None:
        self.joints = tuple(joints)
        keep = set(self.joints)
        lock = [jid for jid in range(1, model.njoints) if model.names[jid] not in keep]
        reduced = pinocchio.buildReducedModel(model, lock, pinocchio.neutral(model))
        data = reduced.createData()
        pinocchio.framesForwardKinematics(reduced, data, pinocchio.neutral(reduced))
        base_id = reduced.getFrameId(first_link, pinocchio.FrameType.BODY)
        base_inverse = data.oMf[base_id].inverse()
        # Re-root: whatever hangs on the universe joint is expressed in the base frame.
        for jid in range(1, reduced.njoints):
            if reduced.parents[jid] == 0:
                reduced.jointPlacements[jid] = base_inverse * reduced.jointPlacements[jid]
        for fid in range(len(reduced.frames)):
            frame = reduced.frames[fid]
            if frame.parentJoint == 0:
                frame.placement = base_inverse * frame.placement
                reduced.frames[fid] = frame
        self.model = reduced
        self.frame_id = reduced.getFrameId(link, pinocchio.FrameType.BODY)
        self.nq = reduced.nq
        n = len(self.joints)
        joint_models = [reduced.joints[reduced.getJointId(name)] for name in self.joints]
        idx_q = np.array([jm.idx_q for jm in joint_models], dtype=np.intp)
        idx_v = np.array([jm.idx_v for jm in joint_models], dtype=np.intp)
        #: True for continuous joints (pinocchio stores them as (cos, sin)).
        self.continuous = np.array([jm.nq == 2 for jm in joint_models], dtype=bool)
        #: True when a chain position is pinocchio's configuration as it is.
        self.direct = (not self.continuous.any() and self.nq == n
                       and np.array_equal(idx_q, np.arange(n)))
        self._simple = np.flatnonzero(~self.continuous)
        self._simple_q = idx_q[~self.continuous]
        self._cont = np.flatnonzero(self.continuous)
        self._cont_q = idx_q[self.continuous]
        #: Jacobian columns in chain order, None when pinocchio's order is the chain's.
        self.columns = None if np.array_equal(idx_v, np.arange(n)) else idx_v
        self._local = threading.local()

    def create_data(self) -> pinocchio.Data:
        """Return a new pinocchio Data for this evaluator (one per thread)."""
        return self.model.createData()

    def configuration(self, position: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """
        Return pinocchio's configuration vector for chain ``position`` (shape (n,)).

        :param out: a preallocated array of shape (nq,) to fill; not used (``position`` is
            returned as is) when the chain has no continuous joint and pinocchio's order is
            the chain's.
        """
        if self.direct:
            return position
        if out is None:
            out = np.empty(self.nq)
        out[self._simple_q] = position[self._simple]
        angles = position[self._cont]
        out[self._cont_q] = np.cos(angles)
        out[self._cont_q + 1] = np.sin(angles)
        return out

    def compute(self, data: pinocchio.Data, position: np.ndarray,
                q_buffer: Optional[np.ndarray] = None) -> Tuple[pinocchio.SE3, np.ndarray]:
        """
        Compute the link pose and Jacobian at ``position`` (one pinocchio call).

        :param data: a Data of :meth:`create_data`, used by this thread only.
        :param position: joint positions in chain order [rad or m], shape (n,).
        :param q_buffer: optional preallocated configuration, shape (nq,).
        :return: (pose of the link in the chain's base frame, 6 x n Jacobian: rows
            (vx, vy, vz, wx, wy, wz) of the link origin in the base axes).
        """
        q = self.configuration(position, q_buffer)
        jac = pinocchio.computeFrameJacobian(self.model, data, q, self.frame_id,
                                             pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        if self.columns is not None:
            jac = jac[:, self.columns]
        return data.oMf[self.frame_id], jac

    def placement(self, data: pinocchio.Data, position: np.ndarray,
                  q_buffer: Optional[np.ndarray] = None) -> pinocchio.SE3:
        """
        Return the link pose in the chain's base frame at ``position`` (no Jacobian).

        :param data: a Data of :meth:`create_data`, used by this thread only.
        :param position: joint positions in chain order [rad or m], shape (n,).
        """
        q = self.configuration(position, q_buffer)
        pinocchio.forwardKinematics(self.model, data, q)
        return pinocchio.updateFramePlacement(self.model, data, self.frame_id)

    def forward(self, position: ArrayLike) -> np.ndarray:
        """Return the 4x4 pose of the link in the chain's base frame (translation in m)."""
        position = np.asarray(position, dtype=float)
        if position.shape != (len(self.joints),):
            raise ValueError(f'expected {len(self.joints)} joint positions, got '
                             f'{position.shape}')
        data = getattr(self._local, 'data', None)
        if data is None:
            data = self._local.data = self.create_data()
        return self.placement(data, position).homogeneous.copy()
