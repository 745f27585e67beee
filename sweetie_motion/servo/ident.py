r"""
Servo identification (R-SERVO-2/3, seed 003 servo_ident), pure: RLS of the servo model's alpha.

Inputs, once per cycle: the reference of every joint in RobotModel order (desired position,
velocity, effort: ``joints_sorted``) through :meth:`ServoIdentification.push_reference`; and,
any number of times per cycle, measured positions of some joints (``joints_measured``, any
order, partial) through :meth:`ServoIdentification.add_measurement`.

The servo's desired position is the reference ``control_delay`` cycles ago (a fractional delay:
linear interpolation between the two neighbouring cycles of a ring buffer of past references
that is written in place and never shifted); with stamps on the references and the
measurements, ``control_delay`` before each measurement's own time. The delay cannot be told
apart from viscous friction (a delay error dt shifts alpha[0] by kp U dt), so it has to be
known: for the serial driver it is one goal interval, the S_JOG's wire time and half a goal
interval (the age of the newest S_JOG when the servo tick takes it). With the 7-parameter model
(:mod:`sweetie_motion.servo.servo_model`)

.. math:: y = k_p U (d - q) = \phi^T \alpha, \quad
          \phi = (\dot q, s(\dot q), s(\dot q) e^{-|\dot q|/q_s}, \tau_{ref})

the four alpha of each servo under identification are estimated by recursive least squares
with the forgetting factor ``relaxation_factor`` (lambda):

.. math:: e = y - \phi^T \hat\alpha, \quad L = P\phi / (\lambda + \phi^T P \phi), \quad
          \hat\alpha \leftarrow \hat\alpha + L e, \quad
          P \leftarrow (P - L \phi^T P) / \lambda

only from samples whose speed is above ``min_speed`` (at rest the friction is anywhere within
the static band and the velocity sign is noise). While a direction is not excited (e.g. no
effort in the reference) P would grow as lambda^-n: the division by lambda is skipped when the
trace of P exceeds ``max_covariance``.

The velocity is the least-squares slope of the measured positions over ``velocity_span``
samples on each side (the servos' own velocity register counts 0.5 rad/s steps, and a central
difference of positions quantized to 0.0057 rad is noisy enough to bias the friction terms),
so a sample is used ``velocity_span`` samples after it was measured;
``velocity_source='measured'`` takes the measured velocity instead, at once.

The prediction error of a sample, as position, is :math:`e / (k_p U)` [rad]; its mean square
is averaged exponentially over ``error_averaging_time``, and :meth:`end` accepts the models
whose root mean square is at most ``threshold`` after at least ``error_averaging_time`` of
samples. :attr:`ServoIdentification.torque_error` is the model's prediction error as torque
(:meth:`ServoModelParams.torque_error`), a full vector in joint order: zero for joints never
measured or without a model, the last value for the others.
"""

from dataclasses import dataclass, field
import math
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.errors import SweetieMotionError, UnknownJointError
from sweetie_motion.servo.servo_model import ServoModelParams, sign


class IdentificationError(SweetieMotionError):
    """
    Identification cannot start or the configuration is wrong.

    :param servos: the servos concerned.
    """

    def __init__(self, message: str, servos: Sequence[str] = ()) -> None:
        self.servos = list(servos)
        super().__init__(message)


class MalformedInputError(SweetieMotionError):
    """
    An input of the identification has the wrong shape or values.

    :param what: which input ('reference position', 'measured names', ...).
    :param expected: what it must be.
    :param got: what it was.
    """

    def __init__(self, what: str, expected: str, got: str) -> None:
        self.what = what
        self.expected = expected
        self.got = got
        super().__init__(f'malformed {what}: expected {expected}, got {got}')


@dataclass(frozen=True)
class IdentConfig:
    """
    Parameters of the identification (seed 003 names in brackets).

    :param period: cycle period [s].
    :param control_delay: delay from the reference to the servo's desired position, as seen
        by the measurements [cycles, may be fractional] (control_delay): of every joint the
        bus gives none (:meth:`ServoIdentification.set_control_delays`).
    :param relaxation_factor: RLS forgetting factor lambda, 0 < lambda <= 1
        (relaxation_factor).
    :param error_averaging_time: averaging time of the prediction error [s]
        (error_averaging_time).
    :param threshold: largest accepted RMS position prediction error [rad] (threshold).
    :param battery_voltage: supply [V] (battery_voltage).
    :param min_speed: samples slower than this are not used [rad/s].
    :param velocity_span: samples on each side of the velocity slope.
    :param velocity_source: 'difference' (of measured positions) or 'measured'.
    :param initial_covariance: P = this * identity at start.
    :param max_covariance: no forgetting while trace(P) exceeds this.
    :param max_gap: a velocity window spans at most this many cycles; measurements may be
        this many cycles older than the newest reference.
    """

    period: float = 0.01
    control_delay: float = 2.0
    relaxation_factor: float = 0.9995
    error_averaging_time: float = 2.0
    threshold: float = 0.01
    battery_voltage: float = 7.4
    min_speed: float = 0.1
    velocity_span: int = 4
    velocity_source: str = 'difference'
    initial_covariance: float = 100.0
    max_covariance: float = 1e6
    max_gap: int = 40

    def __post_init__(self) -> None:
        checks = [('period', self.period > 0), ('control_delay', self.control_delay >= 0),
                  ('relaxation_factor', 0 < self.relaxation_factor <= 1),
                  ('error_averaging_time', self.error_averaging_time > 0),
                  ('threshold', self.threshold > 0), ('battery_voltage', self.battery_voltage > 0),
                  ('min_speed', self.min_speed >= 0), ('velocity_span', self.velocity_span >= 1),
                  ('velocity_source', self.velocity_source in ('difference', 'measured')),
                  ('initial_covariance', self.initial_covariance > 0),
                  ('max_covariance', self.max_covariance > self.initial_covariance),
                  ('max_gap', self.max_gap >= 2 * self.velocity_span)]
        for name, ok in checks:
            value = getattr(self, name)
            if not ok or (isinstance(value, float) and not math.isfinite(value)):
                raise IdentificationError(f'identification parameter {name} = {value!r} is out '
                                          'of range')


class ReferenceHistory:
    """
    Ring buffer of the last references (position, velocity, effort of every joint).

    :meth:`push` writes the new row in place (the buffer is never shifted or copied);
    :meth:`at` reads a joint ``age`` cycles back, interpolating fractional ages.

    :param joints: number of joints.
    :param capacity: rows kept.
    """

    def __init__(self, joints: int, capacity: int) -> None:
        self.capacity = int(capacity)
        self._data = np.zeros((3, self.capacity, int(joints)))
        self.count = 0

    @property
    def available(self) -> int:
        """Return how many rows hold data."""
        return min(self.count, self.capacity)

    def push(self, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> None:
        """Store one cycle's reference (each shape (joints,))."""
        row = self.count % self.capacity
        self._data[0, row] = position
        self._data[1, row] = velocity
        self._data[2, row] = effort
        self.count += 1

    def at(self, age: float, index: int) -> Tuple[float, float, float]:
        """
        Return (position, velocity, effort) of joint ``index`` ``age`` cycles before the newest.

        :raises IndexError: not that much history yet.
        """
        if age < 0 or age > self.available - 1:
            raise IndexError(f'reference {age} cycles back: {self.available} kept')
        newest = self.count - 1
        back = math.floor(age)
        frac = age - back
        row = (newest - back) % self.capacity
        values = self._data[:, row, index]
        if frac == 0.0:
            return float(values[0]), float(values[1]), float(values[2])
        older = self._data[:, (newest - back - 1) % self.capacity, index]
        mixed = (1.0 - frac) * values + frac * older
        return float(mixed[0]), float(mixed[1]), float(mixed[2])


@dataclass(frozen=True)
class IdentProgress:
    """
    Where the identification of one servo stands.

    :param name: the servo (joint).
    :param samples: samples used by the RLS.
    :param seen: samples measured (used or not).
    :param alpha: current estimate.
    :param error: RMS position prediction error [rad] (nan before the first sample).
    :param duration: time spanned by the samples used [s].
    :param converged: error <= threshold and duration >= error_averaging_time.
    """

    name: str
    samples: int
    seen: int
    alpha: Tuple[float, float, float, float]
    error: float
    duration: float
    converged: bool


@dataclass(frozen=True)
class IdentResult:
    """
    What :meth:`ServoIdentification.end` decided.

    :param models: the identified models (error under the threshold, values plausible), in
        joint order.
    :param failed: RMS error of the servos that did not reach the threshold [rad].
    :param unsampled: servos under identification that never gave a sample (never moved
        faster than ``min_speed``, or were never measured).
    :param refused: servos whose estimate is not physical, with the reason.
    :param kept: per identified servo, the parameters the motion did not excite, kept at
        their value before the identification (e.g. alpha[3] without effort in the reference).
    :param bounded: per identified servo, parameters estimated a little below their bound
        (within their uncertainty) and set to it (e.g. a viscous friction of -0.001 to 0).
    :param no_samples: per unsampled servo, why (never measured, or never fast enough).
    """

    models: Tuple[ServoModelParams, ...]
    failed: Mapping[str, float]
    unsampled: Tuple[str, ...] = ()
    refused: Mapping[str, str] = field(default_factory=dict)
    kept: Mapping[str, Tuple[int, ...]] = field(default_factory=dict)
    bounded: Mapping[str, Tuple[int, ...]] = field(default_factory=dict)
    no_samples: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> List[str]:
        """Return the names of the identified servos."""
        return [m.name for m in self.models]

    def outcome(self, name: str) -> str:
        """
        Return what became of one servo, in the words of :meth:`describe`.

        'identified', 'refused: <reason>', 'above the threshold (<error> rad)', 'no samples:
        <why>', or 'not under identification'.
        """
        if name in self.names:
            return 'identified'
        if name in self.refused:
            return f'refused: {self.refused[name]}'
        if name in self.failed:
            return f'above the threshold ({self.failed[name]:.4f} rad)'
        if name in self.unsampled:
            return 'no samples: ' + self.no_samples.get(name, UNSAMPLED)
        return 'not under identification'

    @property
    def complete(self) -> bool:
        """Return whether every servo under identification was identified."""
        return not (self.failed or self.unsampled or self.refused)

    def describe(self) -> str:
        """Return what was identified and what was not, in a few lines."""
        lines = [f'{len(self.models)} model(s) identified']
        for name, indices in self.kept.items():
            lines.append(f'{name}: ' + ', '.join(
                f'{ALPHA_NAMES[i]} (alpha[{i}]) kept at its prior value: the motion did not '
                'excite it' for i in indices))
        for name, indices in self.bounded.items():
            lines.append(f'{name}: ' + ', '.join(
                f'{ALPHA_NAMES[i]} (alpha[{i}]) estimated just below {ALPHA_BOUNDS[i][0]:g}, '
                'within its uncertainty: set to it' for i in indices))
        if self.failed:
            lines.append('above the threshold: ' + ', '.join(
                f'{n} ({e:.4f} rad)' for n, e in self.failed.items()))
        for name in self.unsampled:
            lines.append(f'{name}: no samples: {self.no_samples.get(name, UNSAMPLED)}')
        for name, reason in self.refused.items():
            lines.append(f'{name}: refused: {reason}')
        return '; '.join(lines)


#: why a servo has no sample, when nothing more is known
UNSAMPLED = 'never measured moving faster than min_speed'

#: the longest control delay a bus may give a joint [cycles]
MAX_BUS_DELAY = 10.0

#: what each alpha is, for messages
ALPHA_NAMES = ('viscous friction', 'Coulomb friction', 'static friction', 'effort scale')
ALPHA_UNITS = ('N*m*s/rad', 'N*m', 'N*m', '')
#: physical bounds of each alpha (friction cannot push; the effort scale is near 1)
ALPHA_BOUNDS = ((0.0, math.inf), (0.0, math.inf), (0.0, math.inf), (0.2, 5.0))
#: a parameter is excited when its variance fell below this share of the initial one ...
EXCITED_SHARE = 0.01
#: ... or below this share, with a standard deviation at most EXCITED_PRECISION of its prior
#: value: the data then pins it closer than any prior would (a servo read at 30 Hz through the
#: stack gives a quarter of the samples of one read every cycle: the viscous friction is known
#: to 15 % while its variance is still 2 % of the initial one)
EXCITED_SHARE_PRECISE = 0.1
EXCITED_PRECISION = 0.25
#: an estimate this many standard deviations beyond a bound is refused (closer: set to it)
REFUSE_SIGMAS = 3.0


class _Rls:
    """The identification state of one servo."""

    def __init__(self, alpha: Sequence[float], covariance: float) -> None:
        self.prior = np.array(alpha, dtype=float)
        self.alpha = np.array(alpha, dtype=float)
        self.P = np.eye(4) * covariance
        self.samples = 0
        self.seen = 0
        self.error_sq = math.nan
        self.first = math.nan
        self.last = math.nan


def _measurement_arrays(names: Sequence[str], position: ArrayLike,
                        velocity: Optional[ArrayLike], stamp: Optional[ArrayLike],
                        velocity_required: bool
                        ) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """
    Return a measurement's positions, velocities and stamps as arrays, one per name.

    :raises MalformedInputError: sizes do not match, values are not finite, or velocities are
        required and missing.
    """
    position = np.asarray(position, dtype=float).reshape(-1)
    if len(position) != len(names):
        raise MalformedInputError('measured position', f'{len(names)} values (one per name)',
                                  f'{len(position)}')
    if velocity is not None:
        velocity = np.asarray(velocity, dtype=float).reshape(-1)
        if len(velocity) != len(names):
            raise MalformedInputError('measured velocity',
                                      f'{len(names)} values (one per name)',
                                      f'{len(velocity)}')
    elif velocity_required:
        raise MalformedInputError('measured velocity', 'values (velocity_source=measured)',
                                  'none')
    if stamp is not None:
        stamp = np.asarray(stamp, dtype=float).reshape(-1)
        if len(stamp) != len(names) or not np.all(np.isfinite(stamp)):
            raise MalformedInputError('measurement stamps', f'{len(names)} finite times',
                                      f'{len(stamp)} values')
    if not np.all(np.isfinite(position)):
        raise MalformedInputError('measured position', 'finite values', 'NaN or infinity')
    return position, velocity, stamp


def _plausible(rls: _Rls, model: ServoModelParams, config: IdentConfig
               ) -> Tuple[Tuple[float, ...], Tuple[int, ...], Tuple[int, ...], str]:
    """
    Return (alpha, not excited, set to a bound, reason to refuse ('' : none)).

    The covariance of the estimate is P times the variance of the torque residual (the
    RMS prediction error times the stiffness). A parameter the motion did not excite is
    set to its prior value, and the others to their estimate given that value (the
    conditional mean: alpha_E + P_EK P_KK^-1 (prior_K - alpha_K)): taken as they were,
    they would keep what the free estimate of the kept one made them (a Coulomb friction
    that took over the static friction's share, the static one then set back to its prior,
    counted that share twice).
    """
    alpha = rls.alpha.copy()
    P = rls.P
    sigma_e = math.sqrt(rls.error_sq) * model.stiffness(config.battery_voltage)
    initial = config.initial_covariance
    untouched = []
    for i in range(len(ALPHA_BOUNDS)):
        variance = float(P[i, i])
        sigma = math.sqrt(max(variance, 0.0)) * sigma_e
        precise = variance <= EXCITED_SHARE_PRECISE * initial and \
            sigma <= EXCITED_PRECISION * abs(rls.prior[i])
        if variance > EXCITED_SHARE * initial and not precise:
            untouched.append(i)
    variances = np.diag(P).copy()
    if untouched:
        kept = np.array(untouched)
        rest = np.array([i for i in range(len(ALPHA_BOUNDS)) if i not in untouched])
        if len(rest):
            gain = P[np.ix_(rest, kept)] @ np.linalg.pinv(P[np.ix_(kept, kept)])
            alpha[rest] += gain @ (rls.prior[kept] - alpha[kept])
            variances[rest] -= np.einsum('ij,ji->i', gain, P[np.ix_(kept, rest)])
        alpha[kept] = rls.prior[kept]
    clamped = []
    for i, (low, high) in enumerate(ALPHA_BOUNDS):
        if i in untouched:
            continue
        sigma = math.sqrt(max(float(variances[i]), 0.0)) * sigma_e
        bound = low if alpha[i] < low else high if alpha[i] > high else None
        if bound is None:
            continue
        if abs(alpha[i] - bound) > REFUSE_SIGMAS * sigma:
            unit = f' {ALPHA_UNITS[i]}' if ALPHA_UNITS[i] else ''
            side = 'below' if bound == low else 'above'
            return (tuple(alpha), (), (), f'{ALPHA_NAMES[i]} (alpha[{i}]) = '
                    f'{alpha[i]:.4g} +- {sigma:.2g}{unit} is {side} its physical bound '
                    f'{bound:g}{unit} (is control_delay right? a wrong delay shows as '
                    'viscous friction)')
        alpha[i] = bound
        clamped.append(i)
    return tuple(float(a) for a in alpha), tuple(untouched), tuple(clamped), ''


class ServoIdentification:
    """
    Torque error and RLS identification of the servo models (see the module docstring).

    :param joints: the joints, in the order of the reference vectors (RobotModel order).
    :param models: the known servo models (by their names; others get none: zero torque
        error, cannot be identified).
    :param config: the parameters.
    :raises MalformedInputError: models of joints not in ``joints``.
    """

    def __init__(self, joints: Sequence[str], models: Iterable[ServoModelParams] = (),
                 config: IdentConfig = IdentConfig()) -> None:
        self.joints = list(joints)
        self.config = config
        self._index = {name: i for i, name in enumerate(self.joints)}
        n = len(self.joints)
        self._models: List[Optional[ServoModelParams]] = [None] * n
        for model in models:
            if model.name not in self._index:
                raise UnknownJointError([model.name], 'servo model')
            self._models[self._index[model.name]] = model
        # the delay, plus measurements up to max_gap cycles older than the newest reference
        capacity = int(math.ceil(max(config.control_delay, MAX_BUS_DELAY))) + config.max_gap + 2
        self.history = ReferenceHistory(n, capacity)
        #: each joint's control delay [cycles] (the configured one until the bus tells)
        self.delays = np.full(n, float(config.control_delay))
        self._stamp = 0.0
        self._torque_error = np.zeros(n)
        # per joint: recent (time, position, desired, effort) for the central difference
        self._samples: List[List[Tuple[float, float, float, float]]] = [[] for _ in range(n)]
        self._rls: Dict[int, _Rls] = {}
        self.ignored_joints = 0
        self.ignored_measurements = 0

    # --- inputs --------------------------------------------------------------------------------

    def _vector(self, what: str, values: Optional[Sequence[float]]) -> np.ndarray:
        n = len(self.joints)
        if values is None:
            return np.zeros(n)
        array = np.asarray(values, dtype=float)
        if array.shape != (n,):
            raise MalformedInputError(what, f'{n} values in joint order', f'shape {array.shape}')
        if not np.all(np.isfinite(array)):
            raise MalformedInputError(what, 'finite values', 'NaN or infinity')
        return array

    def push_reference(self, position: Sequence[float], velocity: Sequence[float],
                       effort: Optional[Sequence[float]] = None,
                       stamp: Optional[float] = None) -> None:
        """
        Add one cycle's reference (joints_sorted): full vectors in joint order.

        :param position: [rad]; :param velocity: [rad/s]; :param effort: [N*m] (default 0).
        :param stamp: the cycle's time [s] (default: cycles counted times the period).
        :raises MalformedInputError: a vector of the wrong size or not finite.
        """
        p = self._vector('reference position', position)
        v = self._vector('reference velocity', velocity)
        e = self._vector('reference effort', effort)
        if stamp is not None and not math.isfinite(stamp):
            raise MalformedInputError('reference stamp', 'a finite time', repr(stamp))
        self.history.push(p, v, e)
        self._stamp = self.history.count * self.config.period if stamp is None else float(stamp)

    def add_measurement(self, names: Sequence[str], position: ArrayLike,
                        velocity: Optional[ArrayLike] = None,
                        stamp: Optional[ArrayLike] = None) -> int:
        """
        Add measured positions of some joints (joints_measured).

        Without stamps a measurement counts as taken at the time of the last reference; with
        them (the same clock as the reference stamps) the delayed reference is taken at each
        measurement's own time.

        Unknown joints are skipped (counted in :attr:`ignored_joints`); a measurement before
        enough references is skipped too (:attr:`ignored_measurements`).

        :param names: the joints.
        :param position: [rad], one per name.
        :param velocity: [rad/s], one per name (used with velocity_source='measured').
        :param stamp: measurement times [s], one per name.
        :return: the number of joints taken.
        :raises MalformedInputError: sizes do not match, or values are not finite.
        """
        names = list(names)
        position, velocity, stamp = _measurement_arrays(
            names, position, velocity, stamp, self.config.velocity_source == 'measured')
        config = self.config
        if self.history.count == 0:
            self.ignored_measurements += 1
            return 0
        taken = 0
        for k, name in enumerate(names):
            index = self._index.get(name)
            if index is None:
                self.ignored_joints += 1
                continue
            t = self._stamp if stamp is None else float(stamp[k])
            age = self.delays[index] + (self._stamp - t) / config.period
            try:
                desired, _, effort = self.history.at(age, index)
            except IndexError:
                self.ignored_measurements += 1
                continue
            q = float(position[k])
            taken += 1
            if config.velocity_source == 'measured':
                assert velocity is not None  # checked above: measured velocity is required
                self._process(index, q, float(velocity[k]), desired, effort, t)
                continue
            samples = self._samples[index]
            if samples and abs(samples[-1][0] - t) < 1e-9:
                samples[-1] = (t, q, desired, effort)   # the same measurement again: newest
            else:
                samples.append((t, q, desired, effort))
            self._difference(index, samples)
        return taken

    def _difference(self, index: int, samples: List[Tuple[float, float, float, float]]) -> None:
        span = self.config.velocity_span
        gap = self.config.max_gap * self.config.period
        while samples and samples[-1][0] - samples[0][0] > gap:
            samples.pop(0)
        if len(samples) < 2 * span + 1:
            return
        window = samples[-(2 * span + 1):]
        t1, q1, desired, effort = window[span]
        # least-squares slope over the window: a quarter of the noise of a central
        # difference of quantized positions, and exact for a quadratic motion
        times = np.array([w[0] for w in window]) - t1
        positions = np.array([w[1] for w in window])
        times -= times.mean()
        denominator = float(times @ times)
        if denominator <= 0.0:
            del samples[:-1]
            return
        velocity = float(times @ (positions - positions.mean())) / denominator
        self._process(index, q1, velocity, desired, effort, t1)
        del samples[:len(samples) - 2 * span]

    # --- the model -----------------------------------------------------------------------------

    def _process(self, index: int, position: float, velocity: float, desired: float,
                 effort: float, t: float) -> None:
        model = self._models[index]
        if model is None or model.kp <= 0:
            return
        config = self.config
        voltage = config.battery_voltage
        rls = self._rls.get(index)
        if rls is not None:
            model = model.with_alpha(rls.alpha)
        if model.alpha[3] != 0:
            self._torque_error[index] = model.torque_error(desired, position, velocity, effort,
                                                           voltage)
        if rls is None:
            return
        rls.seen += 1
        if abs(velocity) < config.min_speed:
            return
        stiffness = model.stiffness(voltage)
        s = sign(velocity, model.sign_dead_zone)
        phi = np.array((velocity, s, s * math.exp(-abs(velocity) / model.qs), effort))
        y = stiffness * (desired - position)
        error = y - float(phi @ rls.alpha)
        p_phi = rls.P @ phi
        gain = p_phi / (config.relaxation_factor + float(phi @ p_phi))
        rls.alpha += gain * error
        rls.P -= np.outer(gain, p_phi)
        if np.trace(rls.P) < config.max_covariance:
            rls.P /= config.relaxation_factor
        position_error = error / stiffness
        if rls.samples == 0:
            rls.error_sq = position_error * position_error
            rls.first = t
        else:
            weight = 1.0 - math.exp(-max(t - rls.last, 0.0) / config.error_averaging_time)
            rls.error_sq += weight * (position_error * position_error - rls.error_sq)
        rls.last = t
        rls.samples += 1

    @property
    def torque_error(self) -> np.ndarray:
        """Return the prediction error as torque, every joint in order [N*m] (a copy)."""
        return self._torque_error.copy()

    def model(self, name: str) -> Optional[ServoModelParams]:
        """
        Return the current model of a servo (the estimate while identifying).

        :raises UnknownJointError: not a joint.
        """
        index = self._index.get(name)
        if index is None:
            raise UnknownJointError([name], 'servo identification', self._index)
        model = self._models[index]
        rls = self._rls.get(index)
        if model is not None and rls is not None:
            model = model.with_alpha(rls.alpha)
        return model

    def set_model(self, model: ServoModelParams) -> None:
        """
        Replace a servo's model (by its name).

        :raises UnknownJointError: the name is not a joint.
        """
        index = self._index.get(model.name)
        if index is None:
            raise UnknownJointError([model.name], 'servo model')
        self._models[index] = model

    def set_control_delays(self, delays: Mapping[str, float]) -> None:
        """
        Give joints their own control delay (a serial bus knows each line's).

        :param delays: joint -> delay [cycles]; joints not named keep theirs.
        :raises UnknownJointError: a name that is not a joint.
        :raises IdentificationError: a delay that is negative or beyond what is kept.
        """
        unknown = [name for name in delays if name not in self._index]
        if unknown:
            raise UnknownJointError(unknown, 'servo identification', self._index)
        for name, delay in delays.items():
            if not 0.0 <= delay <= self.history.capacity - self.config.max_gap - 2:
                raise IdentificationError(f'control delay of {name} = {delay!r} cycles is out '
                                          f'of range (0 .. {MAX_BUS_DELAY})', [name])
            self.delays[self._index[name]] = float(delay)

    def control_delay(self, name: str) -> float:
        """Return a joint's control delay [cycles]."""
        index = self._index.get(name)
        if index is None:
            raise UnknownJointError([name], 'servo identification', self._index)
        return float(self.delays[index])

    # --- operations ----------------------------------------------------------------------------

    @property
    def identifying(self) -> List[str]:
        """Return the servos under identification."""
        return [self.joints[i] for i in sorted(self._rls)]

    def start(self, servos: Iterable[str]) -> None:
        """
        Start identifying servos (from their current alpha).

        One identification at a time: a second is refused while one runs (two excitations
        would mix their samples).

        :raises UnknownJointError: names that are not joints (nothing starts).
        :raises IdentificationError: one is running; servos without a model (kp = 0): give kp,
            kgear, qs first.
        """
        servos = list(servos)
        if not servos:
            raise IdentificationError('no servos to identify')
        if self._rls:
            running = self.identifying
            raise IdentificationError(f'an identification of {len(running)} servo(s) is '
                                      f'running ({", ".join(running)}): end it or abort it first '
                                      '(sweetie-motion servo identify --abort)',
                                      running)
        unknown = [s for s in servos if s not in self._index]
        if unknown:
            raise UnknownJointError(unknown, 'servo identification', self._index)
        missing = [s for s in servos
                   if (known := self._models[self._index[s]]) is None or known.kp <= 0]
        if missing:
            raise IdentificationError(f'no servo model (kp > 0) for {", ".join(missing)}: the '
                                      'identification needs kp, kgear and qs', missing)
        for name in servos:
            index = self._index[name]
            model = self._models[index]
            assert model is not None  # servos without a model are refused above
            self._rls[index] = _Rls(model.alpha, self.config.initial_covariance)

    def progress(self) -> Dict[str, IdentProgress]:
        """Return the progress of every servo under identification."""
        out = {}
        for index, rls in sorted(self._rls.items()):
            error = math.sqrt(rls.error_sq) if rls.samples else math.nan
            duration = rls.last - rls.first if rls.samples else 0.0
            converged = (rls.samples > 0 and error <= self.config.threshold
                         and duration >= self.config.error_averaging_time)
            name = self.joints[index]
            a0, a1, a2, a3 = (float(a) for a in rls.alpha)
            out[name] = IdentProgress(name, rls.samples, rls.seen, (a0, a1, a2, a3), error,
                                      duration, converged)
        return out

    def end(self) -> IdentResult:
        """
        End the identification: keep the models that converged and are physical.

        A parameter the motion did not excite keeps its value from before; one a little below
        its physical bound (within its uncertainty) is set to the bound; one clearly beyond it
        refuses the model (the reason says which and by how much). Servos without a sample
        are reported, not identified.

        :return: what was identified, and why the others were not.
        """
        progress = self.progress()
        models = []
        failed, refused, kept, bounded = {}, {}, {}, {}
        unsampled: List[str] = []
        no_samples: Dict[str, str] = {}
        for index in sorted(self._rls):
            name = self.joints[index]
            state = progress[name]
            if not state.samples:
                unsampled.append(name)
                no_samples[name] = (
                    f'{state.seen} measurement(s), none faster than min_speed '
                    f'({self.config.min_speed:g} rad/s)' if state.seen else
                    'never measured while identifying (no position reply, or the servo is '
                    'not on the bus)')
            elif not state.converged:
                failed[name] = state.error
            else:
                model = self._models[index]
                assert model is not None  # start() identifies only servos with a model
                alpha, untouched, clamped, reason = _plausible(self._rls[index], model,
                                                               self.config)
                if reason:
                    refused[name] = reason
                    continue
                if untouched:
                    kept[name] = untouched
                if clamped:
                    bounded[name] = clamped
                identified = model.with_alpha(alpha)
                self._models[index] = identified
                models.append(identified)
        self._rls.clear()
        return IdentResult(tuple(models), failed, tuple(unsampled), refused, kept, bounded,
                           no_samples)

    def abort(self) -> List[str]:
        """
        Stop identifying; the models stay as they were.

        :return: the servos that were under identification.
        """
        names = self.identifying
        self._rls.clear()
        return names
