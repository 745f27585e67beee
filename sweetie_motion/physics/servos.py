r"""
Each servo as a MuJoCo position actuator, from the package's servo model (pure).

The servo model (:mod:`sweetie_motion.servo.servo_model`) balances the motor torque
:math:`k_p U (d - q)`, saturated at the servo's stall torque, against friction and the link's
effort :math:`\alpha_3 \tau`. Solved for the effort on the link:

.. math::

    \tau = \frac{\mathrm{sat}(k_p U (d - q))}{\alpha_3} - \frac{\alpha_0}{\alpha_3} \dot q
           - \frac{\alpha_1 + \alpha_2}{\alpha_3} s(\dot q)

which MuJoCo has as a position actuator (gain :math:`k_p U / \alpha_3`, force limited to the
stall torque over :math:`\alpha_3`), joint damping :math:`\alpha_0 / \alpha_3` and joint
friction loss :math:`(\alpha_1 + \alpha_2) / \alpha_3`: MuJoCo's dry friction is one level,
so the model's static friction (Coulomb plus Stribeck at rest) holds a joint still and slows
a moving one by up to :math:`\alpha_2` more than the model (0.03 of the DRS-0101's 1.18 N*m).
The stall torque is the servo type's at 7.4 V scaled by the supply. A joint no servo config
names (an arm's) is a servo whose stall torque is its URDF effort, stiff enough to reach it
0.1 rad off its set-point and damped so that the stall torque drives it at its velocity limit
(the rule the servo types' default models follow).
"""

from dataclasses import dataclass
import math
import os
from typing import Dict, Iterable, List, Mapping, Optional, TYPE_CHECKING

from sweetie_motion.model.physics_settings import PhysicsConfigError, PhysicsSettings
from sweetie_motion.servo.servo_model import NOMINAL_VOLTAGE, ServoModelParams

if TYPE_CHECKING:
    from sweetie_motion.servo.herkulex import ServoType

#: the position error at which a joint without a servo model reaches its effort [rad]
STALL_ERROR = 0.1


@dataclass(frozen=True)
class ServoActuator:
    """
    A joint's servo as the physics has it; torques at the joint.

    :param joint: the joint it drives.
    :param stiffness: the position gain [N*m/rad].
    :param stall: the largest torque it delivers (its stall torque) [N*m].
    :param damping: viscous friction [N*m*s/rad].
    :param friction: dry friction [N*m].
    :param source: where the figures come from (for ``describe``).
    """

    joint: str
    stiffness: float
    stall: float
    damping: float
    friction: float
    source: str

    @classmethod
    def from_model(cls, joint: str, params: ServoModelParams, stall_torque: float,
                   voltage: float, source: str) -> 'ServoActuator':
        """
        Return the actuator of a servo model.

        :param stall_torque: the servo type's stall torque at 7.4 V [N*m].
        :param voltage: the supply [V].
        :raises PhysicsConfigError: a model whose kp or effort scale is not positive.
        """
        a0, a1, a2, a3 = params.alpha
        if params.kp <= 0 or a3 <= 0:
            raise PhysicsConfigError(f'servo model of {joint}', f'kp = {params.kp} and '
                                     f'alpha[3] = {a3} must be > 0 to simulate it')
        scale = voltage / NOMINAL_VOLTAGE
        return cls(joint, params.stiffness(voltage) / a3, stall_torque * scale / a3,
                   max(a0, 0.0) / a3, max(a1 + a2, 0.0) / a3, source)

    @classmethod
    def from_effort(cls, joint: str, effort: float, velocity: float) -> 'ServoActuator':
        """Return the actuator of a joint known only by its URDF effort [N*m] and velocity."""
        speed = velocity if math.isfinite(velocity) and velocity > 0 else 1.0
        return cls(joint, effort / STALL_ERROR, effort, effort / speed, 0.0, 'URDF effort')


def servo_actuators(joints: Iterable[str], efforts: Mapping[str, float],
                    velocities: Mapping[str, float], settings: PhysicsSettings,
                    servos_file: str = '') -> List[ServoActuator]:
    """
    Return the actuators of the driven joints, from the servo config and the models file.

    :param joints: the driven joints (virtual ones left out).
    :param efforts: joint -> URDF effort [N*m] (for joints without a servo).
    :param velocities: joint -> velocity limit [rad/s].
    :param servos_file: the servo config ('' = ``settings.servos``).
    :raises PhysicsConfigError: a file that cannot be read, a bad model, a joint with no
        servo and no effort.
    """
    servos_file = settings.servos or servos_file
    kinds = _servo_types(servos_file) if servos_file else {}
    models = _models_file(settings.servo_models, servos_file)
    actuators = []
    for joint in joints:
        kind = kinds.get(joint)
        if kind is not None:
            from sweetie_motion.servo.servo_model import default_params
            params = models.get(joint)
            source = 'servo models file' if params is not None else f'{kind.name} defaults'
            params = params or default_params(kind.name, joint)
            actuators.append(ServoActuator.from_model(joint, params, kind.stall_torque,
                                                      settings.voltage, source))
            continue
        effort = efforts.get(joint, 0.0)
        if not (math.isfinite(effort) and effort > 0):
            raise PhysicsConfigError('physics.servos', f'joint {joint} has no servo in '
                                     f'{servos_file or "(no servo config)"} and no URDF effort')
        actuators.append(ServoActuator.from_effort(joint, effort, velocities.get(joint, 1.0)))
    return actuators


def _servo_types(servos_file: str) -> Dict[str, 'ServoType']:
    from sweetie_motion.servo.driver.config import load_bus_config_file
    from sweetie_motion.errors import SweetieMotionError
    try:
        config = load_bus_config_file(servos_file)
    except SweetieMotionError as error:
        raise PhysicsConfigError('physics.servos', str(error)) from None
    return {servo.joint: servo.kind for bus in config.buses for servo in bus.servos}


def _models_file(path: str, servos_file: str) -> Dict[str, ServoModelParams]:
    if not path:
        return {}
    from sweetie_motion.errors import SweetieMotionError
    from sweetie_motion.servo.model_files import load_servo_models
    if not os.path.exists(os.path.expanduser(path)):
        raise PhysicsConfigError('physics.servo_models', f'{path} does not exist (run '
                                 '`sweetie-motion servo identify`, or leave it empty for the '
                                 "servo types' defaults)")
    try:
        models = load_servo_models(path, servos_file)
    except SweetieMotionError as error:
        raise PhysicsConfigError('physics.servo_models', str(error)) from None
    return {model.name: model for model in models}


def describe_actuators(actuators: List[ServoActuator], limit: Optional[int] = None) -> str:
    """Return one line per kind of actuator: stiffness, stall, damping, friction, source."""
    kinds: Dict[tuple, List[str]] = {}
    for a in actuators:
        key = (round(a.stiffness, 3), round(a.stall, 3), round(a.damping, 4),
               round(a.friction, 4), a.source)
        kinds.setdefault(key, []).append(a.joint)
    lines = []
    for (stiffness, stall, damping, friction, source), joints in list(kinds.items())[:limit]:
        lines.append(f'{len(joints)} servo(s) ({source}): {stiffness:g} N*m/rad, stall '
                     f'{stall:g} N*m, damping {damping:g} N*m*s/rad, friction {friction:g} N*m')
    return '\n'.join(lines)
