"""
What the physics reads of a URDF besides the tree: origins, axes, inertials, collision shapes.

:mod:`sweetie_motion.model.urdf` reads the tree and the limits (and checks them); this adds
the figures a dynamics model needs, as written in the file: no inertia is derived from
geometry. Pure.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple
import xml.etree.ElementTree as ElementTree

import numpy as np

from sweetie_motion.errors import UrdfError

Vector = Tuple[float, float, float]


@dataclass(frozen=True)
class Inertial:
    """
    A link's mass properties, as its URDF ``<inertial>`` gives them.

    :param mass: [kg]; :param xyz: the centre of mass in the link's frame [m];
    :param rpy: the inertia frame's orientation [rad];
    :param inertia: ixx, iyy, izz, ixy, ixz, iyz about the centre of mass [kg*m^2].
    """

    mass: float
    xyz: Vector
    rpy: Vector
    inertia: Tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Shape:
    """
    One ``<collision>`` element of a link.

    :param kind: 'box', 'cylinder', 'sphere' or 'mesh'.
    :param size: box edges [m]; cylinder (radius, length); sphere (radius,); mesh scale.
    :param xyz: its origin in the link's frame [m]; :param rpy: its orientation [rad].
    :param filename: the mesh's file name as written (mesh only).
    """

    kind: str
    size: Tuple[float, ...]
    xyz: Vector
    rpy: Vector
    filename: str = ''


@dataclass(frozen=True)
class JointFrame:
    """
    Where a joint puts its child link: origin in the parent's frame, axis in the child's.

    :param xyz: [m]; :param rpy: [rad]; :param axis: unit vector.
    """

    xyz: Vector
    rpy: Vector
    axis: Vector


@dataclass(frozen=True)
class UrdfBodies:
    """The dynamics figures of a URDF: per link its inertial and shapes, per joint its frame."""

    inertials: Dict[str, Inertial] = field(default_factory=dict)
    shapes: Dict[str, List[Shape]] = field(default_factory=dict)
    frames: Dict[str, JointFrame] = field(default_factory=dict)


def read_urdf_bodies(xml: str) -> UrdfBodies:
    """
    Read the inertials, collision shapes and joint frames of a URDF document.

    :raises UrdfError: malformed XML or a figure that is not a number.
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise UrdfError(f'malformed URDF: {error}') from None
    bodies = UrdfBodies()
    for link in root.findall('link'):
        name = link.get('name', '')
        inertial = link.find('inertial')
        if inertial is not None:
            bodies.inertials[name] = _inertial(inertial, f'link {name!r}: inertial')
        shapes = [shape for shape in (_shape(element, f'link {name!r}: collision')
                                      for element in link.findall('collision')) if shape]
        if shapes:
            bodies.shapes[name] = shapes
    for joint in root.findall('joint'):
        name = joint.get('name', '')
        where = f'joint {name!r}'
        xyz, rpy = _origin(joint.find('origin'), where)
        axis_element = joint.find('axis')
        axis = (1.0, 0.0, 0.0) if axis_element is None else \
            _numbers(axis_element.get('xyz', '1 0 0'), 3, f'{where}: axis')
        length = float(np.linalg.norm(axis))
        if joint.get('type') not in ('fixed', 'floating', 'planar') and length < 1e-9:
            raise UrdfError(f'{where}: its axis is zero')
        unit = tuple(v / length for v in axis) if length > 0 else axis
        bodies.frames[name] = JointFrame(xyz, rpy, (unit[0], unit[1], unit[2]))
    return bodies


def _numbers(text: str, count: int, where: str) -> Tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split())
    except ValueError:
        raise UrdfError(f'{where}: {text!r} is not {count} numbers') from None
    if len(values) != count or not all(np.isfinite(values)):
        raise UrdfError(f'{where}: {text!r} is not {count} numbers')
    return values


def _origin(element: Optional[ElementTree.Element], where: str) -> Tuple[Vector, Vector]:
    if element is None:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    x, y, z = _numbers(element.get('xyz', '0 0 0'), 3, f'{where}: origin xyz')
    r, p, w = _numbers(element.get('rpy', '0 0 0'), 3, f'{where}: origin rpy')
    return (x, y, z), (r, p, w)


def _inertial(element: ElementTree.Element, where: str) -> Inertial:
    xyz, rpy = _origin(element.find('origin'), where)
    mass_element = element.find('mass')
    inertia = element.find('inertia')
    if mass_element is None or inertia is None:
        raise UrdfError(f'{where}: lacks <mass> or <inertia>')
    (mass,) = _numbers(mass_element.get('value', ''), 1, f'{where}: mass')
    keys = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')
    values = _numbers(' '.join(inertia.get(k, '0') for k in keys), 6, f'{where}: inertia')
    if mass < 0:
        raise UrdfError(f'{where}: negative mass {mass}')
    return Inertial(mass, xyz, rpy, (values[0], values[1], values[2], values[3], values[4],
                                     values[5]))


def _shape(element: ElementTree.Element, where: str) -> Optional[Shape]:
    xyz, rpy = _origin(element.find('origin'), where)
    geometry = element.find('geometry')
    if geometry is None or len(geometry) == 0:
        return None
    kind = geometry[0].tag
    item = geometry[0]
    if kind == 'box':
        size = _numbers(item.get('size', ''), 3, f'{where}: box size')
    elif kind == 'cylinder':
        size = _numbers(f'{item.get("radius", "")} {item.get("length", "")}', 2,
                        f'{where}: cylinder')
    elif kind == 'sphere':
        size = _numbers(item.get('radius', ''), 1, f'{where}: sphere radius')
    elif kind == 'mesh':
        size = _numbers(item.get('scale', '1 1 1'), 3, f'{where}: mesh scale')
        return Shape('mesh', size, xyz, rpy, item.get('filename', ''))
    else:
        return None
    return Shape(kind, size, xyz, rpy)


def rpy_quaternion(rpy: Vector) -> Tuple[float, float, float, float]:
    """Return the quaternion (w, x, y, z) of URDF roll, pitch, yaw (fixed axes x, y, z) [rad]."""
    roll, pitch, yaw = (0.5 * v for v in rpy)
    cr, sr, cp, sp, cy, sy = (np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch),
                              np.cos(yaw), np.sin(yaw))
    return (float(cr * cp * cy + sr * sp * sy), float(sr * cp * cy - cr * sp * sy),
            float(cr * sp * cy + sr * cp * sy), float(cr * cp * sy - sr * sp * cy))
