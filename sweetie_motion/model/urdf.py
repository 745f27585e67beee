"""
A small URDF reader for the facts RobotModel needs besides pinocchio's model.

pinocchio gives kinematics but folds joint limits into q-space vectors and hides the link tree
behind frames; joint types, limits and the parent/child tree are read here, directly from the
XML, so that errors can name the exact joint or link.
"""

from dataclasses import dataclass, field
import math
from typing import Dict, List, Mapping, Optional, Set, Tuple, TYPE_CHECKING
import xml.etree.ElementTree as ElementTree

from sweetie_motion.errors import UrdfError

if TYPE_CHECKING:
    import numpy as np

#: Joint types that have one degree of freedom and can belong to a chain.
ACTUATED_TYPES = ('revolute', 'continuous', 'prismatic')


@dataclass(frozen=True)
class UrdfJoint:
    """
    One joint of a URDF.

    Limits are in rad, rad/s, N*m for revolute joints and m, m/s, N for prismatic ones;
    a continuous joint has infinite position limits.
    """

    name: str
    joint_type: str
    parent: str
    child: str
    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class UrdfBox:
    """
    A box of a link's collision geometry.

    :param xyz: its centre in the link's frame [m].
    :param rpy: its orientation in the link's frame (URDF roll, pitch, yaw) [rad].
    :param size: its edges along its own x, y, z [m].
    """

    xyz: Tuple[float, float, float]
    rpy: Tuple[float, float, float]
    size: Tuple[float, float, float]

    def corners(self, placement) -> 'np.ndarray':
        """Return the 8 corners [m] in the frame that ``placement`` (the link's 4x4) maps to."""
        import numpy as np
        roll, pitch, yaw = self.rpy
        cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                                  math.sin(pitch), math.cos(yaw), math.sin(yaw))
        # URDF: fixed axes x, then y, then z
        rotation = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                             [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                             [-sp, cp * sr, cp * cr]])
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        local = (signs * np.asarray(self.size) / 2) @ rotation.T + np.asarray(self.xyz)
        placement = np.asarray(placement)
        return local @ placement[:3, :3].T + placement[:3, 3]


@dataclass(frozen=True)
class UrdfTree:
    """Links and joints of a URDF, with the tree structure and the links' collision boxes."""

    name: str
    links: List[str]
    joints: Dict[str, UrdfJoint]
    #: child link -> the joint that connects it to its parent link
    parent_joint: Dict[str, UrdfJoint]
    root: str
    #: link -> the boxes of its collision geometry (other shapes are not read)
    boxes: Dict[str, List[UrdfBox]] = field(default_factory=dict)

    def path(self, ancestor: str, descendant: str) -> Optional[List[UrdfJoint]]:
        """
        Return the joints from ``ancestor`` down to ``descendant`` (root to tip order).

        :param ancestor: link name the path starts at.
        :param descendant: link name the path ends at.
        :return: the joints of the path (fixed ones included); None when ``ancestor`` is not
            an ancestor of ``descendant`` (an empty list when both are the same link).
        """
        joints: List[UrdfJoint] = []
        link = descendant
        while link != ancestor:
            joint = self.parent_joint.get(link)
            if joint is None:
                return None
            joints.append(joint)
            link = joint.parent
        joints.reverse()
        return joints


def _float_attr(element: ElementTree.Element, key: str, default: float, where: str) -> float:
    text = element.get(key)
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        raise UrdfError(f'{where}: attribute {key}={text!r} is not a number') from None


def parse_urdf(xml: str) -> UrdfTree:
    """
    Parse URDF text into a :class:`UrdfTree`.

    :param xml: the URDF document.
    :return: the link/joint tree.
    :raises UrdfError: malformed XML, a missing attribute, a joint that references an unknown
        link, a link with two parents, or not exactly one root link.
    """
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        raise UrdfError(f'malformed URDF: {error}') from None
    if root.tag != 'robot':
        raise UrdfError(f'malformed URDF: the root element is <{root.tag}>, not <robot>')
    links = _link_names(root)
    link_set = set(links)
    joints: Dict[str, UrdfJoint] = {}
    parent_joint: Dict[str, UrdfJoint] = {}
    for element in root.findall('joint'):
        joint = _joint(element, link_set, joints, parent_joint)
        joints[joint.name] = joint
        parent_joint[joint.child] = joint
    roots = [link for link in links if link not in parent_joint]
    if len(roots) != 1:
        raise UrdfError(f'malformed URDF: expected one root link, found {roots or "none"}')
    return UrdfTree(root.get('name', ''), links, joints, parent_joint, roots[0],
                    _collision_boxes(root))


def _link_names(root: ElementTree.Element) -> List[str]:
    """Return the names of the links of a <robot>, in document order (each once)."""
    links = []
    for link in root.findall('link'):
        name = link.get('name')
        if not name:
            raise UrdfError('malformed URDF: a <link> has no name')
        links.append(name)
    if len(set(links)) != len(links):
        duplicates = sorted({n for n in links if links.count(n) > 1})
        raise UrdfError(f'malformed URDF: duplicate link(s) {", ".join(duplicates)}')
    return links


def _joint(element: ElementTree.Element, links: Set[str], joints: Mapping[str, UrdfJoint],
           parent_joint: Mapping[str, UrdfJoint]) -> UrdfJoint:
    """
    Return a <joint>: its links, type and limits.

    :param links: the robot's links; :param joints: the joints read before this one;
    :param parent_joint: the joint above each child link read before.
    """
    name = element.get('name')
    jtype = element.get('type')
    if not name or not jtype:
        raise UrdfError('malformed URDF: a <joint> lacks its name or type')
    where = f'joint {name!r}'
    if name in joints:
        raise UrdfError(f'malformed URDF: duplicate joint {name!r}')
    parent = element.find('parent')
    child = element.find('child')
    parent_name = None if parent is None else parent.get('link')
    child_name = None if child is None else child.get('link')
    if not parent_name or not child_name:
        raise UrdfError(f'malformed URDF: {where} lacks <parent link> or <child link>')
    for link_name in (parent_name, child_name):
        if link_name not in links:
            raise UrdfError(f'malformed URDF: {where} references unknown link {link_name!r}')
    if child_name in parent_joint:
        raise UrdfError(f'malformed URDF: link {child_name!r} has two parent joints')
    lower, upper, velocity, effort = -math.inf, math.inf, math.inf, math.inf
    limit = element.find('limit')
    if jtype in ('revolute', 'prismatic'):
        if limit is None:
            raise UrdfError(f'malformed URDF: {where} of type {jtype} has no <limit>')
        lower = _float_attr(limit, 'lower', 0.0, where)
        upper = _float_attr(limit, 'upper', 0.0, where)
        if lower > upper:
            raise UrdfError(f'malformed URDF: {where} has lower limit {lower} > upper {upper}')
    if limit is not None:
        velocity = _float_attr(limit, 'velocity', math.inf, where)
        effort = _float_attr(limit, 'effort', math.inf, where)
    return UrdfJoint(name, jtype, parent_name, child_name, lower, upper, velocity, effort)


def _triple(element: Optional[ElementTree.Element], key: str, where: str
            ) -> Tuple[float, float, float]:
    text = '0 0 0' if element is None else element.get(key, '0 0 0')
    try:
        x, y, z = (float(v) for v in text.split())
    except ValueError:
        raise UrdfError(f'{where}: {key}={text!r} is not three numbers') from None
    return x, y, z


def _collision_boxes(root: ElementTree.Element) -> Dict[str, List[UrdfBox]]:
    """Return link -> its collision boxes."""
    boxes: Dict[str, List[UrdfBox]] = {}
    for link in root.findall('link'):
        name = link.get('name', '')
        for collision in link.findall('collision'):
            box = collision.find('geometry/box')
            if box is None:
                continue
            where = f'link {name!r}: collision box'
            origin = collision.find('origin')
            size = _triple(box, 'size', where)
            if min(size) < 0:
                raise UrdfError(f'malformed URDF: {where} has a negative size {size}')
            boxes.setdefault(name, []).append(UrdfBox(_triple(origin, 'xyz', where),
                                                      _triple(origin, 'rpy', where), size))
    return boxes
