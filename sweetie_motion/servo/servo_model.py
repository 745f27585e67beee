r"""
The 7-parameter servo model of the original robot (seed 003; ServoModel.msg), pure.

A HerkuleX servo is a position servo: its firmware turns the difference between the desired
position of its trajectory generator and the measured position into motor torque. In the
model that torque is a stiffness proportional to the supply voltage, and it balances the
friction and the load (no inertia: the links are light and the gears reduce it, the original
robot identified it this way):

.. math::

    k_p U (d - q) = \alpha_0 \dot q + \alpha_1 s(\dot q)
                    + \alpha_2 s(\dot q) e^{-|\dot q| / q_s} + \alpha_3 \tau

=====================  ==========================================================================
symbol                 meaning [unit]
=====================  ==========================================================================
:math:`q`              joint position [rad]
:math:`\dot q`         joint velocity [rad/s]
:math:`d`              the servo's desired position (its trajectory generator's set-point,
                       RAM 70) in joint coordinates [rad]
:math:`U`              supply voltage [V]
:math:`\tau`           effort the servo delivers to the link (the joint effort of a JointState,
                       e.g. from inverse dynamics) [N*m]; an external torque
                       :math:`\tau_{ext}` on a servo at rest needs :math:`\tau = -\tau_{ext}`
:math:`s(v)`           sign of v, 0 inside a dead zone :math:`|v| \le` ``sign_dead_zone``
``kp``                 position stiffness per volt [N*m/(V*rad)]
``kgear``              gear ratio: servo angle = kgear * joint angle [-]
``alpha[0]``           viscous friction (and back-EMF) [N*m*s/rad]
``alpha[1]``           Coulomb friction [N*m]
``alpha[2]``           extra static (Stribeck) friction near rest [N*m]
``alpha[3]``           effort scale: motor torque per N*m of link effort [-] (1 = ideal)
``qs``                 Stribeck velocity: where the static friction fades [rad/s]
=====================  ==========================================================================

That is 7 parameters: kp, kgear, four alpha, qs. The alpha enter linearly, so they can be
identified online by recursive least squares from the regressor
:math:`\phi = (\dot q, s, s e^{-|\dot q|/q_s}, \tau)` and the target
:math:`y = k_p U (d - q)` (:mod:`sweetie_motion.servo.ident`).

Uses: the prediction of the position a servo settles at while it follows ``d``
(:meth:`ServoModelParams.predict_position`), its inverse, the desired position that makes it
reach ``q`` (:meth:`ServoModelParams.desired_for`), the prediction error as torque
(:meth:`ServoModelParams.torque_error`), and the dynamics of the bus simulator
(:func:`advance`): the balance above solved for the velocity, with the motor torque
:math:`k_p U (d - q)` saturated at the servo's stall torque (scaled by U / 7.4 V).
"""

from dataclasses import dataclass, field, replace
import math
from typing import Any, Dict, Iterable, Mapping, Tuple

import numpy as np

from sweetie_motion.errors import SweetieMotionError

#: Nominal supply of the servo data sheets [V].
NOMINAL_VOLTAGE = 7.4


class ServoModelError(SweetieMotionError):
    """
    Servo model parameters that cannot be used.

    :param name: the servo (model name).
    :param field_name: the offending parameter.
    :param value: its value.
    """

    def __init__(self, name: str, field_name: str, value: object, reason: str) -> None:
        self.name = name
        self.field = field_name
        self.value = value
        super().__init__(f'servo model {name!r}: {field_name} = {value!r} {reason}')


def sign(value: float, dead_zone: float = 0.0) -> float:
    """
    Return the sign of ``value`` with a dead zone.

    :param value: the value (a velocity [rad/s]).
    :param dead_zone: |value| up to this is 0.
    :return: -1.0, 0.0 or 1.0.
    """
    if value > dead_zone:
        return 1.0
    if value < -dead_zone:
        return -1.0
    return 0.0


@dataclass(frozen=True)
class ServoModelParams:
    """
    The 7 parameters of one servo (the fields of ServoModel.msg); units in the module docstring.

    :param name: the joint (or servo) the model belongs to.
    :param kp: stiffness per volt [N*m/(V*rad)], > 0 to predict, 0 = no model.
    :param kgear: servo angle per joint angle [-], not 0.
    :param alpha: viscous [N*m*s/rad], Coulomb [N*m], static [N*m], effort scale [-].
    :param qs: Stribeck velocity [rad/s], > 0.
    """

    name: str = ''
    kp: float = 1.0
    kgear: float = 1.0
    alpha: Tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    qs: float = 0.3
    sign_dead_zone: float = field(default=0.0, compare=False)

    def __post_init__(self) -> None:
        alpha = tuple(float(a) for a in self.alpha)
        if len(alpha) != 4:
            raise ServoModelError(self.name, 'alpha', self.alpha, 'must have 4 values')
        object.__setattr__(self, 'alpha', alpha)
        for key in ('kp', 'kgear', 'qs', 'sign_dead_zone'):
            value = getattr(self, key)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ServoModelError(self.name, key, value, 'is not a number') from None
            object.__setattr__(self, key, value)
        values = (self.kp, self.kgear, self.qs, self.sign_dead_zone) + alpha
        if not all(math.isfinite(v) for v in values):
            raise ServoModelError(self.name, 'parameters', values, 'must be finite')
        if self.kp < 0:
            raise ServoModelError(self.name, 'kp', self.kp, 'must be >= 0')
        if self.kgear == 0:
            raise ServoModelError(self.name, 'kgear', self.kgear, 'must not be 0')
        if self.qs <= 0:
            raise ServoModelError(self.name, 'qs', self.qs, 'must be > 0')
        if self.sign_dead_zone < 0:
            raise ServoModelError(self.name, 'sign_dead_zone', self.sign_dead_zone,
                                  'must be >= 0')

    # --- conversions ---------------------------------------------------------------------------

    def to_fields(self) -> Dict[str, Any]:
        """Return the ServoModel message fields (name, kp, kgear, alpha[4], qs)."""
        return {'name': self.name, 'kp': self.kp, 'kgear': self.kgear,
                'alpha': list(self.alpha), 'qs': self.qs}

    @classmethod
    def from_fields(cls, fields: object, name: str = '') -> 'ServoModelParams':
        """
        Build from a mapping or any object with the ServoModel fields (a message).

        Missing fields take the defaults; ``name`` fills a missing name.

        :raises ServoModelError: a field has a bad value or an unknown key is given.
        """
        if isinstance(fields, Mapping):
            values = dict(fields)
            unknown = set(values) - {'name', 'kp', 'kgear', 'alpha', 'qs', 'sign_dead_zone'}
            if unknown:
                raise ServoModelError(values.get('name', name), ', '.join(sorted(unknown)),
                                      None, 'is not a ServoModel field '
                                      '(name, kp, kgear, alpha, qs)')
        else:
            values = {key: getattr(fields, key) for key in ('name', 'kp', 'kgear', 'alpha', 'qs')
                      if hasattr(fields, key)}
        if not values.get('name'):
            values['name'] = name
        if 'alpha' in values:
            try:
                values['alpha'] = tuple(values['alpha'])
            except TypeError:
                raise ServoModelError(values['name'], 'alpha', values['alpha'],
                                      'must be a list of 4 numbers') from None
        return cls(**values)

    def with_alpha(self, alpha: Iterable[float]) -> 'ServoModelParams':
        """
        Return a copy with other alpha.

        :raises ServoModelError: not 4 values.
        """
        values = tuple(float(a) for a in alpha)
        if len(values) != 4:
            raise ServoModelError(self.name, 'alpha', values, 'must have 4 values')
        return replace(self, alpha=(values[0], values[1], values[2], values[3]))

    def renamed(self, name: str) -> 'ServoModelParams':
        """Return a copy with another name."""
        return replace(self, name=name)

    # --- the model -----------------------------------------------------------------------------

    def stiffness(self, voltage: float) -> float:
        """Return kp * U [N*m/rad] at supply ``voltage`` [V]."""
        return self.kp * voltage

    def friction(self, velocity: float) -> float:
        """
        Return the friction torque at a velocity.

        :param velocity: joint velocity [rad/s].
        :return: alpha0 v + alpha1 s(v) + alpha2 s(v) exp(-|v|/qs) [N*m].
        """
        s = sign(velocity, self.sign_dead_zone)
        a0, a1, a2, _ = self.alpha
        return a0 * velocity + s * (a1 + a2 * math.exp(-abs(velocity) / self.qs))

    def regressor(self, velocity: float, effort: float) -> np.ndarray:
        """
        Return the regressor phi of the alpha: phi . alpha = kp U (d - q).

        :param velocity: joint velocity [rad/s].
        :param effort: link effort [N*m].
        :return: shape (4,).
        """
        s = sign(velocity, self.sign_dead_zone)
        return np.array((velocity, s, s * math.exp(-abs(velocity) / self.qs), effort))

    def _need_kp(self, what: str) -> None:
        if self.kp <= 0:
            raise ServoModelError(self.name, 'kp', self.kp, f'must be > 0 to {what}')

    def predict_position(self, desired: float, velocity: float, effort: float,
                         voltage: float) -> float:
        """
        Return the position the servo holds while it follows a desired position.

        :param desired: the servo's desired position [rad].
        :param velocity: joint velocity [rad/s].
        :param effort: link effort [N*m].
        :param voltage: supply [V].
        :return: q = d - (friction + alpha3 effort) / (kp U) [rad].
        :raises ServoModelError: kp is 0 (no model).
        """
        self._need_kp('predict')
        return desired - (self.friction(velocity) + self.alpha[3] * effort) \
            / self.stiffness(voltage)

    def desired_for(self, position: float, velocity: float, effort: float,
                    voltage: float) -> float:
        """
        Return the desired position that makes the servo reach ``position`` (the inverse).

        :param position: wanted joint position [rad].
        :param velocity: wanted joint velocity [rad/s].
        :param effort: expected link effort [N*m].
        :param voltage: supply [V].
        :return: d [rad], joint coordinates (times kgear for the servo's angle).
        :raises ServoModelError: kp is 0 (no model).
        """
        self._need_kp('invert')
        return position + (self.friction(velocity) + self.alpha[3] * effort) \
            / self.stiffness(voltage)

    def servo_angle(self, joint_angle: float) -> float:
        """Return the servo angle of a joint angle (times kgear) [rad]."""
        return self.kgear * joint_angle

    def servo_effort(self, desired: float, position: float, velocity: float,
                     voltage: float) -> float:
        """
        Return the link effort that explains where the servo is (the model solved for tau).

        :param desired: desired position [rad].
        :param position: measured position [rad].
        :param velocity: measured velocity [rad/s].
        :param voltage: supply [V].
        :return: (kp U (d - q) - friction) / alpha3 [N*m].
        :raises ServoModelError: alpha3 is 0.
        """
        if self.alpha[3] == 0:
            raise ServoModelError(self.name, 'alpha[3]', 0.0, 'must not be 0 to explain '
                                  'a position error as torque')
        return (self.stiffness(voltage) * (desired - position) - self.friction(velocity)) \
            / self.alpha[3]

    def torque_error(self, desired: float, position: float, velocity: float,
                     effort: float, voltage: float) -> float:
        """
        Return the prediction error as torque: the effort the model needs minus the expected.

        Zero when the servo is where the model predicts; -tau_ext for an unexpected external
        torque tau_ext (positive in the joint's positive direction) on a servo at rest.

        :param desired: desired position [rad].
        :param position: measured position [rad].
        :param velocity: measured velocity [rad/s].
        :param effort: the expected link effort (the reference's) [N*m].
        :param voltage: supply [V].
        :return: [N*m].
        """
        return self.servo_effort(desired, position, velocity, voltage) - effort

    def position_error(self, desired: float, position: float, velocity: float,
                       effort: float, voltage: float) -> float:
        """Return the measured minus the predicted position [rad]."""
        return position - self.predict_position(desired, velocity, effort, voltage)


def default_params(servo_type: str, name: str = '') -> ServoModelParams:
    """
    Return plausible parameters of a servo type (not measured: a starting point).

    Chosen so that the stall torque is reached at about 0.1 rad of position error and the
    no-load speed of the data sheet is where the friction eats the stall torque.

    :param servo_type: 'DRS-0101' or 'DRS-0201'.
    :param name: the model's name.
    :raises ServoModelError: unknown type.
    """
    table = {
        'DRS-0101': ServoModelParams(name, kp=1.35, alpha=(0.18, 0.04, 0.03, 1.0), qs=0.3),
        'DRS-0201': ServoModelParams(name, kp=2.7, alpha=(0.31, 0.06, 0.04, 1.0), qs=0.3),
    }
    try:
        return table[str(servo_type).upper()]
    except KeyError:
        raise ServoModelError(name, 'servo type', servo_type,
                              f'is unknown (known: {", ".join(table)})') from None


def _slip_speed(excess: float, damping: float, a1: float, a2: float, qs: float) -> float:
    """Solve damping u + a1 + a2 exp(-u/qs) = excess + a1 + a2 for u > 0 (excess > 0)."""
    target = excess + a1 + a2
    u = (target - a1) / damping   # ignoring the Stribeck term: an upper bound of the root
    if a2 == 0.0:
        return u
    for _ in range(30):
        e = math.exp(-u / qs)
        g = damping * u + a1 + a2 * e - target
        slope = damping - a2 * e / qs
        if slope <= 0.0:
            break
        step = g / slope
        u -= step
        if abs(step) < 1e-12 * (1.0 + u):
            if u > 0.0:
                return u
            break
    # non-monotonic friction (strong Stribeck, weak damping): bisection on (0, upper bound]
    low, high = 0.0, (target - a1) / damping
    for _ in range(60):
        mid = 0.5 * (low + high)
        if damping * mid + a1 + a2 * math.exp(-mid / qs) < target:
            low = mid
        else:
            high = mid
    return high


def advance(params: ServoModelParams, position: float, desired: float, dt: float,
            voltage: float, external_torque: float = 0.0, torque_limit: float = math.inf,
            drive: bool = True, extra_damping: float = 0.0) -> Tuple[float, float, float]:
    """
    Advance a servo by one implicit (backward Euler) step of the model.

    With ``drive`` the motor torque is kp U (d - q) at the end of the step, saturated at
    +-``torque_limit``; without it (torque off or brake) only the load moves the joint. The
    joint sticks while the load is within the static friction alpha1 + alpha2.

    :param params: the servo model.
    :param position: joint position at the start [rad].
    :param desired: desired position at the end of the step [rad].
    :param dt: step [s], > 0.
    :param voltage: supply [V].
    :param external_torque: torque of the environment on the joint [N*m] (the servo must
        deliver the opposite).
    :param torque_limit: largest motor torque [N*m].
    :param drive: the motor drives (torque on).
    :param extra_damping: added viscous friction (brake mode) [N*m*s/rad].
    :return: (position [rad], velocity [rad/s], motor torque [N*m]) at the end of the step.
    """
    a0, a1, a2, a3 = params.alpha
    load = a3 * external_torque
    static = a1 + a2
    damping = a0 + extra_damping
    stiffness = params.stiffness(voltage) if drive else 0.0
    if drive and stiffness > 0.0:
        # f(v) + k dt v = k (d - q0) + a3 tau_ext, with the motor torque k (d - q0 - v dt)
        drive_torque = stiffness * (desired - position) + load
        v = _solve(drive_torque, damping + stiffness * dt, a1, a2, static, params.qs)
        motor = stiffness * (desired - position - v * dt)
        if abs(motor) <= torque_limit:
            return position + v * dt, v, motor
        motor = math.copysign(torque_limit, motor)
        drive_torque = motor + load
    else:
        motor = 0.0
        drive_torque = load
    v = _solve(drive_torque, damping, a1, a2, static, params.qs)
    return position + v * dt, v, motor


def _solve(torque: float, damping: float, a1: float, a2: float, static: float,
           qs: float) -> float:
    """Return the velocity at which friction f(v) plus damping balances ``torque``."""
    excess = abs(torque) - static
    if excess <= 0.0:
        return 0.0
    if damping <= 0.0:
        damping = 1e-6
    return math.copysign(_slip_speed(excess, damping, a1, a2, qs), torque)
