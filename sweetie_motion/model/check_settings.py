"""
The ``checks:`` section of a robot description: which motion checks run and how (pure).

Read with the robot description (:mod:`sweetie_motion.model.description`) and kept on the
model; :mod:`sweetie_motion.checks` runs the checks it asks for.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Mapping, Optional, Tuple, Union

from sweetie_motion.errors import ModelError
from sweetie_motion.paths import config_number

MODES = ('off', 'warn', 'refuse')


@dataclass
class CheckSettings:
    """
    What a robot's ``checks:`` section asks for (each check: off, warn or refuse).

    Defaults, and why: every check warns and none refuses, so that a robot description that
    says nothing (a user's robot, collision shapes that overlap at rest with no SRDF) plays
    what it played before, with warnings in the log and the result; a robot whose model is
    trusted for a check sets it to refuse. Collision keeps 2 mm for the servos' backlash.
    """

    collision: str = 'warn'
    collision_margin: float = 0.002
    balance: str = 'warn'
    balance_margin: float = 0.0
    #: radius of a foot's contact disc [m]
    foot_radius: float = 0.02
    #: a leg supports, when a motion does not say, if its foot is within this of the lowest [m]
    #: (the physics' planned stance; the checks find the feet on the floor from contact)
    support_height: float = 0.01
    #: the body's rotation about its support's edge that is a fall [rad]
    tilt: float = 0.5
    load: str = 'warn'
    #: how long a servo may stay above its rated torque [s] (HerkuleX overload detection)
    overload_time: float = 1.68
    #: rated torque as a fraction of the stall torque where the servo config gives none
    rated_fraction: float = 0.5
    #: a servo is at stall while it must give this share of its stall torque [-]
    stall_share: float = 0.98
    #: the floor's friction against a hoof [-] (a dragged hoof slips past it)
    friction: float = 0.8
    sample_rate: float = 100.0
    srdf: str = ''
    servos: str = ''
    #: a folder of ``<link>.STL`` collision meshes that replace the links' URDF shapes
    meshes: str = ''
    allowed: List[Tuple[str, str]] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, section: Optional[Mapping[str, Any]],
                     base_dir: Union[str, Path] = '.') -> 'CheckSettings':
        """
        Read a robot description's ``checks:`` section; relative paths are from ``base_dir``.

        :raises ModelError: naming the key and what it accepts.
        """
        settings = cls()
        if not section:
            return settings
        if not isinstance(section, Mapping):
            raise ModelError('checks: expected a mapping {collision, balance, load, ...}')
        known = {'collision': ('margin', 'mode', 'allowed', 'meshes'),
                 'balance': ('margin', 'mode', 'foot_radius', 'support_height', 'tilt'),
                 'load': ('mode', 'overload_time', 'rated_fraction', 'servos', 'stall_share',
                          'friction')}
        for key, value in section.items():
            if key in ('srdf', 'sample_rate'):
                continue
            if key not in known:
                raise ModelError(f'checks.{key}: unknown (known: srdf, sample_rate, '
                                 f'{", ".join(known)})')
            if not isinstance(value, Mapping):
                raise ModelError(f'checks.{key}: expected a mapping with {", ".join(known[key])}')
            for name, given in value.items():
                if name not in known[key]:
                    raise ModelError(f'checks.{key}.{name}: unknown (known: '
                                     f'{", ".join(known[key])})')
                target = key if name == 'mode' else (
                    f'{key}_{name}' if name == 'margin' else name)
                if name == 'mode' and given is False:
                    given = 'off'   # YAML 1.1 reads a bare off as false
                if name == 'mode' and given not in MODES:
                    raise ModelError(f'checks.{key}.mode: {given!r} is not one of '
                                     f'{", ".join(MODES)}')
                if name == 'allowed':
                    if not isinstance(given, list) or not all(
                            isinstance(p, list) and len(p) == 2 for p in given):
                        raise ModelError(f'checks.{key}.allowed: expected a list of '
                                         '[link, link] pairs')
                    given = [tuple(p) for p in given]
                elif name in ('servos', 'meshes'):
                    given = str(Path(base_dir) / given) if given else ''
                elif name != 'mode':
                    given = _non_negative(f'checks.{key}.{name}', given)
                setattr(settings, target, given)
        if 'srdf' in section:
            settings.srdf = str(Path(base_dir) / section['srdf']) if section['srdf'] else ''
        if 'sample_rate' in section:
            settings.sample_rate = _non_negative('checks.sample_rate', section['sample_rate'])
            if settings.sample_rate == 0:
                raise ModelError('checks.sample_rate must be > 0 [Hz]')
        return settings


def _non_negative(key: str, value: object) -> float:
    return config_number(key, value, ModelError)
