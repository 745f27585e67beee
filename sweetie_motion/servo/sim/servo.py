"""
One simulated HerkuleX DRS-0101 / DRS-0201: registers, trajectory generator, motion, flags.

:class:`SimulatedServo` has the EEP and RAM of the real one loaded from the factory values
(RAM 0..47 from EEP 6..53 at boot and REBOOT), and:

* answers as the real one does (fact sheet sections 2 and 5): only when addressed by its own
  ID and its ACK policy allows (0: only STAT; 1: reads and STAT; 2: everything), STAT always,
  broadcast requests never except STAT. The ACK policy in force before a request decides
  whether it is answered;
* a span beyond its memory or a write to a read-only register sets 'invalid packet' with the
  register-range detail bit, and the request is not executed (a read beyond the memory gets no
  reply [I]);
* torque via the torque-control register (RAM 52: 0x60 on, 0x40 brake, 0x00 free). Switching it
  on holds the current position. The torque policy (RAM 3) releases the torque when one of its
  error bits is set; switching it on again is refused while such a bit is still set;
* moves on the 11.2 ms servo tick: a JOG received is latched at the servo's next tick (each
  servo has its own tick phase); in position mode the trajectory generator runs a trapezoid
  from its current desired position to the goal in playtime x 11.2 ms, the ramps being the
  acceleration ratio (RAM 8, % of the playtime) capped by the maximum acceleration time (RAM 9);
  the joint follows the desired position through the servo model
  (:func:`sweetie_motion.servo.servo_model.advance`, steps of 2.8 ms, the motor torque saturated
  at the stall torque) against an optional external torque, and, with a ``lag``, through a
  first-order lag after it (a plant the identification's model does not contain). With the
  torque off a JOG only sets the control mode and the LED (RAM 56, 53; fact sheet 10.3). The
  speed mode drives the motor with the JOG value as PWM (the position wraps around the count
  range [I]);
* the LED (RAM 53) takes the LED bits of every JOG tag and of LED-control writes, except while
  the alarm LED policy (RAM 2) matches an error bit;
* keeps the goal within the position limits (RAM 20/22, calibrated counts): a goal outside is
  clamped and sets 'position limit' [I]; a position outside them (pushed, moved by hand) sets
  it too;
* overload: a PWM at or above the overload threshold (RAM 18) for the overload detection period
  (RAM 42 ticks) sets 'overload'; temperature and voltage are checked every ADC check period
  (RAM 39 ticks) against RAM 5 and RAM 6/7; an injected condition (:meth:`set_condition`) sets
  its flag again at the next such check after it was cleared, for as long as it lasts;
* REBOOT: the servo does not listen for ``reboot_time`` (default 0.2 s; SB waits 0.3 s), then
  RAM is reloaded from EEP (torque off, errors cleared); so EEP writes (ID, ACK policy, limits,
  baud rate ...) take effect only after a reboot. A servo rebooted into another baud rate than
  the line's no longer understands anything; ROLLBACK restores the factory EEP (keeping ID and
  baud when asked).
"""

import math
from typing import Any, Dict, Optional

from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.servo_model import default_params, NOMINAL_VOLTAGE
from sweetie_motion.servo.sim.config import SimServoConfig
from sweetie_motion.servo.sim.faults import ERROR_FLAGS
from sweetie_motion.servo.sim.motion import Mechanics, TrajectoryProfile

#: Largest physics step [s]: four per servo tick.
MAX_STEP = hx.TICK / 4
#: Raw temperature of a servo at room temperature (MJ's fit: about 25 degree C).
ROOM_TEMPERATURE_RAW = 127


class SimulatedServo:
    """
    One simulated DRS-0101 / DRS-0201 (behaviour in the module docstring).

    :param config: the servo's configuration.
    :param voltage: supply [V].
    :param start: simulation time of power-on [s].
    :param phase: offset of its tick from ``start`` [s], 0..11.2 ms.
    :param line_baud: the baud rate of the line it is on.
    :param reboot_time: time deaf after REBOOT [s].
    """

    def __init__(self, config: SimServoConfig, voltage: float, start: float, phase: float,
                 line_baud: int, reboot_time: float) -> None:
        self.config = config
        self.kind = hx.servo_type(config.servo_type)
        self.params = config.params or default_params(self.kind.name, config.joint)
        self.voltage = float(voltage)
        #: the supply without an injected voltage fault [V]
        self.config_voltage = float(voltage)
        self.line_baud = int(line_baud)
        self.reboot_time = float(reboot_time)
        self.eep = hx.factory_eep(self.kind.model_no)
        self.eep[6] = config.servo_id
        for name, value in config.eep.items():
            reg = hx.register(name)
            address = reg.address(hx.Memory.EEP)
            self.eep[address:address + reg.size] = reg.encode(value)
        self.ram = hx.ram_from_eep(self.eep)
        self.shaft = Mechanics(self.kind, self.params, config.position, config.lag)
        self.shaft.external_torque = float(config.external_torque)
        self.temperature_raw = ROOM_TEMPERATURE_RAW
        self.t = float(start)
        self.next_tick = float(start) + phase
        self.ticks = 0
        self.profile = TrajectoryProfile(start, self.shaft.q, self.shaft.q)
        self.speed_command = 0
        self.pending: Optional[hx.JogTag] = None
        self.last_counts = self.counts()
        self._put(68, self.last_counts)
        self.overload_ticks = 0
        self.adc_ticks = 0
        self.silent = False
        self.forced: int = 0            # error bits held by injected conditions
        self.deaf_until = -math.inf
        self.rebooting = False
        self.baud_ok = True
        self.jogs = 0                   # JOG tags latched
        self.requests = 0

    # --- identity and registers ----------------------------------------------------------------

    @property
    def servo_id(self) -> int:
        """Return the current ID (RAM 0)."""
        return self.ram[0]

    @property
    def name(self) -> str:
        """Return the joint name or the ID."""
        return self.config.joint or f'servo {self.config.servo_id}'

    @property
    def torque_mode(self) -> int:
        """Return the torque-control register."""
        return self.ram[52]

    @property
    def torque_on(self) -> bool:
        """Return whether the motor drives (torque on)."""
        return self.ram[52] & 0x60 == hx.TORQUE_ON

    def listening(self, t: float) -> bool:
        """Return whether the servo hears requests at time t."""
        return not self.silent and self.baud_ok and t >= self.deaf_until

    def counts(self) -> int:
        """Return the absolute position [counts]."""
        return self.kind.rad_to_position(self.shaft.q, clamp=True)

    def _cal(self) -> int:
        return int.from_bytes(self.ram[47:48], 'little', signed=True)

    def _u16(self, address: int) -> int:
        return self.ram[address] | self.ram[address + 1] << 8

    def _put(self, address: int, value: int, signed: bool = False) -> None:
        value = int(value)
        if signed:
            value = max(-32768, min(32767, value)) & 0xFFFF
        self.ram[address:address + 2] = (value & 0xFFFF).to_bytes(2, 'little')

    def status(self) -> hx.Status:
        """Return the two status bytes now."""
        detail = self.ram[49] & 0x3C
        if self.profile.active(self.t) or abs(self._diff()) > self.ram[43]:
            detail |= hx.StatusDetail.MOVING
        elif abs(self._u16(68) - self.counts()) <= self.ram[44]:
            detail |= hx.StatusDetail.IN_POSITION
        if self.torque_on:
            detail |= hx.StatusDetail.MOTOR_ON
        return hx.Status(self.ram[48], int(detail))

    def _diff(self) -> int:
        return int.from_bytes(self.ram[62:64], 'little', signed=True)

    def _refresh(self) -> None:
        """Write the measured values into RAM 54..73."""
        ram = self.ram
        ram[54] = hx.volts_to_voltage(self.voltage)
        ram[55] = min(255, max(0, int(self.temperature_raw)))
        counts = self.counts()
        self._put(58, max(0, counts - self._cal()))
        self._put(60, counts)
        limit = self._torque_limit()
        self._put(64, round(self.shaft.motor / limit * 1023) if limit > 0 else 0, signed=True)
        desired, velocity = self.profile.at(self.t)
        self._put(70, self.kind.rad_to_position(desired, clamp=True))
        self._put(72, round(self.kind.rad_s_to_velocity(velocity)), signed=True)
        ram[56] = ram[56] & 1

    def _torque_limit(self) -> float:
        max_pwm = min(1023, self._u16(16))
        return self.kind.stall_torque * self.voltage / NOMINAL_VOLTAGE * max_pwm / 1023

    def raise_error(self, error: int, detail: int = 0) -> None:
        """Set status bits; the torque policy may release the torque."""
        self.ram[48] |= error & 0xFF
        self.ram[49] |= detail & 0x3C
        if self.ram[3] & self.ram[48]:
            self.ram[52] = hx.TORQUE_FREE

    # --- time ----------------------------------------------------------------------------------

    def next_due(self) -> float:
        """Return when the servo's next tick or the end of its reboot is due [s]."""
        return min(self.next_tick, self.deaf_until if self.rebooting else math.inf)

    def advance(self, t: float) -> None:
        """Run the servo up to time t (ticks, physics, reboot)."""
        while True:
            due = self.next_due()
            if due > t:
                break
            self._run(due)
            if self.rebooting and due == self.deaf_until:
                self._boot()
            else:
                self._tick()
                self.next_tick += hx.TICK
        self._run(t)

    def _run(self, t: float) -> None:
        while self.t < t - 1e-12:
            dt = min(MAX_STEP, t - self.t)
            self._step(dt)
            self.t += dt

    def _step(self, dt: float) -> None:
        desired, _ = self.profile.at(self.t + dt)
        self.shaft.step(dt, self.ram[52] & 0x60, bool(self.ram[56] & 1), desired,
                        self.speed_command, self._torque_limit(), self.voltage)

    def _tick(self) -> None:
        self.ticks += 1
        ram = self.ram
        ram[57] = self.ticks & 0xFF
        counts = self.counts()
        self._put(62, counts - self.last_counts, signed=True)
        self.last_counts = counts
        if self.rebooting:
            return
        if self.pending is not None:
            tag, self.pending = self.pending, None
            self._apply_jog(tag)
        self._refresh()
        pwm = abs(int.from_bytes(ram[64:66], 'little', signed=True))
        threshold = self._u16(18)
        if self.torque_on and pwm >= threshold:
            self.overload_ticks += 1
            if self.overload_ticks >= max(1, ram[42]):
                self.raise_error(hx.StatusError.OVERLOAD)
        else:
            self.overload_ticks = 0
        self.adc_ticks += 1
        if self.adc_ticks >= max(1, ram[39]):
            self.adc_ticks = 0
            if self.temperature_raw > ram[5]:
                self.raise_error(hx.StatusError.TEMPERATURE)
            if not ram[6] <= ram[54] <= ram[7]:
                self.raise_error(hx.StatusError.VOLTAGE)
            if self.forced & hx.StatusError.OVERLOAD:
                self.raise_error(hx.StatusError.OVERLOAD)
        calibrated = self._u16(58)
        if self.torque_on and not self._u16(20) <= calibrated <= self._u16(22):
            self.raise_error(hx.StatusError.POT_LIMIT)

    def _apply_jog(self, tag: hx.JogTag) -> None:
        self.jogs += 1
        ram = self.ram
        if not self.torque_on:
            ram[56] = int(tag.speed_mode)
            if not tag.invalid and not self._alarm():
                ram[53] = tag.led
            return
        if tag.invalid or tag.speed_mode != bool(ram[56] & 1):
            return
        if not self._alarm():
            ram[53] = tag.led
        t = self.t
        if tag.speed_mode:
            self.speed_command = 0 if tag.stop else tag.value
            return
        desired, _ = self.profile.at(t)
        if tag.stop:
            self.profile = TrajectoryProfile(t, desired, desired)
            return
        goal = tag.value
        low, high = self._u16(20), self._u16(22)
        if not low <= goal <= high:
            goal = min(max(goal, low), high)
            self.raise_error(hx.StatusError.POT_LIMIT)
        absolute = min(max(goal + self._cal(), 0), self.kind.max_count)
        self._put(68, absolute)
        duration = tag.playtime * hx.TICK
        ramp = min(duration * min(ram[8], 50) / 100.0, ram[9] * hx.TICK, duration / 2)
        self.profile = TrajectoryProfile(t, desired, self.kind.position_to_rad(absolute), duration,
                                         ramp)

    def _alarm(self) -> bool:
        return bool(self.ram[2] & self.ram[48])

    def _boot(self) -> None:
        self.rebooting = False
        self.ram = hx.ram_from_eep(self.eep)
        self.profile = TrajectoryProfile(self.t, self.shaft.q, self.shaft.q)
        self.pending = None
        self.speed_command = 0
        self.overload_ticks = 0
        rate = hx.BAUD_RATES.get(self.eep[4])
        self.baud_ok = rate == self.line_baud
        self.last_counts = self.counts()
        self._put(68, self.last_counts)
        self._refresh()

    # --- requests ------------------------------------------------------------------------------

    def _range_error(self) -> None:
        self.raise_error(hx.StatusError.INVALID_PACKET, hx.StatusDetail.REGISTER_RANGE)

    def handle(self, frame: hx.Frame, request: hx.Request, t: float,
               reply_to: bool) -> Optional[hx.Frame]:
        """
        Execute a request addressed to this servo (own ID or broadcast) at time t.

        :param frame: the frame (for its pID).
        :param request: the decoded request.
        :param t: completion time of the request [s].
        :param reply_to: the pID was this servo's own ID.
        :return: the reply frame, or None.
        """
        self.requests += 1
        policy = self.ram[1]
        command = request.command
        if isinstance(request, hx.ReadRequest):
            return self._read(request, reply_to and policy >= 1)
        if isinstance(request, hx.WriteRequest):
            if not self._write(request):
                return None
        elif isinstance(request, (hx.IJogRequest, hx.SJogRequest)):
            for tag in request.tags:
                if tag.servo_id in (self.servo_id, hx.BROADCAST_ID):
                    if isinstance(request, hx.SJogRequest):
                        tag = hx.JogTag(tag.servo_id, tag.value, tag.speed_mode, tag.led,
                                        tag.stop, tag.invalid, request.playtime)
                    self.pending = tag
        elif isinstance(request, hx.StatRequest):
            return hx.AckReply(self.servo_id, command, self.status()).frame()
        elif isinstance(request, hx.RollbackRequest):
            factory = hx.factory_eep(self.kind.model_no, (self.eep[2], self.eep[3]))
            if request.keep_id:
                factory[6] = self.eep[6]
            if request.keep_baud:
                factory[4] = self.eep[4]
            self.eep[:] = factory
        elif isinstance(request, hx.RebootRequest):
            reply = hx.AckReply(self.servo_id, command, self.status()).frame() \
                if reply_to and policy >= 2 else None
            self.rebooting = True
            self.deaf_until = t + self.reboot_time
            self.ram[52] = hx.TORQUE_FREE
            return reply
        if reply_to and policy >= 2:
            return hx.AckReply(self.servo_id, command, self.status()).frame()
        return None

    def _read(self, request: hx.ReadRequest, reply: bool) -> Optional[hx.Frame]:
        """Return the reply of a read request (None: none is sent, or the range is wrong)."""
        memory = request.memory
        if request.address + request.length > memory.size:
            self._range_error()
            return None
        self._refresh()
        source = self.eep if memory is hx.Memory.EEP else self.ram
        data = bytes(source[request.address:request.address + request.length])
        if memory is hx.Memory.RAM and request.address <= 49 < request.address \
                + request.length:
            status = self.status()
            patched = bytearray(data)
            patched[49 - request.address] = status.detail
            data = bytes(patched)
        if not reply:
            return None
        return hx.ReadReply(self.servo_id, memory, request.address, data,
                            self.status()).frame()

    def _write(self, request: hx.WriteRequest) -> bool:
        start, data = request.address, request.data
        end = start + len(data)
        if end > request.memory.size:
            self._range_error()
            return False
        if request.memory is hx.Memory.EEP:
            if start < 4:
                self._range_error()
                return False
            self.eep[start:end] = data
            return True
        if end > hx.RAM_READ_ONLY_FROM:
            self._range_error()
            return False
        for offset, value in enumerate(data):
            self._write_ram(start + offset, value)
        return True

    def _write_ram(self, address: int, value: int) -> None:
        ram = self.ram
        if address == 48:
            ram[48] = value
        elif address == 49:
            ram[49] = value & 0x3C
        elif address == 52:
            self._set_torque(value & 0x60)
        elif address == 53:
            if not self._alarm():
                ram[53] = value & 0x07
        else:
            ram[address] = value

    def _set_torque(self, mode: int) -> None:
        if mode == hx.TORQUE_ON:
            if self.ram[3] & self.ram[48]:
                return   # released by the torque policy: clear the error first
            if not self.torque_on:
                self.profile = TrajectoryProfile(self.t, self.shaft.q, self.shaft.q)
                self._put(68, self.counts())
                self.speed_command = 0
        self.ram[52] = mode

    # --- outside influences --------------------------------------------------------------------

    def set_condition(self, flag: str, active: bool) -> None:
        """
        Start or end an injected error condition ('overload', 'overheat', 'voltage').

        The flag is raised at once and, while the condition lasts, again at every ADC check
        (RAM 39 ticks): cleared, it comes back at the next check, as a real condition does.
        """
        bit = ERROR_FLAGS[flag]
        self.forced = self.forced | bit if active else self.forced & ~bit
        if flag == 'overheat':
            self.temperature_raw = self.ram[5] + 10 if active else ROOM_TEMPERATURE_RAW
        elif flag == 'voltage':
            self.voltage = (self.ram[6] - 5) * hx.VOLTS_PER_COUNT if active \
                else self.config_voltage
        elif active:
            self.raise_error(bit)

    def snapshot(self) -> Dict[str, Any]:
        """Return the servo's state as plain values."""
        self._refresh()
        status = self.status()
        shaft = self.shaft
        return {'id': self.servo_id, 'joint': self.config.joint, 'position': shaft.q,
                'velocity': shaft.v, 'counts': self.counts(), 'torque_control': self.ram[52],
                'torque_on': self.torque_on, 'status_error': status.error,
                'status_detail': status.detail, 'errors': hx.error_names(status.error),
                'mode': self.ram[56] & 1, 'led': self.ram[53], 'ack_policy': self.ram[1],
                'jammed': shaft.jammed, 'silent': self.silent, 'rebooting': self.rebooting,
                'listening': self.listening(self.t), 'external_torque': shaft.external_torque,
                'desired': self.profile.at(self.t)[0], 'jogs': self.jogs,
                'requests': self.requests}
