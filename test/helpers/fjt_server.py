"""
A plain FollowJointTrajectory action server, to prove actions work across processes.

It walks through the goal's points in real time, publishing feedback, and honours cancel.
Usage: python fjt_server.py ACTION_NAME
"""

import sys
import time

from control_msgs.action import FollowJointTrajectory
import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node


def execute(goal_handle):
    """Report each point as feedback at its time; stop early on cancel."""
    goal = goal_handle.request
    start = time.monotonic()
    names = list(goal.trajectory.joint_names)
    for point in goal.trajectory.points:
        due = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
        while time.monotonic() - start < due:
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return FollowJointTrajectory.Result(error_string='canceled')
            time.sleep(0.005)
        feedback = FollowJointTrajectory.Feedback(joint_names=names)
        feedback.desired = point
        goal_handle.publish_feedback(feedback)
    goal_handle.succeed()
    return FollowJointTrajectory.Result(
        error_code=FollowJointTrajectory.Result.SUCCESSFUL,
        error_string=f'{len(goal.trajectory.points)} points')


def main():
    rclpy.init()
    node = Node('fjt_test_server')
    group = ReentrantCallbackGroup()
    ActionServer(node, FollowJointTrajectory, sys.argv[1], execute_callback=execute,
                 goal_callback=lambda goal: GoalResponse.ACCEPT,
                 cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group)
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    print('ready', flush=True)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
