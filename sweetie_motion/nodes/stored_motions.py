"""
A trajectory controller's stored motions: play one by name, record the goals it accepts.

``play_trajectory`` (sweetie_motion_msgs/action/PlayTrajectory) loads a trajectory from the
storage node, plays it backward or scaled in time, with a smooth approach from where the robot
is; ``record_as`` stores every accepted FollowJointTrajectory goal (e.g. to keep what MoveIt
planned). Both go through the package's one storage client.
"""

import time
from typing import Any, Callable, ContextManager, List, Mapping, Optional, Protocol, TYPE_CHECKING

from rclpy.callback_groups import CallbackGroup
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.parameter import Parameter
from rclpy.task import Future
from sweetie_motion.controllers.goals import GoalPlan
from sweetie_motion.core.events import Outcome
from sweetie_motion.errors import did_you_mean
from sweetie_motion.host.host import Poses
from sweetie_motion.nodes.process import MotionProcess
from sweetie_motion.ros.conversions import goal_from_msg, goal_to_msg
from sweetie_motion.trajectory.codec import check_name, TrajectoryFileError
from sweetie_motion.trajectory.goal import approached, MAX_SPEED, MIN_SPEED, TrajectoryGoal
from sweetie_motion.trajectory.validation import GoalError, GoalLike, PlayCode, ResultCode
from sweetie_motion_msgs.action import PlayTrajectory

if TYPE_CHECKING:   # for the type only: the client is imported where it is first made
    from sweetie_motion.ros.storage_client import TrajectoryStorageClient


class StartedGoal(Protocol):
    """A goal the controller node handed to the cycle (its ``RunningGoal``)."""

    duration: float
    #: resolved with the goal's :class:`~sweetie_motion.core.events.Outcome`
    done: Future


class TrajectoryControllerNode(Protocol):
    """
    What :class:`StoredMotions` uses of its node: JointTrajectoryNode (nodes/trajectory.py).

    A protocol, not the class: nodes/trajectory.py imports this module.
    """

    values: Mapping[str, Any]
    process: MotionProcess

    def get_parameter(self, name: str) -> Parameter:
        """Return a parameter of the node (rclpy)."""

    def get_logger(self) -> RcutilsLogger:
        """Return the node's logger (rclpy)."""

    async def sleep(self, seconds: float, group: CallbackGroup = None) -> None:
        """Wait without blocking the executor (ManagedNode.sleep)."""

    def goal_running(self) -> ContextManager[None]:
        """Count an execute callback as running inside the block (ManagedNode.goal_running)."""

    def poses(self) -> Poses:
        """Return the cycle's newest poses, as JointTrajectoryNode.poses does."""

    def plan(self, goal: GoalLike) -> GoalPlan:
        """Validate and plan a goal (JointTrajectoryNode.plan)."""

    def start(self, goal_handle: Any, plan: GoalPlan,
              feedback: Callable[[Any, Any, Any], None]) -> StartedGoal:
        """Hand a plan to the cycle (JointTrajectoryNode.start)."""

    def publish_last_goal(self, goal: Any) -> None:
        """Publish a goal on ``~/last_goal`` (JointTrajectoryNode.publish_last_goal)."""

    def finish_handle(self, goal_handle: Any, outcome: Outcome) -> None:
        """End an action goal's handle as its outcome says (JointTrajectoryNode)."""

    def internal_error(self, goal_handle: Any, result: Any, error: Exception) -> Any:
        """Abort a goal that failed inside the node (JointTrajectoryNode.internal_error)."""

    def forget_cancel(self, goal_handle: Any) -> None:
        """Forget a goal's accepted cancel (JointTrajectoryNode.forget_cancel)."""


class StoredMotions:
    """
    Plays stored trajectories by name and records goals, for one trajectory controller node.

    :param node: the controller's JointTrajectoryNode (it plans and starts what is played).
    :param group: the callback group the node's actions run in.
    """

    def __init__(self, node: TrajectoryControllerNode, group: CallbackGroup) -> None:
        self.node = node
        self.group = group
        self._storage_client: Optional['TrajectoryStorageClient'] = None

    def record(self, goal_msg) -> None:
        """Store an accepted goal under ``record_as`` when that parameter is set."""
        node = self.node
        name = node.get_parameter('record_as').value
        if not name:
            return
        try:
            check_name(name)
        except TrajectoryFileError as error:
            node.get_logger().warning(f'record_as: {error}')
            return
        future = self.storage().save_async(name, goal_from_msg(goal_msg))

        def recorded(done) -> None:
            error = done.exception()
            if error is None:
                node.get_logger().info(f'recorded the goal as {name!r}')
            else:
                node.get_logger().warning(f'recording the goal as {name!r} failed: {error}')
        future.add_done_callback(recorded)

    def storage(self) -> 'TrajectoryStorageClient':
        """Return the package's storage client on the node (created on first use)."""
        if self._storage_client is None:
            from sweetie_motion.ros.storage_client import TrajectoryStorageClient
            node = self.node
            self._storage_client = TrajectoryStorageClient(
                node, node.values['storage_node'], node.values['trajectory_namespace'], 5.0)
        return self._storage_client

    async def load(self, name: str) -> TrajectoryGoal:
        """Load a stored trajectory; raise GoalError with the play action's codes."""
        from sweetie_motion.ros.storage_client import (
            StorageError, StorageUnavailableError, TrajectoryNotFoundError,
        )
        check_name(name)
        client = self.storage()
        deadline = time.monotonic() + 5.0
        while not client.ready() and time.monotonic() < deadline:
            # the storage of the same process may come up a moment late
            await self.node.sleep(0.1, self.group)
        try:
            return await client.load_async(name)
        except TrajectoryNotFoundError as error:
            try:
                known = await client.list_async()
            except StorageError:
                known = []
            raise GoalError(PlayCode.NOT_FOUND, f'{error}{did_you_mean(name, known)}') from None
        except StorageUnavailableError as error:
            raise GoalError(PlayCode.CONTROLLER_UNAVAILABLE, str(error)) from None
        except StorageError as error:
            raise GoalError(PlayCode.CONTROLLER_UNAVAILABLE, str(error)) from None

    def approach(self, goal: TrajectoryGoal) -> TrajectoryGoal:
        """Shift a goal so that it starts with a smooth approach from the current pose."""
        view = self.node.process.view
        names = view.list_all_joints()
        return approached(goal, dict(zip(names, self.node.poses().reference.position)),
                          dict(zip(names, view.velocity_limits())))

    def judged(self, name: str, goal: TrajectoryGoal, speed: float,
               backward: bool) -> List[str]:
        """
        Apply the physics' verdict on a stored motion played so (``physics: judge``).

        A verdict known (judged at its save, or at an earlier play) that the robot falls or
        holds a servo at stall refuses the play (``judge: refuse``) or warns; no verdict yet:
        the motion is judged in the background for the next play, and this one does not wait.

        :return: what the result message says of it.
        :raises GoalError: INVALID_GOAL, the physics refuses it.
        """
        judge = self.node.process.judge()
        if judge is None:
            return []
        verdict = judge.verdict(goal, speed, backward)
        if verdict is None:
            judge.submit(name, goal, speed, backward)
            return ['the physics has not judged this motion yet (it does now, for the next play)']
        if not verdict.refused:
            return []
        findings = '; '.join(verdict.findings)
        if self.node.process.model.physics_settings.judge == 'refuse':
            raise GoalError(ResultCode.INVALID_GOAL,
                            f'the physics says the robot cannot do {name!r}: {findings} '
                            f'(`sweetie-motion simulate {name}` shows it)')
        return [f'physics warning: {findings}']

    async def play(self, goal_handle):
        """Execute a PlayTrajectory goal (the action's execute callback)."""
        with self.node.goal_running():
            try:
                return await self._play_goal(goal_handle)
            except Exception as error:  # noqa: B902 -- a client must always get a reason
                return self.node.internal_error(goal_handle, PlayTrajectory.Result(), error)
            finally:
                self.node.forget_cancel(goal_handle)

    async def _play_goal(self, goal_handle):
        node = self.node
        request = goal_handle.request
        result = PlayTrajectory.Result()
        speed = 1.0 if request.speed_scale == 0 else request.speed_scale

        def feedback(handle, running, sample) -> None:
            handle.publish_feedback(PlayTrajectory.Feedback(
                name=request.name, time_from_start=sample.time_from_start,
                duration=running.duration,
                progress=min(1.0, sample.time_from_start / max(running.duration, 1e-9))))
        try:
            if not (MIN_SPEED <= speed <= MAX_SPEED):
                raise GoalError(ResultCode.INVALID_GOAL,
                                f'speed_scale {request.speed_scale} is outside {MIN_SPEED}..'
                                f'{MAX_SPEED} (0 means 1.0)')
            stored = await self.load(request.name)
            notes = self.judged(request.name, stored, speed, request.backward)
            goal = stored.backward() if request.backward else stored
            played = goal.scaled(speed)
            plan = node.plan(self.approach(played))
            plan.notes.extend(notes)
            running = node.start(goal_handle, plan, feedback)
            # `save --last` after a play stores the motion as played (speed, direction)
            node.publish_last_goal(goal_to_msg(played))
        except (GoalError, TrajectoryFileError) as error:
            code = int(getattr(error, 'code', ResultCode.INVALID_GOAL))  # file errors: -1
            node.get_logger().warning(f'play {request.name!r} refused: {error}')
            goal_handle.abort()
            result.error_code, result.error_string = code, str(error)
            return result
        node.get_logger().info(f'playing {request.name!r} ({running.duration:.2f} s)')
        outcome = await running.done
        node.finish_handle(goal_handle, outcome)
        result.error_code = int(outcome.code) if outcome.status != 'canceled' else \
            int(PlayCode.CANCELED)
        result.error_string = outcome.message
        node.get_logger().info(f'play {request.name!r} {outcome.status}: {outcome.message}')
        return result
