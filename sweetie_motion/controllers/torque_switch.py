"""
TorqueMainSwitch: servos off so a person can pose the robot by hand (R-SYS-6).

Switching the torque off takes the controller's resources from their owners, frees their servos
and feeds the measured pose back as the reference, so ``joint_states_ref`` follows what the
person does. Switching it on while the person still moves the robot starts from the measured
position and velocity and brakes within the acceleration and jerk limits; once at rest the
servos hold there and the resources go back to their previous owners, which continue from that
pose. If another controller takes a resource
while its servos are free, the switch turns them on first: nobody drives limp servos.

The switch acts on all its chains or on some of them (teach a leg by hand while the others
stand): chains switched off later join those already free; switching some on brakes and hands
back only theirs, the others stay free.
"""

from dataclasses import dataclass
import threading
from typing import FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.component import ComponentCommand, ComponentError, CycleResources
from sweetie_motion.core.cycle import StageRole, Tick
from sweetie_motion.core.events import SendEvent
from sweetie_motion.core.safety import Brake
from sweetie_motion.core.servo_bus import ServoBus, ServoStatus
from sweetie_motion.model.robot_model import RobotModelView


@dataclass(frozen=True)
class TorqueSwitchSpec:
    """What a TorqueMainSwitch is made from (R-SYS-6): the chains whose servos it switches."""

    chains: Tuple[str, ...]
    order: int = 0


class TorqueMainSwitchCore(ControllerCore):
    """
    The torque main switch (a cycle stage of role StageRole.CONTROLLER).

    It needs the servo bus (its node is configured after the bus's). It joins the cycle active
    without resources: it requests them only when the torque goes off, and losing every
    resource means "torque on again", not "deactivate".

    :param bus: the servo bus whose servos are switched.
    """

    SPEC = TorqueSwitchSpec

    @classmethod
    def create(cls, shared: CycleResources, name: str, send_event: SendEvent,
               spec: TorqueSwitchSpec) -> 'TorqueMainSwitchCore':
        """Make the switch from its spec, for the bus of ``shared``."""
        if shared.bus is None:
            raise ComponentError('no servo bus in the process: configure the bus node first')
        core = cls(name, shared.view, shared.arbiter, spec.chains, shared.bus)
        core.order = spec.order
        core.attach(shared, name, send_event)
        core.on_not_operational = None
        return core

    def activate(self) -> None:
        """Join the cycle; resources are requested only when the torque goes off."""
        self.shared.cycle.add_stage(StageRole.CONTROLLER, self, self.order)

    def __init__(self, name: str, model: RobotModelView, arbiter: Arbiter,
                 chains: Sequence[str], bus: ServoBus) -> None:
        super().__init__(name, model, arbiter, chains, stay_operational=False)
        self.bus = bus
        on_bus = set(bus.joints)
        self._servo_joints = {r: [j for j in model.get_group_joints(r) if j in on_bus]
                              for r in self.resources}
        self._switch_lock = threading.Lock()
        # torque on: 1 = brake from the measured state (starts next tick), 3 = braking,
        # 2 = at rest, release (the next owner starts from rest)
        self._handover = 0
        #: the resources whose servos went on and which are handed back when the brake ends
        self._releasing: FrozenSet[str] = frozenset()
        self._brake: Optional[Brake] = None   # made at the first torque on (needs the period)
        self._last: Optional[Tuple[np.ndarray, np.ndarray]] = None  # the brake's last output
        self._braking: FrozenSet[str] = frozenset()  # the resources the brake drives
        self._abandoned: FrozenSet[str] = frozenset()
        self._switch_lock_free = threading.Lock()  # taken inside arbiter callbacks
        self.on_ownership = self._ownership_changed

    @property
    def torque_off(self) -> bool:
        """Return whether this switch holds servos free now."""
        return self.operational and bool(self.owned - self._releasing)

    def servo_joints(self, resources=None) -> List[str]:
        """Return the bus joints of ``resources`` (default: all of this switch's)."""
        resources = self.resources if resources is None else resources
        return [j for r in sorted(resources) for j in self._servo_joints.get(r, [])]

    def _chosen(self, chains: Optional[Sequence[str]]) -> FrozenSet[str]:
        if not chains:
            return frozenset(self.resources)
        chosen = frozenset(chains)
        unknown = chosen - frozenset(self.resources)
        if unknown:
            raise ValueError(f'unknown chain(s) {", ".join(sorted(unknown))}: this switch has '
                             f'{", ".join(sorted(self.resources))}')
        return chosen

    def set_torque_off(self, off: bool, chains: Optional[Sequence[str]] = None
                       ) -> Tuple[bool, str]:
        """
        Switch the servos of this controller's chains off (True) or back on (False).

        :param chains: only these chains (None or empty: all of the switch's).
        :return: (success, message) for the service response; an unknown chain is refused
            and changes nothing.
        """
        try:
            chosen = self._chosen(chains)
        except ValueError as error:
            return False, str(error)
        with self._switch_lock:
            joints = self.servo_joints(chosen)
            names = ', '.join(sorted(chosen))
            if off:
                self._releasing -= chosen
                if not self._releasing:
                    self._handover = 0
                with self._switch_lock_free:
                    self._abandoned = frozenset()
                self.acquire(chosen)
                self.bus.set_torque(joints, False)
                return True, f'torque off: {len(joints)} servos of {names} are free'
            self.bus.set_torque(joints, True)
            going = chosen & (self.owned - self._releasing)
            if not self.operational or not going:
                return True, 'torque was already on' + ('' if chains is None else f' for {names}')
            self._releasing |= going
            self._handover = 1
            return True, f'torque on: {len(joints)} servos of {names} hold their pose'

    def _ownership_changed(self, lost: FrozenSet[str], gained: FrozenSet[str]) -> None:
        if lost:
            # another controller drives them: servos on, and the switch gives them up for good
            # (it must not take them back after that motion: the servos would be driven with
            # the measured pose as reference, or go limp under a robot that stands)
            self.bus.set_torque(self.servo_joints(lost), True)
            with self._switch_lock_free:
                self._abandoned |= lost

    def update(self, tick: Tick) -> None:
        """While the torque is off: the reference is the measured pose."""
        with self._switch_lock_free:
            abandoned, self._abandoned = self._abandoned, frozenset()
        if abandoned and self.operational:
            self._releasing -= abandoned
            self._release(abandoned)
        if not self.operational:
            return
        measured_p, measured_v = tick.measured.position, tick.measured.velocity
        if self._handover == 2:
            self._handover = 0
            releasing, self._releasing = self._releasing, frozenset()
            self._last, self._braking = None, frozenset()
            self._release(releasing)
            if not self.operational:
                return
        elif self._handover == 1:
            if self._brake is None or self._brake.period != tick.period:
                self._brake = Brake(self.model.joint_limits(), tick.period)
            start_p, start_v = measured_p.copy(), measured_v.copy()
            if self._last is not None and self._braking & self._releasing:
                # more chains went on while others brake: those continue where they are
                braking = self.owned_indices(self._braking & self._releasing)
                start_p[braking], start_v[braking] = (self._last[0][braking],
                                                      self._last[1][braking])
            self._braking = self._releasing
            # this tick still sends that state; the brake continues from it
            self._brake.start(start_p, start_v)
            self._handover = 3
            self._last = (start_p, start_v)
            self.emit(tick, start_p.copy(), start_v.copy())
            return
        elif self._handover == 3:
            assert self._brake is not None  # handover step 1 made it
            position, velocity = self._brake.step()
            if not self._brake.active:
                self._handover = 2
            self._last = (position, velocity)
            out_p, out_v = measured_p.copy(), measured_v.copy()
            braking = self.owned_indices(self._braking & self._releasing)
            out_p[braking], out_v[braking] = position[braking], velocity[braking]
            self.emit(tick, out_p, out_v)
            return
        self.emit(tick, measured_p.copy(), measured_v.copy())

    def _release(self, resources: FrozenSet[str]) -> None:
        # giving back everything ends the switch's requests; a part leaves the rest free
        if not resources:
            return
        if resources >= self.owned:
            self.release()
        else:
            self.arbiter.release(self, resources)

    def status(self) -> List[ServoStatus]:
        """Return the status of the servos of this switch's chains."""
        mine = set(self.servo_joints())
        return [s for s in self.bus.status() if s.joint in mine]

    def torque_mask(self) -> np.ndarray:
        """Return torque on/off of the bus joints."""
        return self.bus.torque()


@dataclass(frozen=True)
class SetTorqueOff(ComponentCommand[TorqueMainSwitchCore, Tuple[bool, str]]):
    """Switch the chains' servos off or on (:meth:`TorqueMainSwitchCore.set_torque_off`)."""

    KIND = TorqueMainSwitchCore

    off: bool
    chains: Optional[Sequence[str]] = None

    def run(self, component: TorqueMainSwitchCore) -> Tuple[bool, str]:
        """Call :meth:`TorqueMainSwitchCore.set_torque_off`."""
        return component.set_torque_off(self.off, self.chains)


@dataclass(frozen=True)
class ReadTorqueStatus(ComponentCommand[TorqueMainSwitchCore, List[ServoStatus]]):
    """Read every servo's status (:meth:`TorqueMainSwitchCore.status`)."""

    KIND = TorqueMainSwitchCore

    def run(self, component: TorqueMainSwitchCore) -> List[ServoStatus]:
        """Call :meth:`TorqueMainSwitchCore.status`."""
        return component.status()
