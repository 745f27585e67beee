"""
TorqueMainSwitch: servos off so a person can pose the robot by hand (R-SYS-6).

Switching the torque off takes the controller's resources from their owners, frees their servos
and feeds the measured pose back as the reference, so ``joint_states_ref`` follows what the
person does. Switching it on while the person still moves the robot starts from the measured
position and velocity and brakes within the acceleration and jerk limits; once at rest the
servos hold there and the resources go back to their previous owners, which continue from that
pose. If another controller takes a resource
while its servos are free, the switch turns them on first: nobody drives limp servos.
"""

import threading
from typing import FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.controllers.base import ControllerCore
from sweetie_motion.core.arbiter import Arbiter
from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.safety import Brake
from sweetie_motion.model.robot_model import RobotModelView
from sweetie_motion.servo.bus import ServoBus, ServoStatus


class TorqueMainSwitchCore(ControllerCore):
    """
    The torque main switch (a cycle stage of role 'controller').

    :param bus: the servo bus whose servos are switched.
    """

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
        self._brake: Optional[Brake] = None   # made at the first torque on (needs the period)
        self._abandoned: FrozenSet[str] = frozenset()
        self._switch_lock_free = threading.Lock()  # taken inside arbiter callbacks
        self.on_ownership = self._ownership_changed

    @property
    def torque_off(self) -> bool:
        """Return whether this switch holds servos free now."""
        return self.operational and bool(self.owned) and not self._handover

    def servo_joints(self, resources=None) -> List[str]:
        """Return the bus joints of ``resources`` (default: all of this switch's)."""
        resources = self.resources if resources is None else resources
        return [j for r in sorted(resources) for j in self._servo_joints.get(r, [])]

    def set_torque_off(self, off: bool) -> Tuple[bool, str]:
        """
        Switch the servos of this controller's chains off (True) or back on (False).

        :return: (success, message) for the service response.
        """
        with self._switch_lock:
            joints = self.servo_joints()
            if off:
                self._handover = 0
                with self._switch_lock_free:
                    self._abandoned = frozenset()
                self.acquire()
                self.bus.set_torque(joints, False)
                return True, (f'torque off: {len(joints)} servos of '
                              f'{", ".join(sorted(self.resources))} are free')
            self.bus.set_torque(joints, True)
            if not self.operational:
                return True, 'torque was already on'
            self._handover = 1
            return True, f'torque on: {len(joints)} servos hold their pose'

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
            self.arbiter.release(self, abandoned)
        if not self.operational:
            return
        if self._handover == 2:
            self._handover = 0
            self.release()
            return
        if self._handover == 1:
            if self._brake is None or self._brake.period != tick.period:
                self._brake = Brake(self.model.joint_limits(), tick.period)
            # this tick still sends the measured state; the brake continues from it
            self._brake.start(tick.measured.position, tick.measured.velocity)
            self._handover = 3
            self.emit(tick, tick.measured.position.copy(), tick.measured.velocity.copy())
            return
        if self._handover == 3:
            assert self._brake is not None  # handover step 1 made it
            position, velocity = self._brake.step()
            if not self._brake.active:
                self._handover = 2
            self.emit(tick, position, velocity)
            return
        self.emit(tick, tick.measured.position.copy(), tick.measured.velocity.copy())

    def status(self) -> List[ServoStatus]:
        """Return the status of the servos of this switch's chains."""
        mine = set(self.servo_joints())
        return [s for s in self.bus.status() if s.joint in mine]

    def torque_mask(self) -> np.ndarray:
        """Return torque on/off of the bus joints."""
        return self.bus.torque()
