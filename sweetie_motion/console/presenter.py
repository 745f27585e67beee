"""
The operator console's presenter (R-CART-5): its state, actions and rules, without Qt or ROS.

The console has three layers, as the trajectory editor has:

- this presenter: the robot's joints and tool pose, the links to the motion process, the
  manual moves (joint sliders, Cartesian jog), the program (its text, parse errors, the step
  it is at, the offline plan), the running job and the messages, with every action a person
  can take and the rules that refuse bad ones (and say why);
- the views (:mod:`sweetie_motion.console.window`, :mod:`sweetie_motion.console.views`):
  layout, and forwarding of what a person does to the presenter;
- the adapters: :mod:`sweetie_motion.console.bridge` (the motion process over ROS, through
  :class:`~sweetie_motion.ros.program_client.ArmClient`) and
  :mod:`sweetie_motion.console.planning` (the offline planner).

The presenter hands **requests** (the dataclasses below, e.g. :class:`RunSteps`) to ``send``
and takes **events** (e.g. :class:`JobFinished`) in :meth:`ConsolePresenter.handle`, in the GUI
thread. Nothing here waits: every job request is answered by one :class:`JobFinished`.

Manual joint moves go through FollowJointState (``joint_states_set``), not through short
FollowJointTrajectory goals: a person dragging a slider expects the arm to follow the slider
while it moves and to stop where it is let go. The sliders' targets go to the bridge
(:class:`StreamJoints`), which streams a pose moving towards them at the chosen speed
(:class:`~sweetie_motion.console.stream.JointStream`, 50 times a second from a ROS timer, so
that a GUI busy drawing does not make the stream stutter); FollowJointState's jerk-limited
smoothing keeps the motion within the joints' limits. A stream of trajectory goals would make
every slider step a goal that preempts the last one (an action round trip, a new plan, a stop
at its end), and the speed would be that of goals, not of the slider.

Listeners (:meth:`ConsolePresenter.subscribe`) are called with what changed: one of
:data:`TOPICS`.
"""

from dataclasses import dataclass
import math
import time as _time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.program import parse_line, ProgramError
from sweetie_motion.cartesian.runner import (chain_home, joint_target, program_steps,
                                             ProgramRunError, ProgramStep)
from sweetie_motion.console.manual_moves import display_unit, ManualMoves
from sweetie_motion.console.program_text import PLAN_PREFIX, ProgramText
from sweetie_motion.console.reconfiguration import (RECONFIGURATION_LIMIT_DEG,
                                                    ReconfigurationCheck)
from sweetie_motion.console.requests import (
    GripperState, JobFinished, LineReached, PlanProgram, ProgramPlanned, RunSteps, StepFinished,
    StepStarted, StopJob, STOPPED, StreamDone, SUCCEEDED,
)
from sweetie_motion.console.resume import ProgramResume
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.backups import UnsavedBackups
from sweetie_motion.gui.dispatch import EventHandlers
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.gui.messages import ActionRefused, Message, MessageBoard
from sweetie_motion.model.robot_model import RobotModel

#: what listeners are told changed
TOPICS = ('state', 'links', 'sliders', 'jog', 'program', 'job', 'plan', 'message', 'target')
#: the parts of the motion process the console uses
PARTS = ('joint_states', 'controller', 'cartesian', 'follow_joint_state', 'gripper')
#: readable names of :data:`PARTS`
PART_NAMES = {'joint_states': 'joint states', 'controller': 'trajectory controller',
              'cartesian': 'Cartesian motion', 'follow_joint_state': 'FollowJointState',
              'gripper': 'gripper'}
#: a jog step that turns a joint further than this asks first [deg] (the console's default)
JOG_TURN_LIMIT_DEG = 20.0
#: messages kept in the log
MESSAGES_KEPT = 200


# --- state ------------------------------------------------------------------------------------


@dataclass
class Job:
    """The job running on the robot: what it is, the program line it is at."""

    job_id: int
    kind: str
    description: str
    line: int = 0
    stopping: bool = False


class ConsolePresenter(ManualMoves, ProgramText, ProgramResume, ReconfigurationCheck):
    """
    The console without its widgets: the robot, the links, the jobs and the messages.

    Its parts, each with one job: :class:`~sweetie_motion.console.manual_moves.ManualMoves`
    (sliders, jog, a typed target, gripper and Home) and
    :class:`~sweetie_motion.console.program_text.ProgramText` (the program's text, file and
    backups), :class:`~sweetie_motion.console.resume.ProgramResume` (the end of a program
    run, the line it stopped on, Resume) and
    :class:`~sweetie_motion.console.reconfiguration.ReconfigurationCheck` (a large
    reconfiguration ahead of Run or Step).

    :param send: hands a request to the adapters.
    :param model: the configured RobotModel.
    :param chain: the chain programs and jogs move (the Cartesian motion node's).
    :param slider_chain: the chain the sliders show first (default: ``chain``).
    :param clock: monotonic clock [s].
    :param backups: the program's backups while it has unsaved edits (None: none).
    :param joint_travel: how far each joint turns on a jog: (start, target tool pose, path
        speed [m/s]) -> per joint [rad or m] (the offline planner's); None: not checked.
    :param jog_turn_limit: a jog that turns a joint further than this [rad] asks first.
    :param move_check: checks a joint move as Move's path is checked (the offline planner's
        :meth:`~sweetie_motion.console.planning.OfflinePlanner.check_joint_move`); None: Solve
        runs IK only.
    :param reconfiguration_limit: a reconfiguration of the program that turns a joint further
        than this [rad] asks before Run and Step.
    """

    def __init__(self, send: Callable[[object], None], model: RobotModel, chain: str,
                 slider_chain: Optional[str] = None,
                 clock: Callable[[], float] = _time.monotonic,
                 backups: Optional[UnsavedBackups] = None,
                 joint_travel: Optional[Callable[[Sequence[float], Pose, float],
                                                 np.ndarray]] = None,
                 jog_turn_limit: float = math.radians(JOG_TURN_LIMIT_DEG),
                 move_check: Optional[Callable[..., str]] = None,
                 reconfiguration_limit: float = math.radians(RECONFIGURATION_LIMIT_DEG)
                 ) -> None:
        if chain not in model.list_chains():
            raise ActionRefused(f'unknown chain {chain!r} (chains: '
                                f'{", ".join(model.list_chains())})')
        self.send = send
        self.model = model
        self.chain = chain
        self.joints = model.list_joints(chain)
        self.home = chain_home(model, chain)
        self.clock = clock
        self.backups = backups
        self.joint_travel = joint_travel
        self.jog_turn_limit = float(jog_turn_limit)
        self.move_check = move_check
        self.reconfiguration_limit = float(reconfiguration_limit)
        limits = model.joint_limits()
        self._velocity = {j: float(limits.velocity[model.get_joint_index(j)])
                          for j in model.list_all_joints()}
        self._acceleration = {j: float(limits.acceleration[model.get_joint_index(j)])
                              for j in model.list_all_joints()}
        self.pose: Dict[str, float] = {}
        self.links: Dict[str, bool] = dict.fromkeys(PARTS, False)
        self.gripper_state = ''
        self._init_manual_moves()
        self._init_program_text()
        self._init_resume()
        self.plan: Optional[ProgramPlanned] = None
        self._plan_id = 0
        self._checking = False
        # the job and the messages
        self.job: Optional[Job] = None
        self._job_ids = 0
        #: the message area, its log and the listeners
        self.board = MessageBoard(kept=MESSAGES_KEPT)
        #: the bridge's events and who takes each
        self._handlers = EventHandlers('the console presenter')
        self._handlers.register(PoseReceived, self._on_state_received)
        self._handlers.register(StreamDone, self._on_stream_done)
        self._handlers.register(GripperState, self._on_gripper_state)
        self._handlers.register(LinksChanged, self._on_links_changed)
        self._handlers.register(StepStarted, self._on_step_started)
        self._handlers.register(StepFinished, self._on_step_finished)
        self._handlers.register(LineReached, self._on_line_reached)
        self._handlers.register(JobFinished, self._on_job_finished)
        self._handlers.register(ProgramPlanned, self._on_program_planned)
        self.set_slider_chain(slider_chain or chain)

    # --- listeners and messages ----------------------------------------------------------------

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of :data:`TOPICS` changes."""
        self.board.subscribe(listener)

    def _notify(self, *topics: str) -> None:
        for topic in topics:
            self.board.notify(topic)

    @property
    def message(self) -> Message:
        """Return what the message area shows."""
        return self.board.message

    @property
    def log(self) -> List[Message]:
        """Return the newest messages said, oldest first."""
        return self.board.log

    def say(self, text: str, level: str = 'info', line: int = 0) -> None:
        """Show a message (and keep it in the log)."""
        self.board.say(text, level, line=line)

    def _refuse(self, error: SweetieMotionError) -> bool:
        return self.board.refused(error)

    # --- reading -------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Return whether the motion process is there (its joint_states come)."""
        return self.links['joint_states']

    @property
    def busy(self) -> bool:
        """Return whether a job runs on the robot."""
        return self.job is not None

    @property
    def moving(self) -> bool:
        """Return whether something the console started moves (a job, until its end; sliders)."""
        return self.job is not None or self.manual is not None

    def positions(self, joints: Sequence[str]) -> Optional[np.ndarray]:
        """Return the newest positions of ``joints`` [rad or m] (None: not all known)."""
        if not all(j in self.pose for j in joints):
            return None
        return np.array([self.pose[j] for j in joints], dtype=float)

    def tool_pose(self) -> Optional[Pose]:
        """Return the tool's pose in the chain's base frame now (None before joint_states)."""
        q = self.positions(self.joints)
        if q is None:
            return None
        return Pose.from_matrix(self.model.forward_kinematics(self.chain, q))

    @property
    def running_line(self) -> int:
        """Return the program line the running job is at (0: none)."""
        return self.job.line if self.job is not None and self.job.kind == 'program' else 0

    @property
    def next_line(self) -> int:
        """Return the line a paused program goes on at (0: it starts from the top)."""
        if self.job is None and (self.next_step or self.next_move) and \
                self.next_step < len(self.steps):
            step = self.steps[self.next_step]
            if step.kind == 'linear' and self.next_move < len(step.commands):
                return getattr(step.commands[self.next_move], 'line', 0)
            return step.line
        return 0

    def can(self, action: str) -> bool:
        """Return whether ``action`` (run, step, resume, home, jog, ...) may be taken."""
        program = action in ('run', 'step', 'resume')
        if program and not self.steps or action == 'resume' and not self.resume_line:
            return False
        try:
            self._check('run' if action == 'resume' else action, self.steps if program else ())
        except ActionRefused:
            return False
        return True

    def _check(self, action: str, steps: Sequence[ProgramStep] = ()) -> None:
        """Raise :class:`ActionRefused` saying why ``action`` cannot be taken now, if it cannot."""
        if not self.connected:
            raise ActionRefused('the motion process is disconnected (no joint_states): start '
                                'it, the console reconnects by itself')
        if self.job is not None:
            raise ActionRefused(f'{self.job.description} is running: wait for it or stop it')
        needs = {'sliders': ['follow_joint_state'], 'jog': ['cartesian'],
                 'gripper': ['gripper'], 'home': ['controller']}.get(action, [])
        if action in ('run', 'step', 'line'):
            if self.parse_error is not None and action != 'line':
                raise ActionRefused(f'the program has an error: {self.parse_error}',
                                    line=self.parse_error.line)
            kinds = {s.kind for s in steps}
            needs = ['controller'] if kinds & {'joint', 'home', 'linear'} else []
            needs += ['cartesian'] if 'linear' in kinds else []
            needs += ['gripper'] if 'gripper' in kinds else []
        missing = [PART_NAMES[p] for p in needs if not self.links[p]]
        if missing:
            raise ActionRefused(f'{" and ".join(missing)} of the motion process '
                                f'{"does" if len(missing) == 1 else "do"} not answer')
        for step in steps:  # joint moves that name joints the chain lacks: before anything moves
            if step.kind == 'joint':
                try:
                    joint_target(step.commands[0], self.joints, self.home, self.home)
                except ProgramRunError as error:
                    raise ActionRefused(str(error), line=error.line) from None

    def check(self) -> bool:
        """Plan the program offline now and say whether it plans within the limits."""
        if self.parse_error is not None:
            return self._refuse(ActionRefused(f'the program has an error: {self.parse_error}',
                                              line=self.parse_error.line))
        if not self.steps:
            return self._refuse(ActionRefused('the program is empty'))
        self._checking = True
        self._request_plan()
        self.say('checking the program offline ...')
        return True

    def _new_plan_id(self) -> int:
        """Return the id of a new plan request (the plans of older ones are not shown)."""
        self._plan_id += 1
        return self._plan_id

    def _request_plan(self) -> None:
        self._plan_due = None
        start = self.positions(self.joints) if self.connected else None
        self.send(PlanProgram(self._new_plan_id(), tuple(self.steps),
                              tuple(float(v) for v in (start if start is not None
                                                       else self.home))))

    def run(self, confirmed: bool = False) -> bool:
        """
        Run the program (from the step it was paused at, else from the top).

        :param confirmed: a large reconfiguration ahead (:meth:`reconfiguration_ahead`) was
            agreed to; without, Run is refused saying it.
        """
        return self._run(single=False, confirmed=confirmed)

    def step(self, confirmed: bool = False) -> bool:
        """Run the program's next step only (``confirmed``: as :meth:`run`)."""
        return self._run(single=True, confirmed=confirmed)

    def _run(self, single: bool, confirmed: bool = False) -> bool:
        try:
            if self.parse_error is None and not self.steps:
                raise ActionRefused('the program is empty')
            self._check('step' if single else 'run', self.steps)
        except ActionRefused as error:
            if error.line:
                self.error_line = error.line
                self._notify('program')
            return self._refuse(error)
        if not self._confirm_reconfiguration(single, confirmed):
            return False
        self._end_manual('')
        self.resume_at = None   # Run and Step after a Stop start from the top
        first = self.next_step if self.next_step < len(self.steps) else 0
        first_move = self.next_move if first == self.next_step else 0
        if first == 0 and first_move == 0:
            self.override = 1.0
            self._request_plan()   # the path drawn is the one that runs, from where it starts
        self.error_line = 0
        what = 'program step' if single else 'program'
        job = self._start('program', what, self.next_line or self.steps[first].line)
        self.send(RunSteps(job.job_id, tuple(self.steps), first, single, self.override,
                           first_move))
        self._notify('program')
        return True

    def run_line(self, text: str) -> bool:
        """Parse one typed command and run it now (the console's command line)."""
        try:
            command = parse_line(text, line=0)
        except ProgramError as error:
            return self._refuse(ActionRefused(f'command: {error.reason} (column {error.column})'))
        if command is None:
            return self._refuse(ActionRefused('command: nothing to run (blank or a comment)'))
        steps = program_steps([command])
        try:
            self._check('line', steps)
        except ActionRefused as error:
            return self._refuse(error)
        self._end_manual('')
        job = self._start('line', f'command {text.strip()}')
        self.send(RunSteps(job.job_id, tuple(steps), 0, True, self.override))
        return True

    def stop(self) -> None:
        """Stop whatever moves: the job (it decelerates and holds) and the sliders."""
        moving = self.manual is not None
        if moving:
            self._end_manual('stopped: the joints stay where the sliders had taken them')
        if self.job is not None:
            self.job.stopping = True
            self.send(StopJob(self.job.job_id))
            self.say(f'stopping {self.job.description} ...', 'warning')
            self._notify('job')
        elif not moving:
            self.say('nothing moves')

    def _start(self, kind: str, description: str, line: int = 0) -> Job:
        self._job_ids += 1
        self.job = Job(self._job_ids, kind, description, line)
        self.say(f'{description} ...')
        self._notify('job')
        return self.job

    # --- time and events -----------------------------------------------------------------------

    def tick(self) -> None:
        """Stream the sliders' pose and plan after edits (the window's timer calls this)."""
        now = self.clock()
        job = self.job
        if self.manual is not None:
            if self.connected and job is None:
                self._watch_manual(now)
            else:
                self._end_manual('the slider move ended: ' + (
                    'the motion process went away' if not self.connected or job is None else
                    f'{job.description} runs'), 'warning')
        if self._plan_due is not None and now >= self._plan_due:
            self._request_plan()
        backups = self.backups
        if backups is not None and backups.due(self.text, self.modified):
            backups.write(self.text, self.program_name, self.text)
            error = backups.unsaid_error()
            if error:
                self.say(f'backup failed: {error}', 'warning')

    def handle(self, event: object) -> None:
        """Take an event of the adapters (in the GUI thread)."""
        self._handlers.dispatch(event)

    def _on_state_received(self, event: PoseReceived) -> None:
        self.pose.update(zip(event.names, (float(p) for p in event.positions)))
        self._notify('state')

    def _on_stream_done(self, event: StreamDone) -> None:
        if self.manual is not None and self.manual.stream_id == event.stream_id and \
                self.manual.arrived is None:
            self.manual.arrived = self.clock()

    def _on_gripper_state(self, event: GripperState) -> None:
        self.gripper_state = event.state
        self._notify('state')

    def _on_links_changed(self, event: LinksChanged) -> None:
        before = self.connected
        self.links.update(dict(event.links))
        if before and not self.connected:
            self.say('the motion process is disconnected: no joint_states (it died or was '
                     'stopped); the console reconnects when it is back', 'error')
        elif self.connected and not before:
            self.say('the motion process is connected')
        self._notify('links')

    def _on_step_started(self, event: StepStarted) -> None:
        if self.job is None or self.job.job_id != event.job_id:
            return
        self.job.line = event.line
        self.say(f'{event.description} ...')
        self._notify('job', 'program')

    def _on_line_reached(self, event: LineReached) -> None:
        if self.job is None or self.job.job_id != event.job_id or event.line == self.job.line:
            return
        self.job.line = event.line
        self._notify('job', 'program')

    def _on_step_finished(self, event: StepFinished) -> None:
        if self.job is None or self.job.job_id != event.job_id:
            return
        where = f'line {event.line}' if event.line else 'command'
        self.say(f'{where}: done in {event.seconds:.2f} s: {event.message}')

    def _on_job_finished(self, event: JobFinished) -> None:
        job = self.job
        if job is None or job.job_id != event.job_id:
            return
        self.job = None
        if job.kind == 'program':
            self._program_finished(event, job.line)
        elif event.outcome == SUCCEEDED:
            self.say(f'{job.description}: {event.message}' if event.message else
                     f'{job.description}: done')
        elif event.outcome == STOPPED:
            self.say(f'{job.description} stopped: the motion decelerated and holds', 'warning')
        else:
            self.say(f'{job.description} failed: {event.message}', 'error')
        self._notify('job', 'program')

    def _on_program_planned(self, event: ProgramPlanned) -> None:
        if event.plan_id != self._plan_id:
            return  # an older plan: the text or the start changed since
        self.plan = event
        checking, self._checking = self._checking, False
        if event.error:
            if self.job is None:
                self.error_line = event.line
            self.say(f'{PLAN_PREFIX}{event.error}', 'error', event.line)
        elif checking:
            self.say(f'check: {len(self.steps)} steps plan within the limits, '
                     f'{event.duration:.2f} s, {len(event.tool)} samples')
        self._notify('plan', 'program')

    def joint_rows(self) -> List[Tuple[str, str]]:
        """Return (joint, position as read by a person) of the program's chain."""
        rows = []
        for joint in self.joints:
            unit, factor = display_unit(self.model, joint)
            value = self.pose.get(joint)
            rows.append((joint, '-' if value is None else
                         f'{round(value * factor, 2) + 0.0:+.2f} {unit}'))
        return rows

    def tool_text(self) -> str:
        """Return the tool pose as a person reads it: mm and ZYZ degrees."""
        pose = self.tool_pose()
        if pose is None:
            return 'no joint_states yet'
        x, y, z, a, b, c = (round(v, 1) + 0.0 for v in pose.mm_zyz(degrees=True))  # no -0.0
        return (f'X {x:.1f}  Y {y:.1f}  Z {z:.1f} mm   A {a:.1f}  B {b:.1f}  C {c:.1f} deg '
                '(ZYZ)')

    def link_rows(self) -> List[Tuple[str, bool]]:
        """Return (readable part name, up) of :data:`PARTS`."""
        return [(PART_NAMES[p], self.links[p]) for p in PARTS]
