"""
Smoothing / blending filters between a controller's raw reference and its output (R-SYS-4).

A filter is reset from the state the motion must continue from (the current reference of the
joints a controller takes over) and then updated once per cycle with the actual state and the
raw reference; it returns the smoothed reference. Switching trajectories or controllers thus
never makes the position jump.

Filters work on vectors of the joints they were created for. Parameters are per filter with
optional per-joint overrides. Filters are chosen by name from :data:`REGISTRY`:

- ``none``: passes the reference through (a reset still makes no jump: the first output is the
  raw reference, so use it only where the reference starts at the current pose);
- ``critically_damped``: second-order critically damped tracking of the reference position and
  velocity; a step of the reference is followed without overshoot, a ramp without lag;
- ``transient``: fades the offset present at reset out in ``transient_time`` (quintic blend,
  position, velocity and acceleration continuous), then follows the reference exactly;
- ``jerk_limited``: online jerk-limited following with ruckig, limits per joint (by default
  each joint's velocity, acceleration and jerk limits of the RobotModel): steps and catch-ups
  move within the limits, so the safety stage never has to step in.

Whatever the filter, the safety stage (:mod:`sweetie_motion.core.safety`) keeps the reference
within the joint limits; a filter that needs it all the time is reported.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
import math
from typing import Any, ClassVar, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Type

import numpy as np

from sweetie_motion.errors import SweetieMotionError


class SmoothingConfigError(SweetieMotionError):
    """A smoothing filter is unknown or its parameters are invalid."""


class SmoothingFilter(ABC):
    """
    The interface of smoothing filters (TransientJointStateInterface of the original).

    :param joints: names of the joints the filter works on (vectors are in this order).
    :param period: cycle period [s].
    :param params: filter parameters, see each filter's ``PARAMETERS``.
    :param overrides: joint name -> {parameter: value} overriding ``params`` for that joint.
    """

    #: the registry name; every registered filter class sets it (declared, not set, here).
    NAME: ClassVar[str]
    #: parameter name -> (default, description); every parameter is a float.
    PARAMETERS: Dict[str, Tuple[float, str]] = {}

    def __init__(self, joints: Sequence[str], period: float,
                 params: Optional[Mapping[str, float]] = None,
                 overrides: Optional[Mapping[str, Mapping[str, float]]] = None) -> None:
        if not period > 0:
            raise SmoothingConfigError(f'period must be > 0, got {period}')
        self.joints = list(joints)
        self.period = float(period)
        self.params = self._resolve(params or {}, overrides or {})
        self._position = np.zeros(len(self.joints))
        self._velocity = np.zeros(len(self.joints))

    def _resolve(self, params: Mapping[str, float],
                 overrides: Mapping[str, Mapping[str, float]]) -> Dict[str, np.ndarray]:
        unknown = set(params) - set(self.PARAMETERS)
        if unknown:
            raise SmoothingConfigError(
                f'{self.name}: unknown parameter(s) {", ".join(sorted(unknown))} '
                f'(known: {", ".join(self.PARAMETERS) or "none"})')
        values = {}
        for key, (default, _) in self.PARAMETERS.items():
            values[key] = np.full(len(self.joints), float(params.get(key, default)))
        index = {j: i for i, j in enumerate(self.joints)}
        for joint, joint_params in overrides.items():
            if joint not in index:
                continue  # overrides may name joints of chains this controller does not drive
            for key, value in joint_params.items():
                if key not in values:
                    raise SmoothingConfigError(
                        f'{self.name}: unknown parameter {key!r} in the override of {joint!r}')
                values[key][index[joint]] = float(value)
        for key, array in values.items():
            if not np.all(np.isfinite(array)):
                raise SmoothingConfigError(f'{self.name}: {key} must be finite')
        self.validate(values)
        return values

    @property
    def name(self) -> str:
        """Return the registry name of the filter."""
        return getattr(type(self), 'NAME', type(self).__name__)

    def validate(self, params: Dict[str, np.ndarray]) -> None:
        """Check resolved parameters; raise SmoothingConfigError with a clear message."""

    def reset(self, position: np.ndarray, velocity: np.ndarray) -> None:
        """
        Start from this state (no jump from here).

        :param position: current reference positions of the filter's joints.
        :param velocity: current reference velocities of the filter's joints.
        """
        self._position = np.array(position, dtype=float)
        self._velocity = np.array(velocity, dtype=float)

    @abstractmethod
    def update(self, actual_position: np.ndarray, actual_velocity: np.ndarray,
               ref_position: np.ndarray, ref_velocity: np.ndarray
               ) -> Tuple[np.ndarray, np.ndarray]:
        """
        Advance one period and return the smoothed (position, velocity).

        The returned arrays are the filter's own until its next update: read them, do not
        modify them (:attr:`state` returns copies).

        :param actual_position: measured positions of the filter's joints.
        :param actual_velocity: measured velocities.
        :param ref_position: raw reference positions for the end of this period.
        :param ref_velocity: raw reference velocities.
        """

    @property
    def state(self) -> Tuple[np.ndarray, np.ndarray]:
        """Return copies of the last output (position, velocity)."""
        return self._position.copy(), self._velocity.copy()

    def stopping_position(self) -> Optional[np.ndarray]:
        """
        Return where the output comes to rest if it is stopped now, within the filter's limits.

        None: the filter has no limits of its own to brake with (the caller brakes within the
        joint limits).
        """
        return None

    def _output(self) -> Tuple[np.ndarray, np.ndarray]:
        # each update assigns new arrays: no copy needed for the caller of update()
        return self._position, self._velocity


class PassThrough(SmoothingFilter):
    """No smoothing: the output is the reference."""

    NAME = 'none'

    def update(self, actual_position, actual_velocity, ref_position, ref_velocity):
        self._position = np.array(ref_position, dtype=float)
        self._velocity = np.array(ref_velocity, dtype=float)
        return self._output()


class CriticallyDamped(SmoothingFilter):
    """
    Second-order critically damped tracking: e'' + 2w e' + w^2 e = 0 for e = output - reference.

    ``transient_time`` is the 2 % settling time of a step (w = 5.834 / transient_time). The
    error dynamics are integrated exactly over each period (assuming constant reference velocity
    within the period), so the filter is stable for any period and a ramp is followed without
    lag; a reference step from rest is reached without overshoot.
    """

    NAME = 'critically_damped'
    PARAMETERS = {'transient_time': (0.3, '2 % settling time of a step [s]')}
    #: w * t of the 2 % settling time of a critically damped system: (1 + x) e^-x = 0.02
    SETTLING = 5.8335

    def validate(self, params):
        if np.any(params['transient_time'] <= 0):
            raise SmoothingConfigError('critically_damped: transient_time must be > 0')
        self._omega = self.SETTLING / params['transient_time']
        self._decay = np.exp(-self._omega * self.period)

    def update(self, actual_position, actual_velocity, ref_position, ref_velocity):
        omega, dt = self._omega, self.period
        # Error at the start of the period against the reference extrapolated back by one
        # period, then exact propagation: e(t) = (e0 + (e0' + w e0) t) exp(-w t).
        error = self._position - (ref_position - ref_velocity * dt)
        error_rate = self._velocity - ref_velocity
        c = error_rate + omega * error
        self._position = ref_position + (error + c * dt) * self._decay
        self._velocity = ref_velocity + (error_rate - omega * c * dt) * self._decay
        return self._output()


class Transient(SmoothingFilter):
    """
    Fade the offset present at reset out in ``transient_time``, then follow exactly.

    The offset (position and velocity) between the reset state and the reference of the first
    update is blended to zero by a quintic polynomial whose value, slope and curvature are
    continuous at both ends; after ``transient_time`` the output is the reference itself.
    """

    NAME = 'transient'
    PARAMETERS = {'transient_time': (0.3, 'time to fade the initial offset out [s]')}

    def validate(self, params):
        if np.any(params['transient_time'] <= 0):
            raise SmoothingConfigError('transient: transient_time must be > 0')

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: (position, velocity) offset of the reset state from the reference, at the start
        self._offset: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._elapsed = 0.0
        self._longest = float(self.params['transient_time'].max(initial=0.0)) + self.period

    def reset(self, position, velocity):
        super().reset(position, velocity)
        self._offset = None
        self._elapsed = 0.0

    def update(self, actual_position, actual_velocity, ref_position, ref_velocity):
        ref_position = np.asarray(ref_position, dtype=float)
        ref_velocity = np.asarray(ref_velocity, dtype=float)
        if self._offset is None:
            # offset at the start of this period, measured against the reference extrapolated
            # back by one period, so that the first output continues the reset state smoothly
            start = ref_position - ref_velocity * self.period
            self._offset = (self._position - start, self._velocity - ref_velocity)
            self._elapsed = 0.0
        self._elapsed += self.period
        if self._elapsed >= self._longest:  # faded out: follow exactly (the common case)
            self._position = ref_position.copy()
            self._velocity = ref_velocity.copy()
            return self._output()
        duration = self.params['transient_time']
        s = np.clip(self._elapsed / duration, 0.0, 1.0)
        offset = self._offset
        d0, v0 = offset
        # h fades the offset (h(0) = 1), g carries its initial rate (g'(0) = 1); both have
        # value, slope and curvature zero at s = 1, and zero curvature at s = 0.
        h = 1 - s ** 3 * (10 - 15 * s + 6 * s ** 2)
        dh = -30 * s ** 2 * (1 - s) ** 2 / duration
        g = duration * s * (1 - s) ** 3 * (1 + 3 * s)
        dg = (1 - s) ** 2 * (1 + 2 * s - 15 * s ** 2)
        self._position = ref_position + d0 * h + v0 * g
        self._velocity = ref_velocity + d0 * dh + v0 * dg
        return self._output()


class JerkLimited(SmoothingFilter):
    """
    Online jerk-limited following of the reference with ruckig.

    Each cycle the filter plans from its current state (position, velocity, acceleration) to
    the reference position and velocity within ``max_velocity``, ``max_acceleration`` and
    ``max_jerk`` per joint and takes the first period of that plan. A reference that moves
    faster than the limits is followed with lag, never with a jump.
    """

    NAME = 'jerk_limited'
    PARAMETERS = {'max_velocity': (1.57, 'velocity limit [rad/s]'),
                  'max_acceleration': (8.0, 'acceleration limit [rad/s^2]'),
                  'max_jerk': (80.0, 'jerk limit [rad/s^3] (inf: none)')}

    def validate(self, params):
        for key, array in params.items():
            if np.any(array <= 0):
                raise SmoothingConfigError(f'jerk_limited: {key} must be > 0')
        try:
            import ruckig  # noqa: F401
        except ImportError:
            raise SmoothingConfigError(
                'jerk_limited smoothing needs the ruckig Python module: pip install ruckig'
            ) from None

    def reset(self, position, velocity):
        from ruckig import InputParameter, OutputParameter, Result, Ruckig, Synchronization
        super().reset(position, velocity)
        n = len(self.joints)
        self._otg = Ruckig(n, self.period)
        self._input = InputParameter(n)
        # each joint on its own: a slow joint must not slow the others down
        self._input.synchronization = Synchronization.No
        self._result = OutputParameter(n)
        self._input.max_velocity = self.params['max_velocity'].tolist()
        self._input.max_acceleration = self.params['max_acceleration'].tolist()
        self._input.max_jerk = self.params['max_jerk'].tolist()
        self._input.current_position = self._position.tolist()
        limit = self.params['max_velocity']
        self._input.current_velocity = np.minimum(np.maximum(self._velocity, -limit),
                                                  limit).tolist()
        self._input.current_acceleration = [0.0] * n
        self._target: Optional[np.ndarray] = None
        self._target_velocity: Optional[np.ndarray] = None
        self._finished = False
        self._zeros = np.zeros(n)
        self._zeros.setflags(write=False)
        self._result_finished = Result.Finished
        self._result_working = Result.Working

    def update(self, actual_position, actual_velocity, ref_position, ref_velocity):
        if not hasattr(self, '_otg'):
            self.reset(self._position, self._velocity)
        target = np.asarray(ref_position, dtype=float)
        target_velocity = np.asarray(ref_velocity, dtype=float)
        unchanged = (self._target is not None and self._target_velocity is not None
                     and np.array_equal(target, self._target)
                     and np.array_equal(target_velocity, self._target_velocity))
        if unchanged and self._finished and not target_velocity.any():
            self._velocity = self._zeros  # at rest on the target
            return self._output()
        if not unchanged:  # most ticks follow an unchanged target: no new input lists then
            limit = self.params['max_velocity']
            self._target = target.copy()  # the caller may change its array in place
            self._target_velocity = target_velocity.copy()
            self._input.target_position = self._target.tolist()
            self._input.target_velocity = np.minimum(np.maximum(target_velocity, -limit),
                                                     limit).tolist()
        result = self._otg.update(self._input, self._result)
        self._finished = result == self._result_finished
        if not self._finished and result != self._result_working:
            # cannot happen with valid limits; hold still rather than jump
            self._velocity = self._zeros
            return self._output()
        self._result.pass_to_input(self._input)
        self._position = np.array(self._result.new_position)
        self._velocity = np.array(self._result.new_velocity)
        return self._output()

    def stopping_position(self) -> Optional[np.ndarray]:
        """Return where a brake from the state (acceleration too) within its limits ends."""
        from ruckig import ControlInterface, InputParameter, Result, Ruckig, Trajectory
        if not hasattr(self, '_otg') or not np.any(self._velocity):
            return self._position.copy()
        n = len(self.joints)
        data = InputParameter(n)
        data.control_interface = ControlInterface.Velocity
        data.synchronization = self._input.synchronization
        data.current_position = self._input.current_position
        data.current_velocity = self._input.current_velocity
        data.current_acceleration = self._input.current_acceleration
        data.target_velocity = [0.0] * n
        data.target_acceleration = [0.0] * n
        data.max_velocity = self._input.max_velocity
        data.max_acceleration = self._input.max_acceleration
        data.max_jerk = self._input.max_jerk
        trajectory = Trajectory(n)
        if Ruckig(n).calculate(data, trajectory) not in (Result.Working, Result.Finished):
            return self._position.copy()
        rest, _, _ = trajectory.at_time(trajectory.duration)
        return np.array(rest, dtype=float)


#: name -> filter class; the smoothing parameter of a controller picks one.
REGISTRY: Dict[str, Type[SmoothingFilter]] = {
    cls.NAME: cls for cls in (PassThrough, CriticallyDamped, Transient, JerkLimited)}


def register_filter(cls: Type[SmoothingFilter]) -> Type[SmoothingFilter]:
    """Add a filter class to the registry (usable as a decorator)."""
    REGISTRY[cls.NAME] = cls
    return cls


def create_filter(name: str, joints: Sequence[str], period: float,
                  params: Optional[Mapping[str, float]] = None,
                  overrides: Optional[Mapping[str, Mapping[str, float]]] = None
                  ) -> SmoothingFilter:
    """
    Create a filter by registry name.

    :raises SmoothingConfigError: unknown name or invalid parameters.
    """
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise SmoothingConfigError(
            f'unknown smoothing filter {name!r} (known: {", ".join(REGISTRY)})') from None
    return cls(joints, period, params, overrides)


def filter_parameters(name: str) -> Dict[str, Tuple[float, str]]:
    """Return the parameters (default, description) of a registered filter."""
    return dict(REGISTRY[name].PARAMETERS) if name in REGISTRY else {}


@dataclass(frozen=True)
class FilterSpec:
    """
    A smoothing filter as configuration: what a controller's node sends to the cycle process.

    :param kind: registry name.
    :param params: filter parameters (only the ones the filter knows).
    :param overrides: joint -> {parameter: value}.
    """

    kind: str
    params: Mapping[str, float] = field(default_factory=dict)
    overrides: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def create(self, joints: Sequence[str], period: float) -> SmoothingFilter:
        """
        Create the filter for ``joints``.

        :raises SmoothingConfigError: unknown kind or invalid parameters.
        """
        return create_filter(self.kind, joints, period, dict(self.params),
                             {j: dict(p) for j, p in self.overrides.items()})


def filter_spec(kind: str, params: Mapping[str, Any], overrides: Mapping[str, Mapping[str, Any]],
                joints: Sequence[str], velocity_limits: Sequence[float],
                parameter_names: Iterable[str],
                acceleration_limits: Optional[Sequence[float]] = None,
                jerk_limits: Optional[Sequence[float]] = None) -> FilterSpec:
    """
    Build a :class:`FilterSpec` from a controller's smoothing parameters, checking them.

    A ``max_velocity``, ``max_acceleration`` or ``max_jerk`` of 0 stands for each joint's limit
    of the robot model (10 rad/s, 100 rad/s^2 where a velocity or acceleration limit is not
    finite; no jerk limit where none is configured).

    :param kind: ``smoothing.type``.
    :param params: ``smoothing.<parameter>`` values (parameters of other filters are dropped).
    :param overrides: ``smoothing.<joint>.<parameter>`` values.
    :param joints: every joint of the robot; :param velocity_limits: theirs [rad/s].
    :param parameter_names: every smoothing parameter any filter has (for the error message).
    :param acceleration_limits: the joints' acceleration limits [rad/s^2] (for 0).
    :param jerk_limits: the joints' jerk limits [rad/s^3] (for 0).
    :raises SmoothingConfigError: unknown kind, an override of an unknown joint or parameter.
    """
    if kind not in REGISTRY:
        raise SmoothingConfigError(
            f'unknown smoothing filter {kind!r} (known: {", ".join(REGISTRY)})')
    known = REGISTRY[kind].PARAMETERS
    names = set(parameter_names) | set(known)
    unknown_joints = [j for j in overrides if j not in joints]
    if unknown_joints:
        raise SmoothingConfigError(
            f'smoothing overrides name unknown joints: {", ".join(unknown_joints)}')
    for joint, joint_params in overrides.items():
        unknown = [p for p in joint_params if p not in names]
        if unknown:
            raise SmoothingConfigError(
                f'smoothing.{joint}: unknown parameter(s) {", ".join(unknown)}')
    kept = {k: float(v) for k, v in params.items() if k in known}
    kept_overrides = {j: {k: float(v) for k, v in p.items() if k in known}
                      for j, p in overrides.items()}
    model_limits = {'max_velocity': (velocity_limits, 10.0),
                    'max_acceleration': (acceleration_limits, 100.0),
                    'max_jerk': (jerk_limits, math.inf)}
    for key, (limits, fallback) in model_limits.items():
        if key not in known or kept.get(key, 0.0) != 0.0:
            continue
        kept.pop(key, None)
        if limits is None:
            limits = [fallback] * len(joints)
        for joint, limit in zip(joints, limits):
            entry = kept_overrides.setdefault(joint, {})
            if entry.get(key, 0.0) == 0.0:
                entry[key] = float(limit) if np.isfinite(limit) else fallback
    return FilterSpec(kind, kept, {j: p for j, p in kept_overrides.items() if p})
