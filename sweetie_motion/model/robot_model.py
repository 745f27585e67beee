"""
RobotModel: the robot's chains, resource groups, canonical joint order and kinematics.

A pure-Python model (no rclpy) built on pinocchio from a URDF plus a declaration of kinematic
chains and resource groups (R-MODEL-1..4). One instance is shared by every component of the
motion process; after :meth:`RobotModel.configure` it is immutable and safe to use from several
threads. Components that only need names and indices get a :class:`RobotModelView`.

Canonical joint order (the order of every full pose inside the process): chains in declaration
order, each from root to tip, virtual joints included; then the joints that belong to a group
but to no chain. A joint shared by two chains appears once, where it first appears.
"""

from dataclasses import dataclass, field
import math
import os
import threading
from typing import (
    Any, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence, Tuple, TYPE_CHECKING,
)

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.errors import (
    ChainDeclarationError, ChainOverlapError, MissingJointError, NotConfiguredError,
    UnknownChainError, UnknownGroupError, UnknownJointError, UnknownLinkError, UrdfError,
)
from sweetie_motion.model.check_settings import CheckSettings
from sweetie_motion.model.mirror import MirrorSettings
from sweetie_motion.model.physics_settings import PhysicsSettings
from sweetie_motion.model.urdf import ACTUATED_TYPES, parse_urdf, UrdfTree

if TYPE_CHECKING:
    from sweetie_motion.model.kinematics import ChainKinematics

#: Keys of a chain declaration that RobotModel interprets; any other key is a chain property.
CHAIN_KEYS = ('first_link', 'last_link', 'last_link_virtual')


class JointStateLike(Protocol):
    """A joint state as extract_chain reads and pack_chain writes it: sensor_msgs/JointState."""

    name: Sequence[str]
    position: Sequence[float]
    velocity: Sequence[float]
    effort: Sequence[float]


@dataclass(frozen=True)
class ChainSpec:
    """
    Declaration of a kinematic chain.

    ``last_link_virtual`` optionally extends the chain past ``last_link``: the joints between
    them are virtual (not driven by servos, e.g. a hoof contact or a nose pointer).
    """

    name: str
    first_link: str
    last_link: str
    last_link_virtual: Optional[str] = None
    properties: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, name: str, spec: Mapping[str, Any]) -> 'ChainSpec':
        """Build from a config mapping ``{first_link, last_link, last_link_virtual, ...}``."""
        if not isinstance(spec, Mapping):
            raise ChainDeclarationError(f'chain {name!r}: declaration must be a mapping')
        missing = [key for key in ('first_link', 'last_link') if not spec.get(key)]
        if missing:
            raise ChainDeclarationError(f'chain {name!r}: missing {", ".join(missing)}')
        properties = {k: v for k, v in spec.items() if k not in CHAIN_KEYS}
        return cls(name, str(spec['first_link']), str(spec['last_link']),
                   spec.get('last_link_virtual') or None, properties)


@dataclass(frozen=True)
class GroupSpec:
    """
    Declaration of a resource group: chains plus joints that belong to no chain.

    ``virtual: true`` makes the group's own joints virtual: no servo drives them (a pony's
    eyes, drawn on its head's displays, follow their reference).
    """

    name: str
    chains: Tuple[str, ...] = ()
    joints: Tuple[str, ...] = ()
    virtual: bool = False

    @classmethod
    def from_mapping(cls, name: str, spec: Mapping[str, Any]) -> 'GroupSpec':
        """Build from a config mapping ``{chains: [...], joints: [...], virtual: bool}``."""
        if spec is None:
            spec = {}
        if not isinstance(spec, Mapping):
            raise ChainDeclarationError(f'group {name!r}: declaration must be a mapping')
        unknown = set(spec) - {'chains', 'joints', 'virtual'}
        if unknown:
            raise ChainDeclarationError(
                f'group {name!r}: unknown key(s) {", ".join(sorted(unknown))} '
                '(a group has chains, joints and virtual)')
        virtual = spec.get('virtual', False)
        if not isinstance(virtual, bool):
            raise ChainDeclarationError(f'group {name!r}: virtual must be true or false, '
                                        f'got {virtual!r}')
        return cls(name, tuple(spec.get('chains') or ()), tuple(spec.get('joints') or ()),
                   virtual)


@dataclass(frozen=True)
class JointInfo:
    """
    A joint of the canonical pose with its limits.

    :param index: position in the canonical pose.
    :param chain: the first chain that contains the joint, '' for a group-only joint.
    :param lower: lower position limit [rad or m], -inf for continuous joints.
    :param upper: upper position limit [rad or m], +inf for continuous joints.
    :param velocity: velocity limit [rad/s or m/s].
    :param effort: effort limit [N*m or N].
    :param acceleration: acceleration limit [rad/s^2 or m/s^2] (robot config ``limits``).
    :param jerk: jerk limit [rad/s^3 or m/s^3], inf where none is configured.
    """

    name: str
    index: int
    chain: str
    group: str
    virtual: bool
    joint_type: str
    lower: float
    upper: float
    velocity: float
    effort: float
    acceleration: float = math.inf
    jerk: float = math.inf


#: Acceleration limit of a joint the robot config gives none for, per unit of its velocity
#: limit [1/s]: the joint reaches its top speed in 0.2 s.
DEFAULT_ACCELERATION_PER_VELOCITY = 5.0
#: Keys of a ``limits`` entry of the robot config.
LIMIT_KEYS = ('acceleration', 'jerk')


@dataclass(frozen=True)
class JointLimits:
    """
    The limits of every joint, arrays in canonical order (read-only).

    Position and velocity come from the URDF; acceleration and jerk from the robot config
    (``limits``); a jerk of inf means none is configured.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray

    def take(self, indices: ArrayLike) -> 'JointLimits':
        """Return the limits of the joints at ``indices``, in that order."""
        idx = np.asarray(indices, dtype=np.intp)
        return JointLimits(self.lower[idx], self.upper[idx], self.velocity[idx],
                           self.acceleration[idx], self.jerk[idx])


@dataclass(frozen=True)
class _Chain:
    spec: ChainSpec
    group: str
    joints: Tuple[str, ...]
    indices: np.ndarray
    virtual: Tuple[bool, ...]
    tip: str


class _State:
    """Everything computed by configure(); never mutated afterwards."""

    def __init__(self, tree: UrdfTree, urdf_xml: str, chains: Dict[str, _Chain],
                 groups: Dict[str, GroupSpec], joints: List[JointInfo],
                 group_indices: Dict[str, np.ndarray]) -> None:
        self.tree = tree
        self.urdf_xml = urdf_xml
        self.chains = chains
        self.groups = groups
        self.joints = joints
        self.names = [j.name for j in joints]
        self.index = {j.name: j.index for j in joints}
        self.info = {j.name: j for j in joints}
        self.group_indices = group_indices
        self.lower = _readonly(np.array([j.lower for j in joints]))
        self.upper = _readonly(np.array([j.upper for j in joints]))
        self.velocity = _readonly(np.array([j.velocity for j in joints]))
        self.limits = JointLimits(
            self.lower, self.upper, self.velocity,
            _readonly(np.array([j.acceleration for j in joints])),
            _readonly(np.array([j.jerk for j in joints])))
        # Built lazily: most components never need pinocchio.
        self.kinematics: Optional['ChainKinematics'] = None


def _readonly(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class RobotModelView:
    """
    Read-only access to names, indices and limits of a configured :class:`RobotModel`.

    For components that need only the canonical joint order (the aggregator, controllers):
    it cannot configure, clean up or compute kinematics.
    """

    def __init__(self, model: 'RobotModel') -> None:
        self._model = model

    def _state(self, operation: str) -> _State:
        return self._model._state(operation)

    @property
    def is_configured(self) -> bool:
        """Return whether configure() has finished (and cleanup() has not been called)."""
        return self._model.is_configured

    def list_chains(self) -> List[str]:
        """Return the chain names in declaration order."""
        return list(self._state('list_chains').chains)

    def list_joints(self, chain: Optional[str] = None) -> List[str]:
        """Return the joints of ``chain`` root to tip, or all joints in canonical order."""
        state = self._state('list_joints')
        if chain is None:
            return list(state.names)
        return list(_chain(state, chain).joints)

    def list_all_joints(self) -> List[str]:
        """Return every joint in canonical order."""
        return list(self._state('list_all_joints').names)

    def list_virtual_joints(self) -> List[str]:
        """Return the virtual joints (not driven by servos) in canonical order."""
        return [j.name for j in self._state('list_virtual_joints').joints if j.virtual]

    def list_groups(self) -> List[str]:
        """Return the resource group names in declaration order."""
        return list(self._state('list_groups').groups)

    def get_joint_chain(self, joint: str) -> str:
        """Return the chain that owns ``joint``: '' if the joint is unknown or in no chain."""
        info = self._state('get_joint_chain').info.get(joint)
        return info.chain if info else ''

    def get_joints_chains(self, joints: Iterable[str]) -> List[str]:
        """Return the sorted unique chains that own the given joints (unknown ones ignored)."""
        info = self._state('get_joints_chains').info
        return sorted({info[j].chain for j in joints if j in info and info[j].chain})

    def get_joint_group(self, joint: str) -> str:
        """Return the resource group of ``joint``, '' if unknown."""
        info = self._state('get_joint_group').info.get(joint)
        return info.group if info else ''

    def get_joints_groups(self, joints: Iterable[str]) -> List[str]:
        """Return the sorted unique resource groups of the given joints (unknown ignored)."""
        info = self._state('get_joints_groups').info
        return sorted({info[j].group for j in joints if j in info})

    def get_chain_group(self, chain: str) -> str:
        """Return the resource group that contains ``chain``."""
        return _chain(self._state('get_chain_group'), chain).group

    def get_group_chains(self, group: str) -> List[str]:
        """Return the chains of resource group ``group``."""
        return list(_group(self._state('get_group_chains'), group).chains)

    def get_group_joints(self, group: str) -> List[str]:
        """Return every joint of resource group ``group`` in canonical order."""
        state = self._state('get_group_joints')
        return [state.names[i] for i in _group_indices(state, group)]

    def get_joint_index(self, joint: str) -> int:
        """Return the index of ``joint`` in the canonical pose, -1 if unknown."""
        return self._state('get_joint_index').index.get(joint, -1)

    def get_joint_indices(self, joints: Sequence[str]) -> np.ndarray:
        """
        Return the canonical indices of ``joints``.

        :raises UnknownJointError: naming every unknown joint.
        """
        index = self._state('get_joint_indices').index
        unknown = [j for j in joints if j not in index]
        if unknown:
            raise UnknownJointError(unknown, known=index)
        return np.array([index[j] for j in joints], dtype=np.intp)

    def get_chain_indices(self, chain: str) -> np.ndarray:
        """Return the canonical indices of the joints of ``chain`` (read-only array)."""
        return _chain(self._state('get_chain_indices'), chain).indices

    def get_group_indices(self, group: str) -> np.ndarray:
        """Return the canonical indices of every joint of ``group`` (read-only array)."""
        return _group_indices(self._state('get_group_indices'), group)

    def get_joint_info(self, joint: str) -> JointInfo:
        """Return name, index, chain, group, virtual flag, type and limits of ``joint``."""
        info = self._state('get_joint_info').info.get(joint)
        if info is None:
            raise UnknownJointError([joint], known=self._state('get_joint_info').info)
        return info

    def is_virtual(self, joint: str) -> bool:
        """Return True if no servo drives ``joint`` (past a chain's last_link, virtual group)."""
        return self.get_joint_info(joint).virtual

    def is_posable(self, joint: str) -> bool:
        """
        Return True if an author poses ``joint``: a servo's, or a virtual group's own joint.

        A virtual group's joints (the pony's eyes, drawn on displays) move in animations
        although no servo turns them; a chain's virtual tail (a hoof contact, the nose pointer)
        only marks a frame.
        """
        info = self.get_joint_info(joint)
        return not info.virtual or not info.chain

    def position_limits(self) -> Tuple[np.ndarray, np.ndarray]:
        """Return (lower, upper) position limits in canonical order [rad or m]."""
        state = self._state('position_limits')
        return state.lower, state.upper

    def velocity_limits(self) -> np.ndarray:
        """Return velocity limits in canonical order [rad/s or m/s]."""
        return self._state('velocity_limits').velocity

    def acceleration_limits(self) -> np.ndarray:
        """Return acceleration limits in canonical order [rad/s^2 or m/s^2]."""
        return self._state('acceleration_limits').limits.acceleration

    def jerk_limits(self) -> np.ndarray:
        """Return jerk limits in canonical order [rad/s^3 or m/s^3]; inf: not configured."""
        return self._state('jerk_limits').limits.jerk

    def joint_limits(self) -> JointLimits:
        """Return position, velocity, acceleration and jerk limits of every joint."""
        return self._state('joint_limits').limits

    def get_chain_property(self, chain: str, key: str, default: Any = None) -> Any:
        """Return an extra property of a chain declaration (any key besides the links)."""
        return _chain(self._state('get_chain_property'), chain).spec.properties.get(key, default)

    def get_chain_properties(self, chain: str) -> Dict[str, Any]:
        """Return all extra properties of a chain declaration."""
        return dict(_chain(self._state('get_chain_properties'), chain).spec.properties)

    def get_chain_links(self, chain: str) -> Tuple[str, str, Optional[str]]:
        """Return (first_link, last_link, last_link_virtual) of ``chain``."""
        spec = _chain(self._state('get_chain_links'), chain).spec
        return spec.first_link, spec.last_link, spec.last_link_virtual


def _chain(state: _State, chain: str) -> _Chain:
    try:
        return state.chains[chain]
    except KeyError:
        raise UnknownChainError(chain, state.chains) from None


def _group(state: _State, group: str) -> GroupSpec:
    try:
        return state.groups[group]
    except KeyError:
        raise UnknownGroupError(group, state.groups) from None


def _group_indices(state: _State, group: str) -> np.ndarray:
    _group(state, group)
    return state.group_indices[group]


class RobotModel(RobotModelView):
    """
    The robot model shared by the components of one process.

    :param urdf: the URDF document, or None when ``urdf_file`` is given.
    :param chains: ``{chain: {first_link, last_link, last_link_virtual?, ...properties}}``.
    :param groups: ``{group: {chains: [...], joints: [...]}}``; a chain in no group becomes a
        group of its own name.
    :param urdf_file: path of a URDF file, read by configure().
    :param limits: ``{default | group | chain | joint: {acceleration, jerk}}``: acceleration
        [rad/s^2] and jerk [rad/s^3] limits; the most specific entry wins (joint, then chain,
        then group, then ``default``). Without an entry a joint may accelerate to its velocity
        limit in 0.2 s and has no jerk limit.
    """

    def __init__(self, urdf: Optional[str] = None,
                 chains: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 groups: Optional[Mapping[str, Mapping[str, Any]]] = None,
                 urdf_file: Optional[str] = None,
                 limits: Optional[Mapping[str, Mapping[str, Any]]] = None) -> None:
        super().__init__(self)
        if (urdf is None) == (urdf_file is None):
            raise ValueError('RobotModel needs exactly one of urdf and urdf_file')
        self._urdf = urdf
        self._urdf_file = urdf_file
        self._chain_decl: Dict[str, Mapping[str, Any]] = dict(chains or {})
        self._group_decl: Dict[str, Mapping[str, Any]] = dict(groups or {})
        self._limits_decl: Dict[str, Mapping[str, Any]] = dict(limits or {})
        self._lock = threading.RLock()
        self._current: Optional[_State] = None
        self._local = threading.local()
        #: what the motion checks ask for (the description's ``checks:``; R-SYS-9)
        self.check_settings = CheckSettings()
        #: how the robot is put on a floor (the description's ``physics:``; R-SYS-11)
        self.physics_settings = PhysicsSettings()
        #: what is symmetric left and right (the description's ``mirror:``; the editor's Mirror)
        self.mirror_settings = MirrorSettings()

    # --- lifecycle -----------------------------------------------------------------------------

    @property
    def is_configured(self) -> bool:
        """Return whether configure() has finished (and cleanup() has not been called)."""
        return self._current is not None

    def _state(self, operation: str) -> _State:
        state = self._current
        if state is None:
            raise NotConfiguredError(operation)
        return state

    def view(self) -> RobotModelView:
        """Return a read-only view for components that need only names and indices."""
        return RobotModelView(self)

    def add_chain(self, name: str, first_link: str, last_link: str,
                  last_link_virtual: Optional[str] = None, group: Optional[str] = None,
                  **properties: Any) -> None:
        """
        Declare a chain; it takes effect at the next configure().

        :param group: resource group to add the chain to (default: a group of its own name).
        """
        with self._lock:
            spec = {'first_link': first_link, 'last_link': last_link, **properties}
            if last_link_virtual:
                spec['last_link_virtual'] = last_link_virtual
            self._chain_decl[name] = spec
            if group is not None:
                decl = dict(self._group_decl.get(group) or {})
                decl['chains'] = list(decl.get('chains') or ()) + [name]
                self._group_decl[group] = decl

    def remove_chain(self, name: str) -> None:
        """Remove a chain declaration (and its group entries); effective at next configure()."""
        with self._lock:
            if name not in self._chain_decl:
                raise UnknownChainError(name, self._chain_decl)
            del self._chain_decl[name]
            for group, decl in list(self._group_decl.items()):
                chains = [c for c in (decl or {}).get('chains') or () if c != name]
                self._group_decl[group] = {**(decl or {}), 'chains': chains}

    def configure(self) -> None:
        """
        Load the URDF and pre-compute chains, groups and the canonical joint order.

        On failure the model keeps its previous state (configured or not).

        :raises UrdfError: the URDF cannot be read or parsed.
        :raises UnknownLinkError: a chain names a link the URDF does not have.
        :raises ChainDeclarationError: a chain is not a path, has no joints, a group names an
            unknown chain, a chain is in two groups...
        :raises ChainOverlapError: chains of different groups share joints.
        :raises UnknownJointError: a group lists joints the URDF does not have.
        """
        with self._lock:
            xml = self._urdf
            if xml is None:
                assert self._urdf_file is not None  # the constructor takes exactly one of them
                try:
                    with open(os.fspath(self._urdf_file), encoding='utf-8') as stream:
                        xml = stream.read()
                except OSError as error:
                    raise UrdfError(f'cannot read URDF file {self._urdf_file}: {error}') from None
            self._current = _build_state(xml, self._chain_decl, self._group_decl,
                                         self._limits_decl)

    def cleanup(self) -> None:
        """Forget everything computed by configure(); the declarations are kept."""
        with self._lock:
            self._current = None
            self._local = threading.local()

    # --- joint states --------------------------------------------------------------------------

    def extract_chain(self, chain: str, joint_state: JointStateLike
                      ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Extract the joints of ``chain`` from a joint state in any joint order.

        :param joint_state: anything with ``name``, ``position``, ``velocity``, ``effort``
            sequences, e.g. sensor_msgs/JointState.
        :return: (position, velocity, effort) arrays in chain order; velocity or effort is an
            empty array when the joint state has none.
        :raises UnknownChainError: unknown chain.
        :raises MissingJointError: the joint state lacks joints of the chain.
        """
        state = self._state('extract_chain')
        info = _chain(state, chain)
        names = list(joint_state.name)
        if names == state.names:
            columns = info.indices
        else:
            where = {name: i for i, name in enumerate(names)}
            missing = [j for j in info.joints if j not in where]
            if missing:
                raise MissingJointError(missing, f'extract_chain({chain!r})')
            columns = np.array([where[j] for j in info.joints], dtype=np.intp)
        out = []
        values: ArrayLike  # each field of the joint state, then its array
        for values in (joint_state.position, joint_state.velocity, joint_state.effort):
            values = np.asarray(values, dtype=float)
            if values.size == 0:
                out.append(np.zeros(0))
            elif values.size != len(names):
                raise ValueError(
                    f'extract_chain({chain!r}): joint state has {len(names)} names but '
                    f'{values.size} values in one of position/velocity/effort')
            else:
                out.append(values[columns])
        return out[0], out[1], out[2]

    def pack_chain(self, chain: str, position: Sequence[float], velocity: Sequence[float],
                   effort: Sequence[float], joint_state: JointStateLike) -> bool:
        """
        Write the values of ``chain`` into ``joint_state`` (the inverse of extract_chain).

        A joint state with no names is first filled with the full canonical pose (zeros).
        Empty ``velocity`` or ``effort`` leave those fields untouched.

        :return: False when the chain is unknown, the sizes do not match the chain, or the
            joint state lacks joints of the chain; True otherwise.
        """
        state = self._state('pack_chain')
        info = state.chains.get(chain)
        if info is None:
            return False
        n = len(info.joints)
        if len(position) != n or len(velocity) not in (0, n) or len(effort) not in (0, n):
            return False
        if len(joint_state.name) == 0:
            joint_state.name = list(state.names)
            zeros = [0.0] * len(state.names)
            joint_state.position = list(zeros)
            joint_state.velocity = list(zeros)
            joint_state.effort = list(zeros)
        names = list(joint_state.name)
        if names == state.names:
            columns = info.indices.tolist()
        else:
            where = {name: i for i, name in enumerate(names)}
            if any(j not in where for j in info.joints):
                return False
            columns = [where[j] for j in info.joints]
        updates = []
        for attr, values in (('position', position), ('velocity', velocity),
                             ('effort', effort)):
            if len(values) == 0:
                continue
            target = list(getattr(joint_state, attr)) or [0.0] * len(names)
            if len(target) != len(names):
                return False
            for column, value in zip(columns, values):
                target[column] = float(value)
            updates.append((attr, target))
        for attr, target in updates:  # all checks passed: nothing is half-written
            setattr(joint_state, attr, target)
        return True

    # --- kinematics ----------------------------------------------------------------------------

    def chain_tip(self, chain: str) -> str:
        """Return the link at the end of ``chain``: last_link_virtual if set, else last_link."""
        return _chain(self._state('chain_tip'), chain).tip

    def forward_kinematics(self, chain: str, position: ArrayLike,
                           link: Optional[str] = None) -> np.ndarray:
        """
        Pose of the chain's tip (or ``link``) in the frame of the chain's first link.

        :param position: joint positions of the chain in chain order [rad or m].
        :param link: a link of the chain to use instead of the tip.
        :return: 4x4 homogeneous transform (translation in m).
        """
        kinematics, info = self._kinematics('forward_kinematics', chain)
        return kinematics.forward(info, position, link or info.tip)

    def jacobian(self, chain: str, position: ArrayLike,
                 link: Optional[str] = None) -> np.ndarray:
        """
        Geometric Jacobian of the chain's tip (or ``link``).

        :param position: joint positions of the chain in chain order [rad or m].
        :return: 6 x n array, rows (vx, vy, vz, wx, wy, wz) of the tip origin expressed in the
            axes of the chain's first link, columns in chain order.
        """
        kinematics, info = self._kinematics('jacobian', chain)
        return kinematics.jacobian(info, position, link or info.tip)

    def link_positions(self, pose: Optional[Mapping[str, float]] = None
                       ) -> Dict[str, np.ndarray]:
        """
        Return the origin of every URDF link in the root link's frame [m].

        :param pose: joint name -> position [rad or m]; joints not given are at zero.
        """
        state = self._state('link_positions')
        return self._chain_kinematics(state).link_positions(state.tree.links, pose or {})

    def link_placements(self, pose: Optional[Mapping[str, float]] = None
                        ) -> Dict[str, np.ndarray]:
        """
        Return the 4x4 pose of every URDF link in the root link's frame.

        :param pose: joint name -> position [rad or m]; joints not given are at zero.
        """
        state = self._state('link_placements')
        return self._chain_kinematics(state).link_placements(state.tree.links, pose or {})

    def center_of_mass(self, pose: Optional[Mapping[str, float]] = None
                       ) -> Tuple[float, np.ndarray]:
        """
        Return the robot's mass [kg] and its centre of mass in the root link's frame [m].

        :param pose: joint name -> position [rad or m]; joints not given are at zero.
        """
        state = self._state('center_of_mass')
        return self._chain_kinematics(state).center_of_mass(pose or {})

    def urdf_document(self) -> str:
        """Return the URDF document the model was built from (with every joint's limits)."""
        return self._state('urdf_document').urdf_xml

    def urdf_tree(self) -> UrdfTree:
        """Return the links and joints of the URDF (including fixed and non-chain joints)."""
        return self._state('urdf_tree').tree

    def _chain_kinematics(self, state: _State) -> 'ChainKinematics':
        if state.kinematics is None:
            with self._lock:
                if state.kinematics is None:
                    from sweetie_motion.model.kinematics import ChainKinematics
                    state.kinematics = ChainKinematics(state.urdf_xml)
        return state.kinematics

    def _kinematics(self, operation: str, chain: str):
        state = self._state(operation)
        info = _chain(state, chain)
        return self._chain_kinematics(state), info


# --- configure -----------------------------------------------------------------------------------


def _limit_entries(limits_decl: Mapping[str, Mapping[str, Any]], names: set
                   ) -> Dict[str, Dict[str, float]]:
    """Check the ``limits`` declaration; return name -> {key: value}."""
    entries = {}
    for name, entry in limits_decl.items():
        if name != 'default' and name not in names:
            raise ChainDeclarationError(
                f'limits: {name!r} is neither "default" nor a group, chain or joint')
        if not isinstance(entry, Mapping):
            raise ChainDeclarationError(
                f'limits.{name}: expected a mapping with {" and/or ".join(LIMIT_KEYS)}')
        unknown = set(entry) - set(LIMIT_KEYS)
        if unknown:
            raise ChainDeclarationError(
                f'limits.{name}: unknown key(s) {", ".join(sorted(unknown))} (position and '
                'velocity limits come from the URDF; the config gives acceleration and jerk)')
        values = {}
        for key, value in entry.items():
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ChainDeclarationError(
                    f'limits.{name}.{key}: expected a number, got {value!r}') from None
            if not value > 0:
                raise ChainDeclarationError(f'limits.{name}.{key} must be > 0, got {value}')
            values[key] = value
        entries[name] = values
    return entries


def _build_state(xml: str, chain_decl: Mapping[str, Mapping[str, Any]],
                 group_decl: Mapping[str, Mapping[str, Any]],
                 limits_decl: Optional[Mapping[str, Mapping[str, Any]]] = None) -> _State:
    tree = parse_urdf(xml)
    specs = [ChainSpec.from_mapping(name, decl) for name, decl in chain_decl.items()]
    groups = {name: GroupSpec.from_mapping(name, decl) for name, decl in group_decl.items()}
    chain_group = _chain_groups(specs, groups, chain_decl)
    chain_paths = {spec.name: _chain_path(tree, spec) for spec in specs}
    order = _joint_order(tree, specs, groups, chain_paths, chain_group)
    limit_entries = _limit_entries(limits_decl or {},
                                   set(groups) | set(chain_paths) | {o[0] for o in order})
    joints = _joint_infos(tree, order, chain_paths, limit_entries)
    index_of = {j.name: j.index for j in joints}
    chains = {}
    for spec in specs:
        names = tuple(j for j, _ in chain_paths[spec.name])
        chains[spec.name] = _Chain(
            spec, chain_group[spec.name], names,
            _readonly(np.array([index_of[j] for j in names], dtype=np.intp)),
            tuple(v for _, v in chain_paths[spec.name]),
            spec.last_link_virtual or spec.last_link)
    group_indices = {}
    for name in groups:
        members = [j.index for j in joints if j.group == name]
        group_indices[name] = _readonly(np.array(members, dtype=np.intp))
    for j in joints:
        if math.isnan(j.lower) or math.isnan(j.upper):
            raise UrdfError(f'joint {j.name!r} has NaN limits')
    return _State(tree, xml, chains, groups, joints, group_indices)


def _chain_groups(specs: Sequence[ChainSpec], groups: Dict[str, GroupSpec],
                  chain_decl: Mapping[str, Any]) -> Dict[str, str]:
    """
    Return the group of every chain; a chain no group names becomes a group of its own.

    :param groups: the declared groups; the chains' own groups are added to it.
    """
    chain_group: Dict[str, str] = {}
    for group in groups.values():
        for chain in group.chains:
            if chain not in chain_decl:
                raise ChainDeclarationError(f'group {group.name!r} names unknown chain {chain!r}')
            if chain in chain_group:
                raise ChainDeclarationError(
                    f'chain {chain!r} is in two groups: {chain_group[chain]!r} and {group.name!r}')
            chain_group[chain] = group.name
    for spec in specs:
        if spec.name not in chain_group:
            if spec.name in groups:
                raise ChainDeclarationError(
                    f'chain {spec.name!r} is in no group, and a group of that name exists')
            groups[spec.name] = GroupSpec(spec.name, (spec.name,), ())
            chain_group[spec.name] = spec.name
    return chain_group


def _chain_path(tree: UrdfTree, spec: ChainSpec) -> List[Tuple[str, bool]]:
    """Return the movable joints of a chain, root to tip: (name, whether virtual)."""
    for role in ('first_link', 'last_link', 'last_link_virtual'):
        link = getattr(spec, role)
        if link is not None and link not in tree.links:
            raise UnknownLinkError(spec.name, link, role)
    path = tree.path(spec.first_link, spec.last_link)
    if path is None:
        raise ChainDeclarationError(
            f'chain {spec.name!r}: first_link {spec.first_link!r} is not an ancestor of '
            f'last_link {spec.last_link!r}')
    along = [(j, False) for j in path]
    if spec.last_link_virtual:
        extra = tree.path(spec.last_link, spec.last_link_virtual)
        if extra is None:
            raise ChainDeclarationError(
                f'chain {spec.name!r}: last_link {spec.last_link!r} is not an ancestor of '
                f'last_link_virtual {spec.last_link_virtual!r}')
        along += [(j, True) for j in extra]
    movable = []
    for urdf_joint, virtual in along:
        if urdf_joint.joint_type == 'fixed':
            continue
        if urdf_joint.joint_type not in ACTUATED_TYPES:
            raise ChainDeclarationError(
                f'chain {spec.name!r}: joint {urdf_joint.name!r} of type '
                f'{urdf_joint.joint_type} is not supported in a chain (revolute, continuous '
                'and prismatic are)')
        movable.append((urdf_joint.name, virtual))
    if not movable:
        raise ChainDeclarationError(f'chain {spec.name!r} has no movable joints')
    return movable


def _joint_order(tree: UrdfTree, specs: Sequence[ChainSpec], groups: Mapping[str, GroupSpec],
                 chain_paths: Mapping[str, List[Tuple[str, bool]]],
                 chain_group: Mapping[str, str]) -> List[Tuple[str, str, str, bool]]:
    """Return the model's joints in order: (joint, chain or '', group, virtual)."""
    # Chains that share joints must be one resource: the arbiter could not grant them apart.
    owners: Dict[str, str] = {}
    for spec in specs:
        for joint, _ in chain_paths[spec.name]:
            other = owners.get(joint)
            if other is None:
                owners[joint] = spec.name
            elif chain_group[other] != chain_group[spec.name]:
                shared = [j for j, _ in chain_paths[spec.name]
                          if j in {n for n, _ in chain_paths[other]}]
                raise ChainOverlapError(other, spec.name, shared)
    order: List[Tuple[str, str, str, bool]] = []
    seen = set()
    for spec in specs:
        for joint, virtual in chain_paths[spec.name]:
            if joint not in seen:
                seen.add(joint)
                order.append((joint, spec.name, chain_group[spec.name], virtual))
    for group in groups.values():
        unknown = [j for j in group.joints if j not in tree.joints]
        if unknown:
            raise UnknownJointError(unknown, f'group {group.name!r}')
        for joint in group.joints:
            urdf_joint = tree.joints[joint]
            if urdf_joint.joint_type not in ACTUATED_TYPES:
                raise ChainDeclarationError(
                    f'group {group.name!r}: joint {joint!r} of type {urdf_joint.joint_type} '
                    'cannot be a resource (revolute, continuous and prismatic can)')
            if joint in owners:
                if chain_group[owners[joint]] != group.name:
                    raise ChainDeclarationError(
                        f'group {group.name!r}: joint {joint!r} already belongs to chain '
                        f'{owners[joint]!r} of group {chain_group[owners[joint]]!r}')
                continue
            if joint not in seen:
                seen.add(joint)
                order.append((joint, '', group.name, group.virtual))
            else:
                raise ChainDeclarationError(f'joint {joint!r} is listed by two groups')
    return order


def _joint_infos(tree: UrdfTree, order: Sequence[Tuple[str, str, str, bool]],
                 chain_paths: Mapping[str, List[Tuple[str, bool]]],
                 limit_entries: Mapping[str, Mapping[str, float]]) -> List[JointInfo]:
    """Return every joint's information, its limits resolved from the most specific entry."""
    joints: List[JointInfo] = []
    for index, (name, chain, group_name, virtual) in enumerate(order):
        urdf_joint = tree.joints[name]
        chains_of = [c for c, path in chain_paths.items() if name in {j for j, _ in path}]
        resolved: Dict[str, float] = {}
        for key in ['default', group_name, *reversed(chains_of), name]:
            resolved.update(limit_entries.get(key, {}))
        acceleration = resolved.get(
            'acceleration', DEFAULT_ACCELERATION_PER_VELOCITY * urdf_joint.velocity)
        joints.append(JointInfo(name, index, chain, group_name, virtual, urdf_joint.joint_type,
                                urdf_joint.lower, urdf_joint.upper, urdf_joint.velocity,
                                urdf_joint.effort, acceleration,
                                resolved.get('jerk', math.inf)))
    return joints
