"""
Inverse kinematics with joint limits on any chain of a RobotModel (R-MODEL-4).

:class:`ChainIK` finds joint positions of a chain that put the chain's tip at a target pose
(full pose), at a target position (position-only, e.g. a pony hoof), or at a pose with
per-axis weights. It is a Levenberg-Marquardt damped least squares on pinocchio:

* the error is the position difference and the log map of the rotation error
  (``pinocchio.log3(R_target R^T)``), both in the chain's base axes;
* every step is bounded by the joint limits: joints that a step would push past a limit stop
  at the limit, so an iterate never leaves the limits;
* a revolute joint is an angle: a step that carries it past the middle of the arc its limits
  forbid lands it on the far limit (same pose, modulo 2 pi), so an attempt is not trapped on
  the wrong side of a limit -- this alone doubles the success of one attempt on a 6-DOF arm
  with +-170 deg limits;
* the damping adapts to the error (large far from the target, vanishing near it, so the last
  iterations are Gauss-Newton steps) and grows on every step that would not reduce the error;
* an attempt that lasts goes on with geodesic acceleration (a second-order correction of the
  step from one more evaluation): near a singular configuration the error is a curved valley
  that plain damped steps crawl along;
* an attempt that stalls (steps rejected again and again, or the error not halving within a
  few iterations) is restarted from a random configuration within the limits, for as long as
  the iteration and attempt budgets allow -- the strategy of TRAC-IK, whose KDL part gives up
  as soon as it meets a limit;
* a solve is bounded by counts, not by time: the iteration and attempt budgets, and restarts
  that draw the same configurations in every solve, so the same request gets the same answer
  on an idle and on a busy machine (TRAC-IK's 5 ms timeout gave 99.0 % idle and 91-93 % under
  load). The wall-time guard (:data:`TIME_GUARD`) only stops a runaway solve, and says so
  (reason ``'time guard'``);
* a target farther from the second joint's circle around the first joint's axis than the rest
  of the chain reaches is beyond reach: one descent finds the closest point and the solve ends
  with reason ``'beyond reach'``, without restarts.

A solve always returns an :class:`IkResult`: ``success=True`` with a solution within the
limits and within the tolerances, or ``success=False`` with the best configuration found
(still within the limits), its residual and the number of attempts. Unreachable targets are
not exceptions; :meth:`IkResult.require` turns a failure into :class:`IkNoSolutionError` for
callers that prefer one. Bad input (wrong shapes, NaN, a matrix that is not a rotation, an
unknown chain) raises :class:`IkInputError` or the model's own errors, before any work.

Thread safety: a ChainIK is read-only after construction; every thread gets its own pinocchio
Data, buffers and random generator, so one instance may serve several threads at once.
"""

import math
import threading
import time
from typing import Callable, NamedTuple, Optional, Sequence, Tuple, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike
import pinocchio
from scipy.linalg import lapack

from sweetie_motion.errors import ModelError
from sweetie_motion.model.robot_model import JointInfo, RobotModel

if TYPE_CHECKING:
    from sweetie_motion.model.kinematics import ChainEvaluator

#: Tasks a ChainIK solves: the full pose, or the position of the tip only.
TASKS = ('pose', 'position')
#: Default tolerances: position [m] and orientation [rad].
POSITION_TOLERANCE = 1e-5
ORIENTATION_TOLERANCE = 1e-4
#: Default wall-time guard of one solve [s]: a last resort, far above what the iteration and
#: attempt budgets take (a few ms), so that only a runaway solve meets it.
TIME_GUARD = 1.0
#: Default iteration budget of one solve, all attempts together.
MAX_ITERATIONS = 4000
#: Default number of starts of one solve (the seed and the random restarts).
MAX_ATTEMPTS = 200

# Damping: lambda = _DAMPING_GAIN * squared error + _DAMPING_MIN, times a factor that grows
# on rejected steps and shrinks on accepted ones. Proportional to the squared error, the
# damping vanishes near the target (quadratic convergence) and tames steps far from it.
_DAMPING_GAIN = 0.05
_DAMPING_MIN = 1e-9
_FACTOR_UP = 8.0
_FACTOR_DOWN = 0.3
_FACTOR_MIN = 1e-3
#: An attempt whose steps are rejected this many times in a row is at a local minimum.
_MAX_REJECTIONS = 4
#: An attempt must reduce its squared error by _PROGRESS_RATIO within this many iterations,
#: or it restarts.
_PROGRESS_WINDOW = 4
_PROGRESS_RATIO = 0.5
#: Geodesic acceleration from this iteration of an attempt on (the easy targets converge
#: before; the others are near a singular configuration, where the error is a curved valley),
#: with the probe step and the largest accepted ratio |acceleration| / |velocity|.
_GEODESIC_AFTER = 8
_GEODESIC_PROBE = 0.1
_GEODESIC_RATIO = 0.5
#: Hard cap of iterations of one attempt.
_ATTEMPT_ITERATIONS = 100
#: Sampling span [rad or m] of random restarts for a joint without a finite limit.
_FREE_SPAN = math.pi


class IkError(ModelError):
    """Base class of the errors of inverse kinematics."""


class IkInputError(IkError, ValueError):
    """
    An argument of ChainIK or of a solve is malformed.

    :param argument: the name of the argument.
    :param value: the offending value (or a short description of it).
    :param reason: what is wrong with it.
    """

    def __init__(self, argument: str, value: object, reason: str, chain: str = '') -> None:
        self.argument = argument
        self.value = value
        self.reason = reason
        self.chain = chain
        where = f'inverse kinematics of chain {chain!r}: ' if chain else 'inverse kinematics: '
        super().__init__(f'{where}{argument}: {reason}')


class IkNoSolutionError(IkError):
    """No configuration within the limits reaches the target within the tolerance and budget."""

    def __init__(self, chain: str, result: 'IkResult') -> None:
        self.chain = chain
        self.result = result
        self.position_error = result.position_error
        self.orientation_error = result.orientation_error
        self.attempts = result.attempts
        self.iterations = result.iterations
        self.reason = result.reason
        super().__init__(
            f'inverse kinematics of chain {chain!r}: no solution ({result.reason}) after '
            f'{result.attempts} attempt(s), {result.iterations} iteration(s), '
            f'{result.elapsed * 1e3:.2f} ms; best residual {result.position_error:.3g} m, '
            f'{result.orientation_error:.3g} rad')


class IkResult(NamedTuple):
    """
    The outcome of one solve.

    :param success: whether ``position`` is within the limits and the tolerances.
    :param position: joint positions of the chain in chain order [rad or m], always within
        the limits: the solution, or on failure the best configuration found.
    :param position_error: distance of the tip from the target over the constrained axes [m].
    :param orientation_error: angle of the rotation error over the constrained axes [rad]
        (0 for a position-only task).
    :param iterations: iterations over all attempts.
    :param attempts: starts: the seed, then every random restart.
    :param elapsed: wall time of the solve [s].
    :param reason: ``'converged'``, or why it stopped: ``'iteration budget'``, ``'attempt
        budget'``, ``'beyond reach'``, or ``'time guard'`` (the wall-time last resort: then
        the answer depends on the machine's load).
    :param chain: the chain solved for.
    """

    success: bool
    position: np.ndarray
    position_error: float
    orientation_error: float
    iterations: int
    attempts: int
    elapsed: float
    reason: str
    chain: str

    def require(self) -> np.ndarray:
        """
        Return the solution.

        :return: joint positions in chain order [rad or m].
        :raises IkNoSolutionError: the solve failed (the error carries this result).
        """
        if not self.success:
            raise IkNoSolutionError(self.chain, self)
        return self.position


class _Reach:
    """
    Where a chain's tip can be: within ``reach`` of a circle.

    The circle has ``radius`` about ``axis`` through ``centre``; a radius 0 and a zero axis
    make the region a sphere about ``centre``.
    """

    def __init__(self, centre: np.ndarray, axis: np.ndarray, radius: float,
                 reach: float) -> None:
        self.centre, self.axis, self.radius, self.reach = centre, axis, radius, reach

    def distance(self, point: np.ndarray) -> float:
        """Return how far ``point`` lies beyond reach [m] (<= 0: it may be reachable)."""
        offset = point - self.centre
        along = float(offset @ self.axis)
        radial = offset - along * self.axis
        off_circle = math.sqrt(radial @ radial) - self.radius
        return math.sqrt(off_circle * off_circle + along * along) - self.reach

    @staticmethod
    def of_chain(evaluator: 'ChainEvaluator', joints: Sequence[str], prismatic: np.ndarray,
                 lower: np.ndarray, upper: np.ndarray) -> '_Reach':
        """
        Return where the tip can be at all, whatever the joint positions.

        Consecutive joint origins of revolute joints keep their distance whatever the joint
        positions (both are fixed in the link between them); a prismatic joint adds its
        travel. Seen from the second joint's origin (the shoulder of an arm), which turns on a
        circle about the first joint's axis, the rest of the chain reaches a sphere; the tip is
        within that distance of the circle. The bound lets a target beyond reach fail at once.
        """
        model = evaluator.model
        data = evaluator.create_data()
        zero = np.zeros(len(joints))
        q = evaluator.configuration(zero, np.empty(evaluator.nq))
        pinocchio.forwardKinematics(model, data, q)
        tip = pinocchio.updateFramePlacement(model, data, evaluator.frame_id).translation.copy()
        ids = [model.getJointId(name) for name in joints]
        points = [data.oMi[jid].translation.copy() for jid in ids] + [tip]
        travel = np.where(prismatic, upper - lower, 0.0)
        if len(joints) < 2 or prismatic[0] or not np.isfinite(travel).all():
            reach = sum(float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:]))
            return _Reach(points[0], np.zeros(3), 0.0, reach + float(np.sum(travel)))
        first = ids[0]
        jacobian = pinocchio.computeJointJacobian(model, data, q, first)
        axis = data.oMi[first].rotation @ jacobian[3:, model.joints[first].idx_v]
        axis /= np.linalg.norm(axis)
        arm = points[1] - points[0]
        along = float(arm @ axis)
        radius = float(np.linalg.norm(arm - along * axis))
        reach = sum(float(np.linalg.norm(b - a)) for a, b in zip(points[1:], points[2:]))
        return _Reach(points[0] + along * axis, axis, radius, reach + float(np.sum(travel[1:])))


class _ArgumentCheck:
    """
    Checks of a ChainIK's arguments, each failure an :class:`IkInputError` naming the argument.

    :param chain: the chain (named in the errors); :param joints: its joints, in chain order.
    """

    def __init__(self, chain: str, joints: Sequence[str]) -> None:
        self.chain, self.joints = chain, tuple(joints)

    def vector(self, argument: str, value: ArrayLike, size: int, allow_inf: bool = False,
               per_joint: bool = True) -> np.ndarray:
        """Return ``value`` as ``size`` numbers (per joint: an error names the joint)."""
        try:
            vector = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise IkInputError(argument, value, f'expected {size} numbers', self.chain) from None
        if vector.shape != (size,):
            raise IkInputError(argument, f'shape {vector.shape}',
                               f'expected {size} values (joints {", ".join(self.joints)})'
                               if per_joint else f'expected {size} values', self.chain)
        bad = np.isnan(vector) if allow_inf else ~np.isfinite(vector)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = f'joint {self.joints[i]!r}' if per_joint else f'entry {i}'
            raise IkInputError(argument, vector.tolist(),
                               f'{what} is {vector[i]} (NaN{"" if allow_inf else " or inf"})',
                               self.chain)
        return vector

    def positive(self, argument: str, value: float) -> float:
        """Return ``value`` as a finite number > 0."""
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise IkInputError(argument, value, 'expected a number', self.chain) from None
        if not value > 0 or math.isinf(value):
            raise IkInputError(argument, value, 'expected a finite number > 0', self.chain)
        return value

    def budget(self, argument: str, value: float) -> float:
        """Return ``value`` as a duration >= 0 [s]."""
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise IkInputError(argument, value, 'expected a duration [s]', self.chain) from None
        if not value >= 0:
            raise IkInputError(argument, value, 'expected a duration >= 0 [s]', self.chain)
        return value

    def count(self, argument: str, value: int, minimum: int) -> int:
        """Return ``value`` as an integer >= ``minimum``."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
            raise IkInputError(argument, value, f'expected an integer >= {minimum}', self.chain)
        return int(value)


class _Workspace:
    """What one thread needs to solve: pinocchio Data, buffers, random generator."""

    def __init__(self, evaluator, rng: np.random.Generator) -> None:
        self.data = evaluator.create_data()
        self.q = np.empty(evaluator.nq)
        self.full = np.zeros(len(evaluator.joints))
        self.rng = rng
        #: the target of the solve in progress, written in place by every solve
        self.target_p = np.zeros(3)
        self.target_r = np.eye(3)
        # ChainIK._workspace sets these right after construction: they read this workspace.
        self.evaluate: Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray, np.ndarray]]
        self.converged: Callable[[np.ndarray], bool]


class _MovedLimits:
    """
    The limits of the joints a solver moves: steps come back within them, restarts sample them.

    :param low: lower limits [rad or m] (-inf: none); :param high: upper limits (+inf: none);
    :param continuous: which joints are continuous; :param prismatic: which are prismatic.
    """

    def __init__(self, low: np.ndarray, high: np.ndarray, continuous: np.ndarray,
                 prismatic: np.ndarray) -> None:
        self.lower, self.upper = low, high
        # Random restarts sample the limits; a joint without a finite limit samples a span of
        # _FREE_SPAN on the missing side(s), or [-pi, pi] when it has none.
        finite_low, finite_high = np.isfinite(low), np.isfinite(high)
        sample_low = np.where(finite_low, low, np.where(finite_high, high - 2 * _FREE_SPAN,
                                                        -_FREE_SPAN))
        sample_high = np.where(finite_high, high, np.where(finite_low, low + 2 * _FREE_SPAN,
                                                           _FREE_SPAN))
        self.sample_low, self.sample_high = sample_low, sample_high
        self.wrap = continuous & ~finite_low & ~finite_high
        self.any_wrap = bool(self.wrap.any())
        self.periodic = ~prismatic & finite_low & finite_high
        self.all_periodic = bool(self.periodic.all())
        # Limits as centre +- half range: one comparison finds the joints outside. A joint
        # without limits has an infinite half range; one with a single limit needs the
        # general comparison (box False).
        both, neither = finite_low & finite_high, ~finite_low & ~finite_high
        self.box = bool(np.all(both | neither))
        low_or_zero, high_or_zero = np.where(both, low, 0.0), np.where(both, high, 0.0)
        self.centre = 0.5 * (low_or_zero + high_or_zero)
        self.half_range = np.where(both, 0.5 * (high_or_zero - low_or_zero), math.inf)
        self.negative_half_range = -self.half_range
        self.centred = not self.centre.any()

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """Return a random configuration within the limits (a restart)."""
        return rng.uniform(self.sample_low, self.sample_high)

    def outside(self, trial: np.ndarray) -> np.ndarray:
        """Return which joints of ``trial`` [rad or m] are outside the limits (bool mask)."""
        if self.box:
            if self.centred:
                return np.abs(trial) > self.half_range
            return np.abs(trial - self.centre) > self.half_range
        return (trial < self.lower) | (trial > self.upper)

    def project(self, trial: np.ndarray, outside: np.ndarray) -> np.ndarray:
        """
        Bring the joints of ``trial`` that are ``outside`` the limits back within them.

        A revolute joint is an angle: it goes to the nearest allowed angle on the circle, so
        a step past the middle of the forbidden arc lands on the far limit (the pose is the
        same modulo 2 pi; only the final configuration matters, not a path). Other joints are
        clamped. The other joints keep their step: solving the step again with the stopped
        joints fixed costs more than it gains (measured on the arm, bench/ik.py).

        :return: the projected trial [rad or m].
        """
        if self.all_periodic:
            centre, half = self.centre, self.half_range
            offset = np.remainder(trial - centre + math.pi, 2 * math.pi) - math.pi
            clamped = np.minimum(np.maximum(offset, self.negative_half_range), half)
            return np.where(outside, centre + clamped, trial)
        projected = np.minimum(np.maximum(trial, self.lower), self.upper)
        periodic = outside & self.periodic
        if np.count_nonzero(periodic):
            centre, half = self.centre[periodic], self.half_range[periodic]
            offset = np.remainder(trial[periodic] - centre + math.pi, 2 * math.pi) - math.pi
            projected[periodic] = centre + np.minimum(np.maximum(offset, -half), half)
        return projected


class _Run:
    """
    One solve across its attempts: its budgets, its counts and the best configuration met.

    :param workspace: the calling thread's; :param start: when the solve began
        (time.perf_counter) [s]; :param deadline: its wall-time guard [s];
    :param seed: the seed in chain order, clamped into the limits;
    :param iteration_budget: iterations allowed, all attempts together.
    """

    def __init__(self, workspace: _Workspace, start: float, deadline: float, seed: np.ndarray,
                 iteration_budget: int) -> None:
        self.workspace, self.start, self.deadline = workspace, start, deadline
        self.seed, self.iteration_budget = seed, iteration_budget
        self.iterations = self.attempts = 0
        self.best_x: Optional[np.ndarray] = None
        self.best_cost = math.inf
        self.best_error: Optional[np.ndarray] = None

    def keep(self, x: np.ndarray, cost: float, error: np.ndarray) -> None:
        """Keep ``x`` as the best configuration so far."""
        self.best_x, self.best_cost, self.best_error = x, cost, error


_TARGET_FORMS = 'expected a 4x4 pose, a pinocchio.SE3 or (position-only task) a 3-vector'


def _read_target(target: Union[np.ndarray, pinocchio.SE3, Sequence[float]], chain: str,
                 needs_rotation: bool, position: np.ndarray, rotation: np.ndarray) -> None:
    """Validate ``target`` and write it into ``position`` (3,) and ``rotation`` (3, 3)."""
    if isinstance(target, pinocchio.SE3):
        matrix = target.homogeneous
    else:
        try:
            matrix = np.asarray(target, dtype=float)
        except (TypeError, ValueError):
            raise IkInputError('target', type(target).__name__, _TARGET_FORMS, chain) from None
    if matrix.shape == (4, 4):
        if not np.isfinite(matrix).all():
            raise IkInputError('target', matrix.tolist(), 'contains NaN or infinite values',
                               chain)
        if matrix[3].tolist() != [0.0, 0.0, 0.0, 1.0]:
            raise IkInputError('target', matrix.tolist(),
                               'the last row of a homogeneous pose must be 0 0 0 1', chain)
        position[:] = matrix[:3, 3]
        rotation[:] = matrix[:3, :3]
        if needs_rotation:
            orthogonality = np.abs(rotation.T @ rotation - _EYE3).max()
            (a, b, c), (d, e, f), (g, h, i) = rotation.tolist()
            determinant = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
            if not orthogonality <= 1e-6 or determinant < 0:
                raise IkInputError('target', rotation.tolist(),
                                   'the upper-left 3x3 block is not a rotation matrix '
                                   f'(|R^T R - I| = {orthogonality:.2g}, det = '
                                   f'{determinant:.3g})', chain)
    elif matrix.shape == (3,):
        if needs_rotation:
            raise IkInputError('target', matrix.tolist(),
                               'a 3-vector is the target of a position-only task; this task '
                               'constrains the orientation: give a 4x4 pose', chain)
        if not np.isfinite(matrix).all():
            raise IkInputError('target', matrix.tolist(), 'contains NaN or infinite values',
                               chain)
        position[:] = matrix
    else:
        raise IkInputError('target', f'shape {matrix.shape}', _TARGET_FORMS, chain)


def _evaluation(evaluator: 'ChainEvaluator', workspace: _Workspace, free: Optional[np.ndarray],
                rows: Optional[np.ndarray], root_weights: Optional[np.ndarray],
                needs_rotation: bool) -> Callable:
    """
    Return ``evaluate(x) -> (error (6,), weighted error, weighted Jacobian)`` of a thread.

    :param free: the indices of the moved joints (None: all); :param rows: the error rows
        that count (None: all six); :param root_weights: their weights' roots (None: ones).
    """
    target_p, target_r = workspace.target_p, workspace.target_r
    model, data, frame_id = evaluator.model, workspace.data, evaluator.frame_id
    frame_jacobian = pinocchio.computeFrameJacobian
    axes = pinocchio.ReferenceFrame.LOCAL_WORLD_ALIGNED
    placements = data.oMf
    log3 = pinocchio.log3
    configuration, q_buffer = evaluator.configuration, workspace.q
    direct = evaluator.direct
    columns = evaluator.columns
    full = workspace.full
    concatenate = np.concatenate
    zeros = np.zeros(3)

    if direct and columns is None and free is None and rows is None and root_weights is None:
        def evaluate_lean(x):  # the common case, kept lean: it runs twice per iteration
            jac = frame_jacobian(model, data, x, frame_id, axes)
            placement = placements[frame_id]
            error = concatenate((target_p - placement.translation,
                                 log3(target_r @ placement.rotation.T)))
            return error, error, jac
        return evaluate_lean

    def evaluate(x):
        if free is not None:
            full[free] = x
            x = full
        q = x if direct else configuration(x, q_buffer)
        jac = frame_jacobian(model, data, q, frame_id, axes)
        if columns is not None:
            jac = jac[:, columns]
        if free is not None:
            jac = jac[:, free]
        placement = placements[frame_id]
        rotation_error = log3(target_r @ placement.rotation.T) if needs_rotation else zeros
        error = concatenate((target_p - placement.translation, rotation_error))
        werr, wjac = (error, jac) if rows is None else (error[rows], jac[rows])
        if root_weights is not None:
            werr = werr * root_weights
            wjac = wjac * root_weights[:, None]
        return error, werr, wjac
    return evaluate


def _convergence(position_rows: np.ndarray, orientation_rows: np.ndarray,
                 position_tolerance: float, orientation_tolerance: float) -> Callable:
    """Return ``converged(error (6,)) -> bool`` for a task's rows and tolerances."""
    tol_p2 = position_tolerance ** 2
    tol_r2 = orientation_tolerance ** 2
    if position_rows.size == 3 and orientation_rows.size == 3:
        def converged_6d(error):
            p, r = error[:3], error[3:]
            return p @ p <= tol_p2 and r @ r <= tol_r2
        return converged_6d

    def converged(error):
        p, r = error[position_rows], error[orientation_rows]
        return p @ p <= tol_p2 and r @ r <= tol_r2
    return converged


_EYE3 = np.eye(3)


class ChainIK:
    """
    Inverse kinematics of one chain of a :class:`~sweetie_motion.model.RobotModel`.

    :param model: a configured RobotModel.
    :param chain: the chain; its tip (``RobotModel.chain_tip``) is placed at the target.
    :param task: ``'pose'`` (position and orientation) or ``'position'`` (position only).
    :param weights: for a pose task, six weights of the error components (x, y, z [1/m^2],
        rx, ry, rz [1/rad^2]) in the chain's base axes; a zero weight leaves that component
        free (neither minimised nor checked). Default: all 1.
    :param position_tolerance: largest accepted position error [m].
    :param orientation_tolerance: largest accepted orientation error [rad].
    :param time_guard: default wall-time guard of a solve [s], a last resort (see the module).
    :param max_iterations: default iteration budget of a solve (all attempts).
    :param max_attempts: default number of starts of a solve (seed + restarts); None: no limit
        but the iteration budget and the time guard.
    :param lower: lower position limits in chain order [rad or m] replacing the URDF's (e.g.
        for a benchmark or a safety margin); -inf for none.
    :param upper: upper position limits in chain order [rad or m]; +inf for none.
    :param fixed_joints: joints of the chain the solver does not move: they keep the value of
        the seed (e.g. the virtual joint of a pony hoof when placing the hoof).
    :param random_seed: seed of the random restarts (default 0); a solve draws its restarts
        from this, its seed and its target, so that a request's answer depends on nothing else
        (not on the solves before it, nor on the clock).
    :raises UnknownChainError: ``chain`` is not a chain of ``model``.
    :raises NotConfiguredError: ``model`` is not configured.
    :raises IkInputError: a malformed option (naming it).

    Random restarts draw each joint uniformly within its limits; a joint without a finite
    limit draws within 2 pi (rad, or m for a prismatic joint) of its one limit, or within
    [-pi, pi] when it has none. A continuous joint comes back within pi of the seed (the short
    way); any other joint comes back within its limits, whatever the seed.
    """

    def __init__(self, model: RobotModel, chain: str, *, task: str = 'pose',
                 weights: Optional[ArrayLike] = None,
                 position_tolerance: float = POSITION_TOLERANCE,
                 orientation_tolerance: float = ORIENTATION_TOLERANCE,
                 time_guard: float = TIME_GUARD, max_iterations: int = MAX_ITERATIONS,
                 max_attempts: Optional[int] = MAX_ATTEMPTS,
                 lower: Optional[ArrayLike] = None,
                 upper: Optional[ArrayLike] = None,
                 fixed_joints: Sequence[str] = (),
                 random_seed: Optional[int] = None) -> None:
        # RobotModel keeps its pinocchio models private to the model package, as is this one.
        kinematics, info = model._kinematics('ChainIK', chain)
        self.chain = chain
        self.joints: Tuple[str, ...] = tuple(info.joints)
        self.tip = info.tip
        self._evaluator = kinematics.evaluator(info, info.tip)
        self._check = _ArgumentCheck(chain, self.joints)
        self._n = len(self.joints)
        self._read_task(task, weights)
        self.position_tolerance = self._check.positive('position_tolerance', position_tolerance)
        self.orientation_tolerance = self._check.positive('orientation_tolerance',
                                                          orientation_tolerance)
        self.time_guard = self._check.budget('time_guard', time_guard)
        self.max_iterations = self._check.count('max_iterations', max_iterations, 0)
        self.max_attempts = (None if max_attempts is None
                             else self._check.count('max_attempts', max_attempts, 1))
        joint_info = [model.get_joint_info(name) for name in self.joints]
        self._prismatic = np.array([j.joint_type == 'prismatic' for j in joint_info])
        free = self._read_limits(joint_info, lower, upper, fixed_joints)
        self._limits = _MovedLimits(self.lower[free], self.upper[free],
                                    self._evaluator.continuous[free], self._prismatic[free])
        self._m = int(free.sum())
        self._prepare_weights()
        self._reach = _Reach.of_chain(self._evaluator, self.joints, self._prismatic, self.lower,
                                      self.upper)
        self._seed_sequence = np.random.SeedSequence(random_seed)
        self._restart_seed = 0 if random_seed is None else random_seed
        self._local = threading.local()
        self._spawn_lock = threading.Lock()

    # --- validation ----------------------------------------------------------------------------

    def _read_task(self, task: str, weights: Optional[ArrayLike]) -> None:
        """Validate the task and its six weights (x, y, z, rx, ry, rz)."""
        if task not in TASKS:
            raise IkInputError('task', task, f'expected one of {", ".join(TASKS)}', self.chain)
        self.task = task
        if weights is None:
            weights = (1.0,) * 6 if task == 'pose' else (1.0, 1.0, 1.0, 0.0, 0.0, 0.0)
        elif task == 'position':
            raise IkInputError('weights', weights,
                               'weights are for a pose task; a position task weighs x, y, z '
                               'alike and leaves the orientation free', self.chain)
        vector = self._check.vector('weights', weights, 6, per_joint=False)
        if np.any(vector < 0) or not np.any(vector[:3] > 0) and not np.any(vector[3:] > 0):
            raise IkInputError('weights', vector.tolist(),
                               'expected six weights >= 0, at least one > 0', self.chain)
        self.weights = vector

    def _read_limits(self, joint_info: Sequence[JointInfo], lower: Optional[ArrayLike],
                     upper: Optional[ArrayLike], fixed_joints: Sequence[str]) -> np.ndarray:
        """
        Validate the limits and the fixed joints; set them.

        :return: which joints of the chain the solver moves (bool mask, chain order).
        """
        n, chain = self._n, self.chain
        low = np.array([j.lower for j in joint_info]) if lower is None else self._check.vector(
            'lower', lower, n, allow_inf=True)
        high = np.array([j.upper for j in joint_info]) if upper is None else self._check.vector(
            'upper', upper, n, allow_inf=True)
        bad = np.flatnonzero(~(low <= high))
        if bad.size:
            i = int(bad[0])
            raise IkInputError('lower/upper', (float(low[i]), float(high[i])),
                               f'joint {self.joints[i]!r} has lower limit > upper limit',
                               chain)
        self.lower = low
        self.upper = high
        self.lower.setflags(write=False)
        self.upper.setflags(write=False)
        if isinstance(fixed_joints, str):
            fixed_joints = (fixed_joints,)
        unknown = [j for j in fixed_joints if j not in self.joints]
        if unknown:
            raise IkInputError('fixed_joints', list(fixed_joints),
                               f'{", ".join(map(repr, unknown))} not in the chain (joints: '
                               f'{", ".join(self.joints)})', chain)
        free = np.array([j not in fixed_joints for j in self.joints], dtype=bool)
        if not free.any():
            raise IkInputError('fixed_joints', list(fixed_joints), 'no joint left to move',
                               chain)
        self.fixed_joints = tuple(j for j in self.joints if j in fixed_joints)
        #: indices of the joints the solver moves, None when it moves all of them
        self._free = None if free.all() else np.flatnonzero(free)
        return free

    def _prepare_weights(self) -> None:
        """Precompute which error rows count, their weights and the tolerance bound."""
        weights = self.weights
        rows = np.flatnonzero(weights > 0)
        self._rows = None if rows.size == 6 else rows
        root = np.sqrt(weights[rows])
        self._root_weights = None if np.all(root == 1.0) else root
        self._position_rows = np.flatnonzero(weights[:3] > 0)
        self._orientation_rows = 3 + np.flatnonzero(weights[3:] > 0)
        self._needs_rotation = self._orientation_rows.size > 0
        # Weighted squared errors above this bound cannot be within the tolerances: the
        # tolerance test runs only below it.
        self._cost_bound = (weights[:3].max() * self.position_tolerance ** 2
                            + weights[3:].max() * self.orientation_tolerance ** 2)

    # --- per-thread state ------------------------------------------------------------------------

    def _workspace(self) -> _Workspace:
        workspace = getattr(self._local, 'workspace', None)
        if workspace is None:
            with self._spawn_lock:
                child = self._seed_sequence.spawn(1)[0]
            workspace = _Workspace(self._evaluator, np.random.default_rng(child))
            workspace.evaluate = _evaluation(self._evaluator, workspace, self._free, self._rows,
                                             self._root_weights, self._needs_rotation)
            workspace.converged = _convergence(self._position_rows, self._orientation_rows,
                                               self.position_tolerance,
                                               self.orientation_tolerance)
            self._local.workspace = workspace
        return workspace

    # --- solving ---------------------------------------------------------------------------------

    def forward(self, position: ArrayLike) -> np.ndarray:
        """
        Return the 4x4 pose of the chain's tip in the chain's base frame (translation in m).

        :param position: joint positions in chain order [rad or m].
        """
        return self._evaluator.forward(position)

    def beyond_reach(self, point: ArrayLike) -> Optional[Tuple[float, float]]:
        """
        Say whether a tip position lies beyond where the chain can reach at all.

        The reach comes from the chain's kinematics (the distances between its joints, the
        travel of prismatic ones), seen from the shoulder (the second joint's circle about the
        first joint's axis), not from a constant.

        :param point: the tip position in the chain's base frame [m].
        :return: (the point's distance from the shoulder, the reach) [m] when the point is
            farther than the reach (and the position tolerance); None when it may be reachable.
        """
        point = np.asarray(point, dtype=float)
        if self._position_rows.size != 3:
            return None   # a task that leaves a direction free: the bound is not of its tip
        beyond = self._reach.distance(point)
        if beyond <= self.position_tolerance:
            return None
        return beyond + self._reach.reach, self._reach.reach

    def within_limits(self, position: ArrayLike) -> bool:
        """Return whether ``position`` (chain order [rad or m]) is within this solver's limits."""
        position = np.asarray(position, dtype=float)
        return bool(np.all(position >= self.lower) and np.all(position <= self.upper))

    def random_position(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """
        Return a random configuration within the limits, as the random restarts draw them.

        :param rng: the generator to draw from (default: this thread's own).
        :return: joint positions in chain order [rad or m]; fixed joints at zero (clamped into
            their limits).
        """
        rng = rng or self._workspace().rng
        if self._free is None:
            return self._limits.sample(rng)
        position = np.clip(np.zeros(self._n), self.lower, self.upper)
        position[self._free] = self._limits.sample(rng)
        return position

    def solve(self, target: Union[np.ndarray, pinocchio.SE3, Sequence[float]],
              seed: Optional[ArrayLike] = None, *,
              time_guard: Optional[float] = None, max_iterations: Optional[int] = None,
              max_attempts: Optional[int] = None) -> IkResult:
        """
        Find joint positions that put the chain's tip at ``target``.

        :param target: the tip pose in the chain's base frame: a 4x4 homogeneous matrix
            (translation in m) or a pinocchio.SE3; a position-only task also takes a
            3-vector [m].
        :param seed: the first guess, in chain order [rad or m] (default: zeros); clamped
            into the limits. A seed within the tolerance is returned as it is.
        :param time_guard: wall-time guard [s] (default: the solver's), a last resort.
        :param max_iterations: iteration budget, all attempts (default: the solver's).
        :param max_attempts: number of starts (default: the solver's).
        :return: the result; ``success=False`` when no solution was found in the budget or the
            target is beyond reach (never an exception for an unreachable target).
        :raises IkInputError: malformed target, seed or budget.
        """
        start = time.perf_counter()
        workspace = self._workspace()
        _read_target(target, self.chain, self._needs_rotation, workspace.target_p,
                     workspace.target_r)
        seed_vector = (np.zeros(self._n) if seed is None
                       else self._check.vector('seed', seed, self._n))
        seed_vector = np.minimum(np.maximum(seed_vector, self.lower), self.upper)
        if self._free is None:
            x = seed_vector
        else:
            workspace.full[:] = seed_vector  # the fixed joints stay there
            x = seed_vector[self._free]
        guard = self.time_guard if time_guard is None else self._check.budget(
            'time_guard', time_guard)
        run = _Run(workspace, start, start + guard, seed_vector,
                   self.max_iterations if max_iterations is None else self._check.count(
                       'max_iterations', max_iterations, 0))
        attempt_budget = self.max_attempts if max_attempts is None else self._check.count(
            'max_attempts', max_attempts, 1)
        beyond_reach = (self._position_rows.size == 3
                        and self._reach.distance(workspace.target_p) > self.position_tolerance)
        if beyond_reach:
            attempt_budget = 1  # one descent finds the closest point; restarts cannot help
        rng: Optional[np.random.Generator] = None  # made at the first restart
        while True:
            converged, reason = self._descend(run, x)
            if converged:
                return self._result(True, run, 'converged')
            if reason:
                break
            if beyond_reach:
                reason = 'beyond reach'
            elif attempt_budget is not None and run.attempts >= attempt_budget:
                reason = 'attempt budget'
            elif run.iterations >= run.iteration_budget:
                reason = 'iteration budget'
            elif time.perf_counter() > run.deadline:
                reason = 'time guard'
            if reason:
                break
            if rng is None:
                # drawn from the request (seed and target): the same request restarts alike
                # on any machine, different seeds restart differently
                words = np.frombuffer(np.concatenate(
                    [seed_vector, workspace.target_p]).tobytes(), dtype=np.uint32)
                rng = np.random.default_rng(np.random.SeedSequence(
                    [self._restart_seed, *words.tolist()]))
            x = self._limits.sample(rng)
        return self._result(False, run, reason)

    def _descend(self, run: '_Run', x: np.ndarray) -> Tuple[bool, str]:
        """
        Make one attempt from ``x``: damped steps until converged, stuck, crawling or spent.

        The best configuration met is kept in ``run`` (on convergence: the solution).

        :return: (whether it converged, why the whole solve must stop: '' when only this
            attempt ended — at a local minimum, crawling, or after its iteration cap).
        """
        evaluate, converged = run.workspace.evaluate, run.workspace.converged
        cost_bound = self._cost_bound
        project, outside_of = self._limits.project, self._limits.outside
        count, dot = np.count_nonzero, np.dot
        perf_counter = time.perf_counter
        run.attempts += 1
        error, werr, wjac = evaluate(x)
        cost = werr @ werr
        # The first start is the best so far even when its cost overflows to inf.
        if cost < run.best_cost or run.best_error is None:
            run.keep(x, cost, error)
        if converged(error):
            run.keep(x, cost, error)
            return True, ''
        factor, rejections = 1.0, 0
        window_cost, window_end = cost, _PROGRESS_WINDOW
        budget, deadline = run.iteration_budget, run.deadline
        for step in range(_ATTEMPT_ITERATIONS):
            if run.iterations >= budget:
                return False, 'iteration budget'
            if perf_counter() > deadline:
                return False, 'time guard'
            run.iterations += 1
            delta = self._damped_step(evaluate, x, werr, wjac, factor * (
                _DAMPING_GAIN * cost + _DAMPING_MIN), step >= _GEODESIC_AFTER)
            if delta is None:  # not positive definite in floating point: damp more
                factor *= _FACTOR_UP
                continue
            trial = x + delta
            outside = outside_of(trial)
            if count(outside):
                trial = project(trial, outside)
            new_error, new_werr, new_wjac = evaluate(trial)
            new_cost = dot(new_werr, new_werr)
            if new_cost < cost:
                x, error, werr, wjac, cost = trial, new_error, new_werr, new_wjac, new_cost
                if cost < run.best_cost:
                    run.keep(x, cost, error)
                if cost <= cost_bound and converged(error):
                    run.keep(x, cost, error)
                    return True, ''
                factor, rejections = max(factor * _FACTOR_DOWN, _FACTOR_MIN), 0
            else:
                factor *= _FACTOR_UP
                rejections += 1
                if rejections >= _MAX_REJECTIONS:
                    break  # no step reduces the error: a local minimum (or a limit)
            if step >= window_end:
                if cost > _PROGRESS_RATIO * window_cost:
                    break  # crawling: a fresh start is cheaper
                window_cost, window_end = cost, step + _PROGRESS_WINDOW
        return False, ''

    def _damped_step(self, evaluate: Callable, x: np.ndarray, werr: np.ndarray,
                     wjac: np.ndarray, damping: float, geodesic: bool) -> Optional[np.ndarray]:
        """
        Return the damped least-squares step from ``x``, None when it cannot be solved.

        :param geodesic: add the geodesic acceleration (Transtrum and Sethna, 2012): the
            second-order correction of the step, from one probe along it, bends the step along
            a curved valley where plain damped steps crawl.
        """
        dot, posv = np.dot, lapack.dposv
        jac_t = wjac.T
        hessian = dot(jac_t, wjac)
        hessian.flat[::self._m + 1] += damping
        _, delta, info = posv(hessian, dot(jac_t, werr))
        if info:
            return None
        if geodesic:
            probe = evaluate(x + _GEODESIC_PROBE * delta)[1]
            curvature = (werr - probe) / _GEODESIC_PROBE - wjac @ delta
            _, acceleration, info = posv(hessian, dot(jac_t, curvature))
            acceleration *= 2 / _GEODESIC_PROBE
            if not info and (dot(acceleration, acceleration)
                             <= _GEODESIC_RATIO ** 2 * dot(delta, delta)):
                delta -= 0.5 * acceleration
        return delta

    def _result(self, success: bool, run: '_Run', reason: str) -> IkResult:
        """Return the result of ``run``: its best configuration (on success, the solution)."""
        x, current = run.best_x, run.best_error
        assert x is not None and current is not None  # the first start always sets them
        free, seed = self._free, run.seed
        moved = np.array(x, dtype=float)
        if self._limits.any_wrap:
            # A joint without limits turns the short way from the seed.
            wrap = self._limits.wrap
            start_angle = (seed if free is None else seed[free])[wrap]
            moved[wrap] = start_angle + np.remainder(moved[wrap] - start_angle + math.pi,
                                                     2 * math.pi) - math.pi
        if free is None:
            position = moved
        else:
            position = seed.copy()
            position[free] = moved
        p = current[self._position_rows]
        r = current[self._orientation_rows]
        return IkResult(success, position, math.sqrt(p @ p), math.sqrt(r @ r), run.iterations,
                        run.attempts, time.perf_counter() - run.start, reason, self.chain)
