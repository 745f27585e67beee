"""
The ``physics:`` section of a robot description: how the robot is put on a floor (pure).

Every key has a default, so a description without the section simulates too. Read with the
same helpers as the ``checks:`` section (:func:`~sweetie_motion.paths.check_keys`,
:func:`~sweetie_motion.paths.config_number`): an unknown key or a bad value is one line naming
the key. Importing this module does not import MuJoCo.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Union

from sweetie_motion.errors import ModelError
from sweetie_motion.paths import check_keys, config_number

#: MuJoCo's integrators by their MJCF names
INTEGRATORS = ('Euler', 'implicit', 'implicitfast', 'RK4')
#: friction cones
CONES = ('pyramidal', 'elliptic')
#: how the robot's root is held: on a free joint, fixed to the world, or free when a chain has
#: a ``contact`` link (a robot that stands on the floor) and fixed otherwise
BASES = ('auto', 'free', 'fixed')


class PhysicsConfigError(ModelError):
    """
    A ``physics:`` setting that cannot be used.

    :param key: the setting (e.g. 'physics.fall.tilt').
    :param reason: what is wrong and what it accepts.
    """

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f'{key}: {reason}')


def _error(message: str) -> PhysicsConfigError:
    key, _, reason = message.partition(': ')
    return PhysicsConfigError(key, reason)


@dataclass(frozen=True)
class PhysicsSettings:
    """
    What a robot description's ``physics:`` section asks for; units in brackets.

    Defaults, and why: a 2 ms step keeps MuJoCo's default contact (a 20 ms time constant)
    resolved (at 4 ms the pony falls over in motions it stands through at 1 and 2 ms);
    ``implicitfast`` takes the servos' damping implicitly (a light link on a stiff, damped
    servo is unstable otherwise); an elliptic friction cone with ``impratio`` 10, as MuJoCo
    advises for feet that must not creep (with its defaults, a pyramid and 1, a loaded hoof
    crept 10 cm in 10 s at a quarter of its friction); floor friction 0.8 is rubber-like hooves
    on a wooden floor.
    """

    #: the physics step [s]
    timestep: float = 0.002
    integrator: str = 'implicitfast'
    #: sliding friction of the links on the floor [-]
    floor_friction: float = 0.8
    #: sliding friction between two links [-]
    link_friction: float = 0.5
    #: the constraint solver's iterations per step, its tolerance, friction cone and the
    #: ratio of frictional to normal impedance (high: feet stick instead of creeping)
    iterations: int = 50
    tolerance: float = 1e-8
    cone: str = 'elliptic'
    impratio: float = 10.0
    base: str = 'auto'
    #: the servo config: each joint's servo type (its stall torque); '' = the ``checks: load:
    #: servos`` file, or none: then each joint's URDF effort is its stall torque
    servos: str = ''
    #: a servo models file (what ``servo identify`` saves); '' = each type's defaults
    servo_models: str = ''
    #: the servos' supply [V]: the stiffness is kp * U, the stall torque scales with U / 7.4 V
    voltage: float = 7.4
    #: the rotor's inertia seen at each joint through the gears [kg*m^2]
    armature: float = 0.0
    #: a folder of ``<link>.STL`` collision meshes that replace the links' URDF collision
    #: shapes ('' = the URDF's shapes)
    meshes: str = ''
    #: the robot stands still in its start pose this long before a motion starts [s]
    settle_time: float = 1.0
    #: a motion is simulated this long after its end [s]
    after_time: float = 1.5
    #: a fall: the body tilts this much more than the motion plans [rad] ...
    fall_tilt: float = 0.5
    #: ... or its base is this much lower than the motion plans [m] ...
    fall_height: float = 0.06
    #: ... for at least this long [s]
    fall_time: float = 0.1
    #: a servo is at stall while it delivers at least this share of its stall torque [-]
    stall_share: float = 0.98
    #: what the physics' verdict on a stored motion does when the trajectory controller plays
    #: it by name (a fall, a servo held at stall for its overload time): off, warn or refuse
    judge: str = 'off'

    @classmethod
    def from_mapping(cls, section: Optional[Mapping[str, Any]],
                     base_dir: Union[str, Path] = '.') -> 'PhysicsSettings':
        """
        Read a robot description's ``physics:`` section; relative paths are from ``base_dir``.

        :raises PhysicsConfigError: naming the key and what it accepts.
        """
        if not section:
            return cls()
        if not isinstance(section, Mapping):
            raise PhysicsConfigError('physics', 'expected a mapping of settings')
        check_keys('physics', section, _READERS.keys() | {'fall', 'solver', 'floor'},
                   PhysicsConfigError)
        values: Dict[str, Any] = {}
        for key, read in _READERS.items():
            if key in section:
                values[key] = read(f'physics.{key}', section[key], base_dir)
        for block, keys in _BLOCKS.items():
            given = section.get(block)
            if given is None:
                continue
            if not isinstance(given, Mapping):
                raise PhysicsConfigError(f'physics.{block}',
                                         f'expected a mapping with {", ".join(keys)}')
            check_keys(f'physics.{block}', given, keys, PhysicsConfigError)
            for key, field_name in keys.items():
                if key in given:
                    values[field_name] = _READERS_IN_BLOCKS[field_name](
                        f'physics.{block}.{key}', given[key], base_dir)
        return cls(**values)


def _positive(key: str, value: object, _: Union[str, Path]) -> float:
    return config_number(key, value, _error, above=True)


def _non_negative(key: str, value: object, _: Union[str, Path]) -> float:
    return config_number(key, value, _error)


def _share(key: str, value: object, _: Union[str, Path]) -> float:
    return config_number(key, value, _error, above=True, high=1.0)


def _count(key: str, value: object, _: Union[str, Path]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PhysicsConfigError(key, f'expected a whole number >= 1, got {value!r}')
    return value


def _choice(choices: tuple) -> Callable[[str, object, Union[str, Path]], str]:
    def read(key: str, value: object, _: Union[str, Path]) -> str:
        if value not in choices:
            raise PhysicsConfigError(key, f'{value!r} is not one of {", ".join(choices)}')
        return str(value)
    return read


def _path(key: str, value: object, base_dir: Union[str, Path]) -> str:
    if value in (None, ''):
        return ''
    if not isinstance(value, str):
        raise PhysicsConfigError(key, f'expected a file or folder name, got {value!r}')
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else Path(base_dir) / path)


#: top-level keys (each the field of the same name) -> reader
_READERS = {
    'timestep': _positive, 'integrator': _choice(INTEGRATORS), 'base': _choice(BASES),
    'servos': _path, 'servo_models': _path, 'voltage': _positive, 'armature': _non_negative,
    'meshes': _path, 'settle_time': _non_negative, 'after_time': _non_negative,
    'link_friction': _non_negative, 'stall_share': _share,
    'judge': _choice(('off', 'warn', 'refuse')),
}
#: nested blocks: key -> field
_BLOCKS = {
    'floor': {'friction': 'floor_friction'},
    'solver': {'iterations': 'iterations', 'tolerance': 'tolerance', 'cone': 'cone',
               'impratio': 'impratio'},
    'fall': {'tilt': 'fall_tilt', 'height': 'fall_height', 'time': 'fall_time'},
}
_READERS_IN_BLOCKS = {
    'floor_friction': _non_negative, 'iterations': _count, 'tolerance': _positive,
    'cone': _choice(CONES), 'impratio': _positive, 'fall_tilt': _positive,
    'fall_height': _positive, 'fall_time': _non_negative,
}
