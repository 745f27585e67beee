"""
The virtual robot with physics: a servo bus whose servos drive the robot on a floor (pure).

:class:`PhysicsServoBus` is a :class:`~sweetie_motion.core.servo_bus.ServoBus` backed by a
:class:`~sweetie_motion.physics.simulation.PhysicsSimulation`. The cycle's input stage calls
:meth:`~PhysicsServoBus.receive` once a tick: the simulation is stepped there, in the cycle
thread, up to the tick's time (a 10 ms tick is five 2 ms steps, about 0.3 ms of CPU for the
pony), so the physics advances exactly as the cycle does and never races it. After lost ticks
it makes up at most ``max_catch_up`` seconds: a stalled machine costs the simulation time (the
robot lags the wall clock by what was dropped, counted in :meth:`~PhysicsServoBus.statistics`),
never a longer tick. The output stage's :meth:`~PhysicsServoBus.send` sets the servos'
set-points, which act from the next tick's steps (one cycle of delay, as the virtual robot's
default). Measured: the joints' positions, velocities and the servos' torques (efforts).

Torque off makes a servo limp (no torque; its gears' damping and friction stay): a lifted leg
drops, the body sags. :meth:`~PhysicsServoBus.reset` stands the robot up again.
"""

from dataclasses import dataclass
import threading
import time
from typing import Iterable, List, Sequence, Tuple

import numpy as np

from sweetie_motion.core.servo_bus import BusState, ServoBus, ServoStatus
from sweetie_motion.errors import UnknownJointError
from sweetie_motion.model.physics_settings import PhysicsConfigError
from sweetie_motion.physics.builder import PhysicsModel
from sweetie_motion.physics.simulation import PhysicsSimulation

#: a servo delivering this share of its stall torque is reported at stall in its status
AT_STALL = 0.98


@dataclass(frozen=True)
class PhysicsState:
    """
    Where the simulated robot is, as the last tick left it; world frame, SI units.

    :param stamp: the tick's time (monotonic clock) [s].
    :param sim_time: simulated time since the last reset [s].
    :param position: the root link's origin (3,) [m].
    :param orientation: its orientation as a quaternion (w, x, y, z) (4,).
    :param legs: the legs (chains with a contact link).
    :param contact_points: each leg's contact point (legs, 3) [m].
    :param on_floor: per leg, whether its foot touches the floor (legs,).
    :param forces: per leg, the floor's force on its foot (legs, 3) [N].
    """

    stamp: float
    sim_time: float
    position: np.ndarray
    orientation: np.ndarray
    legs: Tuple[str, ...]
    contact_points: np.ndarray
    on_floor: np.ndarray
    forces: np.ndarray


@dataclass(frozen=True)
class PhysicsStatistics:
    """
    How the simulation kept up with the cycle since it was created.

    :param simulated: simulated time [s].
    :param elapsed: cycle time the bus was asked to follow (its ticks' times) [s].
    :param dropped: time not simulated because it exceeded the catch-up bound [s].
    :param drops: ticks that dropped time.
    :param ticks: ticks that stepped the simulation.
    :param step_mean: CPU time of one tick's steps, mean [s].
    :param step_max: the longest [s].
    :param resets: how often the robot was stood up again.
    """

    simulated: float
    elapsed: float
    dropped: float
    drops: int
    ticks: int
    step_mean: float
    step_max: float
    resets: int

    @property
    def real_time_factor(self) -> float:
        """Return simulated time over the time followed (1.0: it kept up) [-]."""
        return self.simulated / self.elapsed if self.elapsed > 0 else 1.0


@dataclass
class _Tally:
    """What :class:`PhysicsStatistics` sums up, as the cycle thread counts it."""

    simulated: float = 0.0
    elapsed: float = 0.0
    dropped: float = 0.0
    drops: int = 0
    ticks: int = 0
    spent: float = 0.0
    longest: float = 0.0
    resets: int = 0


class PhysicsServoBus(ServoBus):
    """
    The servos of a simulated robot on the floor; thread-safe (the cycle and the ROS side).

    :param joints: the bus joints (every servo joint of the robot, in any order).
    :param physics: the built physics model of the robot.
    :param max_catch_up: the most simulated time one tick may make up [s] (>= one period).
    :param settle: the robot stands still in the zero pose this long before the first tick [s].
    :raises PhysicsConfigError: a bus joint has no servo in the model.
    """

    def __init__(self, joints: Sequence[str], physics: PhysicsModel, max_catch_up: float,
                 settle: float = 0.0) -> None:
        super().__init__(joints)
        if not max_catch_up > 0:
            raise ValueError(f'max_catch_up must be > 0, got {max_catch_up}')
        self.physics = physics
        self.max_catch_up = float(max_catch_up)
        self.sim = PhysicsSimulation(physics)
        self.timestep = float(self.sim.model.opt.timestep)
        servo_of_joint = {a.joint: k for k, a in enumerate(physics.actuators)}
        missing = [j for j in self.joints if j not in servo_of_joint]
        if missing:
            raise PhysicsConfigError('physics', f'joints without a servo in the model: '
                                     f'{", ".join(missing)}')
        #: per bus joint: its servo (actuator) and its index in the robot's full pose
        self._servo = np.array([servo_of_joint[j] for j in self.joints], dtype=np.intp)
        self._pose_index = np.array([physics.joints.index(j) for j in self.joints],
                                    dtype=np.intp)
        self._index = {j: i for i, j in enumerate(self.joints)}
        self._lock = threading.Lock()
        self._torque = np.ones(len(self.joints), dtype=bool)
        self._last: float = -1.0
        self._carry = 0.0
        self._stamp = 0.0
        self._effort = np.zeros(len(self.joints))
        self._tally = _Tally()
        zero = np.zeros(len(physics.joints))
        self.sim.reset(zero)
        if settle > 0:
            self.sim.hold(zero, settle)

    # --- the cycle's side ------------------------------------------------------------------------

    def send(self, now: float, position: np.ndarray, velocity: np.ndarray) -> None:
        """Set the servos' set-points [rad] (bus order); they act from the next tick on."""
        with self._lock:
            self.sim.data.ctrl[self._servo] = position

    def receive(self, now: float) -> BusState:
        """Step the simulation up to ``now`` (at most ``max_catch_up``); return the joints."""
        with self._lock:
            if self._last >= 0 and now > self._last:
                self._advance(now - self._last)
            if self._last < 0 or now > self._last:
                self._last = now
            sim = self.sim
            position = sim.data.qpos[self.physics.qpos[self._pose_index]]
            velocity = sim.data.qvel[self.physics.dof[self._pose_index]]
            self._effort = sim.data.actuator_force[self._servo]
            self._stamp = now
            return BusState(position, velocity, self._effort.copy(), now)

    def _advance(self, elapsed: float) -> None:
        tally = self._tally
        tally.elapsed += elapsed
        wanted = elapsed + self._carry
        if wanted > self.max_catch_up:
            # a stalled machine: the time beyond the bound is not simulated (the robot lags
            # the wall clock by it) rather than a tick spending ever longer catching up
            tally.dropped += wanted - self.max_catch_up
            tally.drops += 1
            wanted = self.max_catch_up
        steps = int(wanted / self.timestep + 1e-9)
        self._carry = wanted - steps * self.timestep
        if steps <= 0:
            return
        start = time.thread_time()
        self.sim.advance(steps * self.timestep)
        spent = time.thread_time() - start
        tally.simulated += steps * self.timestep
        tally.ticks += 1
        tally.spent += spent
        tally.longest = max(tally.longest, spent)

    # --- torque, status ------------------------------------------------------------------------

    def _indices(self, joints: Iterable[str]) -> List[int]:
        joints = list(joints)
        unknown = [j for j in joints if j not in self._index]
        if unknown:
            raise UnknownJointError(unknown, 'physics servo bus', self._index)
        return [self._index[j] for j in joints]

    def set_torque(self, joints: Iterable[str], on: bool) -> None:
        """Switch servos on (they hold where the joint is now) or off (the joint goes limp)."""
        indices = self._indices(joints)
        with self._lock:
            if on:
                # a servo switched on holds where it is, not where it was last told to be
                pose = self.sim.data.qpos[self.physics.qpos[self._pose_index[indices]]]
                self.sim.data.ctrl[self._servo[indices]] = pose
            self._torque[indices] = on
            self.sim.set_torque(on, [self.joints[i] for i in indices])

    def torque(self) -> np.ndarray:
        """Return torque on/off per joint."""
        with self._lock:
            return self._torque.copy()

    def status(self) -> List[ServoStatus]:
        """Return each servo's status: 'at stall' while it delivers its stall torque."""
        with self._lock:
            stall = self.physics.stall[self._servo]
            effort = self._effort
            return [ServoStatus(j, bool(self._torque[i]), True,
                                'at stall' if abs(effort[i]) >= AT_STALL * stall[i] else 'ok')
                    for i, j in enumerate(self.joints)]

    # --- the robot -----------------------------------------------------------------------------

    def reset(self) -> str:
        """
        Stand the robot up: upright on the floor where it is, its heading kept, still.

        The joints are put at the servos' set-points (where the controllers hold them; a limp
        joint's set-point follows where it hangs); torque stays as it is.

        :return: what was done, in words.
        """
        with self._lock:
            sim = self.sim
            pose = sim.positions()
            pose[self.physics.actuated] = sim.data.ctrl
            x, y = (float(v) for v in sim.base_pose()[:2])
            sim.reset(pose, (x, y, sim.heading()))
            self._tally.resets += 1
            off = int(np.count_nonzero(~self._torque))
        limp = f'; {off} servo(s) are off: the robot sags again' if off else ''
        return f'stood up at x {x:.3f} m, y {y:.3f} m{limp}'

    def state(self) -> PhysicsState:
        """Return where the robot is and how its feet touch the floor."""
        with self._lock:
            sim = self.sim
            base = sim.base_pose()
            return PhysicsState(self._stamp, sim.time, base[:3], base[3:],
                                tuple(self.physics.legs), sim.contact_points(),
                                sim.feet_on_floor(), sim.foot_forces())

    def statistics(self) -> PhysicsStatistics:
        """Return how the simulation kept up with the cycle."""
        with self._lock:
            t = self._tally
            return PhysicsStatistics(t.simulated, t.elapsed, t.dropped, t.drops, t.ticks,
                                     t.spent / t.ticks if t.ticks else 0.0, t.longest,
                                     t.resets)
