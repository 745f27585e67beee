"""
A running motion process as a backend of motion programs (``program run``, the console).

:class:`ArmClient` is a :class:`~sweetie_motion.ros.motion_client.MotionClient` that also
moves a chain's tip along Cartesian paths (the ``cartesian`` node's CartesianMotion action),
drives the gripper (the ``gripper`` node's service) and follows the joint reference
(``joint_states_ref``): it implements :class:`~sweetie_motion.cartesian.runner.MotionBackend`,
so a :class:`~sweetie_motion.cartesian.runner.ProgramRunner` runs programs on the robot.
Joint moves go to the trajectory controller as they are (R-CART-2), once the motion checks
passed their path as the offline planner plans it (every link against the arm and the chain's
forbidden zones; the controller itself checks only the robot's own links).
"""

import threading
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.limiter import WorkspaceLimiter
from sweetie_motion.cartesian.plan_checks import PathChecks
from sweetie_motion.cartesian.runner import OfflineBackend, WaypointFailure
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.ros.motion_client import ClientError, MotionClient, MotionResult
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint


class ArmClient(MotionClient):
    """
    Drive the chain ``chain`` of the motion process in ``namespace``.

    :param model: the configured robot model of that process.
    :param cartesian: the Cartesian motion node's name; :param gripper: the gripper node's.
    :param streams: the node that hears ``joint_states_ref`` (100 Hz): a node spun apart
        (:attr:`~sweetie_motion.ros.background.BackgroundNode.streams`); None: the client's.
    Other parameters: see :class:`MotionClient`.
    """

    def __init__(self, namespace: str, model: RobotModel, chain: str = 'arm',
                 cartesian: str = 'cartesian', gripper: str = 'gripper', streams: Any = None,
                 **kwargs) -> None:
        super().__init__(namespace, **kwargs)
        from sweetie_motion.ros.action_client import ActionClient
        from sensor_msgs.msg import JointState
        from sweetie_motion_msgs.action import CartesianMotion
        from sweetie_motion_msgs.srv import Gripper
        self.model = model
        self.chain = chain
        self.joints = model.list_joints(chain)
        self._workspace = WorkspaceLimiter.from_config(
            model.get_chain_property(chain, 'workspace'), f'chains.{chain}.workspace')
        self._checks: Optional[PathChecks] = None
        self._cartesian_type = CartesianMotion
        self._gripper_type = Gripper
        self._cartesian = ActionClient(self.node, CartesianMotion,
                                       f'{self.ns}/{cartesian}/cartesian_motion',
                                       pendant=self.pendant)
        self._gripper = self.node.create_client(Gripper, f'{self.ns}/{gripper}/command')
        self._reference: Optional[np.ndarray] = None
        self._reference_lock = threading.Lock()

        def on_reference(msg) -> None:
            index = {n: i for i, n in enumerate(msg.name)}
            if all(j in index for j in self.joints):
                with self._reference_lock:
                    self._reference = np.array([msg.position[index[j]] for j in self.joints])
        self._subscription = (self.node if streams is None else streams).create_subscription(
            JointState, f'{self.ns}/joint_states_ref', on_reference, 10)

    # --- the MotionBackend interface -------------------------------------------------------------

    def joint_positions(self) -> np.ndarray:
        """Return the chain's joints of the newest reference (waits for one)."""
        deadline = time.monotonic() + self.timeout
        while True:
            with self._reference_lock:
                if self._reference is not None:
                    return self._reference.copy()
            if time.monotonic() > deadline:
                raise ClientError(f'no joint_states_ref from {self.ns}: is the motion process '
                                  'running?')
            time.sleep(0.01)

    def tool_pose(self) -> Pose:
        """Return the pose of the chain's tip in the reference now."""
        return Pose.from_matrix(self.model.forward_kinematics(self.chain,
                                                              self.joint_positions()))

    def move_joints(self, target: np.ndarray, speed: Optional[np.ndarray],
                    override: float = 1.0) -> str:
        """
        Move the chain's joints to ``target`` on the trajectory controller.

        The move is timed for ``speed`` [rad/s] (default: each joint's limit) times
        ``override``; the controller keeps it within the acceleration limits.

        :raises ClientError: the move failed (the controller's reason).
        :raises CheckViolation: a link would enter another or a forbidden zone (nothing moved).
        """
        current = self.joint_positions()
        if self._checks is None:
            self._checks = PathChecks(self.model, self.chain, self._workspace)
        OfflineBackend(self.model, self.chain, current, workspace=self._workspace,
                       checks=self._checks).move_joints(np.asarray(target, dtype=float),
                                                        speed, override)
        limits = self.model.joint_limits().take(self.model.get_chain_indices(self.chain))
        velocity = limits.velocity if speed is None else np.minimum(speed, limits.velocity)
        duration = float(np.max(np.abs(np.asarray(target) - current) / (velocity * override),
                                initial=0.0))
        goal = TrajectoryGoal(list(self.joints), [
            TrajectoryPoint(max(duration, 0.05), [float(v) for v in target], [], [], [])])
        return self._outcome(self.execute(goal), 'joint move')

    def move_linear(self, waypoints: List[Pose], radii: List[float],
                    speeds: List[Optional[float]], override: float = 1.0,
                    heading: Optional[Callable[[int], None]] = None,
                    stop_after: int = 0) -> str:
        """
        Move the tool from the current pose (``waypoints[0]``) through the others.

        ``heading`` gets the index (in ``waypoints``) of the waypoint the tool heads for, from
        the action's feedback (in the client's executor thread); ``stop_after`` > 0 runs only
        the part up to the stop at ``waypoints[stop_after]`` of the path planned whole.

        :raises WaypointFailure: planning failed at a waypoint (its index in ``waypoints``).
        :raises ClientError: refused or failed otherwise (the Cartesian node's reason).
        """
        from sweetie_motion.ros.conversions import pose_to_msg
        self.discover(self._cartesian.server_is_ready, 'Cartesian motion action')
        goal = self._cartesian_type.Goal(chain=self.chain, start_from_current=True,
                                         speed_scale=float(override),
                                         stop_after=int(stop_after))
        goal.waypoints = [pose_to_msg(p) for p in waypoints[1:]]
        goal.blend_radii = [float(r) for r in radii[1:]]
        goal.speeds = [float(v or 0.0) for v in speeds[1:]]

        def on_feedback(message) -> None:
            if heading is not None and message.feedback.waypoint >= 0:
                # waypoints[0] (the current pose) is not in the goal
                heading(message.feedback.waypoint + 1)
        result = self._run_goal(self._cartesian, goal, 'Cartesian motion',
                                feedback=on_feedback)
        if not result.succeeded and result.failed_waypoint >= 0:
            # waypoints[0] (the current pose) is not in the goal
            raise WaypointFailure(result.failed_waypoint + 1,
                                  f'linear move failed ({result.error_code}): '
                                  f'{result.error_string}')
        return self._outcome(result, 'linear move')

    def gripper(self, action: str) -> str:
        """Clamp, release or hold; return the gripper's state."""
        self.discover(self._gripper.service_is_ready, 'gripper')
        response = self._wait(self._gripper.call_async(
            self._gripper_type.Request(command=action)), f'gripper {action}')
        if not response.success:
            raise ClientError(response.message)
        return f'gripper {response.state}'

    def wait(self, seconds: float) -> str:
        """Wait ``seconds`` (a stop ends the wait)."""
        if self._interrupt.wait(seconds):
            raise ClientError('stopped while waiting')
        return f'waited {seconds:g} s'

    def readiness(self) -> Dict[str, bool]:
        """Return, per part of the motion process the arm uses, whether it answers now."""
        ready = super().readiness()
        ready.update(cartesian_motion=self._cartesian.server_is_ready(),
                     gripper=self._gripper.service_is_ready())
        return ready

    # --- plumbing --------------------------------------------------------------------------------

    @staticmethod
    def _outcome(result: MotionResult, what: str) -> str:
        if not result.succeeded:
            raise ClientError(f'{what} failed ({result.error_code}): {result.error_string}')
        return result.error_string
