"""
The joint trajectory controller node: FollowJointTrajectory and play-by-name actions.

``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) is what MoveIt 2,
``ros2 action send_goal`` and the editor talk to. Every goal is accepted and then either
executed or aborted with the control_msgs result code and an error_string that names the
problem, so a client always learns why. ``play_trajectory`` (sweetie_motion_msgs/action/
PlayTrajectory, if ``play_action`` is set) plays a trajectory of the storage node by name.
The cycle pushes each goal's feedback (at ``feedback_rate``) and its end as events; the node
turns them into action feedback and results in its executor.

As joint_trajectory_controller does, the node also takes ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory): a trajectory replaces the one running (an action goal
running then is aborted, "preempted"), an empty one stops the motion (it decelerates and
holds); problems are logged, there is no one to answer. And it publishes ``~/controller_state``
(control_msgs/JointTrajectoryControllerState: reference, feedback, error and output of its
joints) at ``state_publish_rate`` while someone subscribes.
"""

import collections
from dataclasses import dataclass
import itertools
import threading
import time
import traceback
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Set, Tuple, Union

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from sweetie_motion.controllers.goals import GoalPlan, GoalPlanner
from sweetie_motion.controllers.joint_trajectory import (
    CancelGoal, JointTrajectoryCore, JointTrajectorySpec, StartGoal,
)
from sweetie_motion.controllers.pendants import Lapse
from sweetie_motion.core.events import (
    ControllerEvent, CycleEvent, GoalEnded, GoalProgress, HostExited, Outcome,
)
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.nodes.controllers import ControllerNode
from sweetie_motion.nodes.motion_core import LATCHED
from sweetie_motion.nodes.pendant_watch import PendantWatch
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.nodes.rclpy_private import set_own_value
from sweetie_motion.nodes.stored_motions import StoredMotions
from sweetie_motion.nodes.trajectory_params import (
    check_goal_limits, declare_jtc_parameters, tolerance_defaults, TRAJECTORY_PARAMETERS,
)
from sweetie_motion.ros.conversions import goal_arrays_from_msg, seconds_to_duration
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import GoalError, GoalLike, ResultCode
from sweetie_motion_msgs.action import PlayTrajectory
from sweetie_motion_msgs.msg import SupportState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint


#: goal, cancel and result requests the action servers queue
REQUEST_QUEUE = 1000
#: a goal with at most this many values (points x joints) is planned before it is accepted
#: (MoveIt's and the editor's goals: it runs from the tick after "accepted"); a larger one is
#: accepted first and planned after, so that its client hears at once (#21: 1.85 s under load)
PLAN_BEFORE_ACCEPT_VALUES = 20_000
#: how long a canceled goal's end waits for rclpy to mark the cancel this node accepted [s]
CANCEL_MARK_WAIT = 0.5


class AcceptedCancels:
    """
    The goals whose cancel a node accepted, until their execute callback is over.

    The cycle can end a canceled goal before rclpy marks its handle canceling (it does so once
    the cancel callback has returned, in another thread): a handle ended then would abort a goal
    its client canceled (seen under load: the editor's Stop read "FAILED (0): canceled"). The
    end of a goal whose cancel was accepted waits (bounded) for the mark.
    """

    def __init__(self) -> None:
        self._ids: Set[bytes] = set()

    def accept(self, goal_handle) -> None:
        """Remember that this goal's cancel was accepted."""
        self._ids.add(bytes(goal_handle.goal_id.uuid))

    def forget(self, goal_handle) -> None:
        """Forget the goal (its execute callback is over)."""
        self._ids.discard(bytes(goal_handle.goal_id.uuid))

    def finish(self, goal_handle, outcome: Outcome) -> None:
        """End an action goal's handle as its outcome says."""
        if outcome.status == 'canceled' and bytes(goal_handle.goal_id.uuid) in self._ids:
            deadline = time.monotonic() + CANCEL_MARK_WAIT
            while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
                time.sleep(0.001)
        self.forget(goal_handle)
        if outcome.status == 'succeeded':
            goal_handle.succeed()
        elif outcome.status == 'canceled' and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()


class PreparedGoals:
    """
    What the goal callback made of a goal message, kept for the accepted callback of that goal.

    rclpy gives the goal callback the message alone (not the goal's id) and the accepted
    callback a handle whose ``request`` is that same message object: the message itself is
    the key, matched by identity (messages compare by value, and two clients may send equal
    goals). Held here, it cannot be freed and another message take its place, as one could
    take its ``id()``.
    """

    def __init__(self) -> None:
        self._entries: List[Tuple[object, Union[GoalPlan, GoalError]]] = []
        self._lock = threading.Lock()

    def put(self, goal: object, entry: Union[GoalPlan, GoalError]) -> None:
        """Keep ``entry`` (a plan or why the goal is refused) for the message ``goal``."""
        with self._lock:
            self._entries.append((goal, entry))

    def take(self, goal: object) -> Optional[Union[GoalPlan, GoalError]]:
        """Remove and return what was kept for the message ``goal``; None: nothing was."""
        with self._lock:
            for k, (kept, entry) in enumerate(self._entries):
                if kept is goal:
                    del self._entries[k]
                    return entry
        return None


@dataclass(eq=False)
class RunningGoal:
    """A goal handed to the cycle, as the node tracks it until its outcome."""

    handle: Optional[object]   # None: a trajectory of the ~/joint_trajectory topic
    joints: list
    duration: float
    feedback: Callable[[object, 'RunningGoal', object], None]
    done: Future
    outcome: Optional[Outcome] = None
    #: why the node stopped it (its client's pendant lapsed); '' : it did not
    stopped_by: str = ''


class JointTrajectoryNode(ControllerNode):
    """
    The FollowJointTrajectory controller as a lifecycle node.

    A goal is checked against the limits (points, joints, duration, size) before anything
    else, converted to arrays, validated and planned (spline) — in the goal callback for a
    small goal, right after its acceptance for a large one — and started on the cycle side the
    moment it is accepted; the execute callback only waits for the
    outcome, which the cycle pushes (:class:`~sweetie_motion.core.events.GoalEnded`), as it
    pushes feedback (:class:`~sweetie_motion.core.events.GoalProgress`).
    """

    COMPONENT = JointTrajectoryCore
    PARAMETERS = TRAJECTORY_PARAMETERS

    def __init__(self, process: MotionProcess, name: str = 'joint_trajectory', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._action_group = ReentrantCallbackGroup()
        self._goals: Dict[bytes, RunningGoal] = {}
        self._cancels = AcceptedCancels()
        self._goals_lock = threading.Lock()
        #: a small goal's plan or why it is refused (goal callback -> accepted)
        self._prepared = PreparedGoals()
        #: goal id -> the started goal, or why it did not start (accepted -> execute callback)
        self._handoff: Dict[bytes, Union[RunningGoal, GoalError]] = {}
        #: the cycle's goal events, handled in order in the executor
        self._goal_events: Deque[Union[GoalProgress, GoalEnded]] = collections.deque()
        self._goal_events_lock = threading.Lock()
        self._last_support = None
        #: playing stored trajectories by name, recording goals (the storage node's client)
        self.stored = StoredMotions(self, self._action_group)
        self._planner: Optional[GoalPlanner] = None
        declare_jtc_parameters(self, self.controlled_joints())

    # --- parameters ----------------------------------------------------------------------------

    def _update_joints(self) -> None:
        joints = self.controlled_joints()
        if list(self.get_parameter('joints').value or []) != joints:
            set_own_value(self, 'joints', Parameter.Type.STRING_ARRAY, joints)

    def accepts_parameter(self, name: str) -> bool:
        return self.accepts_config_name(name, {}) or super().accepts_parameter(name)

    @classmethod
    def accepts_config_name(cls, name: str, parameters: Mapping[str, Any]) -> bool:
        """
        Return whether ``name`` is a per-joint tolerance.

        ``constraints.JOINT.trajectory`` (JTC's name of the path tolerance; ``path`` is the
        same) and ``constraints.JOINT.goal``.
        """
        parts = name.split('.')
        return len(parts) == 3 and parts[0] == 'constraints' and \
            parts[2] in ('trajectory', 'path', 'goal')

    def _tolerance_defaults(self) -> ToleranceDefaults:
        constraints = {f'constraints.{n}': p.value
                       for n, p in self.get_parameters_by_prefix('constraints').items()}
        return tolerance_defaults(self.values, constraints, self.process.view)

    # --- lifecycle -----------------------------------------------------------------------------

    def component_spec(self) -> JointTrajectorySpec:
        self._update_joints()
        values = self.values
        defaults = self._tolerance_defaults()
        chains = tuple(values['controlled_chains'])
        self._planner = GoalPlanner(self.get_name(), self.process.view, chains, defaults,
                                    values['interpolation'], values['limits.policy'],
                                    self.process.checker())
        return JointTrajectorySpec(chains, self.smoothing_spec(), self.order,
                                   values['feedback_rate'])

    def publish_last_goal(self, goal) -> None:
        """Publish a FollowJointTrajectory goal on ``~/last_goal`` (what `save --last` keeps)."""
        self._last_goal_pub.publish(goal)

    def create_entities(self) -> None:
        values = self.values
        # requests queue up instead of being dropped when a client sends many at once
        # (rclpy's default service QoS keeps the newest 10)
        requests = QoSProfile(depth=REQUEST_QUEUE, reliability=ReliabilityPolicy.RELIABLE)
        common = {'cancel_callback': self._on_cancel,
                  'callback_group': self._action_group,
                  'goal_service_qos_profile': requests,
                  'cancel_service_qos_profile': requests,
                  'result_service_qos_profile': requests,
                  'result_timeout': max(1, int(round(values['result_timeout'])))}
        self._action = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted, **common)
        self._entities = [self._action]
        if values['play_action']:
            self._entities.append(ActionServer(
                self, PlayTrajectory, values['play_action'], execute_callback=self.stored.play,
                goal_callback=lambda goal: GoalResponse.ACCEPT, **common))
        self._support_pub = self.make_publisher(SupportState, values['support_topic'], 10)
        self._last_goal_pub = self.make_publisher(FollowJointTrajectory.Goal, '~/last_goal',
                                                  LATCHED)
        self._entities += [self._support_pub, self._last_goal_pub]
        # a goal whose client falls silent (a killed editor, console or command) stops
        self._entities.append(PendantWatch(self, self._action_group, self._action_goals,
                                           self._stop_for_pendant))
        self._topic_goals = itertools.count(1)
        self._entities.append(self.make_subscription(JointTrajectory, '~/joint_trajectory',
                                                     self._on_trajectory, 10))
        self._state_timer = None
        if values['state_publish_rate'] > 0:
            self._state_pub = self.make_publisher(
                JointTrajectoryControllerState, '~/controller_state', 10,
                matched=self._on_state_subscribers)
            self._entities.append(self._state_pub)

    def cleanup_component(self) -> None:
        timer, self._state_timer = self._state_timer, None
        if timer is not None:
            self.destroy_timer(timer)
        super().cleanup_component()
        # goals whose end the cycle can no longer tell: answer their clients
        self._abort_all(f'controller {self.get_name()} was cleaned up')

    def _abort_all(self, message: str) -> None:
        with self._goals_lock:
            goals, self._goals = list(self._goals.values()), {}
        for running in goals:
            self._resolve(running, Outcome('aborted', int(ResultCode.INVALID_GOAL), message))

    # --- goals ---------------------------------------------------------------------------------

    def check_limits(self, goal) -> None:
        """
        Refuse a FollowJointTrajectory goal message beyond the documented limits, cheaply.

        :raises GoalError: naming the limit and its parameter.
        """
        check_goal_limits(goal, self.values, self.get_name(), self._planner)

    def plan(self, goal: GoalLike) -> GoalPlan:
        """
        Validate a goal and build its spline from the cycle's current pose.

        :raises GoalError: with the code and message for the client.
        """
        if self._planner is None or self.lifecycle_state != 'active':
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'controller {self.get_name()} is not active '
                            f'(state {self.lifecycle_state})')
        self._planner.policy = self.get_parameter('limits.policy').value
        plan = self._planner.plan(goal, self.poses)
        if plan.notes:
            self.get_logger().info('goal planned: ' + '; '.join(plan.notes))
        return plan

    def poses(self):
        """Return the cycle's newest poses; raise GoalError when the cycle is unavailable."""
        try:
            return self.host.cycle(timeout=2.0).poses()
        except SweetieMotionError as error:
            raise GoalError(ResultCode.INVALID_GOAL, f'the motion cycle is unavailable: '
                            f'{error}') from None

    def _on_goal(self, goal) -> GoalResponse:
        """
        Accept every goal (the result says what was wrong); plan a small one first.

        A goal of at most :data:`PLAN_BEFORE_ACCEPT_VALUES` values is checked and planned here,
        before its client hears "accepted", so that it runs from the tick after; a larger one
        is accepted at once and planned after (its planning under load took seconds, which
        its client would otherwise wait for its goal response).
        """
        trajectory = goal.trajectory
        if len(trajectory.points) * max(1, len(trajectory.joint_names)) <= \
                PLAN_BEFORE_ACCEPT_VALUES:
            self._prepared.put(goal, self._prepare(goal))
        return GoalResponse.ACCEPT

    def _prepare(self, goal) -> Union[GoalPlan, GoalError]:
        """Check, convert, validate and plan a goal message: its plan or why it is refused."""
        try:
            self.check_limits(goal)
            return self.plan(goal_arrays_from_msg(goal))
        except GoalError as error:
            return error
        except Exception as error:  # noqa: B902 -- a client must always get a reason
            self.get_logger().error(f'goal failed:\n{traceback.format_exc()}')
            return GoalError(ResultCode.INVALID_GOAL, f'internal error of {self.get_name()}: '
                             f'{type(error).__name__}: {error}')

    def _on_accepted(self, goal_handle) -> None:
        """Start the planned goal (plan a large one first): it runs from the next tick."""
        key = bytes(goal_handle.goal_id.uuid)
        entry = self._prepared.take(goal_handle.request)
        if entry is None:
            entry = self._prepare(goal_handle.request)
        if isinstance(entry, GoalPlan):
            try:
                self._handoff[key] = self.start(goal_handle, entry, self._fjt_feedback)
            except GoalError as error:
                self._handoff[key] = error
        else:
            self._handoff[key] = entry
        goal_handle.execute()

    def _action_goals(self) -> list:
        with self._goals_lock:
            return [key for key, running in self._goals.items() if running.handle is not None]

    def _stop_for_pendant(self, key: bytes, lapse: Lapse) -> None:
        """Stop a goal whose client is gone: it decelerates and holds, as on a cancel."""
        with self._goals_lock:
            running = self._goals.get(key)
        if running is None:
            return
        running.stopped_by = lapse.describe()
        try:
            self.host.cast(CancelGoal(self.get_name(), key))
        except SweetieMotionError as error:
            self.get_logger().warning(f'stop not delivered: {error}')

    def _on_cancel(self, goal_handle) -> CancelResponse:
        """Stop a running goal in the cycle (it decelerates and holds); its end says so."""
        self.get_logger().info('cancel requested: the goal decelerates and holds')
        self._cancels.accept(goal_handle)
        try:
            self.host.cast(CancelGoal(self.get_name(), bytes(goal_handle.goal_id.uuid)))
        except SweetieMotionError as error:
            self.get_logger().warning(f'cancel not delivered: {error}')
        return CancelResponse.ACCEPT

    def start(self, goal_handle, plan: GoalPlan, feedback,
              key: Optional[bytes] = None) -> RunningGoal:
        """
        Hand a plan to the cycle and track it until its end; raise GoalError when that fails.

        :param goal_handle: the action goal's handle, None for a ~/joint_trajectory one
            (then ``key`` names it).
        """
        key = key if goal_handle is None else bytes(goal_handle.goal_id.uuid)
        running = RunningGoal(goal_handle, plan.joints, plan.duration, feedback, Future())
        with self._goals_lock:  # before the start: its end may come before the call returns
            self._goals[key] = running
        try:
            self.host.run(StartGoal(self.get_name(), key, plan), 2.0)
        except SweetieMotionError as error:
            with self._goals_lock:
                self._goals.pop(key, None)
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'the motion cycle did not take the goal: {error}') from None
        if goal_handle is not None and goal_handle.is_cancel_requested:
            self._on_cancel(goal_handle)   # canceled while it was being loaded or planned
        return running

    # --- what the cycle pushes -----------------------------------------------------------------

    def _on_controller_event(self, event: ControllerEvent) -> None:
        super()._on_controller_event(event)
        if isinstance(event, (GoalProgress, GoalEnded)):
            self._goal_events.append(event)
            self.call_soon(self._handle_goal_events)

    def _on_event(self, event: CycleEvent) -> None:
        super()._on_event(event)
        if isinstance(event, HostExited):
            self.call_soon(lambda: self._abort_all(
                f'the cycle process ended (exit code {event.code}): the goal was not finished'))

    def _handle_goal_events(self) -> None:
        # one at a time and in order: a goal's last feedback before its end
        with self._goal_events_lock:
            while self._goal_events:
                event = self._goal_events.popleft()
                with self._goals_lock:
                    running = self._goals.get(event.goal_id)
                    if isinstance(event, GoalEnded):
                        self._goals.pop(event.goal_id, None)
                if isinstance(event, GoalEnded):
                    if running is not None:
                        self._resolve(running, event.outcome)
                    continue
                if running is not None and running.outcome is None and \
                        running.handle is not None and running.handle.is_active:
                    running.feedback(running.handle, running, event.feedback)
                self._publish_support(event.support)

    def _publish_support(self, support: Optional[Dict[str, float]]) -> None:
        if support is None or support == self._last_support:
            return
        self._last_support = support
        msg = SupportState(name=list(support), support=list(support.values()))
        msg.header.stamp = self.get_clock().now().to_msg()
        self._support_pub.publish(msg)

    def finish_handle(self, goal_handle, outcome: Outcome) -> None:
        """End an action goal's handle as its outcome says."""
        self._cancels.finish(goal_handle, outcome)

    def forget_cancel(self, goal_handle) -> None:
        """Forget a goal's accepted cancel once its execute callback is over, however it ended."""
        self._cancels.forget(goal_handle)

    async def _execute(self, goal_handle):
        with self.goal_running():
            try:
                return await self._execute_goal(goal_handle)
            except Exception as error:  # noqa: B902 -- a client must always get a reason
                return self.internal_error(goal_handle, FollowJointTrajectory.Result(), error)
            finally:
                self.forget_cancel(goal_handle)

    def internal_error(self, goal_handle, result, error: Exception):
        """Abort a goal that failed inside this node; fill and return its ``result``."""
        self.get_logger().error(f'goal failed:\n{traceback.format_exc()}')
        if goal_handle.is_active:
            goal_handle.abort()
        result.error_code = int(ResultCode.INVALID_GOAL)
        result.error_string = f'internal error of {self.get_name()}: ' \
                              f'{type(error).__name__}: {error}'
        return result

    async def _execute_goal(self, goal_handle):
        result = FollowJointTrajectory.Result()
        running = self._handoff.pop(bytes(goal_handle.goal_id.uuid), None)
        if not isinstance(running, RunningGoal):
            error = running or GoalError(ResultCode.INVALID_GOAL,
                                         f'internal error of {self.get_name()}: the goal was '
                                         'executed without being accepted')
            self.get_logger().warning(f'goal refused ({error.code_name}): {error}')
            goal_handle.abort()
            result.error_code, result.error_string = int(error.code), str(error)
            return result
        self.publish_last_goal(goal_handle.request)
        self.stored.record(goal_handle.request)
        outcome = await running.done
        self.finish_handle(goal_handle, outcome)
        result.error_code, result.error_string = int(outcome.code), outcome.message
        self.get_logger().info(f'goal {outcome.status}: {outcome.message}')
        return result

    def _fjt_feedback(self, goal_handle, running: RunningGoal, sample) -> None:
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.stamp = self.get_clock().now().to_msg()
        feedback.joint_names = running.joints
        stamp = seconds_to_duration(sample.time_from_start)
        feedback.desired = JointTrajectoryPoint(
            positions=sample.desired_position.tolist(),
            velocities=sample.desired_velocity.tolist(),
            accelerations=sample.desired_acceleration.tolist(), time_from_start=stamp)
        feedback.actual = JointTrajectoryPoint(
            positions=sample.actual_position.tolist(),
            velocities=sample.actual_velocity.tolist(), time_from_start=stamp)
        feedback.error = JointTrajectoryPoint(
            positions=(sample.desired_position - sample.actual_position).tolist(),
            velocities=(sample.desired_velocity - sample.actual_velocity).tolist(),
            time_from_start=stamp)
        goal_handle.publish_feedback(feedback)

    def _resolve(self, running: RunningGoal, outcome: Outcome) -> None:
        if running.stopped_by and outcome.status == 'canceled':
            # its client did not ask for the cancel (the handle aborts): the result says why
            outcome = Outcome(outcome.status, outcome.code,
                              f'stopped: {running.stopped_by}; {outcome.message}')
        if running.handle is None:  # a topic command: routine (rqt_jtc sends ten a second)
            self.get_logger().debug(f'~/joint_trajectory {outcome.status}: {outcome.message}')
        running.outcome = outcome
        if not running.done.done():
            running.done.set_result(outcome)

    # --- joint_trajectory_controller's topics -------------------------------------------------

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        """Take a trajectory of ~/joint_trajectory: it replaces the running one; empty: stop."""
        name = self.get_name()
        if self.lifecycle_state != 'active':
            self.get_logger().warning(f'~/joint_trajectory ignored: {name} is '
                                      f'{self.lifecycle_state}', throttle_duration_sec=5.0)
            return
        if not msg.points:
            with self._goals_lock:
                keys = list(self._goals)
            for key in keys:
                try:
                    self.host.run(CancelGoal(self.get_name(), key), 2.0)
                except SweetieMotionError as error:
                    self.get_logger().warning(f'stop failed: {error}')
            self.get_logger().info('~/joint_trajectory: empty trajectory, stopping'
                                   + (f' {len(keys)} goal(s)' if keys else ''))
            return
        goal = FollowJointTrajectory.Goal(trajectory=msg)
        try:
            self.check_limits(goal)
            plan = self.plan(goal_arrays_from_msg(goal))
        except GoalError as error:
            self.get_logger().error(f'~/joint_trajectory refused ({error.code_name}): {error}')
            return
        key = f'topic-{next(self._topic_goals)}'.encode()
        try:
            self.start(None, plan, lambda handle, running, sample: None, key)
        except GoalError as error:
            self.get_logger().error(f'~/joint_trajectory not started: {error}')
            return
        self.get_logger().debug(f'~/joint_trajectory: {len(msg.points)} points, '
                                f'{plan.duration:.2f} s')

    def _on_state_subscribers(self, status) -> None:
        """Publish ~/controller_state only while someone listens (a timer costs CPU)."""
        if status.current_count > 0 and self._state_timer is None:
            self._state_timer = self.create_timer(
                1.0 / self.values['state_publish_rate'], self._publish_state,
                callback_group=self._action_group)
        elif status.current_count == 0 and self._state_timer is not None:
            timer, self._state_timer = self._state_timer, None
            self.call_soon(lambda: self.destroy_timer(timer))

    def _publish_state(self) -> None:
        try:
            poses = self.host.cycle(timeout=1.0).poses()
        except SweetieMotionError:
            return
        indices = self._planner.controlled.indices
        msg = JointTrajectoryControllerState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.joint_names = list(self._planner.controlled.joints)
        reference, measured = poses.reference, poses.measured
        msg.reference = JointTrajectoryPoint(
            positions=reference.position[indices].tolist(),
            velocities=reference.velocity[indices].tolist())
        msg.feedback = JointTrajectoryPoint(
            positions=measured.position[indices].tolist(),
            velocities=measured.velocity[indices].tolist())
        msg.error = JointTrajectoryPoint(
            positions=(reference.position[indices] - measured.position[indices]).tolist(),
            velocities=(reference.velocity[indices] - measured.velocity[indices]).tolist())
        # what goes to the servos is the reference (after the safety stage); desired and
        # actual are the fields older tools read
        msg.output = msg.desired = msg.reference
        msg.actual = msg.feedback
        try:
            self._state_pub.publish(msg)
        except Exception:  # noqa: B902 -- publisher gone at cleanup
            pass
