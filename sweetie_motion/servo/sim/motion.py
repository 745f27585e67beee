"""
How a simulated servo moves: its trajectory generator and its shaft, pure.

:class:`TrajectoryProfile` is the servo's trajectory generator: a trapezoid from the desired
position it had to the goal of a JOG in the JOG's playtime. :class:`Mechanics` is the shaft:
the servo model (:func:`sweetie_motion.servo.servo_model.advance`: the motor torque
k_p U (d - q) saturated at the stall torque, against friction, the effort scale and an external
torque) in position mode with the torque on; free or braking (a shorted motor) with it off;
the JOG value as PWM in speed mode; blocked when jammed; placed by a hand when the torque is off.

With a ``lag`` the position loop follows a first-order lag of the generator's desired position
instead of the desired position itself: a plant the identification's model does not contain
(it looks like viscous friction k_p U lag to it).
"""

from dataclasses import dataclass
import math
from typing import Optional, Tuple

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.servo_model import advance as model_advance
from sweetie_motion.servo.servo_model import ServoModelParams

#: Brake mode: the shorted motor adds this much viscous friction [N*m*s/rad].
BRAKE_DAMPING = 5.0


@dataclass
class TrajectoryProfile:
    """The trajectory generator: a trapezoid from ``start`` to ``goal`` [rad]."""

    t0: float
    start: float
    goal: float
    duration: float = 0.0
    ramp: float = 0.0

    def at(self, t: float) -> Tuple[float, float]:
        """Return (desired position [rad], desired velocity [rad/s]) at time t."""
        tau = t - self.t0
        distance = self.goal - self.start
        total = self.duration
        if tau >= total or total <= 0.0:
            return self.goal, 0.0
        if tau <= 0.0:
            return self.start, 0.0
        ramp = self.ramp
        peak = distance / (total - ramp)
        if ramp > 0.0 and tau < ramp:
            return self.start + 0.5 * peak / ramp * tau * tau, peak * tau / ramp
        if tau <= total - ramp:
            return self.start + peak * (0.5 * ramp + tau - ramp), peak
        rest = total - tau
        return self.goal - 0.5 * peak / ramp * rest * rest, peak * rest / ramp

    def active(self, t: float) -> bool:
        """Return whether the generator still moves at t."""
        return t - self.t0 < self.duration


class Mechanics:
    """
    The shaft of one servo (see the module docstring).

    :param kind: the servo type (its angle range and count span).
    :param params: the servo model the shaft moves by.
    :param position: initial servo angle [rad].
    :param lag: time constant of the lag of the position loop [s] (0: none).
    """

    def __init__(self, kind: hx.ServoType, params: ServoModelParams, position: float,
                 lag: float = 0.0) -> None:
        self.kind = kind
        self.params = params
        self.lag = float(lag)
        self.q = float(position)
        self.v = 0.0
        self.motor = 0.0
        self.external_torque = 0.0
        self.jammed = False
        #: where a hand puts the shaft at the next step (torque off or braking only)
        self.hand: Optional[float] = None
        #: what the position loop follows: the desired position, lagged
        self.setpoint = self.q

    def step(self, dt: float, mode: int, speed_mode: bool, desired: float,
             speed_command: int, limit: float, voltage: float) -> None:
        """
        Move the shaft by one physics step.

        :param dt: step [s].
        :param mode: the torque-control register (0x60 on, 0x40 brake, 0 free).
        :param speed_mode: the servo is in speed (infinite turn) mode.
        :param desired: the generator's desired position at the end of the step [rad].
        :param speed_command: the JOG value of speed mode (PWM, -1023..1023).
        :param limit: the motor's torque limit [N*m].
        :param voltage: the supply [V].
        """
        start = self.q
        if self.hand is not None and mode != hx.TORQUE_ON:
            low, high = self.kind.angle_range
            self.q = min(max(self.hand, low), high)
            self.hand = None
            self.v = (self.q - start) / dt
            self.motor = 0.0
            self.setpoint = self.q
            return
        self.hand = None
        params = self.params
        if mode == hx.TORQUE_ON and speed_mode:
            motor = limit * max(-1023, min(1023, speed_command)) / 1023
            q, v, _ = model_advance(params, self.q, 0.0, dt, voltage,
                                    self.external_torque + motor / max(params.alpha[3], 1e-9),
                                    drive=False)
            self.motor = motor
            if self.jammed:
                q, v = self.q, 0.0
            span = (self.kind.max_count + 1) * self.kind.rad_per_count
            low = self.kind.angle_range[0]
            self.q = (q - low) % span + low
            self.v = v
            self.setpoint = self.q
            return
        if mode == hx.TORQUE_ON:
            if self.lag > 0.0:
                self.setpoint += (desired - self.setpoint) * (1.0 - math.exp(-dt / self.lag))
            else:
                self.setpoint = desired
            q, v, motor = model_advance(params, self.q, self.setpoint, dt, voltage,
                                        self.external_torque, limit)
        else:
            q, v, motor = model_advance(params, self.q, desired, dt, voltage,
                                        self.external_torque, limit, drive=False,
                                        extra_damping=BRAKE_DAMPING if mode else 0.0)
        if self.jammed:
            stiffness = params.stiffness(voltage)
            q, v = self.q, 0.0
            motor = max(-limit, min(limit, stiffness * (self.setpoint - q))) \
                if mode == hx.TORQUE_ON else 0.0
        low, high = self.kind.angle_range
        if not low <= q <= high:
            q, v = min(max(q, low), high), 0.0
        self.q, self.v, self.motor = q, v, motor
        if mode != hx.TORQUE_ON:
            self.setpoint = q
