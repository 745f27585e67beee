"""
Python client API of a running motion process: stored trajectories and playback by name.

    from sweetie_motion.client import MotionClient
    with MotionClient('sweetie_bot') as robot:
        print(robot.names())
        code, message = robot.play('greeting', speed=1.5)

The client owns an rclpy node spun in a background thread (or uses a node you give it, which
you spin). Storage goes through the parameters of the ``trajectory_storage`` node, playback
through the ``play_trajectory`` action and execution through FollowJointTrajectory: the same
plain ROS 2 interfaces any other tool uses.
"""

import threading
import time
from typing import Callable, List, NamedTuple, Optional

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.trajectory.goal import TrajectoryGoal


class MotionResult(NamedTuple):
    """How a motion ended: success flag, the action's error_code and error_string."""

    succeeded: bool
    error_code: int
    error_string: str


class ClientError(SweetieMotionError):
    """The motion process did not answer, or refused a request (the reason is the message)."""


class MotionClient:
    """
    Talk to the motion process in ``namespace``.

    :param node: an rclpy node to use (you spin it); default: an own node in its own thread.
    :param timeout: how long to wait for services and answers [s].
    """

    def __init__(self, namespace: str = 'sweetie_bot', node=None, timeout: float = 15.0,
                 storage_node: str = 'trajectory_storage',
                 trajectory_namespace: str = 'joint_trajectory',
                 play_action: str = 'play_trajectory',
                 controller: str = 'joint_trajectory') -> None:
        import rclpy
        from rclpy.action import ActionClient
        from control_msgs.action import FollowJointTrajectory
        from sweetie_motion_msgs.action import PlayTrajectory
        self.ns = '/' + namespace.strip('/')
        self.timeout = timeout
        self._own = node is None
        self._executor = None
        if self._own:
            from rclpy.context import Context
            from rclpy.executors import SingleThreadedExecutor
            self._context = Context()
            rclpy.init(context=self._context)
            node = rclpy.create_node('sweetie_motion_client', context=self._context)
            self._executor = SingleThreadedExecutor(context=self._context)
            self._executor.add_node(node)
            self._thread = threading.Thread(target=self._executor.spin, daemon=True)
            self._thread.start()
        self.node = node
        from sweetie_motion.storage.client import TrajectoryStorageClient
        self.storage = TrajectoryStorageClient(node, f'{self.ns}/{storage_node}',
                                               trajectory_namespace, timeout)
        self._play = ActionClient(node, PlayTrajectory, f'{self.ns}/{play_action}')
        self._follow = ActionClient(node, FollowJointTrajectory,
                                    f'{self.ns}/{controller}/follow_joint_trajectory')
        self._play_type = PlayTrajectory

    # --- plumbing ------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the node (and its context, if the client created them)."""
        if self._own:
            import rclpy
            self._executor.shutdown()
            self._thread.join(5.0)  # a spinning thread at interpreter exit aborts the process
            self.node.destroy_node()
            rclpy.try_shutdown(context=self._context)

    def __enter__(self) -> 'MotionClient':
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _wait(self, future, what: str, timeout: Optional[float] = None, server=None):
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        gone_since = None
        while not future.done():
            now = time.monotonic()
            if now > deadline:
                raise ClientError(f'no answer from the motion process: {what}')
            if server is not None:
                if server.server_is_ready():
                    gone_since = None
                elif gone_since is None:
                    gone_since = now
                elif now - gone_since > 3.0:
                    raise ClientError(f'the motion process went away during {what}')
            time.sleep(0.01)
        return future.result()

    # --- storage (the package's one storage client) --------------------------------------------

    def _storage(self, call, *args):
        from sweetie_motion.storage.client import StorageError
        try:
            return call(*args, timeout=self.timeout)
        except StorageError as error:
            raise ClientError(str(error)) from None

    def names(self) -> List[str]:
        """Return the names of the stored trajectories."""
        return sorted(self._storage(self.storage.names))

    def load(self, name: str) -> TrajectoryGoal:
        """
        Return a stored trajectory.

        :raises ClientError: unknown name or storage not running.
        """
        return self._storage(self.storage.load, name)

    def save(self, name: str, goal: TrajectoryGoal) -> None:
        """
        Store a trajectory (written to its file before this returns).

        :raises ClientError: with the storage node's reason when refused.
        """
        self._storage(self.storage.save, name, goal)

    def delete(self, name: str) -> None:
        """
        Delete a stored trajectory.

        :raises ClientError: unknown, built-in, or refused.
        """
        self._storage(self.storage.delete, name)

    # --- motion --------------------------------------------------------------------------------

    def play(self, name: str, speed: float = 1.0, backward: bool = False,
             feedback: Optional[Callable[[float, float, float], None]] = None,
             timeout: Optional[float] = None) -> MotionResult:
        """
        Play a stored trajectory by name and wait for the result.

        :param feedback: called with (time_from_start, duration, progress).
        :return: the outcome with PlayTrajectory.Result's error_code and error_string.
        """
        if not self._play.wait_for_server(timeout_sec=self.timeout):
            raise ClientError(f'play_trajectory of {self.ns} is not available')
        goal = self._play_type.Goal(name=name, speed_scale=float(speed), backward=backward)

        def on_feedback(message) -> None:
            if feedback is not None:
                f = message.feedback
                feedback(f.time_from_start, f.duration, f.progress)
        handle = self._wait(self._play.send_goal_async(goal, feedback_callback=on_feedback),
                            f'play {name}')
        if not handle.accepted:
            raise ClientError(f'play {name!r} was rejected')
        result = self._wait(handle.get_result_async(), f'result of {name}',
                            timeout=timeout if timeout is not None else 3600.0,
                            server=self._play)
        return _outcome(result)

    def execute(self, goal: TrajectoryGoal, timeout: Optional[float] = None
                ) -> MotionResult:
        """Execute a goal on the trajectory controller and wait for the outcome."""
        from sweetie_motion.conversions import goal_to_msg
        if not self._follow.wait_for_server(timeout_sec=self.timeout):
            raise ClientError('the trajectory controller is not available')
        handle = self._wait(self._follow.send_goal_async(goal_to_msg(goal)), 'send goal')
        if not handle.accepted:
            raise ClientError('the goal was rejected')
        result = self._wait(handle.get_result_async(), 'goal result',
                            timeout=timeout if timeout is not None else 3600.0,
                            server=self._follow)
        return _outcome(result)

    def last_goal(self, controller: str = 'joint_trajectory') -> TrajectoryGoal:
        """Return the last goal the trajectory controller accepted (e.g. from MoveIt)."""
        from control_msgs.action import FollowJointTrajectory
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sweetie_motion.conversions import goal_from_msg
        box = []
        subscription = self.node.create_subscription(
            FollowJointTrajectory.Goal, f'{self.ns}/{controller}/last_goal', box.append,
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        try:
            deadline = time.monotonic() + self.timeout
            while not box and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            self.node.destroy_subscription(subscription)
        if not box:
            raise ClientError(f'no last goal from {self.ns}/{controller}: it has executed no '
                              'goal yet, or no such controller runs')
        return goal_from_msg(box[0])


def _outcome(response) -> MotionResult:
    from action_msgs.msg import GoalStatus
    succeeded = response.status == GoalStatus.STATUS_SUCCEEDED
    message = response.result.error_string
    if not succeeded and not message:
        message = f'the goal ended with status {response.status} and no reason'
    return MotionResult(succeeded, response.result.error_code, message)
