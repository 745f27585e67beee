"""
The Cartesian motion node: ``~/cartesian_motion`` (sweetie_motion_msgs/action/CartesianMotion).

A goal's waypoints are planned by :class:`~sweetie_motion.cartesian.planner.CartesianPlanner`
(path, profile, forbidden zones, inverse kinematics sample by sample, joint limits) from the
cycle's current reference, and the joint trajectory is executed by the FollowJointTrajectory
controller named by ``controller`` (a node of this process, through its action: tolerances,
preemption, cancel and the safety stage apply as to any goal). A motion that cannot be planned
is refused before anything moves, with the result code of the stage that failed and a message
naming the waypoint, segment, time, zone or joint. Joint-space commands go to the trajectory
controller directly (R-CART-2).
"""

import math
import traceback
from typing import Dict, List, Optional, Tuple

from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from sweetie_motion.cartesian.limiter import WorkspaceLimiter
from sweetie_motion.cartesian.plan_checks import PathChecks
from sweetie_motion.cartesian.planner import (
    CartesianCode, CartesianPlan, CartesianPlanner, CartesianRequest, code_of, POLICIES,
)
from sweetie_motion.cartesian.runner import failed_waypoint
from sweetie_motion.controllers.pendants import Lapse
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.host.client import HostClient
from sweetie_motion.nodes.lifecycle import ManagedNode
from sweetie_motion.nodes.pendant_watch import PendantWatch
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.parameters import ParameterError, ParameterSpec
from sweetie_motion.ros.action_client import ActionClient
from sweetie_motion.ros.conversions import goal_to_msg, pose_from_msg, pose_to_msg
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion_msgs.action import CartesianMotion


class CartesianGoalError(SweetieMotionError):
    """
    A Cartesian goal is refused: the result code and the message for the client.

    :param failed_waypoint: the index (in the goal's waypoints) of the waypoint planning failed
        at, -1 if it is not at one.
    """

    def __init__(self, code: int, message: str, failed_waypoint: int = -1) -> None:
        self.code = int(code)
        self.failed_waypoint = int(failed_waypoint)
        super().__init__(message)


def goal_radii_and_speeds(request, count: int) -> Tuple[list, list]:
    """
    Check a goal's numbers; return its blend radius and its speed (None: the limits') per waypoint.

    :raises CartesianGoalError: a negative or non-finite number, a list of the wrong length.
    """
    numbers = {'blend_radius': request.blend_radius, 'max_velocity': request.max_velocity,
               'max_acceleration': request.max_acceleration, 'max_jerk': request.max_jerk,
               'speed_scale': request.speed_scale}
    for name, value in numbers.items():
        if not math.isfinite(value) or value < 0:
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     f'{name} must be a number >= 0, got {value}')
    if request.speed_scale > 1:
        raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                 f'speed_scale must be within (0, 1] (0 means 1), got '
                                 f'{request.speed_scale}')
    radii = list(request.blend_radii) or [request.blend_radius] * count
    speeds = [v or None for v in request.speeds] or [None] * count
    for name, given in (('blend_radii', radii), ('speeds', speeds)):
        if len(given) != count:
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     f'{name} has {len(given)} values for {count} waypoints')
        if any(v is not None and (not math.isfinite(v) or v < 0) for v in given):
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     f'{name} must be numbers >= 0')
    return radii, speeds


class CartesianMotionNode(ManagedNode):
    """The Cartesian motion action server as a lifecycle node."""

    PARAMETERS = (
        ParameterSpec('chain', '', "The chain whose tip moves; empty: the robot's first chain.",
                      read_only=True),
        ParameterSpec('controller', 'joint_trajectory',
                      'The FollowJointTrajectory controller (a component of this process) that '
                      'executes the planned motions; it must control the chain.',
                      read_only=True),
        ParameterSpec('max_velocity', 0.25, 'Path speed of a goal that gives 0 [m/s].',
                      low=1e-4, high=10.0, dynamic=True),
        ParameterSpec('max_acceleration', 0.5,
                      'Path acceleration of a goal that gives 0 [m/s^2].', low=1e-4,
                      high=100.0, dynamic=True),
        ParameterSpec('max_jerk', 0.0, 'Path jerk of a goal that gives 0 [m/s^3]; 0: the '
                      'trapezoidal profile.', low=0.0, high=10000.0, dynamic=True),
        ParameterSpec('lateral_acceleration', 0.5,
                      'Centripetal acceleration limit on the blends [m/s^2]: a tight blend is '
                      'taken slower; 0: none (the path speed everywhere, as KDL does).',
                      low=0.0, high=100.0, dynamic=True),
        ParameterSpec('angular_speed', 0.0, 'Tool rotation speed limit [rad/s]; 0: the path '
                      'speed divided by 0.1 m.', low=0.0, high=100.0, dynamic=True),
        ParameterSpec('limits.policy', 'retime',
                      "A motion too fast for the joints' velocity or acceleration limits: "
                      'retime (slowed down by the smallest factor that fits; the result says '
                      'so) or refuse (JOINT_LIMITS naming the joint, the time, the segment).',
                      choices=POLICIES, dynamic=True),
        ParameterSpec('max_points', 50000,
                      'Motions sampled into more points are refused (the trajectory '
                      "controller's limits.max_points should not be lower).", low=2,
                      high=10_000_000),
    )

    def __init__(self, process: MotionProcess, name: str = 'cartesian', **kwargs) -> None:
        self.process = process
        super().__init__(name, **kwargs)
        self._group = ReentrantCallbackGroup()
        self._entities: List = []
        self._planner: Optional[CartesianPlanner] = None
        #: the goals executing (their ids) -> why the node stops it ('' : it does not)
        self._executing: Dict[bytes, str] = {}

    @property
    def host(self) -> HostClient:
        """Return the client of the cycle host."""
        return self.process.host

    # --- lifecycle -----------------------------------------------------------------------------

    def configure_component(self) -> None:
        values = self.read_parameters()
        model = self.process.model
        chain = values['chain'] or model.list_chains()[0]
        if chain not in model.list_chains():
            raise ParameterError(f'chain: unknown chain {chain!r} (known: '
                                 f'{", ".join(model.list_chains())})')
        workspace = WorkspaceLimiter.from_config(
            model.get_chain_property(chain, 'workspace'), f'chains.{chain}.workspace')
        self._planner = CartesianPlanner(model, chain, self.process.period, workspace,
                                         values['limits.policy'],
                                         checks=PathChecks(model, chain, workspace))
        controller = f'{values["controller"]}/follow_joint_trajectory'
        self._controller = controller
        self._client = ActionClient(self, FollowJointTrajectory, controller,
                                    callback_group=self._group)
        self._server = ActionServer(
            self, CartesianMotion, '~/cartesian_motion', execute_callback=self._execute,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=self._group)
        # a motion whose client falls silent (a killed console, a crashed script) stops
        watch = PendantWatch(self, self._group, lambda: list(self._executing),
                             self._stop_for_pendant)
        self._entities = [self._client, self._server, watch]
        self.get_logger().info(
            f'chain {chain} ({self._planner.task}), executed by {controller}; '
            f'{len(workspace.zones)} forbidden zone(s), checked against every link')

    def cleanup_component(self) -> None:
        for entity in self._entities:
            entity.destroy()
        self._entities = []
        self._planner = None

    # --- goals ---------------------------------------------------------------------------------

    def plan(self, request) -> CartesianPlan:
        """
        Plan a CartesianMotion goal from the cycle's current reference.

        :raises CartesianGoalError: with the result code and the message for the client.
        """
        planner = self._planner
        if planner is None or self.lifecycle_state != 'active':
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     f'{self.get_name()} is not active '
                                     f'(state {self.lifecycle_state})')
        chain = request.chain or planner.chain
        if chain != planner.chain:
            raise CartesianGoalError(CartesianCode.INVALID_JOINTS,
                                     f'{self.get_name()} moves chain {planner.chain!r}, not '
                                     f'{chain!r}')
        waypoints = self._goal_waypoints(request, chain)
        radii, speeds = goal_radii_and_speeds(request, len(waypoints))
        values = {name: self.get_parameter(name).value for name in (
            'max_velocity', 'max_acceleration', 'max_jerk', 'lateral_acceleration',
            'angular_speed', 'limits.policy', 'max_points')}
        start = self._current(chain)
        if request.start_from_current:
            waypoints.insert(0, planner.tip_pose(start))
            radii.insert(0, 0.0)
            speeds.insert(0, None)
        if len(waypoints) < 2:
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     'a path needs at least 2 waypoints (or 1 with '
                                     'start_from_current)')
        jerk = request.max_jerk or values['max_jerk']
        planner.policy = values['limits.policy']
        try:
            plan = planner.plan(CartesianRequest(
                waypoints, radii, request.max_velocity or values['max_velocity'],
                request.max_acceleration or values['max_acceleration'],
                jerk if jerk > 0 else None,
                values['lateral_acceleration'] or None, values['angular_speed'] or None,
                speeds if any(v is not None for v in speeds) else None,
                override=request.speed_scale or 1.0), start)
        except SweetieMotionError as error:
            index = failed_waypoint(error)
            # the goal's waypoints do not hold the current pose inserted above
            if index is not None and request.start_from_current:
                index -= 1
            raise CartesianGoalError(code_of(error), str(error),
                                     -1 if index is None or index < 0 else index) from None
        except ValueError as error:
            raise CartesianGoalError(CartesianCode.INVALID_GOAL, str(error)) from None
        if request.stop_after:
            if request.stop_after > len(request.waypoints):
                raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                         f'stop_after is {request.stop_after}: there are only '
                                         f'{len(request.waypoints)} waypoints')
            # the goal's waypoints do not hold the current pose inserted above
            plan = plan.until_waypoint(request.stop_after - 1 +
                                       (1 if request.start_from_current else 0))
        if len(plan.times) > values['max_points']:
            raise CartesianGoalError(
                CartesianCode.INVALID_GOAL,
                f'the motion takes {len(plan.times)} samples; {self.get_name()} accepts at '
                f'most {values["max_points"]} (parameter max_points)')
        return plan

    def _feedback_relay(self, goal_handle, plan: CartesianPlan):
        """Return a callback that turns the trajectory controller's feedback into this goal's."""
        feedback = CartesianMotion.Feedback(stage='executing', duration=plan.duration)

        def on_feedback(message) -> None:
            elapsed = message.feedback.desired.time_from_start
            t = elapsed.sec + elapsed.nanosec * 1e-9
            feedback.time_from_start = t
            feedback.progress = min(1.0, t / max(plan.duration, 1e-9))
            # the goal's waypoints do not hold the current pose the path starts from
            feedback.waypoint = plan.heading(t) - (1 if goal_handle.request.start_from_current
                                                   else 0)
            feedback.desired = pose_to_msg(self._planner.tip_pose(
                message.feedback.desired.positions))
            goal_handle.publish_feedback(feedback)
        return on_feedback

    def _conclude(self, goal_handle, result, answer, canceled: bool) -> str:
        """
        End the goal as the trajectory controller's ``answer`` says; return the message.

        A goal stopped because its client is gone is aborted (code CANCELED), one its client
        cancelled is canceled.
        """
        code, message = int(answer.error_code), answer.error_string
        stopped_by = self._executing.get(bytes(goal_handle.goal_id.uuid), '')
        if stopped_by and not goal_handle.is_cancel_requested:
            goal_handle.abort()
            result.error_code = int(CartesianCode.CANCELED)
            message = f'stopped: {stopped_by}; {message}'
        elif canceled and goal_handle.is_cancel_requested:
            goal_handle.canceled()
            result.error_code = int(CartesianCode.CANCELED)
        elif code == 0:
            goal_handle.succeed()
            result.error_code = 0
        else:
            goal_handle.abort()
            result.error_code = code
        return message

    def _goal_waypoints(self, request, chain: str) -> list:
        """
        Return a goal's waypoints as poses in the chain's base frame.

        :raises CartesianGoalError: another frame, or a malformed pose (naming its number).
        """
        base = self.process.model.get_chain_links(chain)[0]
        if request.frame_id not in ('', 'world', base):
            raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                     f'frame_id {request.frame_id!r}: waypoints are given in '
                                     f"the chain's base frame {base!r}")
        waypoints = []
        for number, pose in enumerate(request.waypoints, start=1):
            try:
                waypoints.append(pose_from_msg(pose))
            except ValueError as error:
                raise CartesianGoalError(CartesianCode.INVALID_GOAL,
                                         f'waypoint {number}: {error}') from None
        return waypoints

    def _current(self, chain: str):
        """Return the chain's joints in the cycle's current reference."""
        try:
            poses = self.host.cycle(timeout=2.0).poses()
        except SweetieMotionError as error:
            raise CartesianGoalError(CartesianCode.CONTROLLER_UNAVAILABLE,
                                     f'the motion cycle is unavailable: {error}') from None
        return poses.reference.position[self.process.model.get_chain_indices(chain)]

    def _stop_for_pendant(self, key: bytes, lapse: Lapse) -> None:
        if key in self._executing:
            self._executing[key] = lapse.describe()

    async def _execute(self, goal_handle):
        key = bytes(goal_handle.goal_id.uuid)
        self._executing[key] = ''
        try:
            with self.goal_running():
                return await self._answer(goal_handle)
        finally:
            self._executing.pop(key, None)

    async def _answer(self, goal_handle):
        result = CartesianMotion.Result(failed_waypoint=-1)
        try:
            return await self._execute_goal(goal_handle, result)
        except CartesianGoalError as error:
            self.get_logger().warning(f'Cartesian motion refused ({error.code}): {error}')
            goal_handle.abort()
            result.error_code, result.error_string = error.code, str(error)
            result.failed_waypoint = error.failed_waypoint
            return result
        except Exception as error:  # noqa: B902 -- a client must always get a reason
            self.get_logger().error(f'Cartesian goal failed:\n{traceback.format_exc()}')
            if goal_handle.is_active:
                goal_handle.abort()
            result.error_code = int(CartesianCode.INVALID_GOAL)
            result.error_string = (f'internal error of {self.get_name()}: '
                                   f'{type(error).__name__}: {error}')
            return result

    async def _execute_goal(self, goal_handle, result):
        goal_handle.publish_feedback(CartesianMotion.Feedback(stage='planning', waypoint=-1))
        plan = self.plan(goal_handle.request)
        result.segments = len(plan.path.segments)
        result.length = float(plan.path.length)
        result.duration = plan.duration
        result.samples = len(plan.times)
        described = plan.describe()
        self.get_logger().info(f'Cartesian motion planned: {described}')
        if goal_handle.request.plan_only:
            goal_handle.succeed()
            result.error_string = f'planned (not executed): {described}'
            return result
        if not self._client.wait_for_server(timeout_sec=2.0):
            raise CartesianGoalError(CartesianCode.CONTROLLER_UNAVAILABLE,
                                     f'the trajectory controller {self._controller} '
                                     'does not answer')
        goal = TrajectoryGoal(list(plan.joints), [
            TrajectoryPoint(float(t), q.tolist(), v.tolist(), [], [])
            for t, q, v in zip(plan.times, plan.positions, plan.velocities)])
        handle = await self._client.send_goal_async(
            goal_to_msg(goal), feedback_callback=self._feedback_relay(goal_handle, plan))
        if not handle.accepted:
            raise CartesianGoalError(CartesianCode.CONTROLLER_UNAVAILABLE,
                                     'the trajectory controller did not accept the motion')
        outcome = handle.get_result_async()
        canceled = False
        key = bytes(goal_handle.goal_id.uuid)
        while not outcome.done():
            if (goal_handle.is_cancel_requested or self._executing.get(key)) and not canceled:
                canceled = True
                await handle.cancel_goal_async()
            await self.sleep(0.05, self._group)
        message = self._conclude(goal_handle, result, outcome.result().result, canceled)
        result.error_string = f'{message}; {described}' if message else described
        self.get_logger().info(f'Cartesian motion ended ({result.error_code}): '
                               f'{result.error_string}')
        return result
