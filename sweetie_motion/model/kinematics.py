"""
Chain kinematics on pinocchio: forward kinematics and Jacobians of RobotModel chains.

One pinocchio Model per URDF, built once; one pinocchio Data per thread (pinocchio's
Model/Data split), so that several components may ask for kinematics concurrently.
"""

import threading
from typing import Dict, Iterable, Mapping, Sequence

import numpy as np
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

    def _data(self) -> pinocchio.Data:
        data = getattr(self._local, 'data', None)
        if data is None:
            data = self._local.data = self.model.createData()
        return data

    def _frame(self, link: str) -> int:
        if not self.model.existFrame(link, pinocchio.FrameType.BODY):
            raise ChainDeclarationError(f'link {link!r} is not a body frame of the model')
        return self.model.getFrameId(link, pinocchio.FrameType.BODY)

    def _configuration(self, joints: Sequence[str], position: Sequence[float]) -> np.ndarray:
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

    def forward(self, chain, position: Sequence[float], link: str) -> np.ndarray:
        """Return the 4x4 pose of ``link`` in the frame of the chain's first link."""
        _, _, base, tip_id = self._placements(chain, position, link)
        return (base.actInv(self._data().oMf[tip_id])).homogeneous.copy()

    def jacobian(self, chain, position: Sequence[float], link: str) -> np.ndarray:
        """Return the 6 x n Jacobian of ``link`` in the axes of the chain's first link."""
        data, q, base, tip_id = self._placements(chain, position, link)
        full = pinocchio.computeFrameJacobian(
            self.model, data, q, tip_id, pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        rotation = base.rotation.T
        columns = [self.model.joints[self.model.getJointId(name)].idx_v for name in chain.joints]
        jac = full[:, columns]
        return np.vstack((rotation @ jac[:3], rotation @ jac[3:]))

    def link_positions(self, links: Iterable[str], pose: Mapping[str, float]
                       ) -> Dict[str, np.ndarray]:
        """Return the origin [m] of each of ``links`` in the root frame for ``pose``."""
        names = [name for name in pose if self.model.existJointName(name)]
        q = self._configuration(names, [pose[name] for name in names])
        data = self._data()
        pinocchio.framesForwardKinematics(self.model, data, q)
        positions = {}
        for link in links:
            if self.model.existFrame(link, pinocchio.FrameType.BODY):
                frame = self.model.getFrameId(link, pinocchio.FrameType.BODY)
                positions[link] = data.oMf[frame].translation.copy()
        return positions
