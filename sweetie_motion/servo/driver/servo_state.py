"""
What the driver knows of each servo, and the measurements it shares with the cycle.

:class:`LineServo` is one servo as its line sees it: its configuration, its health (the fault
policy), its newest measurement and when the servo sampled it, the torque as commanded and as
reported, its LED. The line thread owns it; operations (running on threads of their own) change
the torque, pause and LED fields, each a single assignment, and the counters under the line's
lock.

:class:`MeasurementBoard` holds the newest position, velocity and effort of every servo of the
bus with their sample times, and the faults: the line threads write it, the cycle reads it
(:meth:`SerialServoBus.receive`), each under its lock for a copy.
"""

import math
import threading
from typing import Dict, List, Optional

import numpy as np

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.driver.config import DriverConfig, ServoConfig
from sweetie_motion.servo.driver.health import ServoFault, ServoHealth, ServoStatistics

#: LED bits (LED-control register: 1 green, 2 blue, 4 red)
LED_GREEN, LED_BLUE, LED_RED = 0x01, 0x02, 0x04
#: a velocity from two position samples further apart than this is not taken [s]
VELOCITY_SPAN = 0.1


class LineServo:
    """
    One servo of a line (see the module docstring).

    :param config: its configuration.
    :param index: its place in the bus's joint arrays.
    :param slot: its place in the line's goal array.
    :param bus: the bus name.
    :param driver: the driver's configuration (its fault policy).
    """

    def __init__(self, config: ServoConfig, index: int, slot: int, bus: str,
                 driver: DriverConfig) -> None:
        self.config = config
        self.index = index
        self.slot = slot
        self.kind = config.kind
        self.stats = ServoStatistics(config.joint, config.servo_id, bus)
        self.health = ServoHealth(driver.lost_after, driver.error_persistence,
                                  driver.error_mask)
        self.status = hx.Status()
        self.torque_on = False       # as the servo reports it
        self.torque_cmd = False      # as last commanded
        self.torque_pending = 0      # switches queued or running (torque() reports the command)
        self.ack_policy = 1
        self.paused = 0              # operations that hold the goals off (reboot, mode)
        self.resume = True           # goals ramp from the measured pose (after (re)connect)
        self.sent_goal = math.nan    # the last goal sent [counts]
        self.counts = math.nan       # the newest measured position [counts]
        self.sampled = -math.inf     # when the servo sampled it [s]
        self.position = math.nan     # the newest joint position [rad]
        self.read_cycle = -1         # the cycle it was last asked for its position
        self.reads_sent = 0
        #: its last position read was lost: it is asked again before the next cycle if the wire
        #: has room (a lost reply would otherwise age its measurement by a whole period)
        self.reask = False
        #: an LED value written by a person (stays until the servo reboots); None: the state
        self.led_written: Optional[int] = None

    @property
    def servo_id(self) -> int:
        """Return its ID."""
        return self.config.servo_id

    @property
    def joint(self) -> str:
        """Return its joint."""
        return self.config.joint

    def describe(self) -> str:
        """Return e.g. "joint11 (ID 11)"."""
        return f'{self.config.joint} (ID {self.config.servo_id})'

    def torque_reported(self) -> bool:
        """Return the torque a caller sees: the command while a switch is pending."""
        on = self.torque_cmd if self.torque_pending else self.torque_on
        return on and not self.health.lost

    def led(self, status_led: bool) -> int:
        """Return the LED bits its goals carry: the written value, else its state."""
        if self.led_written is not None:
            return self.led_written
        if not status_led:
            return 0
        if self.health.fault is not None:
            return LED_RED
        return LED_GREEN if self.torque_on else LED_BLUE

    def measured(self, counts: int, sampled: float, velocity: Optional[float] = None
                 ) -> float:
        """
        Take a new position; return the joint velocity [rad/s].

        The velocity is the servo's own (``velocity``, a read of its velocity register) or the
        difference to the previous sample (finer than the register's 0.5 rad/s steps).

        :param counts: calibrated position [counts].
        :param sampled: when the servo sampled it [s].
        :param velocity: the servo's velocity register as joint velocity [rad/s], if read.
        """
        config = self.config
        position = config.servo_to_joint(self.kind.position_to_rad(counts))
        span = sampled - self.sampled
        if 0.0 < span <= VELOCITY_SPAN:
            velocity = (position - self.position) / span
        elif velocity is None:
            velocity = 0.0
        self.counts = float(counts)
        self.sampled = sampled
        self.position = position
        return velocity


class MeasurementBoard:
    """
    The newest measurement of every bus joint and the faults (see the module docstring).

    :param joints: how many joints the bus has.
    """

    def __init__(self, joints: int) -> None:
        self.lock = threading.Lock()
        self.position = np.zeros(joints)
        self.velocity = np.zeros(joints)
        self.effort = np.zeros(joints)
        self.stamp = 0.0
        self.stamps = np.zeros(joints)
        self.faults: List[ServoFault] = []
        self.active_faults: Dict[str, ServoFault] = {}

    def store(self, index: int, position: float, velocity: float, effort: Optional[float],
              stamp: float) -> None:
        """Store one joint's measurement (effort None: keep the last)."""
        with self.lock:
            self.position[index] = position
            self.velocity[index] = velocity
            if effort is not None:
                self.effort[index] = effort
            self.stamps[index] = stamp
            self.stamp = max(self.stamp, stamp)

    def add_fault(self, fault: ServoFault) -> None:
        """Keep a fault that switched a servo off."""
        with self.lock:
            self.faults.append(fault)
            self.active_faults[fault.joint] = fault

    def clear_fault(self, joint: str) -> None:
        """Forget a joint's active fault (its flags were cleared)."""
        with self.lock:
            self.active_faults.pop(joint, None)
