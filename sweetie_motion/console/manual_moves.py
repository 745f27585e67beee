"""
The console's manual moves: joint sliders, Cartesian jog, a typed target, gripper and Home.

One part of :class:`~sweetie_motion.console.presenter.ConsolePresenter` (no Qt, no ROS): its
state (the slider move, the jog settings, the solved target) and the actions a person takes by
hand, with the rules that refuse bad ones. Slider moves stream through FollowJointState (see
the presenter's module docstring); the other moves are jobs of the presenter.
"""

from dataclasses import dataclass, field
import math
from typing import Callable, Dict, List, Optional, Protocol, Sequence, Tuple, Union

import numpy as np

from sweetie_motion.cartesian.frames import exp_so3, Pose
from sweetie_motion.cartesian.path import EQRADIUS
from sweetie_motion.console.requests import (
    CommandGripper, JogTool, MoveHome, StopStream, StreamJoints,
)
from sweetie_motion.console.target import parse_target, TargetError, TargetSolution, TargetSolver
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.messages import ActionRefused
from sweetie_motion.model.robot_model import RobotModel

#: the jog axes: along x, y, z and about x, y, z (rx, ry, rz: not the ZYZ angles A B C)
AXES = ('x', 'y', 'z', 'rx', 'ry', 'rz')
#: the frames a jog is expressed in: the chain's base frame or the tool's own
FRAMES = ('base', 'tool')
#: the step sizes offered: translation [mm], rotation [deg]
TRANSLATION_STEPS = (0.1, 1.0, 5.0, 10.0, 50.0, 100.0)
ROTATION_STEPS = (0.5, 1.0, 5.0, 10.0, 30.0)
#: the joint speed setting's range [% of each joint's velocity limit]
JOINT_SPEED_RANGE = (1, 100)
#: jog speed ranges: translation [mm/s], rotation [deg/s]
TRANSLATION_SPEED_RANGE = (1.0, 250.0)
ROTATION_SPEED_RANGE = (1.0, 90.0)
#: a slider move is over when every joint is this close to its target [rad or m] ...
REACHED = 2e-3
#: ... or this long after the streamed pose reached the targets [s] (the robot may not follow
#: exactly: a joint held by another controller for a moment)
SETTLE = 3.0
#: a slider stream reaches its speed in this time [s] (or within the joint's acceleration limit)
RAMP_TIME = 0.2


@dataclass
class ManualMove:
    """
    A slider move in progress.

    :param start: where the slider chain's joints were [rad or m], chain order.
    :param targets: where the sliders are (local index -> target).
    :param arrived: when the stream reached the targets (None: not yet).
    """

    stream_id: int
    start: Tuple[float, ...]
    targets: Dict[int, float] = field(default_factory=dict)
    arrived: Optional[float] = None


def describe_turns(model: RobotModel, turns: Sequence[Tuple[str, float]]) -> str:
    """Return e.g. 'joint4 by 80 deg, joint6 by 80 deg' (metres for prismatic joints)."""
    parts = []
    for joint, turn in turns:
        unit, factor = display_unit(model, joint)
        parts.append(f'{joint} by {turn * factor:.0f} {unit}')
    return ', '.join(parts)


def jog_target(pose: Pose, axis: str, amount: float, frame: str) -> Pose:
    """
    Return the pose one jog step from ``pose``.

    Translations move the tool along an axis of the frame; rotations turn it about an axis of
    the frame through the tool's origin (the tool point stays put).

    :param pose: the tool's pose in the chain's base frame [m].
    :param axis: one of :data:`AXES`.
    :param amount: [m] for x, y, z; [rad] for rx, ry, rz (about x, y, z).
    :param frame: 'base' (the chain's base axes) or 'tool' (the tool's own axes).
    :raises ValueError: an unknown axis or frame.
    """
    if axis not in AXES:
        raise ValueError(f'unknown jog axis {axis!r} (axes: {", ".join(AXES)})')
    if frame not in FRAMES:
        raise ValueError(f'unknown jog frame {frame!r} (frames: {", ".join(FRAMES)})')
    unit = np.zeros(3)
    unit[AXES.index(axis) % 3] = 1.0
    if AXES.index(axis) < 3:
        direction = unit if frame == 'base' else pose.rotation @ unit
        return Pose(pose.position + direction * amount, pose.rotation)
    turn = exp_so3(unit * amount)
    rotation = turn @ pose.rotation if frame == 'base' else pose.rotation @ turn
    return Pose(pose.position, rotation)


def display_unit(model: RobotModel, joint: str) -> Tuple[str, float]:
    """Return the unit a person reads a joint in ('deg' or 'mm') and its factor from SI."""
    if model.get_joint_info(joint).joint_type == 'prismatic':
        return 'mm', 1e3
    return 'deg', 180.0 / math.pi


def slider_range(model: RobotModel, joint: str) -> Tuple[float, float]:
    """Return a joint's slider range [rad or m]: its limits (a continuous joint: one turn)."""
    info = model.get_joint_info(joint)
    lower = info.lower if math.isfinite(info.lower) else -math.pi
    upper = info.upper if math.isfinite(info.upper) else math.pi
    return float(lower), float(upper)


class StartedJob(Protocol):
    """A job the presenter started, as this part reads it (the presenter imports this module)."""

    job_id: int


class ManualMoves:
    """
    The presenter's part for moves by hand: sliders, jog, a typed target, gripper and Home.

    A mixin of :class:`~sweetie_motion.console.presenter.ConsolePresenter`, which owns the
    pose, the links, the jobs (``_start``, ``_check``) and the messages (``say``, ``_refuse``);
    :meth:`_init_manual_moves` sets this part's state.
    """

    model: RobotModel
    chain: str
    joints: List[str]
    home: np.ndarray
    pose: Dict[str, float]
    send: Callable[[object], None]
    joint_travel: Optional[Callable[[Sequence[float], Pose, float], np.ndarray]]
    jog_turn_limit: float
    _velocity: Dict[str, float]
    #: checks a joint move as Move's path is checked: (start, target, speeds) -> its summary;
    #: raises SweetieMotionError with the reason Move would be refused (None: not checked)
    move_check: Optional[Callable[..., str]]
    _acceleration: Dict[str, float]
    # the presenter's, used here
    _check: Callable[..., None]
    _refuse: Callable[[SweetieMotionError], bool]
    _notify: Callable[..., None]
    _start: Callable[..., 'StartedJob']
    say: Callable[..., None]
    positions: Callable[[Sequence[str]], Optional[np.ndarray]]
    tool_pose: Callable[[], Optional[Pose]]

    def _init_manual_moves(self) -> None:
        """Set the sliders', the jog's and the target's state (before the first slider chain)."""
        self.slider_chain = ''
        self.slider_joints: List[str] = []
        self.joint_speed = 25
        self.manual: Optional[ManualMove] = None
        self._stream_ids = 0
        self.jog_frame = 'base'
        self.translation_step = 10.0
        self.rotation_step = 5.0
        self.translation_speed = 50.0
        self.rotation_speed = 15.0
        #: a typed Cartesian target solved by IK, shown until Move or another target
        self.target: Optional[TargetSolution] = None
        self._target_solver: Optional[TargetSolver] = None

    # --- sliders -------------------------------------------------------------------------------

    def set_slider_chain(self, chain: str) -> bool:
        """Show the joints of ``chain`` on the sliders."""
        if chain not in self.model.list_chains():
            return self._refuse(ActionRefused(f'unknown chain {chain!r} (chains: '
                                              f'{", ".join(self.model.list_chains())})'))
        if self.manual is not None:
            self._end_manual('')
        self.slider_chain = chain
        self.slider_joints = [j for j in self.model.list_joints(chain)
                              if not self.model.is_virtual(j)]
        self._notify('sliders')
        return True

    def set_joint_speed(self, percent: float) -> None:
        """Set the sliders' (and Home's) speed [% of each joint's velocity limit]."""
        low, high = JOINT_SPEED_RANGE
        self.joint_speed = int(round(min(max(float(percent), low), high)))
        if self.manual is not None:
            self._send_stream()
        self._notify('sliders')

    def move_slider(self, joint: str, value: float) -> bool:
        """
        Move ``joint`` towards ``value`` [rad or m] at the joint speed (a person's slider).

        :return: False when refused (the message says why; the slider should show the robot).
        """
        try:
            self._check('sliders')
            if joint not in self.slider_joints:
                raise ActionRefused(f'{joint} is not a joint of the chain {self.slider_chain}')
            lower, upper = slider_range(self.model, joint)
            if not (math.isfinite(value) and lower - 1e-9 <= value <= upper + 1e-9):
                unit, factor = display_unit(self.model, joint)
                raise ActionRefused(f'{joint}: {value * factor:.2f} {unit} is outside its '
                                    f'limits [{lower * factor:.1f}, {upper * factor:.1f}] {unit}')
            if self.manual is None:
                start = self.positions(self.slider_joints)
                if start is None:
                    raise ActionRefused(f'joint_states do not give every joint of '
                                        f'{self.slider_chain}')
                self._stream_ids += 1
                self.manual = ManualMove(self._stream_ids, tuple(float(v) for v in start))
                self.say(f'moving {self.slider_chain} with the sliders at {self.joint_speed} % '
                         'of the joint speed limits')
        except ActionRefused as error:
            return self._refuse(error)
        manual = self.manual
        manual.targets[self.slider_joints.index(joint)] = float(value)
        manual.arrived = None
        self._send_stream()
        self._notify('sliders')
        return True

    def stream_limits(self, joints: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """
        Return the speeds [rad/s or m/s] and accelerations [rad/s^2 or m/s^2] of a slider move.

        The joint speed setting of each joint's velocity limit, reached in :data:`RAMP_TIME`
        (or within the joint's acceleration limit).
        """
        speeds = np.array([self._velocity[j] for j in joints]) * self.joint_speed / 100.0
        accelerations = np.minimum(speeds / RAMP_TIME,
                                   [self._acceleration[j] for j in joints])
        return speeds, accelerations

    def _send_stream(self) -> None:
        manual = self.manual
        assert manual is not None   # called while a slider move runs only
        speeds, accelerations = self.stream_limits(self.slider_joints)
        self.send(StreamJoints(
            manual.stream_id, tuple(self.slider_joints), manual.start,
            tuple(manual.targets.get(k) for k in range(len(self.slider_joints))),
            tuple(float(v) for v in speeds), tuple(float(v) for v in accelerations)))

    def slider_target(self, joint: str) -> Optional[float]:
        """Return where a person put ``joint``'s slider while it moves (None: no move)."""
        if self.manual is None or joint not in self.slider_joints:
            return None
        return self.manual.targets.get(self.slider_joints.index(joint))

    def _watch_manual(self, now: float) -> None:
        manual = self.manual
        assert manual is not None   # called while a slider move runs only
        if manual.arrived is None:
            return
        measured = self.positions(self.slider_joints)
        if measured is not None and all(abs(measured[k] - t) < REACHED
                                        for k, t in manual.targets.items()):
            self._end_manual('the joints are at the sliders')
        elif now - manual.arrived > SETTLE:
            self._end_manual('the sliders are sent; the robot did not quite follow (another '
                             'controller holds the chain?)', 'warning')

    def _end_manual(self, text: str, level: str = 'info') -> None:
        if self.manual is not None:
            self.send(StopStream(self.manual.stream_id))
            self.manual = None
        if text:
            self.say(text, level)
        self._notify('sliders')

    # --- jog -----------------------------------------------------------------------------------

    def set_jog(self, frame: Optional[str] = None, translation_step: Optional[float] = None,
                rotation_step: Optional[float] = None, translation_speed: Optional[float] = None,
                rotation_speed: Optional[float] = None) -> bool:
        """
        Change the jog settings (those given).

        :param frame: one of :data:`FRAMES`; :param translation_step: [mm], > 0;
        :param rotation_step: [deg], > 0; :param translation_speed: [mm/s];
        :param rotation_speed: [deg/s] (both clamped into their ranges).
        """
        if frame is not None and frame not in FRAMES:
            return self._refuse(ActionRefused(f'unknown jog frame {frame!r} (frames: '
                                              f'{", ".join(FRAMES)})'))
        for name, value in (('translation step', translation_step),
                            ('rotation step', rotation_step)):
            if value is not None and not (math.isfinite(value) and value > 0):
                return self._refuse(ActionRefused(f'the {name} must be > 0, got {value}'))
        self.jog_frame = frame or self.jog_frame
        self.translation_step = float(translation_step or self.translation_step)
        self.rotation_step = float(rotation_step or self.rotation_step)
        if translation_speed is not None:
            self.translation_speed = float(min(max(translation_speed,
                                                   TRANSLATION_SPEED_RANGE[0]),
                                               TRANSLATION_SPEED_RANGE[1]))
        if rotation_speed is not None:
            self.rotation_speed = float(min(max(rotation_speed, ROTATION_SPEED_RANGE[0]),
                                            ROTATION_SPEED_RANGE[1]))
        self._notify('jog')
        return True

    def _jog_step(self, axis: str) -> Tuple[float, float, str]:
        """Return a jog step's amount [m or rad], path speed [m/s] and text."""
        if AXES.index(axis) < 3:
            return (self.translation_step * 1e-3, self.translation_speed * 1e-3,
                    f'{self.translation_step:g} mm')
        return (math.radians(self.rotation_step),
                math.radians(self.rotation_speed) * EQRADIUS, f'{self.rotation_step:g} deg')

    def jog_turns(self, axis: str, direction: int) -> List[Tuple[str, float]]:
        """
        Return the joints a jog step would turn further than :attr:`jog_turn_limit`.

        (joint, turn [rad or m]), largest first: a small step of the tool near a singularity
        swings the wrist (10 mm along y with the arm almost straight turns joint4 and joint6
        by 88 deg).
        Empty when the step turns nothing that far, or cannot be planned (the jog says why).
        """
        pose = self.tool_pose()
        if self.joint_travel is None or pose is None or axis not in AXES or \
                any(j not in self.pose for j in self.joints):
            return []
        amount, speed, _ = self._jog_step(axis)
        target = jog_target(pose, axis, direction * amount, self.jog_frame)
        try:
            travel = self.joint_travel([self.pose[j] for j in self.joints], target, speed)
        except SweetieMotionError:
            return []
        turns = [(j, float(t)) for j, t in zip(self.joints, travel) if t > self.jog_turn_limit]
        return sorted(turns, key=lambda item: -item[1])

    def jog(self, axis: str, direction: int, confirmed: bool = False) -> bool:
        """
        Move the tool one step along (x, y, z) or about (rx, ry, rz) an axis, ±1.

        :param confirmed: a person agreed to the large joint turns of :meth:`jog_turns`;
            without it such a jog is refused, naming them.
        """
        if axis not in AXES or direction not in (-1, 1):
            return self._refuse(ActionRefused(f'jog: unknown axis or direction {axis!r} '
                                              f'{direction!r}'))
        try:
            self._check('jog')
        except ActionRefused as error:
            return self._refuse(error)
        turns = [] if confirmed else self.jog_turns(axis, direction)
        if turns:
            return self._refuse(ActionRefused(
                f'jog: this step turns {describe_turns(self.model, turns)}: confirm it, or '
                'jog from elsewhere (Home first)'))
        self._end_manual('')
        amount, speed, text = self._jog_step(axis)
        sign = '+' if direction > 0 else '-'
        job = self._start('jog', f'jog {sign}{axis} {text} ({self.jog_frame} frame)')
        self.send(JogTool(job.job_id, axis, direction * amount, self.jog_frame, speed))
        return True

    # --- a typed Cartesian target --------------------------------------------------------------

    def preview_target(self, text: str) -> bool:
        """
        Solve a typed tool pose (x y z [mm] A B C [deg]) by IK from where the robot is.

        Nothing moves: the joint result is said and shown (:attr:`target`); :meth:`move_to_
        target` goes there.
        """
        self.target = None
        self._notify('target')
        try:
            pose = parse_target(text)
        except TargetError as error:
            return self._refuse(ActionRefused(f'target: {error}'))
        start = self.positions(self.joints)
        if start is None:
            return self._refuse(ActionRefused('target: no joint_states yet: is the motion '
                                              'process running?'))
        if self._target_solver is None:
            self._target_solver = TargetSolver(self.model, self.chain)
        solution = self._target_solver.solve(pose, start)
        if not solution.success:
            return self._refuse(ActionRefused(f'target: {solution.describe(self.model)}'))
        if self.move_check is not None:
            # the checks Move's path runs before it moves (links, zones, limits): a target
            # Move would refuse is refused here, with the same reason
            try:
                self.move_check(start, solution.positions, self._joint_speeds())
            except SweetieMotionError as error:
                return self._refuse(ActionRefused(
                    f'target: IK solves it, but Move would be refused: {error}'))
        self.target = solution
        self.say(f'target solved: {solution.describe(self.model)}; Move goes there (a joint '
                 f'move at {self.joint_speed} % of the joint speed)')
        self._notify('target')
        return True

    def move_to_target(self) -> bool:
        """Move the joints to the solved target (a joint move at the joint speed)."""
        if self.target is None:
            return self._refuse(ActionRefused('target: solve a target first'))
        if not self._joint_move('target', 'move to the target', self.target.positions):
            return False   # refused, saying why: the target stays for a later Move
        self.target = None
        self._notify('target')
        return True

    # --- gripper and home ----------------------------------------------------------------------

    def gripper(self, action: str) -> bool:
        """Clamp, release or hold."""
        if action not in ('clamp', 'release', 'hold'):
            return self._refuse(ActionRefused(f'unknown gripper action {action!r}'))
        try:
            self._check('gripper')
        except ActionRefused as error:
            return self._refuse(error)
        job = self._start('gripper', f'gripper {action}')
        self.send(CommandGripper(job.job_id, action))
        return True

    def go_home(self) -> bool:
        """Move the chain to its home pose at the joint speed."""
        return self._joint_move('home', f'home at {self.joint_speed} % of the joint speed',
                                self.home)

    def _joint_move(self, kind: str, description: str,
                    target: Union[Sequence[float], np.ndarray]) -> bool:
        """Move the chain's joints to ``target`` [rad or m] at the joint speed (a job)."""
        try:
            self._check('home')
        except ActionRefused as error:
            return self._refuse(error)
        self._end_manual('')
        speed = self._joint_speeds()
        job = self._start(kind, description)
        self.send(MoveHome(job.job_id, tuple(float(v) for v in target), speed))
        return True

    def _joint_speeds(self) -> Tuple[float, ...]:
        """Return each chain joint's speed of a joint move at the joint speed setting."""
        return tuple(self._velocity[j] * self.joint_speed / 100.0 for j in self.joints)
