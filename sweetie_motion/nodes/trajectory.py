"""
The joint trajectory controller node: FollowJointTrajectory and play-by-name actions.

``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) is what MoveIt 2,
``ros2 action send_goal`` and the editor talk to. Every goal is accepted and then either
executed or aborted with the control_msgs result code and an error_string that names the
problem, so a client always learns why. ``play_trajectory`` (sweetie_motion_msgs/action/
PlayTrajectory, if ``play_action`` is set) plays a trajectory of the storage node by name.
Goal bookkeeping runs in a timer at ``feedback_rate``, never in the cycle.
"""

import threading
import time
from typing import Dict, Optional, Tuple

from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rclpy.task import Future
from sweetie_motion.controllers.joint_trajectory import ExecutingGoal, JointTrajectoryCore
from sweetie_motion.conversions import (
    byte_array_value, goal_from_bytes, goal_from_msg, goal_to_bytes, seconds_to_duration,
)
from sweetie_motion.nodes.controllers import controller_parameters, ControllerNode
from sweetie_motion.nodes.motion_core import LATCHED
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import nested_overrides, ParameterError, ParameterSpec
from sweetie_motion.storage.files import check_name, TrajectoryFileError
from sweetie_motion.trajectory.goal import approach_time, TrajectoryGoal
from sweetie_motion.trajectory.spline import INTERPOLATIONS
from sweetie_motion.trajectory.tolerances import ToleranceDefaults
from sweetie_motion.trajectory.validation import GoalError, PlayCode, ResultCode
from sweetie_motion_msgs.action import PlayTrajectory
from sweetie_motion_msgs.msg import SupportState
from trajectory_msgs.msg import JointTrajectoryPoint


def _name_problem(name: str) -> Optional[str]:
    try:
        check_name(name)
    except TrajectoryFileError as error:
        return str(error)
    return None


#: the speed scales a stored trajectory may be played at (0 means 1)
MIN_SPEED, MAX_SPEED = 0.05, 20.0


class JointTrajectoryNode(ControllerNode):
    """The FollowJointTrajectory controller as a lifecycle node."""

    PARAMETERS = [p for p in controller_parameters(smoothing='transient')
                  if p.name != 'stay_operational'] + [
        ParameterSpec('interpolation', 'akima',
                      'Interpolation of position-only keyframes: akima (C1, no overshoot, '
                      'still between equal keyframes) or cubic (C2, may overshoot).',
                      choices=INTERPOLATIONS),
        ParameterSpec('constraints.path_tolerance', 0.3,
                      'Default path tolerance (position) [rad]; 0 = not checked.',
                      low=0.0, high=10.0),
        ParameterSpec('constraints.goal_tolerance', 0.05,
                      'Default goal tolerance (position) [rad]; 0 = not checked.',
                      low=0.0, high=10.0),
        ParameterSpec('constraints.goal_time', 1.0,
                      'Default time allowed after the end to reach the goal [s].',
                      low=0.001, high=600.0),
        ParameterSpec('feedback_rate', 20.0, 'Rate of action feedback [Hz].',
                      low=1.0, high=200.0),
        ParameterSpec('play_action', '',
                      'Name of the play-by-name action (sweetie_motion_msgs/PlayTrajectory), '
                      'relative to the robot namespace; empty: none.', read_only=True),
        ParameterSpec('storage_node', 'trajectory_storage',
                      'The trajectory_storage node that play_action loads from.'),
        ParameterSpec('trajectory_namespace', 'joint_trajectory',
                      'Parameter namespace of the stored trajectories.'),
        ParameterSpec('record_as', '',
                      'If set, every accepted FollowJointTrajectory goal is also stored under '
                      'this name (e.g. to keep what MoveIt planned).', dynamic=True,
                      check=lambda name: _name_problem(name) if name else None),
        ParameterSpec('support_topic', 'support_state',
                      'Topic of SupportState from support/<chain> pseudo-joints.',
                      read_only=True),
    ]

    def __init__(self, process: MotionProcess, name: str = 'joint_trajectory', **kwargs) -> None:
        super().__init__(process, name, **kwargs)
        self._action_group = ReentrantCallbackGroup()
        #: goal id -> (goal handle, executing goal, its done future, feedback publisher)
        self._goals: Dict[bytes, Tuple[object, ExecutingGoal, Future, object]] = {}
        self._goals_lock = threading.Lock()
        self._last_support = None
        self._storage_client: Optional[AsyncParameterClient] = None

    # --- parameters ----------------------------------------------------------------------------

    def accepts_parameter(self, name: str) -> bool:
        parts = name.split('.')
        if len(parts) == 3 and parts[0] == 'constraints' and parts[2] in ('path', 'goal'):
            return True
        return super().accepts_parameter(name)

    def _tolerance_defaults(self) -> ToleranceDefaults:
        values = self.values
        flat = {f'constraints.{n}': p.value
                for n, p in self.get_parameters_by_prefix('constraints').items()}
        _, per_joint, _ = nested_overrides(flat, 'constraints')
        unknown = [j for j in per_joint if self.process.view.get_joint_index(j) < 0]
        if unknown:
            raise ParameterError(f'constraints name unknown joints: {", ".join(unknown)}')
        return ToleranceDefaults(values['constraints.path_tolerance'],
                                 values['constraints.goal_tolerance'],
                                 values['constraints.goal_time'],
                                 {j: {k: float(v) for k, v in p.items()}
                                  for j, p in per_joint.items()})

    # --- lifecycle -----------------------------------------------------------------------------

    def build_core(self) -> JointTrajectoryCore:
        values = self.values
        core = JointTrajectoryCore(self.get_name(), self.process.view, self.process.arbiter,
                                   values['controlled_chains'], self.make_filter,
                                   self._tolerance_defaults(), values['interpolation'])
        self._action = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda handle: CancelResponse.ACCEPT,
            callback_group=self._action_group)
        self._entities = [self._action]
        if values['play_action']:
            self._entities.append(ActionServer(
                self, PlayTrajectory, values['play_action'], execute_callback=self._play,
                goal_callback=lambda goal: GoalResponse.ACCEPT,
                cancel_callback=lambda handle: CancelResponse.ACCEPT,
                callback_group=self._action_group))
        self._support_pub = self.make_publisher(SupportState, values['support_topic'], 10)
        self._last_goal_pub = self.make_publisher(FollowJointTrajectory.Goal, '~/last_goal',
                                                  LATCHED)
        self._entities += [self._support_pub, self._last_goal_pub,
                           self.create_timer(1.0 / values['feedback_rate'], self._monitor,
                                             callback_group=self._action_group)]
        return core

    def activate_component(self) -> None:
        self.core.reset(self.process.cycle.reference)
        self.process.cycle.add_stage('controller', self.core, self.order)
        self.core.operational = True  # resources are requested per goal

    def deactivate_component(self) -> None:
        if self.core is not None:
            for _, executing, _, _ in list(self._goals.values()):
                executing.end('aborted', ResultCode.INVALID_GOAL,
                              f'controller {self.get_name()} was deactivated')
        super().deactivate_component()

    # --- goals ---------------------------------------------------------------------------------

    def _start(self, goal: TrajectoryGoal) -> ExecutingGoal:
        """Validate and start a goal; raise GoalError with the code the client gets."""
        if self.core is None or self.lifecycle_state != 'active':
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'controller {self.get_name()} is not active '
                            f'(state {self.lifecycle_state})')
        executing = self.core.prepare(goal)
        if executing.warnings:
            self.get_logger().warning('faster than the velocity limits: ' +
                                      '; '.join(executing.warnings))
        self.core.start(executing)
        return executing

    async def _run(self, goal_handle, executing: ExecutingGoal, feedback) -> ExecutingGoal:
        """Wait (without holding an executor thread) until the goal has an outcome."""
        done = Future()
        key = bytes(goal_handle.goal_id.uuid)
        with self._goals_lock:
            self._goals[key] = (goal_handle, executing, done, feedback)
        try:
            await done
        finally:
            with self._goals_lock:
                self._goals.pop(key, None)
        return executing

    @staticmethod
    def _finish_handle(goal_handle, executing: ExecutingGoal) -> None:
        outcome = executing.outcome
        if outcome.status == 'succeeded':
            goal_handle.succeed()
        elif outcome.status == 'canceled' and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()

    async def _execute(self, goal_handle):
        try:
            return await self._execute_goal(goal_handle)
        except Exception as error:  # noqa: B902 -- a client must always get a reason
            return self._internal_error(goal_handle, FollowJointTrajectory.Result(), error)

    def _internal_error(self, goal_handle, result, error: Exception):
        import traceback
        self.get_logger().error(f'goal failed:\n{traceback.format_exc()}')
        if goal_handle.is_active:
            goal_handle.abort()
        result.error_code = int(ResultCode.INVALID_GOAL)
        result.error_string = f'internal error of {self.get_name()}: ' \
                              f'{type(error).__name__}: {error}'
        return result

    async def _execute_goal(self, goal_handle):
        result = FollowJointTrajectory.Result()
        try:
            goal = goal_from_msg(goal_handle.request)
            executing = self._start(goal)
        except GoalError as error:
            self.get_logger().warning(f'goal refused ({error.code_name}): {error}')
            goal_handle.abort()
            result.error_code, result.error_string = int(error.code), str(error)
            return result
        self._last_goal_pub.publish(goal_handle.request)
        self._record(goal)
        executing = await self._run(goal_handle, executing, self._fjt_feedback)
        self._finish_handle(goal_handle, executing)
        outcome = executing.outcome
        result.error_code, result.error_string = int(outcome.code), outcome.message
        self.get_logger().info(f'goal {outcome.status}: {outcome.message}')
        return result

    def _fjt_feedback(self, goal_handle, executing: ExecutingGoal, sample) -> None:
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.stamp = self.get_clock().now().to_msg()
        feedback.joint_names = executing.joints
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

    def _monitor(self) -> None:
        """Goal bookkeeping at feedback_rate: cancel requests, feedback, results, support."""
        with self._goals_lock:
            goals = list(self._goals.values())
        for goal_handle, executing, done, feedback in goals:
            if goal_handle.is_cancel_requested and not executing.cancel_requested:
                self.core.cancel(executing)
            if executing.outcome is not None:
                if not done.done():
                    done.set_result(True)
                continue
            sample = executing.feedback.value
            if sample is not None:
                feedback(goal_handle, executing, sample)
        if self.core is not None:
            support = self.core.support.value
            if support is not None and support != self._last_support:
                self._last_support = support
                msg = SupportState(name=list(support), support=list(support.values()))
                msg.header.stamp = self.get_clock().now().to_msg()
                self._support_pub.publish(msg)

    def _record(self, goal: TrajectoryGoal) -> None:
        name = self.get_parameter('record_as').value
        if not name:
            return
        try:
            check_name(name)
        except TrajectoryFileError as error:
            self.get_logger().warning(f'record_as: {error}')
            return
        parameter = Parameter(f'{self.values["trajectory_namespace"]}.{name}',
                              Parameter.Type.BYTE_ARRAY, byte_array_value(goal_to_bytes(goal)))
        future = self._storage().set_parameters([parameter])
        future.add_done_callback(lambda f: self.get_logger().info(
            f'recorded the goal as {name!r}: ' + ('ok' if f.result() and all(
                r.successful for r in f.result().results) else 'FAILED')))

    # --- play by name --------------------------------------------------------------------------

    def _storage(self) -> AsyncParameterClient:
        if self._storage_client is None:
            self._storage_client = AsyncParameterClient(self, self.values['storage_node'])
        return self._storage_client

    async def _load(self, name: str) -> TrajectoryGoal:
        check_name(name)
        client = self._storage()
        if not client.services_are_ready():
            deadline = time.monotonic() + 5.0
            while not client.services_are_ready() and time.monotonic() < deadline:
                await self._sleep(0.1)
            if not client.services_are_ready():
                raise GoalError(PlayCode.CONTROLLER_UNAVAILABLE,
                                f'trajectory storage node {self.values["storage_node"]!r} '
                                'is not available')
        parameter = f'{self.values["trajectory_namespace"]}.{name}'
        response = await client.get_parameters([parameter])
        value = response.values[0] if response and response.values else None
        if value is None or not value.byte_array_value:
            raise GoalError(PlayCode.NOT_FOUND,
                            f'no stored trajectory named {name!r}')
        return goal_from_bytes(bytes(b''.join(value.byte_array_value)
                                     if isinstance(value.byte_array_value, list)
                                     else value.byte_array_value))

    async def _sleep(self, seconds: float) -> None:
        future = Future()
        timer = self.create_timer(seconds, lambda: future.done() or future.set_result(True),
                                  callback_group=self._action_group)
        await future
        self.destroy_timer(timer)

    def _approach(self, goal: TrajectoryGoal) -> TrajectoryGoal:
        """Shift a goal so that it starts with a smooth approach from the current pose."""
        poses = self.core.poses.value if self.core is not None else None
        if poses is None or not goal.points:
            return goal
        view = self.process.view
        names = view.list_all_joints()
        current = dict(zip(names, poses[0].position))
        limits = dict(zip(names, view.velocity_limits()))
        duration = approach_time(goal.first_pose(), current, limits)
        if duration == 0.0:
            return goal
        # the first keyframe moves to t = approach; the controller interpolates from the
        # current pose, which it puts at t = 0
        return goal.shifted(duration - goal.points[0].time)

    async def _play(self, goal_handle):
        try:
            return await self._play_goal(goal_handle)
        except Exception as error:  # noqa: B902 -- a client must always get a reason
            return self._internal_error(goal_handle, PlayTrajectory.Result(), error)

    async def _play_goal(self, goal_handle):
        request = goal_handle.request
        result = PlayTrajectory.Result()
        speed = 1.0 if request.speed_scale == 0 else request.speed_scale
        try:
            if not (MIN_SPEED <= speed <= MAX_SPEED):
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'speed_scale {request.speed_scale} is outside {MIN_SPEED}..'
                                f'{MAX_SPEED} (0 means 1.0)')
            goal = await self._load(request.name)
            if request.backward:
                goal = goal.backward()
            goal = self._approach(goal.scaled(speed))
            executing = self._start(goal)
        except (GoalError, TrajectoryFileError) as error:
            code = int(getattr(error, 'code', ResultCode.INVALID_GOAL))  # file errors: -1
            self.get_logger().warning(f'play {request.name!r} refused: {error}')
            goal_handle.abort()
            result.error_code, result.error_string = code, str(error)
            return result
        self.get_logger().info(f'playing {request.name!r} ({executing.duration:.2f} s)')

        def feedback(handle, executing, sample) -> None:
            handle.publish_feedback(PlayTrajectory.Feedback(
                name=request.name, time_from_start=sample.time_from_start,
                duration=executing.duration,
                progress=min(1.0, sample.time_from_start / max(executing.duration, 1e-9))))
        executing = await self._run(goal_handle, executing, feedback)
        self._finish_handle(goal_handle, executing)
        outcome = executing.outcome
        result.error_code = int(outcome.code) if outcome.status != 'canceled' else \
            int(PlayCode.CANCELED)
        result.error_string = outcome.message
        self.get_logger().info(f'play {request.name!r} {outcome.status}: {outcome.message}')
        return result
