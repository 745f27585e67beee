"""
A motion played on the simulated robot as the controller plays it, and what happened (pure).

:class:`MotionSimulator` takes a stored motion through the trajectory controller's own
planning (:func:`~sweetie_motion.controllers.goals.plan_played`: the approach from the
standing pose, the retiming to the limits, the speed), lets the robot settle on the floor in
the standing pose, then sends the plan's set-points to the servos every cycle (100 Hz, held
between cycles as the servo bus holds them) for the plan's duration and ``after_time`` more.
It records the body, the servos and the feet every cycle into a :class:`SimulatedMotion`,
whose findings say whether the robot fell, which servo held its stall torque and which foot
slipped (the criteria: :class:`SimulatedMotion` and docs/physics.md).
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, TYPE_CHECKING

import numpy as np

from sweetie_motion.model.physics_settings import PhysicsSettings
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.physics.builder import build_physics, PhysicsModel
from sweetie_motion.physics.simulation import PhysicsSimulation
from sweetie_motion.trajectory.goal import TrajectoryGoal

if TYPE_CHECKING:
    from sweetie_motion.controllers.goals import GoalPlan

#: the cycle period the servos get their set-points at [s] (the sync cycle's default)
PERIOD = 0.01


@dataclass
class SimulatedMotion:
    """
    What a simulated motion did, cycle by cycle (times from the motion's start).

    Fall: the body tilts more than ``fall_tilt`` away from the orientation the motion plans
    (the plane of its supporting feet taken as level ground), or its base sinks more than
    ``fall_height`` below the height it plans (from the settled stance on), for ``fall_time``
    on end; rocking onto a fourth foot turns the body a few degrees and is no fall.
    At stall: a servo delivers at least ``stall_share`` of its stall torque. Slip: how far a
    foot's contact point moves along the floor while it touches the floor and is supporting
    (from where it first touched in that stretch). Off the ground: how long a supporting foot
    does not touch the floor.
    """

    name: str
    duration: float                    #: the plan's duration (approach included) [s]
    times: np.ndarray                  #: (n,) [s]
    tilt: np.ndarray                   #: (n,) the body's tilt from the vertical [rad]
    deviation: np.ndarray              #: (n,) its tilt from the planned orientation [rad]
    height: np.ndarray                 #: (n,) the base's height above the floor [m]
    planned_height: np.ndarray         #: (n,) as the motion plans it (settled stance) [m]
    servos: List[str]                  #: the servos' joints
    torque: np.ndarray                 #: (n, servos) each servo's torque [N*m]
    stall: np.ndarray                  #: (servos,) their stall torques [N*m]
    legs: List[str]
    support: np.ndarray                #: (n, legs) flagged (or taken as) supporting
    on_floor: np.ndarray               #: (n, legs) the foot touches the floor
    feet: np.ndarray                   #: (n, legs, 3) contact points in the world [m]
    settings: PhysicsSettings          #: the PhysicsSettings used
    overload_time: float               #: how long a servo may hold its stall [s]
    notes: List[str] = field(default_factory=list)
    #: (n, 7) the base's position [m] and orientation (w, x, y, z) in the world (the floor at
    #: z = 0); None: not recorded
    base: Optional[np.ndarray] = None
    #: (n, joints) the full pose the servos were sent [rad]
    poses: Optional[np.ndarray] = None

    def base_at(self, time: float) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Return the base's (rotation 3x3, position [m]) at ``time`` [s] (None: unknown)."""
        if self.base is None or not len(self.times):
            return None
        k = int(np.clip(np.searchsorted(self.times, time), 0, len(self.times) - 1))
        w, x, y, z = self.base[k, 3:]
        rotation = np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        return rotation, self.base[k, :3].copy()

    @property
    def fall(self) -> Optional[float]:
        """Return when the robot fell [s from the motion's start], None if it stayed up."""
        s = self.settings
        low = self.height < self.planned_height - s.fall_height
        down = (self.deviation > s.fall_tilt) | low
        need = max(1, int(round(s.fall_time / PERIOD)))
        for start, length in _runs(down):
            if length >= need or start + length == len(down):
                return float(self.times[start])
        return None

    def stall_runs(self) -> List[Tuple[float, float]]:
        """Return per servo (longest time at stall [s], when it began [s])."""
        at = np.abs(self.torque) >= self.settings.stall_share * self.stall[None, :]
        result = []
        for column in range(at.shape[1]):
            runs = _runs(at[:, column])
            start, length = max(runs, key=lambda r: r[1]) if runs else (0, 0)
            result.append((length * PERIOD, float(self.times[start]) if length else 0.0))
        return result

    def peak_share(self) -> np.ndarray:
        """Return each servo's largest torque over its stall torque [-]."""
        return np.max(np.abs(self.torque), axis=0) / self.stall

    def slip(self) -> np.ndarray:
        """Return per leg the farthest its supporting foot slid on the floor [m]."""
        holding = self.support & self.on_floor
        result = np.zeros(len(self.legs))
        for leg in range(len(self.legs)):
            for start, length in _runs(holding[:, leg]):
                way = self.feet[start:start + length, leg, :2] - self.feet[start, leg, :2]
                result[leg] = max(result[leg], float(np.max(np.linalg.norm(way, axis=1))))
        return result

    def off_ground(self) -> np.ndarray:
        """Return per leg how long [s] its foot was off the floor while supporting."""
        return np.sum(self.support & ~self.on_floor, axis=0) * PERIOD

    def findings(self) -> List[str]:
        """Return what goes wrong, each in words with its time: a fall, a servo held at stall."""
        found = []
        fall = self.fall
        if fall is not None:
            found.append(f'falls at t = {fall:.2f} s (tilted {np.degrees(self.max_tilt()):.0f}'
                         ' deg)')
        for servo, stall, (held, start) in zip(self.servos, self.stall, self.stall_runs()):
            if held > self.overload_time:
                found.append(f'{servo} holds its stall torque ({stall:.2f} N*m) for '
                             f'{held:.2f} s from t = {start:.2f} s (overload after '
                             f'{self.overload_time:.2f} s)')
        return found

    def max_tilt(self) -> float:
        """Return the largest tilt of the body from the vertical [rad]."""
        return float(np.max(self.tilt))

    def summary(self) -> Dict[str, Any]:
        """Return the figures of the table: fall, worst stall, peak, slip, off ground, tilt."""
        runs = self.stall_runs()
        worst = int(np.argmax([r[0] for r in runs])) if runs else 0
        peak = self.peak_share()
        slip, off = self.slip(), self.off_ground()
        return {'fall': self.fall, 'stall': runs[worst][0] if runs else 0.0,
                'stall_servo': self.servos[worst] if runs else '',
                'peak': float(peak.max()) if len(peak) else 0.0,
                'peak_servo': self.servos[int(np.argmax(peak))] if len(peak) else '',
                'slip': float(slip.max()) if len(slip) else 0.0,
                'slip_leg': self.legs[int(np.argmax(slip))] if len(slip) else '',
                'off_ground': float(off.max()) if len(off) else 0.0,
                'tilt': self.max_tilt()}


def _runs(flags: np.ndarray) -> List[Tuple[int, int]]:
    """Return (start, length) of each run of True in a boolean array."""
    padded = np.concatenate(([False], np.asarray(flags, dtype=bool), [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(a), int(b - a)) for a, b in zip(edges[::2], edges[1::2])]


class MotionSimulator:
    """
    Plays stored motions on the simulated robot as its trajectory controller would.

    :param robot: the configured RobotModel (its description's ``physics:`` and ``checks:``).
    :param physics: its built physics model (built here when not given).
    :param interpolation: the controller's interpolation of position-only keyframes.
    :param policy: the controller's limits policy ('retime' or 'refuse').
    """

    def __init__(self, robot: RobotModel, physics: Optional[PhysicsModel] = None,
                 interpolation: str = 'akima', policy: str = 'retime') -> None:
        from sweetie_motion.checks.balance import BalanceModel
        from sweetie_motion.checks.robot import CheckRobot
        from sweetie_motion.controllers.goals import GoalPlanner
        from sweetie_motion.trajectory.tolerances import ToleranceDefaults
        self.robot = robot
        self.physics = physics or build_physics(robot)
        self.settings = self.physics.settings
        view = robot.view()
        self.planner = GoalPlanner('simulate', view, view.list_groups(), ToleranceDefaults(),
                                   interpolation, policy)
        checks = robot.check_settings
        self.support_height = checks.support_height
        self.overload_time = checks.overload_time
        legs = {leg: robot.get_chain_property(leg, 'contact') for leg in self.physics.legs}
        self.balance = BalanceModel(CheckRobot(robot.urdf_document(), robot.list_all_joints()),
                                    legs, checks.foot_radius) if legs else None

    def standing_pose(self) -> np.ndarray:
        """Return the pose a motion starts from: the zero pose (Proto2 stands in it)."""
        return np.zeros(len(self.physics.joints))

    def plan(self, goal: TrajectoryGoal, speed: float = 1.0,
             start: Optional[np.ndarray] = None) -> 'GoalPlan':
        """
        Return the controller's plan of a stored motion from ``start`` (the standing pose).

        :raises GoalError: the controller would refuse it.
        """
        from sweetie_motion.controllers.goals import plan_played
        from sweetie_motion.core.ports import JointVector
        pose = self.standing_pose() if start is None else np.asarray(start, dtype=float)
        return plan_played(self.planner, goal, JointVector(pose, np.zeros_like(pose),
                                                           np.zeros_like(pose)), speed)

    def simulate(self, name: str, goal: TrajectoryGoal, speed: float = 1.0,
                 start: Optional[np.ndarray] = None) -> SimulatedMotion:
        """
        Simulate a stored motion as played; return what happened.

        :param name: what to call it (in the findings and figures).
        :param goal: the stored motion (a TrajectoryGoal).
        :param speed: time scale (2: twice as fast).
        :param start: the full pose it starts from [rad] (default: the standing pose).
        :raises GoalError: the controller would refuse the motion.
        """
        start_pose = self.standing_pose() if start is None else np.asarray(start, dtype=float)
        plan = self.plan(goal, speed, start_pose)
        count = int(np.ceil((plan.duration + self.settings.after_time) / PERIOD)) + 1
        times = np.arange(count) * PERIOD
        poses = np.tile(start_pose, (count, 1))
        positions, _, _ = plan.spline.sample_many(np.minimum(times, plan.duration))
        poses[:, plan.indices] = positions
        sim = PhysicsSimulation(self.physics)
        sim.reset(start_pose)
        sim.hold(start_pose, self.settings.settle_time)
        record = _Recorder(count, len(self.physics.actuators), len(self.physics.legs))
        for k in range(count):
            record.take(k, sim)
            sim.command(poses[k])
            sim.advance(PERIOD)
        return self._result(name, plan, times, poses, record)

    def _result(self, name: str, plan: 'GoalPlan', times: np.ndarray, poses: np.ndarray,
                record: '_Recorder') -> SimulatedMotion:
        physics = self.physics
        support, origins, normals, usable = self._planned(plan, times, poses)
        # the real orientation: the world's vertical in the body's frame; the planned one:
        # the stance (of those the pose can stand on) nearest to it
        vertical = record.rotation[:, 2, :]
        angles = np.arccos(np.clip(np.einsum('ni,nmi->nm', vertical, normals), -1.0, 1.0))
        angles = np.where(usable, angles, np.pi)
        nearest = np.argmin(angles, axis=1)
        rows = np.arange(len(times))
        deviation = angles[rows, nearest]
        tilt = np.arccos(np.clip(vertical[:, 2], -1.0, 1.0))
        # the base's height over that stance; the servos sag under the weight: heights count
        # from the settled stance
        height = -np.einsum('ni,ni->n', origins[rows, nearest], normals[rows, nearest])
        planned_height = height - height[0] + record.height[0]
        return SimulatedMotion(
            name, plan.duration, times, tilt, deviation, record.height.copy(), planned_height,
            [a.joint for a in physics.actuators], record.torque, physics.stall,
            list(physics.legs), support, record.on_floor, record.feet, self.settings,
            self.overload_time, list(plan.notes), record.base, poses)

    def _planned(self, plan: 'GoalPlan', times: np.ndarray, poses: np.ndarray
                 ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """
        Return the planned support (n, legs) and the planes the body can stand on.

        :return: support, origins (n, m, 3), normals (n, m, 3), usable (n, m), in the body's
            frame (:func:`~sweetie_motion.checks.balance.support_planes`).
        """
        count = len(times)
        if self.balance is None:
            return (np.zeros((count, 0), dtype=bool), np.zeros((count, 1, 3)),
                    np.tile([0.0, 0.0, 1.0], (count, 1, 1)), np.ones((count, 1), dtype=bool))
        from sweetie_motion.checks.balance import support_columns, support_planes
        feet = self.balance.feet(poses)
        default = self.balance.default_support(feet, self.support_height)
        flags = {chain: (keys, values) for chain, keys, values in plan.support}
        support = support_columns(self.balance.legs, flags, times, default)
        stance = self.balance.stance(poses, support)
        # the feet that may carry the body: the flagged ones (three at least), else all (a
        # foot a little above the others' plane is no lifted leg: the body rocks onto it)
        candidates = np.where(support.sum(axis=1, keepdims=True) >= 3, support, True) \
            if flags else np.ones_like(support)
        origins, normals, usable = support_planes(stance.feet, stance.com, candidates)
        return support, origins, normals, usable


class _Recorder:
    """The arrays a simulation fills, one row a cycle."""

    def __init__(self, count: int, servos: int, legs: int) -> None:
        self.rotation = np.zeros((count, 3, 3))
        self.height = np.zeros(count)
        self.torque = np.zeros((count, servos))
        self.on_floor = np.zeros((count, legs), dtype=bool)
        self.feet = np.zeros((count, legs, 3))
        self.base = np.zeros((count, 7))

    def take(self, row: int, sim: PhysicsSimulation) -> None:
        """Record the simulation's state as row ``row``."""
        # columns: the body's axes in the world; rows: the world's axes in the body's frame
        self.rotation[row] = sim.base_rotation()
        base = sim.base_pose()
        self.base[row] = base
        self.height[row] = base[2]
        self.torque[row] = sim.servo_torques()
        self.on_floor[row] = sim.feet_on_floor()
        self.feet[row] = sim.contact_points()
