"""
A MuJoCo model of a robot on a floor, built from its robot description (never by hand).

From the URDF: one body a link, placed by its joint's origin, with the URDF's own mass, centre
of mass and inertia (MuJoCo is told not to derive inertia from geometry); each joint a hinge
(or a slide) about its axis within its limits, except the virtual joints of the RobotModel
(no servo: a chain's ``last_link_virtual`` tail, a virtual group), which are fixed at zero.
Collision shapes: a link's ``<link>.STL`` in the ``meshes`` folder where there is one (its
hull against the floor, boxes fitted to a concave solid between links: :mod:`.meshes`), else
its URDF ``<collision>`` shapes. Pairs of links that already touch in the zero pose cannot be
told from a collision and do not collide (as MoveIt's default-pose rule). The root is on a
free joint for a robot with legs (chains with a ``contact`` link) and fixed otherwise; each
servo is a position actuator (:mod:`.servos`); the floor is a plane at z = 0.
"""

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple
import xml.etree.ElementTree as ElementTree

import numpy as np

from sweetie_motion.model.physics_settings import PhysicsConfigError, PhysicsSettings
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.physics.meshes import collision_mesh, CollisionMesh
from sweetie_motion.physics.servos import servo_actuators, ServoActuator
from sweetie_motion.physics.urdf_bodies import (
    Inertial, read_urdf_bodies, rpy_quaternion, UrdfBodies,
)

#: a compiled mujoco.MjModel (mujoco ships no type stubs)
MujocoModel = Any

#: contact bits: the floor touches floor shapes (hulls), links touch link shapes (pieces)
FLOOR_BIT, LINK_BIT = 1, 2
#: two links closer than this in the zero pose are taken as touching there [m]
TOUCHING = 0.0005
#: a foot this close to the floor touches it [m] (MuJoCo's margin less its gap: no force)
FOOT_GAP = 0.002


@dataclass(frozen=True)
class PhysicsModel:
    """
    A compiled MuJoCo model of a robot and where its parts are in it.

    :param model: the ``mujoco.MjModel`` (shared; each simulation has its own data).
    :param mjcf: the MJCF document it was compiled from.
    :param joints: the robot's joints in RobotModel order.
    :param qpos: per joint its place in ``qpos`` (-1: fixed, a virtual joint).
    :param dof: per joint its place in ``qvel`` (-1: fixed).
    :param actuators: the servos, in the model's actuator order.
    :param actuated: per actuator the joint's index in ``joints``.
    :param free_base: the root is on a free joint (qpos 0..6, qvel 0..5).
    :param legs: the legs (chains with a contact link), with ``contact_sites`` their sites.
    :param floor_geoms: per geom, whether it is a floor shape of the robot.
    :param excluded: body pairs that touch in the zero pose and do not collide.
    """

    model: MujocoModel
    mjcf: str
    joints: List[str]
    qpos: np.ndarray
    dof: np.ndarray
    actuators: List[ServoActuator]
    actuated: np.ndarray
    free_base: bool
    legs: List[str]
    contact_sites: np.ndarray
    contact_bodies: np.ndarray
    excluded: List[Tuple[str, str]]
    settings: PhysicsSettings

    @property
    def mass(self) -> float:
        """Return the robot's total mass [kg]."""
        return float(np.sum(self.model.body_mass))

    @property
    def stall(self) -> np.ndarray:
        """Return each actuator's stall torque [N*m], in actuator order."""
        return np.array([a.stall for a in self.actuators])


def build_physics(robot: RobotModel, settings: Optional[PhysicsSettings] = None,
                  servos_file: str = '') -> PhysicsModel:
    """
    Return the physics model of a configured RobotModel (its description's ``physics:``).

    :param robot: the configured RobotModel.
    :param settings: instead of the description's.
    :param servos_file: the servo config when the settings name none (the ``checks: load:
        servos`` of the description by default).
    :raises PhysicsConfigError: a setting, file or figure the model cannot be built from.
    """
    import mujoco
    settings = settings or getattr(robot, 'physics_settings', None) or PhysicsSettings()
    if not servos_file:
        servos_file = getattr(getattr(robot, 'check_settings', None), 'servos', '') or ''
    plan = _BodyPlan(robot, settings, servos_file)
    first = plan.mjcf([])
    try:
        model = mujoco.MjModel.from_xml_string(first)
        excluded = _touching_pairs(model)
        mjcf = plan.mjcf(excluded) if excluded else first
        if excluded:
            model = mujoco.MjModel.from_xml_string(mjcf)
    except ValueError as error:
        raise PhysicsConfigError('physics', f'MuJoCo cannot build the model: {error}') from None
    return plan.indexed(model, mjcf, excluded)


def _touching_pairs(model: MujocoModel) -> List[Tuple[str, str]]:
    """Return the body pairs whose link shapes touch in the zero pose, the root held high."""
    import mujoco
    data = mujoco.MjData(model)
    if model.jnt_type.size and model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE:
        data.qpos[2] = 10.0   # away from the floor
    saved = model.geom_margin.copy()
    model.geom_margin[:] = TOUCHING
    mujoco.mj_forward(model, data)
    model.geom_margin[:] = saved
    pairs = set()
    for contact in data.contact[:data.ncon]:
        bodies = sorted(mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY,
                                          int(model.geom_bodyid[g])) for g in contact.geom)
        if model.geom_bodyid[contact.geom[0]] and model.geom_bodyid[contact.geom[1]]:
            pairs.add((bodies[0], bodies[1]))
    return sorted(pairs)


class _BodyPlan:
    """The robot's bodies, joints, shapes and servos as the MJCF will have them."""

    def __init__(self, robot: RobotModel, settings: PhysicsSettings, servos_file: str) -> None:
        self.robot = robot
        self.settings = settings
        self.tree = robot.urdf_tree()
        self.bodies: UrdfBodies = read_urdf_bodies(robot.urdf_document())
        self.joints = robot.list_all_joints()
        virtual = set(robot.list_virtual_joints())
        self.driven = [j for j in self.joints if j not in virtual]
        self.legs = [c for c in robot.list_chains() if robot.get_chain_property(c, 'contact')]
        self.contacts = [str(robot.get_chain_property(c, 'contact')) for c in self.legs]
        base = settings.base if settings.base != 'auto' else ('free' if self.legs else 'fixed')
        self.free_base = base == 'free'
        tree = self.tree
        limits = {j.name: j for j in tree.joints.values()}
        self.actuators = servo_actuators(
            self.driven, {j: limits[j].effort for j in self.driven},
            {j: limits[j].velocity for j in self.driven}, settings, servos_file)
        self.children: Dict[str, List[str]] = {}
        for joint in tree.joints.values():
            self.children.setdefault(joint.parent, []).append(joint.name)
        self.feet = {link for contact in self.contacts for link in self._welded(contact)}

    def _welded(self, link: str) -> List[str]:
        """Return the links rigidly joined to ``link`` (fixed or virtual joints), itself too."""
        tree = self.tree
        top = link
        while top in tree.parent_joint and not self._moves(tree.parent_joint[top].name):
            top = tree.parent_joint[top].parent
        group, todo = [], [top]
        while todo:
            current = todo.pop()
            group.append(current)
            todo += [tree.joints[j].child for j in self.children.get(current, [])
                     if not self._moves(j)]
        return group

    def _moves(self, joint: str) -> bool:
        return joint in self.driven and self.tree.joints[joint].joint_type in (
            'revolute', 'continuous', 'prismatic')

    def mjcf(self, excluded: Sequence[Tuple[str, str]]) -> str:
        """
        Return the MJCF document (with ``excluded`` body pairs).

        The constraint Jacobian is sparse: the pony's contacts and joint frictions each touch
        a few of its 30 degrees of freedom (a 10 s motion: 0.32-0.37 s of CPU against
        0.48-0.56 s dense, the same numbers).
        """
        s = self.settings
        root = ElementTree.Element('mujoco', model=self.tree.name or 'robot')
        ElementTree.SubElement(root, 'compiler', angle='radian', inertiafromgeom='false',
                               autolimits='true')
        ElementTree.SubElement(root, 'option', timestep=_f(s.timestep),
                               integrator=s.integrator, cone=s.cone,
                               iterations=str(s.iterations), tolerance=_f(s.tolerance),
                               impratio=_f(s.impratio), jacobian='sparse')
        self.assets = ElementTree.SubElement(root, 'asset')
        world = ElementTree.SubElement(root, 'worldbody')
        ElementTree.SubElement(world, 'geom', name='floor', type='plane', size='0 0 1',
                               friction=f'{_f(s.floor_friction)} 0.005 0.0001', priority='1',
                               contype=str(FLOOR_BIT), conaffinity='0')
        if self.tree.root == 'world' and not self.free_base:
            self._link(world, 'world')   # the URDF's own name of the fixed frame
        else:
            body = ElementTree.SubElement(world, 'body', name=self.tree.root)
            if self.free_base:
                ElementTree.SubElement(body, 'freejoint', name='base')
            self._link(body, self.tree.root)
        contact = ElementTree.SubElement(root, 'contact')
        for first, second in excluded:
            ElementTree.SubElement(contact, 'exclude', body1=first, body2=second)
        actuator = ElementTree.SubElement(root, 'actuator')
        for servo in self.actuators:
            ElementTree.SubElement(actuator, 'position', name=servo.joint, joint=servo.joint,
                                   kp=_f(servo.stiffness), forcelimited='true',
                                   forcerange=f'{_f(-servo.stall)} {_f(servo.stall)}')
        return ElementTree.tostring(root, encoding='unicode')

    def _link(self, body: ElementTree.Element, link: str) -> None:
        """Fill ``body`` with the link's inertial, shapes and child bodies."""
        inertial = self.bodies.inertials.get(link)
        if inertial is not None and inertial.mass > 0:
            ElementTree.SubElement(body, 'inertial', pos=_v(inertial.xyz),
                                   mass=_f(inertial.mass),
                                   fullinertia=_v(_rotated_inertia(inertial)))
        first = len(body)
        self._shapes(body, link)
        if link in self.feet:   # contacts within FOOT_GAP are seen, not pushed
            for geom in list(body)[first:]:
                if geom.tag == 'geom':
                    geom.set('margin', _f(FOOT_GAP))
                    geom.set('gap', _f(FOOT_GAP))
        if link in self.contacts:
            ElementTree.SubElement(body, 'site', name=f'contact_{link}', size='0.005')
        for name in self.children.get(link, []):
            joint = self.tree.joints[name]
            frame = self.bodies.frames[name]
            child = ElementTree.SubElement(body, 'body', name=joint.child, pos=_v(frame.xyz),
                                           quat=_v(rpy_quaternion(frame.rpy)))
            if self._moves(name):
                servo = next(a for a in self.actuators if a.joint == name)
                attributes = {'name': name, 'axis': _v(frame.axis),
                              'type': 'slide' if joint.joint_type == 'prismatic' else 'hinge',
                              'damping': _f(servo.damping), 'frictionloss': _f(servo.friction),
                              'armature': _f(self.settings.armature)}
                if math.isfinite(joint.lower) and math.isfinite(joint.upper):
                    attributes['range'] = f'{_f(joint.lower)} {_f(joint.upper)}'
                ElementTree.SubElement(child, 'joint', attributes)
            self._link(child, joint.child)

    def _shapes(self, body: ElementTree.Element, link: str) -> None:
        """Add the link's collision geoms: its mesh from the folder, else its URDF shapes."""
        friction = _f(self.settings.link_friction)
        mesh_file = Path(self.settings.meshes) / f'{link}.STL' if self.settings.meshes else None
        if mesh_file is not None and mesh_file.is_file():
            self._mesh(body, link, collision_mesh(str(mesh_file)), (0.0,) * 3, (0.0,) * 3)
            return
        for k, shape in enumerate(self.bodies.shapes.get(link, [])):
            where = {'pos': _v(shape.xyz), 'quat': _v(rpy_quaternion(shape.rpy))}
            both = {'contype': str(LINK_BIT), 'conaffinity': str(LINK_BIT | FLOOR_BIT),
                    'friction': friction}
            sizes = {'box': _v(tuple(v / 2 for v in shape.size)),
                     'cylinder': f'{_f(shape.size[0])} {_f(shape.size[-1] / 2)}',
                     'sphere': _f(shape.size[0])}
            if shape.kind in sizes:
                ElementTree.SubElement(body, 'geom', {'type': shape.kind,
                                                      'size': sizes[shape.kind], **where, **both})
            else:
                path = self._mesh_path(link, shape.filename)
                scale = float(np.mean(shape.size))
                self._mesh(body, f'{link}_{k}', collision_mesh(str(path), scale), shape.xyz,
                           shape.rpy)

    def _mesh(self, body: ElementTree.Element, name: str, mesh: CollisionMesh,
              xyz: tuple, rpy: tuple) -> None:
        friction = _f(self.settings.link_friction)
        where = {'pos': _v(xyz), 'quat': _v(rpy_quaternion(rpy))}
        # a convex solid: its hull against everything; an open surface (Proto2's head): its
        # hull against the floor only (a plane touches it where it touches its hull; another
        # link would meet the hull where the surface has none: the neck in the head's hull);
        # a concave solid: its boxes (MuJoCo keeps four points of a plane-hull contact, not
        # always a flat sole's corners: a hoof's hull would stand on a triangle)
        if not mesh.boxes:
            links = LINK_BIT if mesh.solid_share > 0 else 0
            ElementTree.SubElement(self.assets, 'mesh', name=f'hull_{name}',
                                   vertex=' '.join(_f(v) for v in mesh.hull.ravel()))
            ElementTree.SubElement(body, 'geom', {
                'type': 'mesh', 'mesh': f'hull_{name}', 'friction': friction,
                'contype': str(links), 'conaffinity': str(links | FLOOR_BIT), **where})
        for centre, half in mesh.boxes:
            ElementTree.SubElement(body, 'geom', type='box', size=_v(half),
                                   pos=_v(_placed(centre, xyz, rpy)), quat=where['quat'],
                                   contype=str(LINK_BIT), conaffinity=str(LINK_BIT | FLOOR_BIT),
                                   friction=friction)

    def _mesh_path(self, link: str, filename: str) -> Path:
        if filename.startswith('package://') or not filename:
            raise PhysicsConfigError('physics.meshes', f'link {link}: mesh {filename!r} cannot '
                                     f'be found: put {link}.STL into the meshes folder')
        path = Path(filename.replace('file://', ''))
        return path if path.is_absolute() else Path(self.settings.meshes or '.') / path

    def indexed(self, model: MujocoModel, mjcf: str,
                excluded: List[Tuple[str, str]]) -> PhysicsModel:
        """Return the compiled model with the robot's joints, servos and feet located."""
        import mujoco
        qpos = np.full(len(self.joints), -1, dtype=np.intp)
        dof = np.full(len(self.joints), -1, dtype=np.intp)
        for k, joint in enumerate(self.joints):
            index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
            if index >= 0:
                qpos[k], dof[k] = model.jnt_qposadr[index], model.jnt_dofadr[index]
        actuated = np.array([self.joints.index(a.joint) for a in self.actuators], dtype=np.intp)
        sites = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, f'contact_{c}')
                          for c in self.contacts], dtype=np.intp)
        bodies = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, c)
                           for c in self.contacts], dtype=np.intp)
        return PhysicsModel(model, mjcf, list(self.joints), qpos, dof, list(self.actuators),
                            actuated, self.free_base, list(self.legs), sites, bodies,
                            list(excluded), self.settings)


def _rotated_inertia(inertial: Inertial) -> Tuple[float, ...]:
    """Return the inertia about the centre of mass in the link's axes (the rpy applied)."""
    ixx, iyy, izz, ixy, ixz, iyz = inertial.inertia
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    w, x, y, z = rpy_quaternion(inertial.rpy)
    rotation = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    turned = rotation @ tensor @ rotation.T
    return (turned[0, 0], turned[1, 1], turned[2, 2], turned[0, 1], turned[0, 2], turned[1, 2])


def _placed(point: np.ndarray, xyz: tuple, rpy: tuple) -> np.ndarray:
    """Return ``point`` of a shape's frame in its link's frame."""
    w, x, y, z = rpy_quaternion(rpy)
    q = np.array([x, y, z])
    p = np.asarray(point, dtype=float)
    turned = p + 2 * w * np.cross(q, p) + 2 * np.cross(q, np.cross(q, p))
    return turned + np.asarray(xyz, dtype=float)


def _f(value: float) -> str:
    return repr(float(value))


def _v(values: Iterable[float]) -> str:
    return ' '.join(_f(v) for v in values)
