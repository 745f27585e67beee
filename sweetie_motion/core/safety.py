"""
The safety stage and braking: the reference never exceeds the joint limits (R-SYS-8).

:class:`SafetyStage` runs after the aggregator and before the servo bus, every tick, whatever
controllers are active: it is installed with the cycle, not by a component. It checks the full
reference against the joint limits from the state it sent last (position, velocity and
acceleration, both as the reference states them and as its positions imply them, since a servo
sees the positions). A reference
within the limits passes unchanged, which is the normal case. Where a joint's reference is out
of reach, the stage moves that joint towards it with ruckig (online, time-optimal, within the
limits) and counts the intervention for the joint and for the controller that drove it. A joint
no controller drives while it moves (its owner gave it up or was stopped) is braked to rest
along its direction of motion. Joints whose servos are off pass unchanged: they follow the
measured pose and command nothing.

Jerk: everything the stage generates itself (corrections, brakes) is jerk-limited where the
robot config gives a jerk limit, and so are the controllers' own brakes, the approach to a
goal's first point and the default FollowJointState filter. A controller's reference is not
corrected for jerk alone, only counted (``jerk_excess``): keyframe splines are C1 (their
acceleration changes at keyframes and at a motion's end), and a jerk correction there would
turn into overshoot, which is worse for a servo than the jerk.

:class:`Brake` is the stop the controllers use themselves (cancel, abort, torque on): the
fastest deceleration to rest within the acceleration and jerk limits, with no overshoot and no
reversal. :func:`stopping_position` tells where such a stop ends.
"""

from dataclasses import dataclass, field
import math
from typing import Callable, cast, Dict, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.model.robot_model import JointLimits

#: relative slack of the limit checks: a spline sampled exactly within a limit must pass
RELATIVE_SLACK = 1e-6
#: absolute slack of the limit checks (rounding of positions of a few radians)
ABSOLUTE_SLACK = 1e-9
#: a tick this many periods after the one before comes after lost ticks (a CPU stall)
LATE_TICK = 1.5
#: a controller whose joints need the stage this long without a break is reported [s]
PERSISTENT_INTERVENTION = 1.0


def _ruckig():
    try:
        import ruckig
    except ImportError:  # pragma: no cover -- a declared dependency
        raise ImportError('the safety stage needs the ruckig Python module: pip install ruckig'
                          ) from None
    return ruckig


def _limited_input(limits: JointLimits):
    """
    Return (ruckig, an InputParameter with the joints' limits, velocity and acceleration limits).

    Each joint moves on its own (no synchronisation): a slow joint must not slow the others
    down. A joint without a finite velocity or acceleration limit gets a large one (ruckig
    needs numbers).
    """
    ruckig = _ruckig()
    data = ruckig.InputParameter(len(limits.velocity))
    data.synchronization = ruckig.Synchronization.No
    velocity = _finite(limits.velocity, 1e3)
    acceleration = _finite(limits.acceleration, 1e4)
    data.max_velocity = velocity.tolist()
    data.max_acceleration = acceleration.tolist()
    data.max_jerk = limits.jerk.tolist()
    return ruckig, data, velocity, acceleration


class _Generator:
    """One ruckig online generator over a set of joints with their limits."""

    def __init__(self, limits: JointLimits, period: float) -> None:
        ruckig, self.input, self.velocity, self.acceleration = _limited_input(limits)
        n = len(limits.velocity)
        self.otg = ruckig.Ruckig(n, period)
        self.output = ruckig.OutputParameter(n)
        self.jerk = np.asarray(limits.jerk, dtype=float)
        self._jerk_finite = np.isfinite(self.jerk)
        self._finite_jerk = np.where(self._jerk_finite, self.jerk, 0.0)
        self.input.target_acceleration = [0.0] * n
        self._interfaces = {False: ruckig.ControlInterface.Position,
                            True: ruckig.ControlInterface.Velocity}
        self._good = (ruckig.Result.Working, ruckig.Result.Finished)
        self._key: Optional[tuple] = None

    def step(self, enabled: np.ndarray, braking: np.ndarray, position: np.ndarray,
             velocity: np.ndarray, acceleration: np.ndarray, target_position: np.ndarray,
             target_velocity: np.ndarray
             ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """
        Advance the ``enabled`` joints one period towards the targets (``braking``: to rest).

        :return: (position, velocity, acceleration) of every joint (only the enabled ones are
            meaningful), or None if ruckig refused the input.
        """
        data = self.input
        acceleration = np.minimum(np.maximum(acceleration, -self.acceleration),
                                  self.acceleration)
        # A joint already decelerating hard near rest cannot ramp its deceleration down within
        # the jerk limit before the velocity crosses zero: that brake would reverse. Such a
        # joint stops without the jerk limit (a stop must never turn back).
        reversing = braking & self._jerk_finite & (velocity * acceleration < 0) & \
            (acceleration * acceleration >= 2 * self._finite_jerk * np.abs(velocity))
        key = (enabled.tobytes(), braking.tobytes(), reversing.tobytes())
        if key != self._key:  # the per-joint settings change rarely: set them only then
            self._key = key
            data.max_jerk = np.where(reversing, np.inf, self.jerk).tolist()
            data.enabled = enabled.tolist()
            data.per_dof_control_interface = [self._interfaces[bool(b)] for b in braking]
        data.current_position = position.tolist()
        data.current_velocity = np.minimum(np.maximum(velocity, -self.velocity),
                                           self.velocity).tolist()
        data.current_acceleration = acceleration.tolist()
        data.target_position = np.where(braking, position, target_position).tolist()
        data.target_velocity = np.where(braking, 0.0, target_velocity).tolist()
        result = self.otg.update(data, self.output)
        if result not in self._good:
            return None
        out = self.output
        return (np.array(out.new_position), np.array(out.new_velocity),
                np.array(out.new_acceleration))


def _finite(values: np.ndarray, fallback: float) -> np.ndarray:
    return np.where(np.isfinite(values), values, fallback)


class Brake:
    """
    Stops joints as fast as the limits allow, along their direction of motion.

    The velocity is brought to zero within the acceleration and jerk limits (ruckig's velocity
    interface); the position keeps going the way it went until the joint rests: no overshoot of
    the rest pose, no reversal.

    :param limits: the limits of the joints to stop.
    :param period: cycle period [s].
    """

    def __init__(self, limits: JointLimits, period: float) -> None:
        self.period = period
        self._generator = _Generator(limits, period)
        self._state: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None
        self._all = np.ones(len(limits.velocity), dtype=bool)

    def start(self, position: np.ndarray, velocity: np.ndarray,
              acceleration: Optional[np.ndarray] = None) -> None:
        """Begin a stop from this state."""
        position = np.array(position, dtype=float)
        acceleration = (np.zeros(len(position)) if acceleration is None
                        else np.array(acceleration, dtype=float))
        self._state = (position, np.array(velocity, dtype=float), acceleration)

    @property
    def active(self) -> bool:
        """Return whether a stop is under way (started and not at rest yet)."""
        return self._state is not None

    def step(self) -> Tuple[np.ndarray, np.ndarray]:
        """
        Advance one period; return (position, velocity).

        At rest the brake becomes inactive and returns the rest pose with zero velocity.
        """
        if self._state is None:
            raise RuntimeError('Brake.step() before start()')
        position, velocity, acceleration = self._state
        result = self._generator.step(self._all, self._all, position, velocity, acceleration,
                                      position, np.zeros(len(position)))
        if result is None:  # cannot happen with valid limits: stop where we are
            result = (position, np.zeros(len(position)), np.zeros(len(position)))
        position, velocity, acceleration = result
        if np.abs(velocity).max(initial=0.0) < 1e-9 and \
                np.abs(acceleration).max(initial=0.0) < 1e-9:
            velocity = np.zeros(len(position))
            self._state = None
        else:
            self._state = (position, velocity, acceleration)
        return position, velocity


def stopping_position(limits: JointLimits, position: np.ndarray, velocity: np.ndarray,
                      acceleration: Optional[np.ndarray] = None) -> np.ndarray:
    """Return where a :class:`Brake` started from this state comes to rest."""
    n = len(position)
    if not np.any(velocity) and (acceleration is None or not np.any(acceleration)):
        return np.array(position, dtype=float)
    ruckig, data, velocity_limit, acceleration_limit = _limited_input(limits)
    data.control_interface = ruckig.ControlInterface.Velocity
    data.current_position = np.asarray(position, dtype=float).tolist()
    data.current_velocity = np.clip(velocity, -velocity_limit, velocity_limit).tolist()
    data.current_acceleration = ([0.0] * n if acceleration is None else np.clip(
        acceleration, -acceleration_limit, acceleration_limit).tolist())
    data.target_velocity = [0.0] * n
    data.target_acceleration = [0.0] * n
    trajectory = ruckig.Trajectory(n)
    result = ruckig.Ruckig(n).calculate(data, trajectory)
    if result not in (ruckig.Result.Working, ruckig.Result.Finished):
        return np.array(position, dtype=float)
    rest, _, _ = trajectory.at_time(trajectory.duration)
    return np.array(rest, dtype=float)


@dataclass
class SafetyReport:
    """
    What the safety stage did since it started.

    :param ticks: ticks checked; :param intervened: ticks where it changed the reference.
    :param joints: joint -> ticks it changed that joint (joints never changed are left out).
    :param controllers: owner -> ticks it changed a joint of that owner ('' = no owner).
    :param last: the newest intervention, described; '' if none.
    :param jerk_excess: joint -> ticks a reference passed with more than the jerk limit.
    """

    ticks: int
    intervened: int
    joints: Dict[str, int]
    controllers: Dict[str, int]
    last: str
    jerk_excess: Dict[str, int] = field(default_factory=dict)


class SafetyStage:
    """
    The last stage before the servo bus (role StageRole.SAFETY, after the aggregator).

    :param joints: names of every joint of the full pose (canonical order).
    :param limits: their limits.
    :param period: cycle period [s].
    :param owners: returns the owner of every joint this tick ('' = none), canonical order.
    :param servos_off: returns a boolean mask of the joints whose servos are off, or None.
    :param on_event: called with a message when a controller has needed the stage for
        :data:`PERSISTENT_INTERVENTION` without a break (a bug to fix, not to hide).
    """

    name = 'safety'

    def __init__(self, joints: Sequence[str], limits: JointLimits, period: float,
                 owners: Callable[[], Sequence[str]],
                 servos_off: Optional[Callable[[], Optional[np.ndarray]]] = None,
                 on_event: Optional[Callable[[str], None]] = None) -> None:
        self.joints = list(joints)
        self.limits = limits
        self.period = float(period)
        self._owners = owners
        self._servos_off = servos_off
        self.on_event = on_event
        n = len(self.joints)
        slack = 1.0 + RELATIVE_SLACK
        dt = self.period
        self._step_limit = _finite(limits.velocity, 1e3) * dt * slack + ABSOLUTE_SLACK
        self._velocity_limit = _finite(limits.velocity, 1e3) * slack + ABSOLUTE_SLACK
        self._velocity_change = _finite(limits.acceleration, 1e4) * dt * slack + ABSOLUTE_SLACK
        # second difference of positions: acceleration as the positions imply it
        self._position_change = self._velocity_change * dt + ABSOLUTE_SLACK
        self._jerk_limited = np.isfinite(limits.jerk)
        self._acceleration_change = np.where(self._jerk_limited, limits.jerk, np.inf) * dt * \
            slack + 1e-6
        self._jerk_limited_any = bool(self._jerk_limited.any())
        self._inverse_period = 1.0 / dt
        self._work = np.zeros((7, n))
        # a step may differ from the mean of the two velocities by what an acceleration
        # within the limits changing inside the period explains
        consistency = 0.5 * _finite(limits.acceleration, 1e4) * dt * dt * slack + ABSOLUTE_SLACK
        finite = np.isfinite(limits.lower) & np.isfinite(limits.upper)
        self._middle = np.where(finite, (limits.lower + limits.upper) / 2, 0.0)
        half_range = np.where(finite, (limits.upper - limits.lower) / 2, np.inf)
        self._check_limits = np.vstack([self._step_limit, self._velocity_change,
                                        self._velocity_limit, self._position_change,
                                        consistency, half_range])
        self._generator = _Generator(limits, period)
        self._position: Optional[np.ndarray] = None
        self._velocity = np.zeros(n)
        self._acceleration = np.zeros(n)
        self._last_step = np.zeros(n)   # position change of the last tick (per period)
        self._now: Optional[float] = None  # the last tick's time
        self.ticks = 0
        self.intervened = 0
        self.joint_counts = np.zeros(n, dtype=np.int64)
        #: ticks a controller's reference changed its acceleration faster than the jerk limit
        self.jerk_excess = np.zeros(n, dtype=np.int64)
        self.controller_counts: Dict[str, int] = {}
        self._running: Dict[str, int] = {}   # owner -> consecutive ticks with interventions
        self._reported: Dict[str, bool] = {}
        self._last: Optional[Tuple[int, np.ndarray, Sequence[str]]] = None

    def reset(self, position: np.ndarray, velocity: Optional[np.ndarray] = None) -> None:
        """Start from this state (the next reference is checked against it)."""
        n = len(self.joints)
        self._position = np.array(position, dtype=float)
        self._velocity = np.zeros(n) if velocity is None else np.array(velocity, dtype=float)
        self._acceleration = np.zeros(n)
        self._last_step = self._velocity * self.period
        self._now = None

    def update(self, tick: Tick) -> None:
        """Limit ``tick.reference`` in place; count what had to change."""
        reference = tick.reference
        target_p, target_v = reference.position, reference.velocity
        self.ticks += 1
        if self._position is None:
            finite = np.isfinite(target_p)
            self.reset(np.where(finite, target_p, 0.0))
            target_p[:] = self._position
            target_v[:] = 0.0
            return
        # one pass over preallocated rows (this runs every tick: few numpy calls): position
        # step, velocity change, velocity, second difference of positions, step against the
        # velocities (positions that do not move as the velocities say would jerk the servo
        # when a correction continues from those velocities), distance from the middle of
        # the position range, acceleration change
        work = self._work
        elapsed = tick.now - self._now if self._now is not None else self.period
        self._now = tick.now
        np.subtract(target_p, self._position, out=work[0])
        np.subtract(target_v, self._velocity, out=work[1])
        late = elapsed > LATE_TICK * self.period
        if late:
            self._rows_after_lost_time(work, target_v, elapsed)
        else:
            np.subtract(work[0], self._last_step, out=work[3])
            np.add(target_v, self._velocity, out=work[4])
            work[4] *= -0.5 * self.period
            work[4] += work[0]
        change = work[1] * self._inverse_period
        np.subtract(change, self._acceleration, out=work[6])
        if late:
            work[6] *= self.period / elapsed
        work[2] = target_v
        np.subtract(target_p, self._middle, out=work[5])
        step = work[0].copy()
        np.abs(work, out=work)
        within = work[:6] <= self._check_limits
        # NaN compares False everywhere above: a NaN reference is never passed on
        if self._jerk_limited_any:
            excess = work[6] > self._acceleration_change
            if excess.any():
                self.jerk_excess += excess
        if late:
            # the next tick continues from the step of this tick's last period: the velocity
            # at its end less half a period of the acceleration over the lost time
            step = (target_v - change * (0.5 * self.period)) * self.period
        if within.all():  # the normal case: the reference passes unchanged
            self._accept(target_p, target_v, step, change)
            return
        # within is (6, n): one flag per joint (numpy's stubs allow a scalar here)
        ok = cast(np.ndarray, within.all(axis=0))
        servos_off = self._servos_off() if self._servos_off is not None else None
        if servos_off is not None:
            ok |= servos_off & np.isfinite(target_p) & np.isfinite(target_v)
            if ok.all():
                self._accept(target_p, target_v, step, change)
                return
        self._intervene(tick, ~ok, target_p, target_v, step, change)

    def _rows_after_lost_time(self, work: np.ndarray, target_v: np.ndarray,
                              elapsed: float) -> None:
        # The cycle lost ticks (a CPU stall): the reference moved over ``elapsed``, not one
        # period, and a time signal within the limits may move that much. Rows 0, 1, 3 and 4
        # are brought to what one period of the same average motion would give, so that the
        # limits of one period apply.
        ratio = self.period / elapsed
        np.add(target_v, self._velocity, out=work[4])
        work[4] *= -0.5 * elapsed
        work[4] += work[0]
        work[4] *= ratio * ratio    # vs 0.5 a elapsed^2
        work[0] *= ratio            # the step of one period at the average velocity
        work[1] *= ratio            # vs a elapsed
        # average velocities of the last period and of the lost time, (elapsed + period) / 2
        # apart
        np.subtract(work[0], self._last_step, out=work[3])
        work[3] *= 2.0 * self.period / (elapsed + self.period)

    def _accept(self, target_p: np.ndarray, target_v: np.ndarray, step: np.ndarray,
                change: np.ndarray) -> None:
        self._acceleration = change
        self._last_step = step
        self._position = target_p.copy()
        self._velocity = target_v.copy()
        if self._running:
            self._running.clear()
            self._reported.clear()

    def _intervene(self, tick: Tick, bad: np.ndarray, target_p: np.ndarray,
                   target_v: np.ndarray, step: np.ndarray, change: np.ndarray) -> None:
        assert self._position is not None  # update() resets the stage on its first tick
        invalid = ~(np.isfinite(target_p) & np.isfinite(target_v))
        braking = bad & invalid
        if tick.held is not None:
            braking |= bad & tick.held
        limits = self.limits
        goal_p = np.where(invalid, self._position, target_p)
        goal_p = np.minimum(np.maximum(goal_p, limits.lower), limits.upper)
        velocity_limit = self._generator.velocity
        goal_v = np.minimum(np.maximum(target_v, -velocity_limit), velocity_limit)
        # a NaN or a clamped target: rest there
        goal_v[invalid | (goal_p != target_p)] = 0.0
        result = self._generator.step(bad, braking, self._position, self._velocity,
                                      self._acceleration, goal_p, goal_v)
        if result is None:  # cannot happen with valid limits: brake where we are
            new_p, new_v = self._position.copy(), np.zeros(len(bad))
            new_a = np.zeros(len(bad))
        else:
            new_p, new_v, new_a = result
        np.copyto(target_p, new_p, where=bad)
        np.copyto(target_v, new_v, where=bad)
        np.copyto(change, new_a, where=bad)
        self._last_step = target_p - self._position
        self._position = target_p.copy()
        self._velocity = target_v.copy()
        self._acceleration = change
        self._count(tick, bad)

    def _count(self, tick: Tick, bad: np.ndarray) -> None:
        self.intervened += 1
        self.joint_counts += bad
        owners = self._owners()
        changed = np.flatnonzero(bad)
        indices = changed.tolist()
        involved = {owners[i] for i in indices}
        counts = self.controller_counts
        running = {}
        for owner in involved:
            counts[owner] = counts.get(owner, 0) + 1
            running[owner] = self._running.get(owner, 0) + 1
        self._running = running
        self._last = (tick.index, changed, owners)   # described when asked (report)
        threshold = max(1, int(math.ceil(PERSISTENT_INTERVENTION / self.period)))
        for owner, count in running.items():
            if count >= threshold and not self._reported.get(owner):
                self._reported[owner] = True
                if self.on_event is not None:
                    names = ', '.join([self.joints[i] for i in indices
                                       if owners[i] == owner][:6])
                    self.on_event(
                        f'the safety stage has limited the reference of '
                        f'{owner or "joints no controller drives"} for {count} ticks in a '
                        f'row (joints: {names}): its reference exceeds the joint limits; '
                        'check its smoothing and inputs')
        if len(self._reported) > len(running):
            self._reported = {o: r for o, r in self._reported.items() if o in running}

    @property
    def last(self) -> str:
        """Describe the newest intervention ('' if none)."""
        if self._last is None:
            return ''
        index, changed, owners = self._last
        by_owner: Dict[str, List[str]] = {}
        for i in changed:
            by_owner.setdefault(owners[i], []).append(self.joints[i])
        parts = [f'{", ".join(names[:6])}{" ..." if len(names) > 6 else ""} '
                 f'(driven by {owner or "nobody"})' for owner, names in by_owner.items()]
        return f'tick {index}: ' + '; '.join(parts)

    def report(self) -> SafetyReport:
        """Return the counts since the start."""
        return SafetyReport(
            self.ticks, self.intervened,
            {self.joints[i]: int(c) for i, c in enumerate(self.joint_counts) if c},
            dict(self.controller_counts), self.last,
            {self.joints[i]: int(c) for i, c in enumerate(self.jerk_excess) if c})
