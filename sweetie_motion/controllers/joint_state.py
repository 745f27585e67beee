"""
FollowJointState: the robot follows a stream of JointState poses (R-FJS-1..2).

The main use is driving the robot by hand from joint_state_publisher_gui or the editor's "set
robot pose". For ``activation_delay`` after activation the controller holds the current pose
and offers it on ``out_joints_src_reset``, so that the source can adopt the robot's pose before
its messages are obeyed; afterwards each incoming pose (any joint order, any subset) updates
the targets of the joints it names and this controller drives. The output always covers every
joint of every resource the controller owns; joints without news hold their target. The smoothing
filter makes steps of the input smooth (the default, jerk_limited, within the joint limits).
Joints taken over while they move (a handover) keep their velocity and come to rest where a
brake within the limits ends, unless new input says otherwise: no jump, no reversal.
"""

from dataclasses import dataclass, field
import math
import threading
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.component import ComponentCommand, CycleResources
from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.events import SendEvent
from sweetie_motion.core.ports import JointVector, LatestValue
from sweetie_motion.core.safety import stopping_position
from sweetie_motion.core.smoothing import FilterSpec, SmoothingFilter
from sweetie_motion.model.robot_model import RobotModelView


@dataclass
class InputReport:
    """What set_input did with a pose: joints taken, clamped into limits, dropped."""

    taken: int = 0
    clamped: List[str] = field(default_factory=list)
    unknown: List[str] = field(default_factory=list)
    invalid: List[str] = field(default_factory=list)


class PoseInput:
    """
    Checks incoming poses against the joints of a controller (any order, any subset).

    Joints the controller does not drive are ignored; values outside a joint's position limits
    are clamped into them; unknown joints and NaN/inf are dropped. Everything is reported.

    :param model: the robot model view.
    :param joints: the controller's joints, in the order of its vectors.
    """

    def __init__(self, model: RobotModelView, joints: Sequence[str]) -> None:
        self.model = model
        self._by_name = {name: k for k, name in enumerate(joints)}
        lower, upper = model.position_limits()
        indices = model.get_joint_indices(list(joints))
        self._lower, self._upper = lower[indices], upper[indices]

    def check(self, names: Sequence[str], positions: Sequence[float]
              ) -> Tuple[np.ndarray, np.ndarray, InputReport]:
        """
        Return (local indices, values, report) of a pose.

        :raises ValueError: names and positions differ in length.
        """
        if len(positions) != len(names):
            raise ValueError(f'{len(names)} joint names but {len(positions)} positions')
        report = InputReport()
        local, values = [], []
        by_name = self._by_name
        for name, value in zip(names, positions):
            k = by_name.get(name)
            if k is None:
                if self.model.get_joint_index(name) < 0:
                    report.unknown.append(name)
                continue
            if not math.isfinite(value):
                report.invalid.append(name)
                continue
            low, high = self._lower[k], self._upper[k]
            if value < low or value > high:
                report.clamped.append(name)
                value = min(max(value, low), high)
            local.append(k)
            values.append(float(value))
        report.taken = len(local)
        return np.array(local, dtype=np.intp), np.array(values, dtype=float), report


@dataclass(frozen=True)
class FollowJointStateSpec:
    """
    What a FollowJointState controller is made from (R-FJS).

    :param chains: controlled chains; :param activation_delay: [s];
    :param stay_operational: keep running when every resource is taken;
    :param smoothing: the filter; :param order: place among the controllers.
    """

    chains: Tuple[str, ...]
    activation_delay: float
    stay_operational: bool
    smoothing: FilterSpec
    order: int = 0


class FollowJointStateCore(ControllerCore):
    """
    The FollowJointState controller (a cycle stage of role StageRole.CONTROLLER).

    Targets arrive already checked by the node (:class:`PoseInput` there).

    :param activation_delay: time after activation during which the pose is held and offered
        for reset [s].
    :param make_filter: creates the smoothing filter for a list of joint names.
    """

    SPEC = FollowJointStateSpec

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: FollowJointStateSpec) -> 'FollowJointStateCore':
        """Make the controller from its spec, for the cycle of ``shared``."""
        period = shared.period
        core = cls(name, shared.view, shared.arbiter, spec.chains, spec.activation_delay,
                   spec.stay_operational, lambda joints: spec.smoothing.create(joints, period))
        core.order = spec.order
        core.attach(shared, name, send_event)
        return core

    def __init__(self, name: str, model: RobotModelView, arbiter: Arbiter,
                 chains: Sequence[str], activation_delay: float, stay_operational: bool,
                 make_filter: Callable[[Sequence[str]], SmoothingFilter]) -> None:
        super().__init__(name, model, arbiter, chains, stay_operational)
        self.activation_delay = float(activation_delay)
        self.filter = make_filter(self.joints)
        self.input = PoseInput(model, self.joints)
        self.limits = model.joint_limits().take(self.indices)
        self._rest = np.zeros(len(self.indices))  # target velocity: poses are at rest
        self._rest.setflags(write=False)
        # targets received since the last tick: several partial poses (any subsets) may arrive
        # within one tick, and each of them counts
        self._pending = np.full(len(self.indices), np.nan)
        self._pending_lock = threading.Lock()
        self._fresh = False
        self._hold = False
        self._target = np.zeros(len(self.indices))
        self._activated_at: Optional[float] = None
        self._start_pose: Optional[JointVector] = None
        self._start_lock = threading.Lock()
        #: the full pose to offer on out_joints_src_reset while in the activation delay
        self.src_reset: LatestValue[JointVector] = LatestValue()
        self.in_activation_delay = False

    def set_input(self, names: Sequence[str], positions: Sequence[float]) -> InputReport:
        """
        Take a pose from upstream (any order, any subset; thread-safe), see :class:`PoseInput`.

        :return: what was taken, clamped and dropped.
        """
        local, values, report = self.input.check(names, positions)
        self.set_targets(local, values)
        return report

    def set_targets(self, local: np.ndarray, values: np.ndarray) -> None:
        """Take checked targets (local indices into this controller's joints; thread-safe)."""
        if len(local):
            with self._pending_lock:
                self._pending[local] = values
                self._fresh = True

    def hold(self) -> None:
        """
        Stop following: hold where a brake within the limits ends (thread-safe).

        Inputs that arrived before are dropped; the next input is obeyed again. Called when
        the client streaming the poses is gone, or asked to stop.
        """
        with self._pending_lock:
            self._pending = np.full(len(self.indices), np.nan)
            self._hold = True
            self._fresh = True

    @property
    def started(self) -> bool:
        """Return whether the cycle has run this controller since its start."""
        return self._activated_at is not None

    def start(self, reference: JointVector) -> None:
        """Prepare for activation from the current full reference pose."""
        with self._start_lock:
            self._start_pose = reference.copy()
            self._activated_at = None
        self._take_pending()  # poses (and holds) sent before activation are not obeyed

    def activate(self) -> None:
        """Start from the current reference (the activation delay begins); join the cycle."""
        self.start(self.shared.cycle.reference)
        super().activate()

    def offered_pose(self) -> Tuple[bool, Optional[np.ndarray]]:
        """
        Return (still to offer, the full reference position to offer or None).

        Nothing is left to offer once the cycle has run the controller past its activation
        delay.
        """
        pose = self.src_reset.value
        done = self.started and not self.in_activation_delay
        return not done, (None if pose is None or done else pose.position)

    def _take_pending(self) -> Tuple[Optional[np.ndarray], bool]:
        """Return (the targets received since the last tick or None, whether to hold)."""
        if not self._fresh:  # most ticks: nothing new (read without the lock: seen next tick)
            return None, False
        with self._pending_lock:
            pending = self._pending
            self._pending = np.full(len(self.indices), np.nan)
            self._fresh = False
            hold, self._hold = self._hold, False
        return (None, True) if hold else (pending, False)

    def update(self, tick: Tick) -> None:
        """Hold during the activation delay, then follow the newest input; smooth; emit."""
        start = None
        if self._start_pose is not None:
            with self._start_lock:
                start, self._start_pose = self._start_pose, None
        if start is not None:
            self._activated_at = tick.now
            position = tick.reference.position[self.indices]
            velocity = tick.reference.velocity[self.indices]
            self._target = stopping_position(self.limits, position, velocity)
            self.filter.reset(position, velocity)
        local = self.adopt_gained(tick, self.filter)
        if local is not None:  # resources back from another controller: rest where they stop
            idx = self.indices[local]
            self._target[local] = stopping_position(
                self.limits.take(local), tick.reference.position[idx],
                tick.reference.velocity[idx])
        if self._activated_at is None:
            return
        self.in_activation_delay = tick.now - self._activated_at < self.activation_delay
        if self.in_activation_delay:
            self.src_reset.write(tick.reference)
        else:
            pending, hold = self._take_pending()
            if pending is not None:
                fresh = ~np.isnan(pending)
                self._target[fresh] = pending[fresh]
            elif hold:
                # where a brake from the filter's state ends: no jump, no reversal
                rest = self.filter.stopping_position()
                idx = self.indices
                self._target = rest if rest is not None else stopping_position(
                    self.limits, tick.reference.position[idx], tick.reference.velocity[idx])
        idx = self.indices
        position, velocity = self.filter.update(
            tick.measured.position[idx], tick.measured.velocity[idx], self._target,
            self._rest)
        out_position = tick.reference.position.copy()
        out_velocity = np.zeros(len(out_position))
        out_position[idx] = position
        out_velocity[idx] = velocity
        self.emit(tick, out_position, out_velocity)


@dataclass(frozen=True)
class SetTargets(ComponentCommand[FollowJointStateCore, None]):
    """Set targets of some joints (:meth:`FollowJointStateCore.set_targets`)."""

    KIND = FollowJointStateCore

    local: np.ndarray
    values: np.ndarray

    def run(self, component: FollowJointStateCore) -> None:
        """Call :meth:`FollowJointStateCore.set_targets`."""
        component.set_targets(self.local, self.values)


@dataclass(frozen=True)
class Hold(ComponentCommand[FollowJointStateCore, None]):
    """Hold where a brake within the limits ends (:meth:`FollowJointStateCore.hold`)."""

    KIND = FollowJointStateCore

    def run(self, component: FollowJointStateCore) -> None:
        """Call :meth:`FollowJointStateCore.hold`."""
        component.hold()


@dataclass(frozen=True)
class ReadOfferedPose(ComponentCommand[FollowJointStateCore, Tuple[bool, Optional[np.ndarray]]]):
    """Read the pose the controller offers (:meth:`FollowJointStateCore.offered_pose`)."""

    KIND = FollowJointStateCore

    def run(self, component: FollowJointStateCore) -> Tuple[bool, Optional[np.ndarray]]:
        """Call :meth:`FollowJointStateCore.offered_pose`."""
        return component.offered_pose()
