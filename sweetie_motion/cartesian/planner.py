"""
From Cartesian waypoints to a joint trajectory within the limits (R-CART-1, R-CART-2).

:class:`CartesianPlanner` runs the stages of a Cartesian motion in order, and refuses the whole
motion before anything moves when one of them fails:

1. the path: lines with circular blends through the waypoints (:mod:`.path`);
2. the profile along it (trapezoidal, or jerk-limited), sampled every cycle (:mod:`.profile`);
3. the workspace limiter: forbidden zones checked on the sampled path, before IK
   (:class:`~.limiter.WorkspaceLimiter`);
4. inverse kinematics sample by sample, each seeded from the previous solution (one attempt: a
   sample that the seed cannot reach is a singularity or a limit on the way, never a jump to
   another branch found by a random restart);
5. branch flips and singularities: a joint step far above what the Cartesian step explains
   (:func:`~.limiter.find_branch_flips`) refuses the motion, with one exception: a path that
   *starts* at a singularity. At a wrist singularity (the paper's first waypoint, q5 = 0)
   joints 4 and 6 turn against each other without moving the tool, and leaving it in the
   path's direction needs joint 4 turned first, faster than any joint can the closer the wrist
   is to straight, and which way the wrist bends (q5 < 0 or > 0) decides whether the path
   meets the singularity again later. So when the forward solution flips farther along the
   path than :data:`SINGULAR_START`, the path is solved backwards from the solutions at its
   end (the forward one's, then random ones) until one flips only near the start, or not at
   all. When every flip lies within :data:`SINGULAR_START` of the start (a stretch of path,
   not a time: a motion slowed down turns its wrist over the same stretch), the motion begins
   with a *wrist reconfiguration* (a joint-space move, tool still, checked) to the
   configuration the path needs a few samples later, and the joints are interpolated in joint
   space over those first samples; the tool may deviate from the path there by at most
   :data:`SINGULAR_POSITION_TOLERANCE` / :data:`SINGULAR_ORIENTATION_TOLERANCE` (the same
   trade as the "wrist singularity area" of industrial controllers), and the plan says by how
   much. Beyond that, or later on the path, the flip is refused. A start *next to* a
   singularity (a singular value of the Jacobian below :data:`SINGULAR_VALUE_RATIO` of its
   largest) counts as one, also when its wrist turns without a flip, only too fast for the
   joints right after the start;
6. the joint limiter: position, velocity and acceleration of the samples against the joints'
   planning limits (95 % of the limits, as every plan of the package, so that the trajectory
   controller's interpolation between samples stays within them). A motion too fast for the
   joints is, by ``policy``, slowed down uniformly (the smallest speed override that fits,
   then stages 2-6 again: the path keeps its shape, the timing stretches) or refused.

Joint-space commands do not come here (R-CART-2): they go to the trajectory controller as they
are. Pure: no rclpy.
"""

import dataclasses
from dataclasses import dataclass
from enum import IntEnum
import math
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.frames import Pose, rotation_angle
from sweetie_motion.cartesian.limiter import (BranchFlipViolation, find_branch_flips,
                                              JointLimiter, JointLimitViolation,
                                              LimitViolation, WorkspaceLimiter, ZoneViolation)
from sweetie_motion.cartesian.path import (ARC, CartesianPath, EQRADIUS, PathError, Segment,
                                           WaypointLike)
from sweetie_motion.cartesian.plan_checks import CheckViolation, PathChecks
from sweetie_motion.cartesian.profile import (CartesianSamples, MotionProfile, path_profile,
                                              ProfileError, sample_path)
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.ik import ChainIK
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.timing import planning_limits

#: what a motion beyond the joints' velocity or acceleration limits gets
POLICIES = ('retime', 'refuse')
#: how far the robot may be from the first waypoint [m] and [rad]
START_POSITION_TOLERANCE = 1e-3
START_ORIENTATION_TOLERANCE = 1e-2
#: retiming rounds at most (each one slows the motion down by what the last check needed)
RETIME_ROUNDS = 4
#: a flip this close to the start of a path [m of the path parameter] is a singular start (see
#: the module). A length, not a time: the same path slowed down by the retiming (tight blends
#: make the wrist too fast) turns its wrist over the same stretch but for longer, and a time
#: bound refused the paper's path at blend radii of 0.5-4 mm (12.5 mm: what 0.5 s from rest at
#: the paper's 0.1 m/s^2 covers)
SINGULAR_START = 0.0125
#: how far the tool may leave the path while the wrist leaves a singular start [m], [rad]
SINGULAR_POSITION_TOLERANCE = 2e-3
SINGULAR_ORIENTATION_TOLERANCE = math.radians(2.0)
#: a start whose Jacobian has singular values below this share of its largest is singular
SINGULAR_VALUE_RATIO = 1e-2
#: the singular-start figures of a plan that does not start at a singularity
NOT_SINGULAR = (0, 0.0, 0.0)
#: samples after the last flip of a singular start that are interpolated too
SINGULAR_MARGIN = 3
#: random configurations tried at the end of a path whose start is singular
END_SEEDS = 16


class CartesianCode(IntEnum):
    """Result codes of sweetie_motion_msgs/action/CartesianMotion (FollowJointTrajectory's too)."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5
    CONTROLLER_UNAVAILABLE = -11
    CANCELED = -12
    PLANNING_FAILED = -20
    FORBIDDEN_ZONE = -21
    NO_IK_SOLUTION = -22
    JOINT_LIMITS = -23


def code_of(error: BaseException) -> CartesianCode:
    """Return the result code of a planning error (the one table from error to code)."""
    table = ((ZoneViolation, CartesianCode.FORBIDDEN_ZONE),
             (CheckViolation, CartesianCode.PLANNING_FAILED),
             (IkPathError, CartesianCode.NO_IK_SOLUTION),
             (BeyondReach, CartesianCode.NO_IK_SOLUTION),
             (JointLimitViolation, CartesianCode.JOINT_LIMITS),
             (BranchFlipViolation, CartesianCode.PLANNING_FAILED),
             (StartPoseError, CartesianCode.PLANNING_FAILED),
             (PathError, CartesianCode.PLANNING_FAILED),
             (ProfileError, CartesianCode.INVALID_GOAL))
    for kind, code in table:
        if isinstance(error, kind):
            return code
    return CartesianCode.PLANNING_FAILED if isinstance(error, SweetieMotionError) else \
        CartesianCode.INVALID_GOAL


class IkPathError(LimitViolation):
    """Inverse kinematics found no solution for a sample of the path (from the previous one)."""

    def __init__(self, time: float, sample: int, segment: Optional[Segment],
                 position_error: float, orientation_error: float) -> None:
        self.position_error = float(position_error)
        self.orientation_error = float(orientation_error)
        super().__init__(
            f'no inverse kinematics solution within the joint limits (residual '
            f'{position_error * 1e3:.2f} mm, {math.degrees(orientation_error):.2f} deg): a '
            'singularity, a joint limit or the edge of the workspace on the way',
            time, sample, segment)


class BeyondReach(PathError):
    """A waypoint farther from the chain's shoulder than the chain reaches (no IK is tried)."""

    def __init__(self, index: int, distance: float, reach: float) -> None:
        self.distance = float(distance)
        self.reach = float(reach)
        super().__init__(
            f"beyond the arm's reach (about {reach * 1e3:.0f} mm from its shoulder; this "
            f'waypoint is {distance * 1e3:.0f} mm from it): no pose of the arm gets the tool '
            'there', index)


class StartPoseError(LimitViolation):
    """The robot is not at the path's first waypoint."""

    def __init__(self, distance: float, angle: float) -> None:
        self.distance = float(distance)
        self.angle = float(angle)
        super().__init__(
            f'the tool is {distance * 1e3:.1f} mm and {math.degrees(angle):.1f} deg from the '
            'first waypoint: start the path at the current pose (start_from_current) or move '
            'there first', 0.0, 0, None)


@dataclass(frozen=True)
class CartesianRequest:
    """
    A Cartesian motion as asked.

    :param waypoints: poses of the tip in the chain's base frame [m] (:class:`Pose`, 4x4, or
        (position, rotation)).
    :param radius: blend radius [m], one or one per waypoint (0: stop at the corner).
    :param max_velocity: path speed [m/s]; :param max_acceleration: [m/s^2].
    :param max_jerk: [m/s^3] for the jerk-limited profile; None: trapezoidal.
    :param lateral_acceleration: centripetal limit on the blends [m/s^2] (None: none).
    :param angular_speed: tool rotation speed limit [rad/s] (None: max_velocity / 0.1 m).
    :param speeds: per waypoint, the speed of the move arriving there [m/s] (None: all
        max_velocity).
    :param override: speed factor in (0, 1].
    """

    waypoints: Sequence[WaypointLike]
    radius: Union[float, Sequence[float]] = 0.0
    max_velocity: float = 0.1
    max_acceleration: float = 0.2
    max_jerk: Optional[float] = None
    lateral_acceleration: Optional[float] = None
    angular_speed: Optional[float] = None
    speeds: Optional[Sequence[Optional[float]]] = None
    override: float = 1.0


@dataclass(frozen=True)
class CartesianPlan:
    """
    A planned Cartesian motion: the path, its samples and the joint trajectory.

    :param path: the path; :param profile: its profile; :param samples: the sampled path.
    :param joints: the chain's joints (the columns of ``positions``).
    :param positions: joint positions per sample [rad or m], shape (n, joints).
    :param velocities: joint velocities per sample (central differences), same shape.
    :param override: the speed factor the motion runs with (below the request's when it was
        slowed down to fit the joints' limits).
    :param retimed_by: what slowed it down ('' if nothing): the joint and the limit.
    :param prelude: the wrist reconfiguration before the path (tool still): its number of
        samples at the start of ``times``/``positions`` (0: none).
    :param times: time of every sample of the joint trajectory [s] (prelude, then the path).
    :param singular_start: (samples interpolated in joint space at a singular start, largest
        position [m] and orientation [rad] deviation of the tool from the path there).
    """

    path: CartesianPath
    profile: MotionProfile
    samples: CartesianSamples
    joints: Tuple[str, ...]
    positions: np.ndarray
    velocities: np.ndarray
    override: float
    retimed_by: str = ''
    prelude: int = 0
    times: Optional[np.ndarray] = None
    singular_start: Tuple[int, float, float] = (0, 0.0, 0.0)
    #: what the motion checks warn about (collisions below their margin, set to warn)
    warnings: Tuple[str, ...] = ()

    @property
    def duration(self) -> float:
        """Return the duration of the whole motion, prelude included [s]."""
        return float(self.times[-1]) if self.times is not None and len(self.times) else 0.0

    @property
    def prelude_duration(self) -> float:
        """Return how long the wrist reconfiguration before the path takes [s]."""
        return float(self.times[self.prelude]) if self.prelude and self.times is not None \
            else 0.0

    def heading(self, t: float) -> int:
        """
        Return the waypoint the tool heads for at time ``t`` of the motion [s].

        An index in the path's waypoints: the one a line leads to, the one after the corner a
        blend rounds (the move to the corner is as done as it gets), the first one after the
        start during the wrist reconfiguration. A console follows the program's lines so.
        """
        times = self.times if self.times is not None else self.samples.time
        index = min(max(int(np.searchsorted(times, t, side='right')) - 1, 0), len(times) - 1)
        kept = self.path.input_indices
        if index < self.prelude:
            return kept[min(1, len(kept) - 1)]
        segment = self.samples.segment_of(index - self.prelude)
        if segment.kind != ARC:
            return segment.waypoint
        return next((k for k in kept if k > segment.waypoint), kept[-1])

    def until_waypoint(self, waypoint: int) -> 'CartesianPlan':
        """
        Return this motion cut where the tool comes to rest at ``waypoint`` or next after it.

        ``waypoint`` is an index in the path's waypoints as given. Planned whole and cut, the
        motion up to there is the one the whole path takes (the same joint branch), which a
        plan of that stretch alone need not be. A waypoint passed without a stop (a blend, a
        straight pass) cuts at the next stop.
        """
        stop = next((c.s for c in self.path.corners
                     if c.waypoint >= waypoint and c.kind in ('stop', 'end')), None)
        if stop is None or self.times is None:
            return self
        last = min(int(np.searchsorted(self.samples.s, stop - 1e-9, side='left')),
                   len(self.samples) - 1)
        keep = self.prelude + last + 1
        if keep >= len(self.times):
            return self
        velocities = self.velocities[:keep].copy()
        velocities[-1] = 0.0   # at rest at the stop
        return dataclasses.replace(self, positions=self.positions[:keep],
                                   velocities=velocities, times=self.times[:keep])

    def describe(self) -> str:
        """Say what was planned, in one line."""
        kinds = [seg.kind for seg in self.path.segments]
        text = (f'{len(kinds)} segments ({kinds.count("line")} lines, {kinds.count("arc")} '
                f'arcs), {self.path.length * 1e3:.1f} mm, {self.duration:.2f} s, '
                f'{len(self.samples)} samples')
        if self.prelude:
            turn = np.degrees(self.positions[self.prelude] - self.positions[0])
            moved = ', '.join(f'{j} {d:+.0f} deg' for j, d in zip(self.joints, turn)
                              if abs(d) >= 0.5)
            text += (f'; first a wrist reconfiguration of {self.prelude_duration:.2f} s with '
                     f'the tool still ({moved})')
        count, position_error, orientation_error = self.singular_start
        if count:
            text += (f'; singular start: the first {count} samples interpolated in joint space '
                     f'(the tool within {position_error * 1e3:.2f} mm and '
                     f'{math.degrees(orientation_error):.2f} deg of the path)')
        if self.retimed_by:
            text += f'; slowed down to {self.override * 100:.0f} % ({self.retimed_by})'
        for warning in self.warnings:
            text += f'; {warning}'
        return text


class CartesianPlanner:
    """
    Plans Cartesian motions of one chain (see the module docstring for the stages).

    :param model: the configured robot model.
    :param chain: the chain whose tip moves.
    :param period: sample period [s] (the cycle period).
    :param workspace: the forbidden zones (None: none).
    :param policy: 'retime' or 'refuse' a motion beyond the joints' velocity or acceleration
        limits.
    :param eqradius: equivalent radius of orientation moves [m] (see :class:`CartesianPath`).
    :param flip_ratio: joint step per Cartesian step still explained [rad/m] (branch flips).
    :param task: 'pose' (position and orientation of the tip) or 'position' (the tip's
        position only, e.g. a pony's hoof on a 5-joint leg; the waypoints' orientation is
        then ignored); default: 'pose' for chains of six joints or more, else 'position'.
    :param checks: the motion checks of the planned joint path (the links against each other
        and the zones); None: none.
    :raises ValueError: an unknown policy or task, or a period that is not > 0.
    """

    def __init__(self, model: RobotModel, chain: str, period: float,
                 workspace: Optional[WorkspaceLimiter] = None, policy: str = 'retime',
                 eqradius: float = EQRADIUS, flip_ratio: float = 50.0,
                 task: Optional[str] = None, checks: Optional[PathChecks] = None) -> None:
        if policy not in POLICIES:
            raise ValueError(f'policy must be one of {", ".join(POLICIES)}, got {policy!r}')
        if not period > 0:
            raise ValueError(f'period must be > 0 [s], got {period}')
        self.model = model
        self.chain = chain
        self.period = float(period)
        self.workspace = workspace or WorkspaceLimiter()
        self.policy = policy
        self.eqradius = float(eqradius)
        self.flip_ratio = float(flip_ratio)
        self.checks = checks
        self.joints = tuple(model.list_joints(chain))
        indices = model.get_chain_indices(chain)
        self.limits = planning_limits(model.joint_limits()).take(indices)
        self.limiter = JointLimiter(self.joints, self.limits)
        # virtual joints (a hoof's contact point) have no servo: the solver leaves them be
        virtual = [j for j in self.joints if model.is_virtual(j)]
        driven = len(self.joints) - len(virtual)
        self.task = task or ('pose' if driven >= 6 else 'position')
        if self.task not in ('pose', 'position'):
            raise ValueError(f"task must be 'pose' or 'position', got {self.task!r}")
        # Planning is offline: the solves are bounded by iterations and attempts, so that a
        # plan is the same on a busy machine; the wall-time guards only stop a runaway solve.
        self.ik = ChainIK(model, chain, task=self.task, max_attempts=1, time_guard=1.0,
                          max_iterations=200, fixed_joints=virtual)
        # the end of a path whose start is singular: any solution (restarts), see _from_the_end
        self.end_ik = ChainIK(model, chain, task=self.task, time_guard=2.0, max_attempts=64,
                              fixed_joints=virtual, random_seed=0)

    def tip_pose(self, position: ArrayLike) -> Pose:
        """Return the pose of the chain's tip at joint ``position`` (chain order)."""
        return Pose.from_matrix(self.model.forward_kinematics(self.chain, position))

    def plan(self, request: CartesianRequest, start: ArrayLike) -> CartesianPlan:
        """
        Plan ``request`` from the joint positions ``start`` (chain order).

        :raises PathError: the waypoints or the radius make no path (naming the waypoint).
        :raises ProfileError: a speed, acceleration or override that is not valid.
        :raises StartPoseError: the tool is not at the first waypoint.
        :raises ZoneViolation: the path enters a forbidden zone.
        :raises IkPathError: a sample without an IK solution (time, segment, residual).
        :raises BranchFlipViolation: a joint swings where the tool barely moves.
        :raises JointLimitViolation: a joint beyond its limits (its velocity or acceleration
            only under the 'refuse' policy).
        :raises CheckViolation: a link into another or into a zone (checks set to refuse).
        """
        start = np.asarray(start, dtype=float)
        if start.shape != (len(self.joints),):
            raise ValueError(f'start: expected {len(self.joints)} joint positions, got '
                             f'{start.shape}')
        path = CartesianPath(request.waypoints, request.radius, eqradius=self.eqradius)
        self._check_start(path, start)
        self._check_reach(path)
        profile = path_profile(path, request.max_velocity, request.max_acceleration,
                               request.max_jerk, request.lateral_acceleration,
                               request.angular_speed, request.speeds)
        override = float(request.override)
        retimed_by = ''
        last: Optional[JointLimitViolation] = None
        for _ in range(RETIME_ROUNDS + 1):
            samples = sample_path(path, profile, self.period, override)
            self.workspace.check(samples)
            positions, singular = self._joint_path(samples, start)
            try:
                self.limiter.check_samples(samples, positions)
            except JointLimitViolation as violation:
                if violation.quantity == 'position' or self.policy == 'refuse':
                    raise
                last = violation
                factor = self._slow_down(positions, samples.time)
                override /= factor
                retimed_by = (f'{violation.joint} needed {abs(violation.value):.2f} against '
                              f'its {violation.quantity} limit {violation.limit:.2f}')
                continue
            return self._finish(path, profile, samples, positions, start, override, retimed_by,
                                singular)
        assert last is not None
        raise last  # still beyond the limits after every round of slowing down

    def _check_start(self, path: CartesianPath, start: np.ndarray) -> None:
        """
        Refuse a path whose first waypoint is not where the tool is at ``start``.

        :raises StartPoseError: how far the tool is from it [m, rad].
        """
        here = self.tip_pose(start)
        first = path.waypoints[0]
        distance = float(np.linalg.norm(here.position - first.position))
        angle = float(np.arccos(np.clip(
            (np.trace(here.rotation.T @ first.rotation) - 1) / 2, -1.0, 1.0)))
        if self.task == 'position':
            angle = 0.0
        if distance > START_POSITION_TOLERANCE or angle > START_ORIENTATION_TOLERANCE:
            raise StartPoseError(distance, angle)

    def _check_reach(self, path: CartesianPath) -> None:
        """
        Refuse a waypoint beyond the chain's reach before any IK (a sampled path would fail).

        IK on the way to such a waypoint ends at the edge of the workspace with a small
        residual, which reads as a near miss; the waypoint itself is what cannot be reached.

        :raises BeyondReach: the first such waypoint (its index as given).
        """
        for index, pose in zip(path.input_indices, path.waypoints):
            beyond = self.ik.beyond_reach(pose.position)
            if beyond is not None:
                raise BeyondReach(index, *beyond)

    def _finish(self, path: CartesianPath, profile: MotionProfile, samples: CartesianSamples,
                positions: np.ndarray, start: np.ndarray, override: float, retimed_by: str,
                singular: Tuple[int, float, float]) -> CartesianPlan:
        """
        Return the plan of joint positions within the limits: velocities, a reconfiguration.

        A reconfiguration of the joints (the first sample's solution is not ``start``) comes
        first, as a prelude; the plan is checked (links, zones) with it.
        """
        velocities = np.gradient(positions, samples.time, axis=0) if len(samples) > 1 \
            else np.zeros_like(positions)
        velocities[0] = velocities[-1] = 0.0  # the profile starts and ends at rest
        times = samples.time
        prelude = 0
        if np.any(np.abs(positions[0] - start) > 1e-6):
            lead_t, lead_q, lead_v = self._reconfiguration(start, positions[0])
            prelude = len(lead_t) - 1
            times = np.concatenate([lead_t[:-1], samples.time + lead_t[-1]])
            positions = np.concatenate([lead_q[:-1], positions])
            velocities = np.concatenate([lead_v[:-1], velocities])
        warnings: Tuple[str, ...] = ()
        if self.checks is not None:
            segments = [None] * prelude + [samples.segment_of(k) for k in range(len(samples))]
            warnings = tuple(self.checks.check(times, positions, segments))
        return CartesianPlan(path, profile, samples, self.joints, positions, velocities,
                             override, retimed_by, prelude, times, singular, warnings)

    def _joint_path(self, samples: CartesianSamples, start: np.ndarray
                    ) -> Tuple[np.ndarray, Tuple[int, float, float]]:
        """
        Return the joint positions of every sample and the singular start's figures.

        See the module, stages 4 and 5.
        """
        forward = self._solve(samples, start, range(len(samples)))
        null = self._start_null_space(start)
        flips = find_branch_flips(samples, forward, self.joints, self.flip_ratio)
        if not flips:
            return self._strained_start(samples, start, forward, null)
        first = flips[0]
        refused = BranchFlipViolation(first.joint, first.step, first.expected, first.time,
                                      first.sample, first.segment)
        if self._along(samples, max(f.sample for f in flips)) <= SINGULAR_START:
            blended = self._singular_start(samples, start, forward,
                                           max(f.sample for f in flips), null)
            if blended is not None:
                return blended
        # the branch the start took meets a singularity later, or cannot leave the start in
        # time: the path solved backwards from another solution at its end may need no flip
        # but at the start
        backward, flips = self._from_the_end(samples, start, forward, refused)
        if not flips:
            return self._strained_start(samples, start, backward, null)
        blended = self._singular_start(samples, start, backward, max(f.sample for f in flips),
                                       null)
        if blended is None:
            raise refused
        return blended

    @staticmethod
    def _along(samples: CartesianSamples, index: int) -> float:
        """Return how far sample ``index`` is along the path from its start [m]."""
        return float(samples.s[index] - samples.s[0])

    def _start_null_space(self, start: np.ndarray) -> np.ndarray:
        """
        Return the directions the Jacobian at the start (nearly) cannot see, as rows.

        Empty unless the start is at or next to a singularity of the task: a position-only
        task of a redundant leg has a null space everywhere, which is freedom, not a
        singularity.
        """
        jacobian = self.model.jacobian(self.chain, start)
        task = jacobian if self.task == 'pose' else jacobian[:3]
        task_values = np.linalg.svd(task, compute_uv=False)
        if np.sum(task_values > SINGULAR_VALUE_RATIO * task_values[0]) >= min(task.shape):
            return np.zeros((0, len(self.joints)))
        _, singular_values, rows = np.linalg.svd(jacobian)
        rank = int(np.sum(singular_values > SINGULAR_VALUE_RATIO * singular_values[0]))
        return rows[rank:]

    def _strained_start(self, samples: CartesianSamples, start: np.ndarray,
                        positions: np.ndarray, null: np.ndarray
                        ) -> Tuple[np.ndarray, Tuple[int, float, float]]:
        """
        Return a flip-free joint path, blended at the start when a singularity strains it.

        Next to a singularity the wrist turns without a flip, only too fast for the joints
        right after the start, where slowing the motion down does not help: that is a singular
        start too. A strain no blend removes is left to the retiming.
        """
        strain = self._strain_at_start(samples, positions) if len(null) else None
        if strain is not None:
            blended = self._singular_start(samples, start, positions, strain.sample, null)
            if blended is not None:
                return blended
        return positions, NOT_SINGULAR

    def _singular_start(self, samples: CartesianSamples, start: np.ndarray,
                        tracked: np.ndarray, last: int, null: np.ndarray
                        ) -> Optional[Tuple[np.ndarray, Tuple[int, float, float]]]:
        """
        Blend a singular start into ``tracked`` (the joint path of the samples).

        The joints the Jacobian cannot see at the start (``null``: joints 4 and 6 against each
        other at a wrist singularity) turn towards where the path is a moment after sample
        ``last``, which holds the tool where the robot holds it now (checked); over the
        shortest span that joins the tracked path without a kink, within the joint limits and
        the singular tolerances.

        :return: (positions, (samples interpolated, position error, orientation error)), or
            None when no such blend exists.
        """
        if not len(null):
            return None
        end = min(len(samples) - 1, last + SINGULAR_MARGIN)
        while True:
            if self._along(samples, end) > SINGULAR_START:
                return None
            positions = self._blend(samples, tracked, start, null, end)
            if positions is None:
                return None
            if not find_branch_flips(samples, positions, self.joints, self.flip_ratio):
                try:
                    reach = min(len(samples), end + 2 * SINGULAR_MARGIN + 1)
                    self.limiter.check(positions[:reach], samples.time[:reach])
                    break
                except JointLimitViolation:
                    pass
            end = min(len(samples) - 1, max(end + 1, int(end * 1.5)))
        position_error = orientation_error = 0.0
        for i in range(end + 1):
            pose = self.tip_pose(positions[i])
            position_error = max(position_error, float(np.linalg.norm(
                pose.position - samples.position[i])))
            if self.task == 'pose':
                orientation_error = max(orientation_error, float(rotation_angle(
                    pose.rotation, samples.rotation[i])))
        if position_error > SINGULAR_POSITION_TOLERANCE or \
                orientation_error > SINGULAR_ORIENTATION_TOLERANCE:
            return None
        return positions, (end + 1, position_error, orientation_error)

    def _strain_at_start(self, samples: CartesianSamples,
                         positions: np.ndarray) -> Optional[JointLimitViolation]:
        """Return the joint limit the first :data:`SINGULAR_START` of the path breaks (or None)."""
        reach = int(np.searchsorted(samples.s - samples.s[0], SINGULAR_START, side='right'))
        if reach < 3:
            return None
        try:
            self.limiter.check(positions[:reach], samples.time[:reach])
        except JointLimitViolation as violation:
            if violation.quantity != 'position':
                return violation
        return None

    def _from_the_end(self, samples: CartesianSamples, start: np.ndarray,
                      forward: np.ndarray, refused: BranchFlipViolation
                      ) -> Tuple[np.ndarray, list]:
        """
        Return a joint path solved backwards whose flips are all near the start, and its flips.

        The solutions at the path's end are tried from the forward solution's end and from
        :data:`END_SEEDS` random configurations (a fixed random generator: the same request
        always plans the same way). A path whose first configuration differs from ``start``
        must hold the tool there (a wrist turn).

        :raises BranchFlipViolation: ``refused``, when no end solution gives such a path.
        """
        target = np.eye(4)
        target[:3, :3] = samples.rotation[-1]
        target[:3, 3] = samples.position[-1]
        goal = target if self.task == 'pose' else target[:3, 3]
        rng = np.random.default_rng(0)
        seeds = [forward[-1]] + [self.end_ik.random_position(rng) for _ in range(END_SEEDS)]
        tried: List[np.ndarray] = []
        for seed in seeds:
            result = self.end_ik.solve(goal, seed)
            if not result.success or any(np.allclose(result.position, t, atol=1e-3)
                                         for t in tried):
                continue
            tried.append(result.position)
            try:
                backward = self._solve(samples, result.position,
                                       range(len(samples) - 1, -1, -1))
            except IkPathError:
                continue
            flips = find_branch_flips(samples, backward, self.joints, self.flip_ratio)
            if any(self._along(samples, f.sample) > SINGULAR_START for f in flips):
                continue
            if not flips and not self._tool_stays(start, backward[0]):
                continue
            return backward, flips
        raise refused

    def _blend(self, samples: CartesianSamples, tracked: np.ndarray, start: np.ndarray,
               null: np.ndarray, end: int) -> Optional[np.ndarray]:
        """
        Interpolate the first ``end`` samples of a singular start in joint space.

        From ``start`` turned in the Jacobian's null space (the tool stays) towards
        ``tracked[end]``, to ``tracked[end]`` with its slope: a cubic Hermite in the path
        parameter, at rest at the start, joining the tracked path without a kink. None when the
        turned configuration does not hold the tool.
        """
        turned = start + null.T @ (null @ (tracked[end] - start))
        if not self._tool_stays(start, turned):
            return None
        span = samples.s[end] - samples.s[0]
        if span <= 0 or end + 1 >= len(samples):
            return None
        sigma = (samples.s[:end + 1] - samples.s[0]) / span
        after = min(end + 1, len(samples) - 1)
        ds = samples.s[after] - samples.s[end - 1]
        slope = (tracked[after] - tracked[end - 1]) / ds * span if ds > 0 else \
            np.zeros(len(start))
        h01 = sigma ** 2 * (3 - 2 * sigma)
        h11 = sigma ** 2 * (sigma - 1)
        positions = tracked.copy()
        positions[:end + 1] = turned + h01[:, None] * (tracked[end] - turned) + \
            h11[:, None] * slope
        return positions

    def _solve(self, samples: CartesianSamples, seed: np.ndarray,
               order: Sequence[int]) -> np.ndarray:
        positions = np.empty((len(samples), len(self.joints)))
        target = np.eye(4)
        for i in order:
            target[:3, :3] = samples.rotation[i]
            target[:3, 3] = samples.position[i]
            result = self.ik.solve(target if self.task == 'pose' else target[:3, 3], seed)
            if not result.success:
                raise IkPathError(float(samples.time[i]), i, samples.segment_of(i),
                                  result.position_error, result.orientation_error)
            positions[i] = seed = result.position
        return positions

    def _tool_stays(self, start: np.ndarray, end: np.ndarray, checks: int = 50) -> bool:
        """Return whether the tool stays at its pose on the joint-space line start..end."""
        here = self.tip_pose(start)
        for fraction in np.linspace(0.0, 1.0, checks):
            pose = self.tip_pose(start + fraction * (end - start))
            turned = 0.0 if self.task == 'position' else \
                rotation_angle(pose.rotation, here.rotation)
            if np.linalg.norm(pose.position - here.position) > START_POSITION_TOLERANCE or \
                    turned > START_ORIENTATION_TOLERANCE:
                return False
        return True

    def _reconfiguration(self, start: np.ndarray, end: np.ndarray
                         ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Plan the joint-space move start -> end, one sample a period, within the limits.

        On the straight line between the two (the line the tool was checked to stay still
        on): one jerk-limited profile of the fraction travelled, bounded by every joint.
        """
        import ruckig
        delta = end - start
        moving = np.abs(delta) > 1e-12
        limits = self.limits

        def bound(values: np.ndarray, fallback: float) -> float:
            usable = np.where(np.isfinite(values) & (values > 0), values, fallback)
            return float(np.min(usable[moving] / np.abs(delta[moving])))
        data = ruckig.InputParameter(1)
        data.current_position, data.target_position = [0.0], [1.0]
        data.max_velocity = [bound(limits.velocity, 1e3)]
        data.max_acceleration = [bound(limits.acceleration, 1e4)]
        data.max_jerk = [bound(limits.jerk, math.inf)] if np.all(
            np.isfinite(limits.jerk[moving])) else [math.inf]
        trajectory = ruckig.Trajectory(1)
        ruckig.Ruckig(1).calculate(data, trajectory)
        count = max(2, int(math.ceil(trajectory.duration / self.period)) + 1)
        grid = np.arange(count) * self.period
        fraction = np.empty(count)
        rate = np.empty(count)
        for i, t in enumerate(grid):
            p, v, _ = trajectory.at_time(min(float(t), trajectory.duration))
            fraction[i], rate[i] = p[0], v[0]
        fraction[-1], rate[-1] = 1.0, 0.0
        return grid, start + fraction[:, None] * delta, rate[:, None] * delta

    def _slow_down(self, positions: np.ndarray, times: np.ndarray) -> float:
        """Return the factor by which the motion must slow down to fit (> 1)."""
        dt = np.diff(times)
        velocity = np.diff(positions, axis=0) / dt[:, None]
        need = float(np.max(np.abs(velocity) / self.limits.velocity, initial=0.0))
        if len(positions) >= 3:
            middle = (times[2:] - times[:-2]) / 2
            acceleration = np.diff(velocity, axis=0) / middle[:, None]
            need = max(need, math.sqrt(float(np.max(
                np.abs(acceleration) / self.limits.acceleration, initial=0.0))))
        return max(need, 1.0) * 1.02
