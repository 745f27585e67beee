"""
The ``mirror:`` section of a robot description: what is symmetric left and right (pure).

A robot symmetric about its sagittal plane (x-z) does a mirrored motion with the joints of
its left and right chains swapped; a joint whose axis the plane's reflection keeps
(along x or z: a roll or a yaw) turns the other way, so its value changes sign, and a joint
whose axis the reflection reverses (along y: a pitch) keeps its value. The description
declares it, because the URDF alone does not say which chains are each other's mirror::

    mirror:
      chains: [[leg1, leg2], [leg3, leg4]]  # swapped joint by joint, root to tip
      joints: []                            # more single pairs [left, right]
      negate: [joint11, joint21, joint52]   # value turns sign (both of a pair, or one alone)

Joints in no pair are their own mirror (the head); so are chains (a swapped chain's
support flag swaps with it: the editor's business, above this layer). :func:`mirror_of` reads
it off a model; a description without the section has no mirror (the editor says so).
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Mapping, Optional, Sequence, Tuple

from sweetie_motion.errors import ModelError

#: the section's keys
KEYS = ('chains', 'joints', 'negate')

Pairs = Tuple[Tuple[str, str], ...]


def _pairs(section: Mapping[str, Any], key: str) -> Pairs:
    raw = section.get(key) or []
    if not isinstance(raw, (list, tuple)):
        raise ModelError(f'mirror.{key}: expected a list of [left, right] pairs, got {raw!r}')
    pairs = []
    for pair in raw:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or pair[0] == pair[1]:
            raise ModelError(f'mirror.{key}: {pair!r} is not a pair of two different names')
        pairs.append((str(pair[0]), str(pair[1])))
    return tuple(pairs)


@dataclass(frozen=True)
class MirrorSettings:
    """
    What a robot description's ``mirror:`` section declares (see the module docstring).

    :param chains: chain pairs swapped joint by joint (and their support flags).
    :param joints: further joint pairs.
    :param negate: joints whose value changes sign in the mirror.
    """

    chains: Pairs = ()
    joints: Pairs = ()
    negate: FrozenSet[str] = frozenset()

    @property
    def declared(self) -> bool:
        """Return whether the description declares a mirror at all."""
        return bool(self.chains or self.joints or self.negate)

    @classmethod
    def from_mapping(cls, section: Optional[Mapping[str, Any]]) -> 'MirrorSettings':
        """
        Read the ``mirror:`` section (None or empty: no mirror).

        :raises ModelError: an unknown key, or a malformed pair or list (naming the key).
        """
        if not section:
            return cls()
        if not isinstance(section, Mapping):
            raise ModelError(f'mirror: expected a mapping with {", ".join(KEYS)}')
        unknown = sorted(set(section) - set(KEYS))
        if unknown:
            raise ModelError(f'mirror: unknown key(s) {", ".join(map(str, unknown))} '
                             f'(known: {", ".join(KEYS)})')
        negate = section.get('negate') or []
        if not isinstance(negate, (list, tuple)):
            raise ModelError(f'mirror.negate: expected a list of joints, got {negate!r}')
        return cls(_pairs(section, 'chains'), _pairs(section, 'joints'),
                   frozenset(str(j) for j in negate))

    def symmetry(self, chain_joints: Callable[[str], Sequence[str]]) -> 'Symmetry':
        """
        Return the joint-by-joint mirror, the chains' joints given by ``chain_joints``.

        :raises ModelError: two paired chains of different lengths, a joint in two pairs, or a
            negated joint whose partner is not negated (mirroring twice would not give the
            pose back).
        """
        partner: Dict[str, str] = {}
        chains: Dict[str, str] = {}

        def pair(names: Dict[str, str], left: str, right: str, why: str) -> None:
            for name in (left, right):
                if name in names:
                    raise ModelError(f'mirror: {name} is in two pairs ({why})')
            names[left], names[right] = right, left
        for left, right in self.chains:
            lefts, rights = list(chain_joints(left)), list(chain_joints(right))
            if len(lefts) != len(rights):
                raise ModelError(f'mirror.chains: {left} has {len(lefts)} joints, {right} '
                                 f'{len(rights)}')
            pair(chains, left, right, 'chains')
            for a, b in zip(lefts, rights):
                pair(partner, a, b, f'chains {left}, {right}')
        for left, right in self.joints:
            pair(partner, left, right, 'joints')
        odd = sorted(j for j in self.negate if partner.get(j, j) not in self.negate)
        if odd:
            raise ModelError(f'mirror.negate: {", ".join(odd)} negated but not '
                             f'{", ".join(partner[j] for j in odd)}')
        return Symmetry(partner, self.negate, chains)


@dataclass(frozen=True)
class Symmetry:
    """
    The mirror of a pose: swapped pairs, negated joints.

    :param partner: joint -> its mirror joint (both ways; joints not in it are their own).
    :param negate: joints whose value changes sign.
    :param chains: chain -> its mirror chain (both ways; a support leg's flag goes with it).
    """

    partner: Mapping[str, str]
    negate: FrozenSet[str]
    chains: Mapping[str, str]

    def chain(self, name: str) -> str:
        """Return the mirror of chain ``name`` (itself when in no pair)."""
        return self.chains.get(name, name)

    def joint(self, name: str) -> str:
        """Return the mirror of joint ``name`` (itself when in no pair)."""
        return self.partner.get(name, name)

    def value(self, name: str, value: float) -> float:
        """Return the value joint ``name``'s mirror gets for ``value`` of ``name``."""
        return -value if self.joint(name) in self.negate else value

    def mirror_pose(self, pose: Mapping[str, float]) -> Dict[str, float]:
        """Return the mirrored pose: each value at the mirror joint, its sign as declared."""
        return {self.joint(name): self.value(name, value) for name, value in pose.items()}

    def missing(self, joints: Sequence[str]) -> Dict[str, str]:
        """Return the joints of ``joints`` whose mirror is not among them (joint -> mirror)."""
        have = set(joints)
        return {j: self.joint(j) for j in joints if self.joint(j) not in have}


def mirror_of(model: Any) -> Optional[Symmetry]:
    """
    Return the mirror a configured model's description declares (None: it declares none).

    :raises ModelError: the declaration does not fit the model (see
        :meth:`MirrorSettings.symmetry`).
    """
    settings = getattr(model, 'mirror_settings', None)
    if not isinstance(settings, MirrorSettings) or not settings.declared:
        return None
    return settings.symmetry(model.list_joints)
