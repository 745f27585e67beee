"""
The HerkuleX bus simulator: simulated servos behind a pseudo-terminal, speaking the same bytes.

:class:`BusSimulator` is the core, free of I/O and of the clock: bytes in at a time, bytes out
at a time. It paces both directions of the line at the baud rate (a byte takes 10 / baud s,
8N1, full duplex: requests and replies each have their own wire), executes a request when its
last byte has arrived, and starts a reply ``latency`` after that, once the reply wire is free.
:class:`PtyServer` puts a core behind a pseudo-terminal (``os.openpty``, raw mode) and serves
it in real time; :func:`main` is the program ``sweetie-motion servo-sim``.

Each :class:`SimulatedServo` has the EEP and RAM of a DRS-0101 / DRS-0201 loaded from the
factory values (RAM 0..47 from EEP 6..53 at boot and REBOOT), and:

* answers as the real one does (fact sheet sections 2 and 5): only when addressed by its own
  ID and its ACK policy allows (0: only STAT; 1: reads and STAT; 2: everything), STAT always,
  broadcast requests never except STAT (every servo answers a broadcast STAT; the simulator
  sends the answers one after the other where real servos would collide). The ACK policy in
  force before a request decides whether it is answered;
* checks what it receives: a checksum error, an unknown command, a span beyond its memory or
  a write to a read-only register set 'invalid packet' with the matching detail bit, and the
  request is not executed (a read beyond the memory gets no reply [I]);
* torque via the torque-control register (RAM 52: 0x60 on, 0x40 brake, 0x00 free). Switching it
  on holds the current position. The torque policy (RAM 3) releases the torque when one of its
  error bits is set; switching it on again is refused while such a bit is still set;
* moves on the 11.2 ms servo tick: a JOG received is latched at the servo's next tick (each
  servo has its own tick phase); in position mode the trajectory generator runs a trapezoid
  from its current desired position to the goal in playtime x 11.2 ms, the ramps being the
  acceleration ratio (RAM 8, % of the playtime) capped by the maximum acceleration time (RAM 9);
  the joint follows the desired position through the servo model
  (:func:`sweetie_motion.servo.servo_model.advance`, steps of 2.8 ms, the motor torque saturated
  at the stall torque) against an optional external torque. With the torque off a JOG only
  sets the control mode (RAM 56, fact sheet 10.3). The speed mode drives the motor with the JOG
  value as PWM (the position wraps around the count range [I]);
* keeps the goal within the position limits (RAM 20/22, calibrated counts): a goal outside is
  clamped and sets 'position limit' [I]; a position outside them (pushed, moved by hand) sets
  it too;
* overload: a PWM at or above the overload threshold (RAM 18) for the overload detection period
  (RAM 42 ticks) sets 'overload'; temperature and voltage are checked every ADC check period
  (RAM 39 ticks) against RAM 5 and RAM 6/7;
* replies leave the pty in chunks at most every ``--chunk`` s (default 0.5 ms, as a USB
  adapter's packets; never early);
* REBOOT: the servo does not listen for ``reboot_time`` (default 0.2 s; SB waits 0.3 s), then
  RAM is reloaded from EEP (torque off, errors cleared); so EEP writes (ID, ACK policy, limits,
  baud rate ...) take effect only after a reboot. A servo rebooted into another baud rate than
  the line's no longer understands anything; ROLLBACK restores the factory EEP (keeping ID and
  baud when asked).

Faults (``--fault``, reproducible with ``--seed``):

=============================  ============================================================
``corrupt=RATE``               each reply byte is corrupted with probability RATE; the
                               corruption flips bits the checksums cover (a flip of bit 0
                               alone is undetectable by the protocol, fact sheet 1.2, so the
                               simulator redraws a corruption that the master's parser would
                               accept: every corrupted reply is lost to the master)
``drop=RATE``                  a reply is not sent (the request was executed)
``late=RATE[:DELAY]``          a reply comes DELAY s late (default 0.05; the servo's later
                               replies wait behind it)
``error=ID:FLAG[@T][+D]``      FLAG (overload, overheat, voltage) on servo ID from T s after
                               the start for D s (default: for good); overheat and voltage
                               are physical conditions found at the next ADC check
``random-errors=RATE[@T]``     error flags on random servos, RATE per second from T on
``jam=ID[@T][+D]``             the servo's shaft is blocked (it overloads if driven)
``silent=ID[@T][+D]``          the servo stops listening and answering
``close=T[+REOPEN]``           the port closes at T; reopens REOPEN s later as a new pty
                               (use ``--link`` for a path that stays valid)
=============================  ============================================================

Control channel (``--control PATH``): a UNIX stream socket speaking JSON lines, one request
object per line, one answer per line (:class:`SimulatorControl` is a client). Operations:
``{"op": "state"}`` (servos, counters, time), ``{"op": "move", "positions": {ID: rad}}``
(moved by hand: only servos with the torque off or braking move; answers the moved IDs),
``{"op": "external_torque", "torques": {ID: N*m}}``, ``{"op": "fault", "spec": "jam=11"}``
(the --fault grammar, times counted from now), ``{"op": "close", "reopen": s}``.

Servo configuration (YAML, ``--servos``)::

    servo_sim:
      baud: 115200          # optional, the --baud default
      voltage: 7.4          # supply [V]
      servos:
        - id: 11            # servo ID 0..253
          model: DRS-0101   # or DRS-0201
          joint: joint11    # optional: names the servo in messages
          position: 0.0     # initial servo angle from the centre count 512 [rad]
          external_torque: 0.0          # optional [N*m]
          params: {kp: 1.35, alpha: [0.18, 0.04, 0.03, 1.0], qs: 0.3}   # optional model
          eep: {ack_policy: 2}          # optional EEP values (as configured servos keep)

:func:`sim_config_from_bus` writes this mapping from the driver's bus configuration
(:mod:`sweetie_motion.servo.serial_bus`); ``--servos`` also takes the driver's configuration
file itself with ``--bus NAME``.
"""

import argparse
import dataclasses
from dataclasses import dataclass, field
import functools
import heapq
import json
import math
import os
import random
import select
import signal
import socket
import sys
import threading
import time
import tty
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.paths import check_keys, load_yaml
from sweetie_motion.servo import herkulex as hx
from sweetie_motion.servo.servo_model import advance as model_advance
from sweetie_motion.servo.servo_model import default_params, NOMINAL_VOLTAGE, ServoModelParams

#: Largest physics step [s]: four per servo tick.
MAX_STEP = hx.TICK / 4
#: Raw temperature of a servo at room temperature (MJ's fit: about 25 degree C).
ROOM_TEMPERATURE_RAW = 127
#: Brake mode: the shorted motor adds this much viscous friction [N*m*s/rad].
BRAKE_DAMPING = 5.0

ERROR_FLAGS = {'overload': hx.StatusError.OVERLOAD, 'overheat': hx.StatusError.TEMPERATURE,
               'voltage': hx.StatusError.VOLTAGE}


class SimulatorConfigError(SweetieMotionError):
    """
    A bad simulator configuration or fault specification.

    :param where: the key or option that is wrong.
    """

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        super().__init__(f'{where}: {reason}')


# --- configuration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimServoConfig:
    """
    One simulated servo.

    :param servo_id: its ID.
    :param servo_type: 'DRS-0101' or 'DRS-0201'.
    :param position: initial servo angle from the centre count [rad].
    :param params: the servo model (default: :func:`default_params` of the type).
    :param external_torque: torque of the environment on the shaft [N*m].
    :param joint: name used in messages.
    :param eep: EEP register values that differ from the factory's.
    """

    servo_id: int
    servo_type: str = 'DRS-0101'
    position: float = 0.0
    params: Optional[ServoModelParams] = None
    external_torque: float = 0.0
    joint: str = ''
    eep: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SimConfig:
    """
    The simulated line.

    :param servos: the servos on it.
    :param baud: line speed [Bd].
    :param latency: reply latency after a request's last byte [s].
    :param voltage: supply [V].
    :param reboot_time: a rebooting servo does not listen for this long [s].
    """

    servos: Tuple[SimServoConfig, ...]
    baud: int = 115200
    latency: float = 0.0003
    voltage: float = NOMINAL_VOLTAGE
    reboot_time: float = 0.2


def _number(where: str, value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(value, bool):
        raise SimulatorConfigError(where, f'{value!r} is not a number')
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SimulatorConfigError(where, f'{value!r} is not a number') from None
    if not (math.isfinite(number) and low <= number <= high):
        raise SimulatorConfigError(where, f'{number} is outside {low}..{high}')
    return number


def load_sim_config(data: Mapping[str, Any], bus: Optional[str] = None) -> SimConfig:
    """
    Read a simulator configuration mapping (or a driver configuration with ``bus``).

    :param data: the parsed YAML (top key ``servo_sim``, or ``servo_bus`` of the driver).
    :param bus: the bus of a driver configuration to simulate.
    :raises SimulatorConfigError: naming the key that is wrong.
    """
    if not isinstance(data, Mapping):
        raise SimulatorConfigError('configuration', 'must be a mapping')
    if 'servo_bus' in data and 'servo_sim' not in data:
        from sweetie_motion.servo.serial_bus import BusConfigError, load_bus_config
        try:
            driver = load_bus_config(data)
        except BusConfigError as error:
            raise SimulatorConfigError('servo_bus', str(error)) from None
        names = [b.name for b in driver.buses]
        if bus is None:
            if len(names) != 1:
                raise SimulatorConfigError('--bus', f'name one of the buses: {", ".join(names)}')
            bus = names[0]
        chosen = [b for b in driver.buses if b.name == bus]
        if not chosen:
            raise SimulatorConfigError('--bus', f'unknown bus {bus!r} (known: {", ".join(names)})')
        data = sim_config_from_bus(chosen[0])
    section = data.get('servo_sim', data)
    if not isinstance(section, Mapping):
        raise SimulatorConfigError('servo_sim', 'must be a mapping')
    check_keys('servo_sim', section, ('servos', 'baud', 'latency', 'voltage', 'reboot_time'),
               SimulatorConfigError)
    items = section.get('servos')
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)) or not items:
        raise SimulatorConfigError('servo_sim.servos', 'must be a non-empty list of servos')
    servos = []
    seen = set()
    for k, item in enumerate(items):
        where = f'servo_sim.servos[{k}]'
        if not isinstance(item, Mapping):
            raise SimulatorConfigError(where, 'must be a mapping')
        check_keys(where, item, ('id', 'model', 'joint', 'position', 'external_torque',
                                 'params', 'eep'), SimulatorConfigError)
        if 'id' not in item:
            raise SimulatorConfigError(f'{where}.id', 'missing')
        servo_id = int(_number(f'{where}.id', item['id'], 0, hx.MAX_ID))
        if servo_id != item['id']:
            raise SimulatorConfigError(f'{where}.id', f'{item["id"]!r} is not an integer')
        if servo_id in seen:
            raise SimulatorConfigError(f'{where}.id', f'servo ID {servo_id} appears twice')
        seen.add(servo_id)
        kind = str(item.get('model', 'DRS-0101'))
        try:
            servo_kind = hx.servo_type(kind)
        except hx.UnknownServoTypeError as error:
            raise SimulatorConfigError(f'{where}.model', str(error)) from None
        low, high = servo_kind.angle_range
        position = _number(f'{where}.position', item.get('position', 0.0), low, high)
        torque = _number(f'{where}.external_torque', item.get('external_torque', 0.0))
        params = None
        if item.get('params') is not None:
            try:
                params = ServoModelParams.from_fields(item['params'],
                                                      str(item.get('joint', servo_id)))
            except SweetieMotionError as error:
                raise SimulatorConfigError(f'{where}.params', str(error)) from None
        eep = item.get('eep', {}) or {}
        if not isinstance(eep, Mapping):
            raise SimulatorConfigError(f'{where}.eep', 'must be a mapping of register: value')
        for name, value in eep.items():
            try:
                reg = hx.register(str(name))
                reg.address(hx.Memory.EEP)
                reg.encode(value)
            except hx.HerkulexError as error:
                raise SimulatorConfigError(f'{where}.eep.{name}', str(error)) from None
        servos.append(SimServoConfig(servo_id, servo_kind.name, position, params, torque,
                                     str(item.get('joint', '')), dict(eep)))
    baud = int(_number('servo_sim.baud', section.get('baud', 115200), 1200, 4_000_000))
    latency = _number('servo_sim.latency', section.get('latency', 0.0003), 0.0, 1.0)
    voltage = _number('servo_sim.voltage', section.get('voltage', NOMINAL_VOLTAGE), 0.0, 18.0)
    reboot = _number('servo_sim.reboot_time', section.get('reboot_time', 0.2), 0.0, 10.0)
    return SimConfig(tuple(servos), baud, latency, voltage, reboot)


def load_sim_config_file(path: str, bus: Optional[str] = None) -> SimConfig:
    """
    Read a simulator (or driver) configuration file.

    :raises SimulatorConfigError: the file cannot be read or is wrong.
    """
    data = load_yaml(path, lambda reason: SimulatorConfigError('simulator config', reason))
    return load_sim_config(data, bus)


def sim_config_from_bus(bus: Any, pose: Optional[Mapping[str, float]] = None,
                        params: Optional[Mapping[str, ServoModelParams]] = None,
                        eep: Optional[Mapping[str, int]] = None) -> Dict[str, Any]:
    """
    Write the simulator configuration of one bus of the driver's configuration.

    :param bus: a :class:`sweetie_motion.servo.serial_bus.BusConfig`.
    :param pose: initial joint positions by joint name [rad] (default 0).
    :param params: servo models by joint name.
    :param eep: EEP values for every servo (e.g. ``{'ack_policy': 2}``).
    :return: the ``servo_sim`` mapping (dump it as YAML for ``--servos``).
    """
    pose = pose or {}
    params = params or {}
    servos = []
    for servo in bus.servos:
        entry: Dict[str, Any] = {
            'id': servo.servo_id, 'model': servo.servo_type, 'joint': servo.joint,
            'position': float(servo.joint_to_servo(pose.get(servo.joint, 0.0)))}
        if servo.joint in params:
            entry['params'] = params[servo.joint].to_fields()
        if eep:
            entry['eep'] = dict(eep)
        servos.append(entry)
    return {'servo_sim': {'baud': bus.baud, 'servos': servos}}


# --- faults -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultEvent:
    """
    A fault that starts at a time.

    :param time: start, seconds after the simulator's start [s].
    :param kind: 'error', 'jam', 'silent', 'close' or 'random-errors'.
    :param servo_id: the servo (error, jam, silent).
    :param flag: 'overload', 'overheat' or 'voltage' (error).
    :param duration: how long [s] (inf: for good; close: the time until the port reopens).
    :param rate: events per second (random-errors).
    """

    time: float
    kind: str
    servo_id: Optional[int] = None
    flag: str = ''
    duration: float = math.inf
    rate: float = 0.0


@dataclass(frozen=True)
class FaultPlan:
    """
    The faults to inject.

    :param corrupt: probability per reply byte.
    :param drop: probability per reply.
    :param late: probability per reply.
    :param late_delay: how late a late reply is [s].
    :param events: faults that start at a time.
    """

    corrupt: float = 0.0
    drop: float = 0.0
    late: float = 0.0
    late_delay: float = 0.05
    events: Tuple[FaultEvent, ...] = ()


def _parse_timing(where: str, text: str) -> Tuple[str, float, float]:
    """Split 'X[@T][+D]' into (X, T, D)."""
    duration = math.inf
    start = 0.0
    if '+' in text:
        text, d = text.split('+', 1)
        duration = _number(where, d, 0.0)
    if '@' in text:
        text, t = text.split('@', 1)
        start = _number(where, t, 0.0)
    return text, start, duration


def parse_fault(spec: str, offset: float = 0.0) -> FaultPlan:
    """
    Parse one ``--fault`` specification (grammar in the module docstring).

    :param spec: e.g. 'corrupt=0.05', 'error=11:overload@2+1', 'close=3+1'.
    :param offset: added to every start time [s].
    :raises SimulatorConfigError: naming the specification.
    """
    where = f'--fault {spec}'
    if '=' not in spec:
        raise SimulatorConfigError(where, 'expected KIND=VALUE')
    kind, value = (s.strip() for s in spec.split('=', 1))
    if kind in ('corrupt', 'drop'):
        probability = _number(where, value, 0.0, 1.0)
        return FaultPlan(corrupt=probability) if kind == 'corrupt' else FaultPlan(drop=probability)
    if kind == 'late':
        rate, _, delay = value.partition(':')
        return FaultPlan(late=_number(where, rate, 0.0, 1.0),
                         late_delay=_number(where, delay, 0.0, 10.0) if delay else 0.05)
    if kind == 'random-errors':
        rate, start, _ = _parse_timing(where, value)
        return FaultPlan(events=(FaultEvent(start + offset, kind,
                                            rate=_number(where, rate, 0.0, 1000.0)),))
    if kind == 'close':
        _, start, duration = _parse_timing(where, '@' + value)
        return FaultPlan(events=(FaultEvent(start + offset, kind, duration=duration),))
    if kind in ('error', 'jam', 'silent'):
        target, start, duration = _parse_timing(where, value)
        flag = ''
        if kind == 'error':
            target, _, flag = target.partition(':')
            if flag not in ERROR_FLAGS:
                raise SimulatorConfigError(where, f'flag must be one of {", ".join(ERROR_FLAGS)}')
        servo_id = int(_number(where, target, 0, hx.MAX_ID))
        return FaultPlan(events=(FaultEvent(start + offset, kind, servo_id, flag, duration),))
    raise SimulatorConfigError(where, 'unknown fault (corrupt, drop, late, error, random-errors, '
                                      'jam, silent, close)')


def parse_faults(specs: Iterable[str]) -> FaultPlan:
    """Combine several ``--fault`` specifications into one plan."""
    plan = FaultPlan()
    for spec in specs:
        part = parse_fault(spec)
        plan = FaultPlan(part.corrupt or plan.corrupt, part.drop or plan.drop,
                         part.late or plan.late,
                         part.late_delay if part.late else plan.late_delay,
                         plan.events + part.events)
    return plan


# --- one servo ----------------------------------------------------------------------------------


@dataclass
class _Profile:
    """The trajectory generator: a trapezoid from ``start`` to ``goal`` [rad]."""

    t0: float
    start: float
    goal: float
    duration: float = 0.0
    ramp: float = 0.0

    def at(self, t: float) -> Tuple[float, float]:
        """Return (desired position [rad], desired velocity [rad/s]) at time t."""
        tau = t - self.t0
        distance = self.goal - self.start
        total = self.duration
        if tau >= total or total <= 0.0:
            return self.goal, 0.0
        if tau <= 0.0:
            return self.start, 0.0
        ramp = self.ramp
        peak = distance / (total - ramp)
        if ramp > 0.0 and tau < ramp:
            return self.start + 0.5 * peak / ramp * tau * tau, peak * tau / ramp
        if tau <= total - ramp:
            return self.start + peak * (0.5 * ramp + tau - ramp), peak
        rest = total - tau
        return self.goal - 0.5 * peak / ramp * rest * rest, peak * rest / ramp

    def active(self, t: float) -> bool:
        """Return whether the generator still moves at t."""
        return t - self.t0 < self.duration


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
        self.line_baud = int(line_baud)
        self.reboot_time = float(reboot_time)
        self.eep = hx.factory_eep(self.kind.model_no)
        self.eep[6] = config.servo_id
        for name, value in config.eep.items():
            reg = hx.register(name)
            address = reg.address(hx.Memory.EEP)
            self.eep[address:address + reg.size] = reg.encode(value)
        self.ram = hx.ram_from_eep(self.eep)
        self.external_torque = float(config.external_torque)
        self.temperature_raw = ROOM_TEMPERATURE_RAW
        self.q = float(config.position)
        self.v = 0.0
        self.motor = 0.0
        self.t = float(start)
        self.next_tick = float(start) + phase
        self.ticks = 0
        self.profile = _Profile(start, self.q, self.q)
        self.speed_command = 0
        self.pending: Optional[hx.JogTag] = None
        self.last_counts = self.counts()
        self._put(68, self.last_counts)
        self.overload_ticks = 0
        self.adc_ticks = 0
        self.jammed = False
        self.silent = False
        self.forced: int = 0            # error bits held by injected conditions
        self.deaf_until = -math.inf
        self.rebooting = False
        self.baud_ok = True
        self.hand: Optional[float] = None
        self.last_reply_ready = -math.inf
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
        return self.kind.rad_to_position(self.q, clamp=True)

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
        self._put(64, round(self.motor / limit * 1023) if limit > 0 else 0, signed=True)
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

    def advance(self, t: float) -> None:
        """Run the servo up to time t (ticks, physics, reboot)."""
        while True:
            boot = self.deaf_until if self.rebooting else math.inf
            due = min(self.next_tick, boot)
            if due > t:
                break
            self._run(due)
            if self.rebooting and due == boot:
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
        t_end = self.t + dt
        start = self.q
        mode = self.ram[52] & 0x60
        if self.hand is not None and mode != hx.TORQUE_ON:
            low, high = self.kind.angle_range
            self.q = min(max(self.hand, low), high)
            self.hand = None
            self.v = (self.q - start) / dt
            self.motor = 0.0
            return
        self.hand = None
        limit = self._torque_limit()
        if mode == hx.TORQUE_ON and self.ram[56] & 1:
            motor = limit * max(-1023, min(1023, self.speed_command)) / 1023
            q, v, _ = model_advance(self.params, self.q, 0.0, dt, self.voltage,
                                    self.external_torque + motor / max(self.params.alpha[3],
                                                                       1e-9),
                                    drive=False)
            self.motor = motor
            if self.jammed:
                q, v = self.q, 0.0
            span = (self.kind.max_count + 1) * self.kind.rad_per_count
            low = self.kind.angle_range[0]
            self.q = (q - low) % span + low
            self.v = v
            return
        desired, _ = self.profile.at(t_end)
        if mode == hx.TORQUE_ON:
            q, v, motor = model_advance(self.params, self.q, desired, dt, self.voltage,
                                        self.external_torque, limit)
        else:
            q, v, motor = model_advance(self.params, self.q, desired, dt, self.voltage,
                                        self.external_torque, limit, drive=False,
                                        extra_damping=BRAKE_DAMPING if mode else 0.0)
        if self.jammed:
            stiffness = self.params.stiffness(self.voltage)
            q, v = self.q, 0.0
            motor = max(-limit, min(limit, stiffness * (desired - q))) \
                if mode == hx.TORQUE_ON else 0.0
        low, high = self.kind.angle_range
        if not low <= q <= high:
            q, v = min(max(q, low), high), 0.0
        self.q, self.v, self.motor = q, v, motor

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
        if self.forced & hx.StatusError.OVERLOAD:
            self.raise_error(hx.StatusError.OVERLOAD)
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
            self.profile = _Profile(t, desired, desired)
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
        self.profile = _Profile(t, desired, self.kind.position_to_rad(absolute), duration, ramp)

    def _alarm(self) -> bool:
        return bool(self.ram[2] & self.ram[48])

    def _boot(self) -> None:
        self.rebooting = False
        self.ram = hx.ram_from_eep(self.eep)
        self.profile = _Profile(self.t, self.q, self.q)
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
            if not reply_to or policy < 1:
                return None
            return hx.ReadReply(self.servo_id, memory, request.address, data,
                                self.status()).frame()
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
                self.profile = _Profile(self.t, self.q, self.q)
                self._put(68, self.counts())
                self.speed_command = 0
        self.ram[52] = mode

    # --- outside influences --------------------------------------------------------------------

    def set_condition(self, flag: str, active: bool) -> None:
        """Start or end an injected error condition ('overload', 'overheat', 'voltage')."""
        bit = ERROR_FLAGS[flag]
        self.forced = self.forced | bit if active else self.forced & ~bit
        if flag == 'overheat':
            self.temperature_raw = self.ram[5] + 10 if active else ROOM_TEMPERATURE_RAW
        elif flag == 'voltage':
            self.voltage = (self.ram[6] - 5) * hx.VOLTS_PER_COUNT if active \
                else self.config_voltage
        elif active:
            self.raise_error(bit)

    config_voltage = NOMINAL_VOLTAGE

    def snapshot(self) -> Dict[str, Any]:
        """Return the servo's state as plain values."""
        self._refresh()
        status = self.status()
        return {'id': self.servo_id, 'joint': self.config.joint, 'position': self.q,
                'velocity': self.v, 'counts': self.counts(), 'torque_control': self.ram[52],
                'torque_on': self.torque_on, 'status_error': status.error,
                'status_detail': status.detail, 'errors': hx.error_names(status.error),
                'mode': self.ram[56] & 1, 'led': self.ram[53], 'ack_policy': self.ram[1],
                'jammed': self.jammed, 'silent': self.silent, 'rebooting': self.rebooting,
                'listening': self.listening(self.t), 'external_torque': self.external_torque,
                'desired': self.profile.at(self.t)[0], 'jogs': self.jogs,
                'requests': self.requests}


# --- the line -----------------------------------------------------------------------------------


@dataclass
class SimCounters:
    """
    What the simulator received, sent and injected.

    :param frames_received: valid frames that arrived.
    :param jog_frames: I_JOG and S_JOG frames among them.
    :param reads: EEP_READ and RAM_READ frames among them.
    :param replies: replies sent (corrupted ones included).
    :param replies_corrupted: replies sent with corrupted bytes.
    :param bytes_corrupted: bytes corrupted.
    :param replies_dropped: replies not sent (drop fault).
    :param replies_late: replies sent late (late fault).
    :param bytes_in: bytes received.
    :param bytes_out: bytes sent.
    :param errors_injected: (time, servo ID, flag) of every injected error flag.
    :param parser: the servos' receiver counters.
    """

    frames_received: int = 0
    jog_frames: int = 0
    reads: int = 0
    replies: int = 0
    replies_corrupted: int = 0
    bytes_corrupted: int = 0
    replies_dropped: int = 0
    replies_late: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    errors_injected: List[Tuple[float, int, str]] = field(default_factory=list)
    parser: hx.ParserCounters = field(default_factory=hx.ParserCounters)

    def as_dict(self) -> Dict[str, Any]:
        """Return the counters as plain values."""
        out = {k: v for k, v in self.__dict__.items() if k not in ('parser', 'errors_injected')}
        out['errors_injected'] = [list(e) for e in self.errors_injected]
        out['parser'] = dict(self.parser.__dict__)
        return out


class BusSimulator:
    """
    Servos on one simulated line, bytes in and out with times (no I/O, no clock).

    Call :meth:`receive` with the bytes that came from the master and the time they were read,
    :meth:`advance` to run the servos and the scheduled requests up to a time, and
    :meth:`transmit` for the reply bytes whose wire time has passed.

    :param config: the line and its servos.
    :param faults: faults to inject.
    :param seed: seed of the fault draws and tick phases.
    :param start: simulation time of power-on [s].
    """

    def __init__(self, config: SimConfig, faults: Optional[FaultPlan] = None, seed: int = 0,
                 start: float = 0.0) -> None:
        self.config = config
        self.faults = faults or FaultPlan()
        self.rng = random.Random(seed)
        self.start = float(start)
        self.byte_time = hx.byte_time(config.baud)
        self.servos: List[SimulatedServo] = []
        for servo_config in config.servos:
            servo = SimulatedServo(servo_config, config.voltage, start,
                                   self.rng.uniform(0.0, hx.TICK), config.baud,
                                   config.reboot_time)
            servo.config_voltage = config.voltage
            self.servos.append(servo)
        self.counters = SimCounters()
        self._parser = hx.FrameParser()
        self.counters.parser = self._parser.counters
        self._master_parser_commands = hx.REPLY_COMMANDS
        self._in_free = self.start
        self._events: List[Tuple[float, int, Callable[[float], None]]] = []
        self._seq = 0
        self._pending: List[Tuple[float, int, bytes]] = []
        self._current: Optional[List[Any]] = None
        self._out_free = self.start
        self.now = self.start
        self.port_events: List[Tuple[float, float]] = []   # (close time, reopen after)
        for event in self.faults.events:
            self.schedule_fault(event)

    # --- lookup --------------------------------------------------------------------------------

    def servo(self, servo_id: int) -> SimulatedServo:
        """
        Return the servo that has this ID now.

        :raises KeyError: no servo has it.
        """
        for servo in self.servos:
            if servo.servo_id == servo_id:
                return servo
        raise KeyError(f'no simulated servo has ID {servo_id}')

    # --- events --------------------------------------------------------------------------------

    def _schedule(self, t: float, action: Callable[[float], None]) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, self._seq, action))

    def schedule_fault(self, event: FaultEvent, offset: float = 0.0) -> None:
        """
        Add a fault that starts ``event.time`` after the start (plus ``offset``).

        :raises SimulatorConfigError: the fault names a servo that is not on the line.
        """
        t = self.start + event.time + offset
        if event.kind == 'close':
            self.port_events.append((t, event.duration))
            self.port_events.sort()
            return
        if event.kind == 'random-errors':
            if event.rate > 0:
                self._schedule(t + self.rng.expovariate(event.rate),
                               lambda now: self._random_error(now, event.rate))
            return
        try:
            if event.servo_id is None:  # error, jam and silent name their servo
                raise KeyError(event.servo_id)
            servo = self.servo(event.servo_id)
        except KeyError:
            raise SimulatorConfigError(f'fault {event.kind}={event.servo_id}',
                                       'no servo with that ID on this line') from None
        end = t + event.duration

        def begin(now: float) -> None:
            servo.advance(now)
            if event.kind == 'error':
                servo.set_condition(event.flag, True)
                self.counters.errors_injected.append((now, servo.servo_id, event.flag))
            elif event.kind == 'jam':
                servo.jammed = True
            elif event.kind == 'silent':
                servo.silent = True

        def finish(now: float) -> None:
            servo.advance(now)
            if event.kind == 'error':
                servo.set_condition(event.flag, False)
            elif event.kind == 'jam':
                servo.jammed = False
            elif event.kind == 'silent':
                servo.silent = False

        self._schedule(t, begin)
        if math.isfinite(end):
            self._schedule(end, finish)

    def _random_error(self, now: float, rate: float) -> None:
        servo = self.rng.choice(self.servos)
        flag = self.rng.choice(sorted(ERROR_FLAGS))
        servo.advance(now)
        servo.set_condition(flag, True)
        self.counters.errors_injected.append((now, servo.servo_id, flag))
        self._schedule(now + self.rng.expovariate(rate),
                       lambda t: self._random_error(t, rate))

    # --- input ---------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> None:
        """
        Bytes from the master, read at ``now``; they arrive at the baud rate from then on.

        :param data: the bytes.
        :param now: time they were read [s].
        """
        if not data:
            return
        self.counters.bytes_in += len(data)
        start = max(now, self._in_free)
        before = (self._parser.counters.checksum_errors, self._parser.counters.size_errors)
        garbage = self._parser.counters.garbage_bytes
        for frame, offset in self._parser.feed_with_offsets(data):
            self._schedule(start + offset * self.byte_time,
                           functools.partial(self._execute, frame))
        self._in_free = start + len(data) * self.byte_time
        after = (self._parser.counters.checksum_errors, self._parser.counters.size_errors)
        if after != before:
            self._schedule(self._in_free, lambda t: self._line_error(
                t, hx.StatusDetail.CHECKSUM_ERROR))
        elif self._parser.counters.garbage_bytes != garbage:
            self._schedule(self._in_free, lambda t: self._line_error(
                t, hx.StatusDetail.GARBAGE))

    def _line_error(self, t: float, detail: int) -> None:
        for servo in self.servos:
            if servo.listening(t):
                servo.advance(t)
                servo.raise_error(hx.StatusError.INVALID_PACKET, detail)

    def _execute(self, frame: hx.Frame, t: float) -> None:
        self.counters.frames_received += 1
        for servo in self.servos:
            servo.advance(t)
        targets = [s for s in self.servos if s.listening(t)
                   and (frame.pid == hx.BROADCAST_ID or frame.pid == s.servo_id)]
        try:
            request = hx.decode_request(frame)
        except hx.UnknownCommandError:
            for servo in targets:
                servo.raise_error(hx.StatusError.INVALID_PACKET, hx.StatusDetail.UNKNOWN_COMMAND)
            return
        except hx.FrameError:
            for servo in targets:
                servo.raise_error(hx.StatusError.INVALID_PACKET, hx.StatusDetail.GARBAGE)
            return
        if isinstance(request, (hx.IJogRequest, hx.SJogRequest)):
            self.counters.jog_frames += 1
        elif isinstance(request, hx.ReadRequest):
            self.counters.reads += 1
        for servo in targets:
            reply = servo.handle(frame, request, t, frame.pid == servo.servo_id
                                 or (frame.pid == hx.BROADCAST_ID
                                     and isinstance(request, hx.StatRequest)))
            if reply is not None:
                self._send(servo, reply.encode(), t + self.config.latency)

    # --- output --------------------------------------------------------------------------------

    def _send(self, servo: SimulatedServo, data: bytes, ready: float) -> None:
        rng = self.rng
        faults = self.faults
        if faults.drop and rng.random() < faults.drop:
            self.counters.replies_dropped += 1
            return
        if faults.late and rng.random() < faults.late:
            ready += faults.late_delay
            self.counters.replies_late += 1
        elif faults.corrupt:
            data = self._corrupt(data)
        ready = max(ready, servo.last_reply_ready)
        servo.last_reply_ready = ready
        self.counters.replies += 1
        self._seq += 1
        heapq.heappush(self._pending, (ready, self._seq, data))

    def _corrupt(self, data: bytes) -> bytes:
        rate = self.faults.corrupt
        rng = self.rng
        picks = [k for k in range(len(data)) if rng.random() < rate]
        if not picks:
            return data
        for _ in range(100):
            out = bytearray(data)
            for k in picks:
                out[k] ^= rng.randrange(2, 256)   # never bit 0 alone
            if not hx.FrameParser(self._master_parser_commands).feed(bytes(out)):
                break
        self.counters.replies_corrupted += 1
        self.counters.bytes_corrupted += len(picks)
        return bytes(out)

    def transmit(self, now: float) -> bytes:
        """
        Return the reply bytes whose last bit has left by ``now``.

        :param now: time [s].
        """
        out = bytearray()
        bt = self.byte_time
        while True:
            if self._current is None:
                if not self._pending or self._pending[0][0] > now:
                    break
                ready, _, data = heapq.heappop(self._pending)
                self._current = [max(ready, self._out_free), data, 0]
            start, data, sent = self._current
            can = min(len(data), int((now - start) / bt + 1e-9))
            if can > sent:
                out += data[sent:can]
                self._current[2] = can
            if can >= len(data):
                self._out_free = start + len(data) * bt
                self._current = None
                continue
            break
        self.counters.bytes_out += len(out)
        return bytes(out)

    def has_output(self) -> bool:
        """Return whether replies wait for or are on the wire."""
        return self._current is not None or bool(self._pending)

    def discard_output(self) -> None:
        """Forget replies not sent yet (the port closed)."""
        self._pending.clear()
        self._current = None

    # --- time ----------------------------------------------------------------------------------

    def advance(self, now: float) -> None:
        """Run scheduled requests and faults and every servo up to ``now`` [s]."""
        while self._events and self._events[0][0] <= now:
            t, _, action = heapq.heappop(self._events)
            action(t)
        for servo in self.servos:
            servo.advance(now)
        self.now = max(self.now, now)

    def next_event_time(self) -> float:
        """Return when something is due: a request, a fault or a reply byte [s]."""
        times = [math.inf]
        if self._events:
            times.append(self._events[0][0])
        if self._current is not None:
            start, data, sent = self._current
            times.append(start + (sent + 1) * self.byte_time)
        elif self._pending:
            times.append(max(self._pending[0][0], self._out_free) + self.byte_time)
        return min(times)

    # --- outside influences --------------------------------------------------------------------

    def move_by_hand(self, positions: Mapping[int, float]) -> List[int]:
        """
        Move servos whose torque is off (or braking), as a person posing the robot would.

        :param positions: servo angle by servo ID [rad].
        :return: the IDs that moved.
        """
        moved = []
        for servo_id, angle in positions.items():
            servo = self.servo(int(servo_id))
            if not servo.torque_on:
                servo.hand = float(angle)
                moved.append(servo.servo_id)
        return moved

    def set_external_torque(self, torques: Mapping[int, float]) -> None:
        """Set the external torque of servos [N*m] by ID."""
        for servo_id, torque in torques.items():
            self.servo(int(servo_id)).external_torque = float(torque)

    def snapshot(self) -> Dict[str, Any]:
        """Return the state of every servo and the counters as plain values."""
        return {'time': self.now - self.start,
                'servos': {str(s.servo_id): s.snapshot() for s in self.servos},
                'counters': self.counters.as_dict()}


# --- the pseudo-terminal ------------------------------------------------------------------------


class PtyServer:
    """
    Serves a :class:`BusSimulator` behind a pseudo-terminal in real time.

    :param sim: the simulator (its ``start`` should be the monotonic time of now).
    :param link: a symlink path that points at the current pty (kept when the port reopens).
    :param control: a UNIX socket path for the control channel.
    :param clock: the time source.
    :param chunk: reply bytes are written at most this often [s] (a USB adapter delivers
        packets, not bytes; the bytes are never early, only grouped).
    """

    def __init__(self, sim: BusSimulator, link: Optional[str] = None,
                 control: Optional[str] = None,
                 clock: Callable[[], float] = time.monotonic, chunk: float = 0.0005) -> None:
        self.sim = sim
        self.chunk = float(chunk)
        self._last_write = -math.inf
        self.link = link
        self.control_path = control
        self.clock = clock
        self.path = ''
        self._master: Optional[int] = None
        self._slave: Optional[int] = None
        self._listener: Optional[socket.socket] = None
        self._clients: Dict[int, Tuple[socket.socket, bytearray]] = {}
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop = False
        self._reopen_at = math.inf
        self.overflow_bytes = 0

    def start(self) -> str:
        """Open the pty (and the control socket); return the path to give the master."""
        self._open_pty()
        if self.control_path:
            try:
                os.unlink(self.control_path)
            except FileNotFoundError:
                pass
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(self.control_path)
            self._listener.listen(4)
            self._listener.setblocking(False)
        return self.link or self.path

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.path = os.ttyname(slave)
        if self.link:
            temporary = f'{self.link}.{os.getpid()}.tmp'
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            os.symlink(self.path, temporary)
            os.replace(temporary, self.link)

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        self.sim.discard_output()

    def stop(self) -> None:
        """Ask :meth:`serve` to return (thread-safe, signal-safe)."""
        self._stop = True
        try:
            os.write(self._wake_w, b'x')
        except OSError:
            pass

    def serve(self) -> None:
        """Serve until :meth:`stop`."""
        sim = self.sim
        while not self._stop:
            now = self.clock()
            due = sim.next_event_time()
            if sim.has_output():
                due = max(due, self._last_write + self.chunk)
            wake = min(due, now + 0.01, self._reopen_at,
                       sim.port_events[0][0] if sim.port_events else math.inf)
            readers = [self._wake_r]
            if self._master is not None:
                readers.append(self._master)
            if self._listener is not None:
                readers.append(self._listener.fileno())
            readers += list(self._clients)
            try:
                ready, _, _ = select.select(readers, [], [], max(0.0, wake - now))
            except InterruptedError:
                continue
            now = self.clock()
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
            if self._master is not None and self._master in ready:
                try:
                    data = os.read(self._master, 65536)
                except (BlockingIOError, InterruptedError):
                    data = b''
                except OSError:
                    data = b''   # no master side open on the slave: nothing came
                sim.receive(data, now)
            sim.advance(now)
            out = sim.transmit(now) if now >= self._last_write + self.chunk else b''
            if out and self._master is not None:
                self._last_write = now
                try:
                    os.write(self._master, out)
                except (BlockingIOError, OSError):
                    self.overflow_bytes += len(out)
            if self._listener is not None:
                self._serve_control(ready)
            self._port_faults(now)
        self.close()

    def _port_faults(self, now: float) -> None:
        events = self.sim.port_events
        while events and events[0][0] <= now:
            _, reopen = events.pop(0)
            self._close_pty()
            if self.link:
                try:
                    os.unlink(self.link)
                except FileNotFoundError:
                    pass
            self._reopen_at = now + reopen
        if now >= self._reopen_at:
            self._reopen_at = math.inf
            self._open_pty()

    def _serve_control(self, ready: Sequence[int]) -> None:
        listener = self._listener
        assert listener is not None  # called only while the control socket is open
        if listener.fileno() in ready:
            try:
                client, _ = listener.accept()
                client.setblocking(False)
                self._clients[client.fileno()] = (client, bytearray())
            except BlockingIOError:
                pass
        for fd in [fd for fd in ready if fd in self._clients]:
            client, buffer = self._clients[fd]
            try:
                data = client.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b''
            if not data:
                client.close()
                del self._clients[fd]
                continue
            buffer += data
            while b'\n' in buffer:
                line, _, rest = bytes(buffer).partition(b'\n')
                buffer[:] = rest
                answer = self._control(line)
                try:
                    client.setblocking(True)
                    client.sendall(json.dumps(answer).encode() + b'\n')
                    client.setblocking(False)
                except OSError:
                    pass

    def _control(self, line: bytes) -> Dict[str, Any]:
        sim = self.sim
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError('a request is a JSON object')
            op = request.get('op')
            sim.advance(self.clock())
            if op == 'state':
                answer = sim.snapshot()
                answer['path'] = self.path
                answer['port_open'] = self._master is not None
                return answer
            if op == 'move':
                return {'moved': sim.move_by_hand({int(k): float(v) for k, v in
                                                   dict(request['positions']).items()})}
            if op == 'external_torque':
                sim.set_external_torque({int(k): float(v) for k, v in
                                         dict(request['torques']).items()})
                return {'ok': True}
            if op == 'fault':
                plan = parse_fault(str(request['spec']))
                offset = sim.now - sim.start
                for event in plan.events:
                    sim.schedule_fault(event, offset)
                if plan.corrupt or plan.drop or plan.late:
                    sim.faults = FaultPlan(plan.corrupt or sim.faults.corrupt,
                                           plan.drop or sim.faults.drop,
                                           plan.late or sim.faults.late,
                                           plan.late_delay if plan.late else sim.faults.late_delay,
                                           sim.faults.events)
                return {'ok': True}
            if op == 'close':
                sim.port_events.append((self.clock(), float(request.get('reopen', math.inf))))
                sim.port_events.sort()
                return {'ok': True}
            raise ValueError(f'unknown op {op!r} (state, move, external_torque, fault, close)')
        except (ValueError, KeyError, TypeError, SweetieMotionError) as error:
            return {'error': str(error)}

    def close(self) -> None:
        """Close the pty, the control socket and the link."""
        self._close_pty()
        for client, _ in self._clients.values():
            client.close()
        self._clients.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            try:
                if self.control_path is not None:
                    os.unlink(self.control_path)
            except FileNotFoundError:
                pass
        if self.link:
            try:
                if os.path.islink(self.link):
                    os.unlink(self.link)
            except OSError:
                pass
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1


class SimulatorControl:
    """
    Client of a simulator's control channel.

    :param path: the UNIX socket path given to ``--control``.
    :param timeout: socket timeout [s].
    """

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout
        self._socket: Optional[socket.socket] = None
        self._buffer = b''
        self._lock = threading.Lock()

    def request(self, **request: Any) -> Dict[str, Any]:
        """
        Send one request; return the answer.

        :raises SimulatorConfigError: the simulator answered with an error.
        :raises OSError: the channel is not there.
        """
        with self._lock:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._socket.settimeout(self.timeout)
                self._socket.connect(self.path)
            self._socket.sendall(json.dumps(request).encode() + b'\n')
            while b'\n' not in self._buffer:
                chunk = self._socket.recv(65536)
                if not chunk:
                    self.close()
                    raise ConnectionError('simulator closed the control channel')
                self._buffer += chunk
            line, _, self._buffer = self._buffer.partition(b'\n')
        answer = json.loads(line)
        if 'error' in answer:
            raise SimulatorConfigError(f'control {request.get("op")}', answer['error'])
        return answer

    def state(self) -> Dict[str, Any]:
        """Return servos, counters and time."""
        return self.request(op='state')

    def move(self, positions: Mapping[int, float]) -> List[int]:
        """Move torque-off servos by hand (servo angle [rad] by ID); return the moved IDs."""
        return self.request(op='move', positions={str(k): v for k, v in positions.items()})[
            'moved']

    def external_torque(self, torques: Mapping[int, float]) -> None:
        """Set external torques [N*m] by servo ID."""
        self.request(op='external_torque', torques={str(k): v for k, v in torques.items()})

    def fault(self, spec: str) -> None:
        """Inject a fault now (the --fault grammar, times from now)."""
        self.request(op='fault', spec=spec)

    def close_port(self, reopen: float = math.inf) -> None:
        """Close the port now; reopen after ``reopen`` s."""
        self.request(op='close', reopen=reopen)

    def close(self) -> None:
        """Close the channel."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class SimulatorProcess:
    """
    Runs ``servo-sim`` in a child process (what tests, benchmarks and ``sim-serial`` use).

    The port is a symlink in ``directory`` that stays valid when the simulated port reopens;
    the control channel is a socket next to it.

    :param config: the ``servo_sim`` mapping, or a path to a configuration file.
    :param directory: where the configuration, the link and the socket go.
    :param name: a name for those files.
    :param args: further ``servo-sim`` arguments (e.g. ``['--fault', 'drop=0.01']``).
    """

    def __init__(self, config: Any, directory: str, name: str = 'sim',
                 args: Sequence[str] = ()) -> None:
        self.directory = directory
        self.name = name
        self.args = list(args)
        self.link = os.path.join(directory, f'{name}.tty')
        self.control_path = os.path.join(directory, f'{name}.sock')
        if isinstance(config, str):
            self.config_path = config
        else:
            import yaml
            self.config_path = os.path.join(directory, f'{name}.yaml')
            with open(self.config_path, 'w', encoding='utf-8') as stream:
                yaml.safe_dump(config, stream)
        self.process: Optional[Any] = None
        self.port = ''
        self.control: Optional[SimulatorControl] = None

    def start(self, timeout: float = 20.0) -> str:
        """
        Start the child; return the port path once it is served.

        :raises SimulatorConfigError: the child failed to start.
        """
        import subprocess
        command = [sys.executable, '-m', 'sweetie_motion.servo.simulator', '--servos',
                   self.config_path, '--link', self.link, '--control', self.control_path]
        self.process = subprocess.Popen(command + self.args, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        stdout = self.process.stdout
        assert stdout is not None  # stdout=PIPE
        ready, _, _ = select.select([stdout], [], [], timeout)
        line = stdout.readline().strip() if ready else ''
        if not line:
            if self.process.poll() is None:
                self.process.terminate()
            try:
                error = self.process.communicate(timeout=5)[1] or ''
            except subprocess.TimeoutExpired:
                self.process.kill()
                error = ''
            self.stop()
            raise SimulatorConfigError('servo-sim', f'did not start: {error.strip()}')
        self.port = line
        self.control = SimulatorControl(self.control_path)
        return line

    def stop(self, timeout: float = 5.0) -> Optional[int]:
        """Stop the child (SIGTERM, then SIGKILL); return its exit status."""
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except Exception:   # noqa: B902 - subprocess.TimeoutExpired: kill it
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode

    def __enter__(self) -> 'SimulatorProcess':
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# --- the program --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``servo-sim``."""
    parser = argparse.ArgumentParser(
        prog='sweetie-motion servo-sim',
        description='HerkuleX servos behind a pseudo-terminal. Prints the port path, then '
                    'serves until SIGTERM/SIGINT.')
    parser.add_argument('--servos', required=True, metavar='CONFIG',
                        help='servo configuration (YAML: servo_sim, or the servo_bus of the driver'
                             ' with --bus)')
    parser.add_argument('--bus', help='the bus of a driver configuration to simulate')
    parser.add_argument('--baud', type=int, help='line speed [Bd] (default: the configuration)')
    parser.add_argument('--latency', type=float, help='reply latency [s] (default 0.0003)')
    parser.add_argument('--reboot-time', type=float, help='deaf time after REBOOT [s]')
    parser.add_argument('--fault', action='append', default=[], metavar='SPEC',
                        help='fault to inject (repeatable): corrupt=RATE, drop=RATE, '
                             'late=RATE[:DELAY], error=ID:FLAG[@T][+D], random-errors=RATE[@T], '
                             'jam=ID[@T][+D], silent=ID[@T][+D], close=T[+REOPEN]')
    parser.add_argument('--seed', type=int, default=0, help='seed of the fault draws')
    parser.add_argument('--chunk', type=float, default=0.0005,
                        help='reply bytes are written at most this often [s] (default 0.0005)')
    parser.add_argument('--link', help='symlink to the pty, kept valid when the port reopens')
    parser.add_argument('--control', help='UNIX socket path of the control channel')
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """
    Run ``sweetie-motion servo-sim``.

    :param argv: the arguments (default: sys.argv[1:]).
    :return: exit status (0 after SIGTERM/SIGINT, 2 for bad arguments or configuration).
    """
    args = build_parser().parse_args(argv)
    try:
        config = load_sim_config_file(args.servos, args.bus)
        faults = parse_faults(args.fault)
        changes = {}
        if args.baud is not None:
            hx.baud_code(args.baud)
            changes['baud'] = args.baud
        if args.latency is not None:
            changes['latency'] = _number('--latency', args.latency, 0.0, 1.0)
        if args.reboot_time is not None:
            changes['reboot_time'] = _number('--reboot-time', args.reboot_time, 0.0, 10.0)
        if changes:
            config = dataclasses.replace(config, **changes)
        sim = BusSimulator(config, faults, args.seed, start=time.monotonic())
        server = PtyServer(sim, args.link, args.control,
                           chunk=_number('--chunk', args.chunk, 0.0, 0.1))
        path = server.start()
    except (SweetieMotionError, OSError) as error:
        print(f'servo-sim: error: {error}', file=sys.stderr)
        return 2
    previous = {}
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, lambda *_: server.stop())
    print(path, flush=True)
    try:
        server.serve()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


if __name__ == '__main__':
    sys.exit(main())
