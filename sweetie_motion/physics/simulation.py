"""
One robot on the floor in MuJoCo: put it in a pose, let it settle, drive its servos, read it.

Each :class:`PhysicsSimulation` has its own copy of the compiled model (switching a servo's
torque off changes the copy) and its own MuJoCo data; nothing is shared between two of them,
so two simulations of the same motion give the same numbers. Times in seconds, positions in
the robot's joint order (RobotModel order), angles in radians.
"""

import copy
from typing import Optional, Sequence

import numpy as np

from sweetie_motion.physics.builder import PhysicsModel

#: a free robot is dropped onto the floor from this high above its lowest point [m]
DROP = 0.001


class PhysicsSimulation:
    """
    A simulated robot: its servos follow set-points, the floor carries it.

    :param physics: the built model (:func:`~sweetie_motion.physics.builder.build_physics`).
    """

    def __init__(self, physics: PhysicsModel) -> None:
        import mujoco
        self._mujoco = mujoco
        self.physics = physics
        self.model = copy.deepcopy(physics.model)
        self.data = mujoco.MjData(self.model)
        self._gain = self.model.actuator_gainprm[:, 0].copy()
        self._bias = self.model.actuator_biasprm[:, :3].copy()
        floor = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_GEOM, 'floor')
        self._floor = floor
        weld = self.model.body_weldid
        #: per geom: which leg's foot it belongs to (-1: none)
        self._foot_of_geom = np.full(self.model.ngeom, -1, dtype=np.intp)
        for leg, body in enumerate(physics.contact_bodies):
            self._foot_of_geom[weld[self.model.geom_bodyid] == weld[body]] = leg

    @property
    def time(self) -> float:
        """Return the simulated time [s]."""
        return float(self.data.time)

    def reset(self, pose: np.ndarray, place: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        """
        Put the robot still in ``pose`` (a full pose [rad]), a free one just above the floor.

        The servos' set-points are the pose; the time restarts at 0; servos switched off stay
        off (:meth:`set_torque`).

        :param place: where a free robot stands: x, y [m] on the floor, heading [rad] about
            the vertical; upright.
        """
        mujoco = self._mujoco
        mujoco.mj_resetData(self.model, self.data)
        pose = np.asarray(pose, dtype=float)
        placed = self.physics.qpos >= 0
        self.data.qpos[self.physics.qpos[placed]] = pose[placed]
        self.data.ctrl[:] = pose[self.physics.actuated]
        if self.physics.free_base:
            x, y, heading = (float(v) for v in place)
            self.data.qpos[0:3] = (x, y, 0.0)
            self.data.qpos[3:7] = (np.cos(heading / 2), 0.0, 0.0, np.sin(heading / 2))
            mujoco.mj_kinematics(self.model, self.data)
            self.data.qpos[2] = DROP - self._lowest_floor_point()
        mujoco.mj_forward(self.model, self.data)

    def _lowest_floor_point(self) -> float:
        """Return the height of the lowest point of the shapes that touch the floor [m]."""
        model, data = self.model, self.data
        lowest = np.inf
        touching = (model.geom_conaffinity & 1).astype(bool)
        touching[self._floor] = False
        for geom in np.flatnonzero(touching):
            rotation = data.geom_xmat[geom].reshape(3, 3)
            if model.geom_type[geom] == self._mujoco.mjtGeom.mjGEOM_MESH:
                mesh = model.geom_dataid[geom]
                first, count = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
                points = model.mesh_vert[first:first + count]
            else:
                centre, half = model.geom_aabb[geom, :3], model.geom_aabb[geom, 3:]
                signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
                points = centre + signs * half
            heights = points @ rotation[2] + data.geom_xpos[geom, 2]
            lowest = min(lowest, float(heights.min()))
        return 0.0 if not np.isfinite(lowest) else lowest

    def hold(self, pose: np.ndarray, duration: float) -> None:
        """Drive the servos to ``pose`` and let ``duration`` [s] pass (settling)."""
        self.data.ctrl[:] = np.asarray(pose, dtype=float)[self.physics.actuated]
        self.advance(duration)

    def advance(self, duration: float) -> None:
        """Let ``duration`` [s] pass with the servos' set-points as they are."""
        steps = int(round(duration / self.model.opt.timestep))
        if steps > 0:
            self._mujoco.mj_step(self.model, self.data, steps)

    def command(self, pose: np.ndarray) -> None:
        """Send a full pose as the servos' set-points [rad] (the joints without one ignore it)."""
        self.data.ctrl[:] = np.asarray(pose, dtype=float)[self.physics.actuated]

    def set_torque(self, on: bool, joints: Optional[Sequence[str]] = None) -> None:
        """
        Switch servos on or off (all, or those of ``joints``).

        Off, a servo delivers no torque; its gears' damping and friction stay (a limp joint,
        as a HerkuleX servo with torque off).
        """
        names = [a.joint for a in self.physics.actuators]
        chosen = range(len(names)) if joints is None else \
            [names.index(j) for j in joints if j in names]
        for k in chosen:
            self.model.actuator_gainprm[k, 0] = self._gain[k] if on else 0.0
            self.model.actuator_biasprm[k, :3] = self._bias[k] if on else 0.0

    def positions(self) -> np.ndarray:
        """Return the full pose [rad] (fixed joints at 0)."""
        pose = np.zeros(len(self.physics.joints))
        placed = self.physics.qpos >= 0
        pose[placed] = self.data.qpos[self.physics.qpos[placed]]
        return pose

    def velocities(self) -> np.ndarray:
        """Return the full pose's velocities [rad/s] (fixed joints at 0)."""
        velocity = np.zeros(len(self.physics.joints))
        placed = self.physics.dof >= 0
        velocity[placed] = self.data.qvel[self.physics.dof[placed]]
        return velocity

    def heading(self) -> float:
        """Return the root's heading: the angle of its x axis about the vertical [rad]."""
        axis = self.data.xmat[1].reshape(3, 3)[:, 0]
        return float(np.arctan2(axis[1], axis[0]))

    def servo_torques(self) -> np.ndarray:
        """Return each servo's torque on its joint [N*m], in actuator order."""
        return self.data.actuator_force.copy()

    def base_pose(self) -> np.ndarray:
        """Return the root's position [m] and orientation (w, x, y, z): shape (7,)."""
        if self.physics.free_base:
            return self.data.qpos[:7].copy()
        return np.concatenate((self.data.xpos[1], self.data.xquat[1]))

    def base_rotation(self) -> np.ndarray:
        """Return the root's orientation as a 3x3 matrix (columns: its axes in the world)."""
        return self.data.xmat[1].reshape(3, 3).copy()

    def contact_points(self) -> np.ndarray:
        """Return the legs' contact points in the world (legs, 3) [m]."""
        return self.data.site_xpos[self.physics.contact_sites].copy()

    def feet_on_floor(self) -> np.ndarray:
        """Return, per leg, whether its foot touches the floor (within the builder's FOOT_GAP)."""
        touching = np.zeros(len(self.physics.legs), dtype=bool)
        if self.data.ncon == 0:
            return touching
        pairs = self.data.contact.geom[:self.data.ncon]
        other = np.where(pairs[:, 0] == self._floor, pairs[:, 1],
                         np.where(pairs[:, 1] == self._floor, pairs[:, 0], -1))
        feet = self._foot_of_geom[other[other >= 0]]
        touching[feet[feet >= 0]] = True
        return touching

    def foot_forces(self) -> np.ndarray:
        """
        Return, per leg, the force the floor exerts on its foot, in the world (legs, 3) [N].

        The sum over every contact of the foot's shapes with the floor (zero off the floor; a
        foot within the contact margin but not pressed has zero force).
        """
        forces = np.zeros((len(self.physics.legs), 3))
        data = self.data
        if data.ncon == 0:
            return forces
        contacts = data.contact
        pairs = contacts.geom[:data.ncon]
        floor_first = pairs[:, 0] == self._floor
        other = np.where(floor_first, pairs[:, 1],
                         np.where(pairs[:, 1] == self._floor, pairs[:, 0], -1))
        legs = np.where(other >= 0, self._foot_of_geom[other], -1)
        chosen = np.flatnonzero((legs >= 0) & (contacts.efc_address[:data.ncon] >= 0))
        if not chosen.size:
            return forces
        local = np.zeros((chosen.size, 3))
        if self.model.opt.cone == self._mujoco.mjtCone.mjCONE_ELLIPTIC:
            # an elliptic cone's constraint forces are the contact frame's components: normal,
            # then the two tangents (as many as the contact has dimensions, up to three here)
            addresses, dims = contacts.efc_address[chosen], contacts.dim[chosen]
            for axis in range(3):
                present = dims > axis
                local[present, axis] = data.efc_force[addresses[present] + axis]
        else:
            wrench = np.zeros(6)
            for row, index in enumerate(chosen):
                self._mujoco.mj_contactForce(self.model, data, int(index), wrench)
                local[row] = wrench[:3]
        # the contact frame's rows: its normal, pointing from the first shape to the second,
        # and two tangents; its force pushes the second shape away from the first
        frames = contacts.frame[chosen].reshape(-1, 3, 3)
        world = np.einsum('nij,ni->nj', frames, local)
        world[~floor_first[chosen]] *= -1.0
        np.add.at(forces, legs[chosen], world)
        return forces
