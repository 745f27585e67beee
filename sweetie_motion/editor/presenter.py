"""
The trajectory editor's presenter (R-EDIT-1..8): its state, actions and rules, without Qt or ROS.

The editor has three layers, as rqt plugins do:

- the presenter: the robot's pose and links, the running goal, the servos and the support legs
  here, and its parts, each with one job: :attr:`EditorPresenter.table` (the table's edits
  and selection, :mod:`sweetie_motion.editor.table_commands`), :attr:`EditorPresenter.teaching`
  (teach by demonstration, :mod:`sweetie_motion.editor.teaching`) and
  :attr:`EditorPresenter.files` (storage, files and backups,
  :mod:`sweetie_motion.editor.trajectory_files`); every action a person can take is one of
  their methods, with the rules that refuse bad ones (and say why on the one
  :class:`~sweetie_motion.gui.messages.MessageBoard`);
- the views (:mod:`sweetie_motion.editor.window` and its widgets): layout, and forwarding of
  clicks to the presenter; they redraw when the presenter says what changed;
- the adapters (:mod:`sweetie_motion.editor.bridge`): ROS (robot and storage).

The presenter talks to the adapters with plain values only: it hands **requests**
(:mod:`sweetie_motion.editor.requests`, e.g. ``ExecuteGoal``) to the ``send`` callable, and
the adapters give **events** back to :meth:`EditorPresenter.handle` (e.g. ``GoalFinished``), in
the GUI thread, which hands each to the handler registered for its type. Nothing here waits:
every request's answer is an event, and the adapters guarantee that one comes (an answer, an
error or a time-out).

Listeners (:meth:`EditorPresenter.subscribe`) are called with what changed: one of
:data:`TOPICS`.
"""

from dataclasses import dataclass
import math
import re
import time as _time
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.links import LinkWatch
from sweetie_motion.editor.requests import (
    BasePoseReceived, CancelGoal, ExecuteGoal, GoalAccepted, GoalFeedback, GoalFinished,
    HoldPose, LOST, MoveByHand, PoseHeld, PublishSupport, RecordingFinished, ServoState, SetPose,
    SetTorqueOff, STOPPED, SUCCEEDED, TrajectoriesListed, TrajectoryLoaded, TrajectorySaved,
)
from sweetie_motion.editor.row_tools import RowTools
from sweetie_motion.editor.table_commands import real_joints, TableCommands
from sweetie_motion.editor.teaching import Teaching
from sweetie_motion.editor.trajectory_files import TrajectoryFiles
from sweetie_motion.editor.workspace import Workspace
from sweetie_motion.gui.backups import UnsavedBackups
from sweetie_motion.gui.dispatch import EventHandlers
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.gui.messages import ActionRefused, Message, MessageBoard, rows_text
from sweetie_motion.trajectory.goal import approach_time, SUPPORT_PREFIX, TrajectoryGoal
from sweetie_motion.trajectory.validation import GoalError, validate_goal
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList

#: what listeners are told changed
TOPICS = ('document', 'selection', 'pose', 'links', 'execution', 'servos', 'message', 'names',
          'recording', 'close')
#: the parts of the robot whose link the editor shows
PARTS = ('controller', 'follow_joint_state', 'storage', 'servos')
#: readable names of :data:`PARTS`
PART_NAMES = {'controller': 'trajectory controller', 'follow_joint_state': 'FollowJointState',
              'storage': 'storage', 'servos': 'torque switch'}
#: seconds a result may come after the goal's planned end before the editor gives up on it
RESULT_MARGIN = 10.0
#: how often the support legs are published while "Publish contact list" is on [s]
SUPPORT_PERIOD = 0.5
#: a joint this close to the pose Set robot pose (or a slider) asked for is there [rad]
POSE_REACHED = 0.01
#: a pose not reached this long after it was asked for is not waited for any more [s]
POSE_PATIENCE = 10.0
#: how long FollowJointState's answer to a hold is waited for [s]
HOLD_PATIENCE = 3.0
#: a physics robot's base pose older than this is not drawn (it went away) [s]
BASE_POSE_STALE = 1.0
#: an orientation as BasePoseReceived gives it: a 3x3 matrix row by row
Rotation = Tuple[Tuple[float, float, float], ...]

_POINT = re.compile(r'\bpoint (\d+)\b')


# --- state ------------------------------------------------------------------------------------


@dataclass
class Execution:
    """
    The goal Execute sent.

    :param rows: the table row of each point of the goal (to name rows in errors).
    :param duration: the goal's duration [s].
    """

    goal_id: int
    rows: List[int]
    duration: float
    accepted: bool = False
    stopping: bool = False
    progress: float = 0.0


def rows_named(text: str, rows: Sequence[int]) -> str:
    """
    Return a controller message with its 0-based goal points named as table rows.

    The controller counts the points of the goal it got from 0 ("joint51 point 2 = ..."); the
    table counts rows from 1 and the goal may skip disabled rows or run backward.

    :param rows: the table row (0-based) of each point of the goal.
    """
    def row(match: 're.Match') -> str:
        k = int(match.group(1))
        return f'row {rows[k] + 1}' if 0 <= k < len(rows) else match.group(0)
    return _POINT.sub(row, text)


class EditorPresenter:
    """
    The editor without its widgets.

    :param send: hands a request to the adapters (the bridge's ``submit``).
    :param model: the configured RobotModel (limits, sliders, Fit to limits); None: no limits.
    :param workspace: backups and tables; None: none are written.
    :param legs: the chains that can be support legs.
    :param interpolation: the controller's interpolation (``akima`` or ``cubic``).
    :param backup_period: shortest time between two backups [s].
    :param clock: monotonic clock [s].
    """

    def __init__(self, send: Callable[[object], None], model: Any = None,
                 workspace: Optional[Workspace] = None, legs: Sequence[str] = (),
                 interpolation: str = 'akima', backup_period: float = 30.0,
                 clock: Callable[[], float] = _time.monotonic) -> None:
        self.send = send
        self.model = model
        self.workspace = workspace
        self.legs = list(legs)
        self.interpolation = interpolation
        self.clock = clock
        self._link_watch = LinkWatch(clock(), 'Execute, Save and Load')
        #: the bridge's events and who takes each
        self._handlers = EventHandlers('the editor')
        self.board = MessageBoard()
        self.document = EditorDocument()
        self.current_pose: Dict[str, float] = {}
        self.support: Dict[str, bool] = dict.fromkeys(self.legs, True)
        #: the table's edits and selection
        self.table = TableCommands(self.document, self.board, send, model, interpolation,
                                   lambda: self.current_pose, lambda: self.support)
        self.document.subscribe(lambda: self.board.notify('document'))
        #: Mirror and Repeat of the selected rows
        self.row_tools = RowTools(self.table, model)
        #: teach by demonstration
        self.teaching = Teaching(self.board, send, self.table, model, interpolation,
                                 lambda: self.current_pose, lambda: self.servos_off,
                                 self.set_servos_off)
        backups = UnsavedBackups(workspace.backup, backup_period, clock,
                                 'an untitled trajectory') if workspace is not None else None
        #: the storage, files and backups
        self.files = TrajectoryFiles(self.board, send, self.document, self.table, workspace,
                                     backups, lambda: self.links.get('storage', False))
        self._register_handlers()
        self.links: Dict[str, bool] = dict.fromkeys(PARTS, False)
        self.virtual_robot = False
        self.execution: Optional[Execution] = None
        self.last_outcome = ''
        self.servos_off: Optional[bool] = None
        #: the chains whose servos this editor freed (None: all of them, when any are off)
        self.free_chains: Optional[FrozenSet[str]] = None
        self.servo_message = ''
        self._servo_report = ServoState(None, '')
        self.backward = False
        self.publish_support = False
        self._goal_ids = 0
        self._last_support = -math.inf
        #: the pose asked of FollowJointState (joint -> position) and when, until reached
        self._pose_asked: Optional[Tuple[Dict[str, float], float]] = None
        #: when a hold of FollowJointState was asked for (None: no answer awaited)
        self._hold_asked: Optional[float] = None
        #: the physics robot's base (rotation, position [m]) and when it came (None: none)
        self._base: Optional[Tuple[Rotation, Tuple[float, ...], float]] = None
        #: why the motion checks or the physics refuse the table as it is ('' : they do not)
        self.refusal = ''

    def _register_handlers(self) -> None:
        """Say who takes each of the bridge's events."""
        self._handlers.register(PoseReceived, self._on_pose_received)
        self._handlers.register(LinksChanged, self._on_links_changed)
        self._handlers.register(GoalAccepted, self._on_goal_accepted)
        self._handlers.register(GoalFeedback, self._on_goal_feedback)
        self._handlers.register(GoalFinished, self._on_goal_finished)
        self._handlers.register(ServoState, self._on_servo_state)
        self._handlers.register(TrajectoriesListed, self.files.listed)
        self._handlers.register(TrajectoryLoaded, self.files.loaded)
        self._handlers.register(TrajectorySaved, self.files.saved)
        self._handlers.register(RecordingFinished, self.teaching.finished)
        self._handlers.register(PoseHeld, self._on_pose_held)
        self._handlers.register(BasePoseReceived, self._on_base_pose)

    # --- messages ------------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(topic)`` whenever something of :data:`TOPICS` changes."""
        self.board.subscribe(listener)

    @property
    def message(self) -> Message:
        """Return what the message area shows."""
        return self.board.message

    def say(self, text: str, level: str = 'info', row: Optional[int] = None,
            column: str = '') -> None:
        """Show a message in the message area (it replaces the one before)."""
        self.board.say(text, level, row, column)

    # --- reading -------------------------------------------------------------------------------

    @property
    def waypoints(self) -> WaypointsList:
        """Return the edited list."""
        return self.document.waypoints

    @property
    def running(self) -> bool:
        """Return whether a goal of the editor runs."""
        return self.execution is not None

    @property
    def can_execute(self) -> bool:
        """Return whether Execute may be clicked: the controller is there, nothing runs."""
        return self.links.get('controller', False) and self.execution is None

    @property
    def title(self) -> str:
        """Return the window title: name, unsaved mark."""
        mark = ' *' if self.document.modified else ''
        return f'{self.document.name or "untitled"}{mark} - sweetie_motion trajectory editor'

    def available_joints(self) -> List[str]:
        """Return the joints a trajectory can use: joint_states' (or the model's) and support."""
        joints = list(self.current_pose)
        if not joints and self.model is not None:
            joints = self.model.list_all_joints()
        return joints + [f'{SUPPORT_PREFIX}{leg}' for leg in self.legs]

    # --- robot ---------------------------------------------------------------------------------

    def set_robot_pose(self) -> bool:
        """Move the robot to the selected row (FollowJointState)."""
        row = self.table.selected_row
        if row is None:
            return self.board.refused(ActionRefused('select a row first'))
        pose = real_joints(self.document.waypoints.pose(row))
        self._ask_pose(pose)
        self.say(f'robot pose set to row {row + 1}')
        return True

    def _ask_pose(self, pose: Mapping[str, float]) -> None:
        """Send a pose to FollowJointState; it moves until reached (or stopped)."""
        now = self.clock()
        asked = self._pose_asked
        wanted = dict(asked[0]) if asked is not None and now - asked[1] < POSE_PATIENCE else {}
        wanted.update({j: float(v) for j, v in pose.items()})
        self._pose_asked = (wanted, now)
        self.send(SetPose(tuple(pose), tuple(float(v) for v in pose.values())))

    def move_joint(self, joint: str, value: float) -> bool:
        """
        Move one joint (a slider): through FollowJointState, or by hand when the servos are free.

        With the servos off, the virtual robot's ``move_by_hand`` moves it as a person would;
        the real robot is moved by hand.
        """
        problem = self.table.outside_limits(joint, value)
        if problem:
            return self.board.refused(ActionRefused(problem))
        if self.servos_off and self.joint_is_free(joint):
            if not self.virtual_robot:
                return self.board.refused(ActionRefused('the servos are off: move the robot by '
                                                        'hand'))
            self.send(MoveByHand((joint,), (float(value),)))
        else:
            self._ask_pose({joint: float(value)})
        return True

    def joint_is_free(self, joint: str) -> bool:
        """Return whether ``joint``'s servo is one this editor freed (servos off)."""
        if not self.servos_off:
            return False
        if self.free_chains is None or self.model is None:
            return True
        return self.model.get_joint_chain(joint) in self.free_chains

    def set_backward(self, backward: bool) -> None:
        """Play the range backward (end marker to start marker)."""
        self.backward = bool(backward)

    def build_execution_goal(self) -> Tuple[TrajectoryGoal, List[int]]:
        """
        Return the goal Execute sends (range, speed, direction, an approach) and its rows.

        :raises WaypointError: nothing to play.
        """
        waypoints = self.waypoints
        goal = waypoints.build_goal(scale=self.table.speed / 100.0, backward=self.backward)
        rows = [k for k in waypoints.active_indices() if waypoints.start <= k <= waypoints.end]
        if self.backward:
            rows.reverse()
        limits = {}
        if self.model is not None:
            limits = dict(zip(self.model.list_all_joints(), self.model.velocity_limits()))
        lead = approach_time(goal.first_pose(), self.current_pose, limits)
        return (goal.shifted(lead) if lead > 0 else goal), rows

    def set_refusal(self, reason: str) -> None:
        """Take why the checks or the physics refuse the table as it is ('' : they do not)."""
        if reason != self.refusal:
            self.refusal = reason
            self.board.notify('execution')

    def execute(self, anyway: bool = False) -> bool:
        """
        Play the start..end range on the robot; the outcome comes as a message.

        A table the checks or the physics refuse is not played, unless ``anyway`` on a virtual
        robot (for experiments: the controller's own checks still apply).
        """
        if self.execution is not None:
            return self.board.refused(ActionRefused('a trajectory is running: Stop it first'))
        if not self.links.get('controller'):
            return self.board.refused(ActionRefused('the trajectory controller is not connected'))
        if self.refusal and not (anyway and self.virtual_robot):
            hint = ('; tick "anyway" to try it on the virtual robot' if self.virtual_robot
                    else '; change the table (Show goes to the finding)')
            return self.board.refused(ActionRefused(f'not executed: {self.refusal}{hint}'))
        try:
            goal, rows = self.build_execution_goal()
            if self.model is not None:
                validate_goal(goal, self.model)
        except WaypointError as error:
            return self.board.refused(error)
        except GoalError as error:
            return self.board.refused(
                ActionRefused(f'not executed: {rows_named(str(error), rows)}'))
        self._goal_ids += 1
        self.execution = Execution(self._goal_ids, rows, goal.duration)
        self.send(ExecuteGoal(self._goal_ids, goal, goal.duration * 1.5 + RESULT_MARGIN))
        self.last_outcome = ''
        self.say(f'running {rows_text(rows) if rows else ""} ({goal.duration:.1f} s)')
        self.board.notify('execution')
        return True

    def stop(self) -> bool:
        """Cancel the running goal (the robot decelerates and holds)."""
        if self.execution is None:
            return self.board.refused(ActionRefused('nothing is running'))
        self.execution.stopping = True
        self.send(CancelGoal(self.execution.goal_id))
        self.say('stopping...')
        self.board.notify('execution')
        return True

    @property
    def moving(self) -> bool:
        """
        Return whether something the editor started moves now.

        Execute's goal (until its end is confirmed), a recording (until its samples came), a
        pose sent to FollowJointState (until the robot is there, or held).
        """
        return self.execution is not None or self.teaching.active or \
            self._holding() or self._pose_on_its_way()

    def _holding(self) -> bool:
        if self._hold_asked is not None and self.clock() - self._hold_asked > HOLD_PATIENCE:
            self._hold_asked = None
            self.say(f'FollowJointState did not answer the hold within {HOLD_PATIENCE:g} s',
                     'warning')
        return self._hold_asked is not None

    def _pose_on_its_way(self) -> bool:
        asked = self._pose_asked
        if asked is None:
            return False
        pose, when = asked
        current = self.current_pose
        if self.clock() - when > POSE_PATIENCE or all(
                abs(current.get(j, math.inf) - v) <= POSE_REACHED for j, v in pose.items()):
            self._pose_asked = None
        return self._pose_asked is not None

    def stop_motion(self) -> bool:
        """
        Stop everything the editor started that moves (STOP, Esc, F12, Ctrl+C, a close).

        Execute's goal is cancelled (it decelerates and holds), a recording ends (its servos
        hold; its keyframes wait for Accept), FollowJointState holds where a brake ends. What
        was stopped is said when the motion process confirms it.

        :return: whether anything was moving.
        """
        moving = False
        if self.execution is not None:
            moving = True
            if not self.execution.stopping:
                self.stop()
        if self.teaching.active:
            moving = True
            self.teaching.stop()
        if self._pose_on_its_way():
            moving = True
            self._pose_asked = None
            self._hold_asked = self.clock()
            self.send(HoldPose())
        if not moving and self._hold_asked is None:
            self.say('nothing moves')
        return moving

    @property
    def base_pose(self) -> Optional[Tuple[Rotation, Tuple[float, ...]]]:
        """Return where the physics robot's base is now (rotation, position [m]), None: none."""
        base = self._base
        if base is None or self.clock() - base[2] > BASE_POSE_STALE:
            return None
        return base[0], base[1]

    def _on_base_pose(self, event: BasePoseReceived) -> None:
        self._base = (tuple(event.rotation), tuple(event.position), self.clock())
        self.board.notify('pose')

    def _on_pose_held(self, event: PoseHeld) -> None:
        self._hold_asked = None
        if event.error:
            self.say(f'FollowJointState did not hold: {event.error}', 'error')
        else:
            self.say('stopped: the robot holds where a brake within the limits ended')

    def set_servos_off(self, off: bool, chains: Sequence[str] = ()) -> None:
        """
        Free (True) or hold (False) the servos; the indicator follows the answer.

        :param chains: only the servos of these chains (empty: all).
        """
        if not self.links.get('servos'):
            self.board.refused(ActionRefused('the torque switch is not connected'))
            self.board.notify('servos')
            return
        self.send(SetTorqueOff(bool(off), tuple(chains)))
        if not chains:
            self.free_chains = None
        elif off:
            if not (self.servos_off and self.free_chains is None):  # all free stays all free
                self.free_chains = (self.free_chains or frozenset()) | frozenset(chains)
        elif self.free_chains is not None:
            self.free_chains -= frozenset(chains)
        elif self.model is not None:   # all were free: all but these
            self.free_chains = frozenset(self.model.list_chains()) - frozenset(chains)
        which = f' of {", ".join(chains)}' if chains else ''
        self.say(f'freeing the servos{which}...' if off else f'holding the servos{which}...')

    def set_support(self, publish: bool, legs: Optional[Mapping[str, bool]] = None) -> None:
        """Turn the publication of the support legs on or off; choose the supporting legs."""
        self.publish_support = bool(publish)
        if legs is not None:
            self.support.update({leg: bool(on) for leg, on in legs.items()
                                 if leg in self.support})
        if self.publish_support:
            self._publish_support()

    def _publish_support(self) -> None:
        self._last_support = self.clock()
        self.send(PublishSupport(tuple((leg, 1.0 if on else 0.0)
                                       for leg, on in self.support.items())))

    def tick(self) -> None:
        """Periodic work (the window calls it): backups while unsaved, the support legs."""
        now = self.clock()
        news = self._link_watch.tick(now)
        if news is not None:
            self.say(news.text, news.level)
        if self.publish_support and now - self._last_support >= SUPPORT_PERIOD:
            self._publish_support()
        self.files.back_up_if_due()

    # --- events --------------------------------------------------------------------------------

    def handle(self, event: object) -> None:
        """Take an event of the adapters (in the GUI thread)."""
        self._handlers.dispatch(event)

    def _on_pose_received(self, event: PoseReceived) -> None:
        self.current_pose = dict(zip(event.names, event.positions))
        self.board.notify('pose')

    def _on_links_changed(self, event: LinksChanged) -> None:
        links = dict(event.links)
        before = dict(self.links)
        self.links.update({part: bool(links.get(part, False)) for part in PARTS})
        self.virtual_robot = bool(event.virtual_robot)
        if self.links['servos'] != before.get('servos'):
            self._show_servos()
        if self.execution is not None and not self.links['controller']:
            self._finish(GoalFinished(self.execution.goal_id, LOST, 0,
                                      'the trajectory controller went away'))
        if self.links['storage'] and (not before.get('storage') or self.files.names_stale):
            self.files.refresh_names()   # the storage is (back) up, or a list failed: ask
        news = self._link_watch.update(self.links)
        if news is not None:
            if news.back and self.last_outcome.startswith(LOST):
                self.last_outcome = ''  # the red 'lost' of the result line is over
                self.board.notify('execution')
            self.say(news.text, news.level)
        if self.links != before:
            self.board.notify('links')

    def _on_goal_accepted(self, event: GoalAccepted) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self.execution.accepted = True
            self.board.notify('execution')

    def _on_goal_feedback(self, event: GoalFeedback) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self.execution.progress = event.time
            self.board.notify('execution')

    def _on_goal_finished(self, event: GoalFinished) -> None:
        if self.execution is not None and self.execution.goal_id == event.goal_id:
            self._finish(event)

    def _finish(self, event: GoalFinished) -> None:
        execution = self.execution
        self.execution = None
        message = rows_named(event.message, execution.rows if execution else [])
        if event.outcome == SUCCEEDED:
            text, level = f'succeeded: {message}', 'info'
        elif event.outcome == STOPPED:
            assert execution is not None   # both callers finish the execution they hold
            text, level = f'stopped at {execution.progress:.1f} of {execution.duration:.1f} s', \
                'info'
        elif event.outcome == LOST:
            text, level = f'lost: {message}', 'error'
        else:
            text, level = f'FAILED ({event.code}): {message}', 'error'
        self.last_outcome = text
        self.say(text, level)
        self.board.notify('execution')

    def _on_servo_state(self, event: ServoState) -> None:
        self._servo_report = event
        self._show_servos()

    def _show_servos(self) -> None:
        # the last report counts only while the torque switch answers: not "ON" when it is gone
        if self.links.get('servos'):
            self.servos_off = self._servo_report.torque_off
            self.servo_message = self._servo_report.message
        else:
            self.servos_off = None
            self.servo_message = 'the torque switch is not connected'
        self.board.notify('servos')
