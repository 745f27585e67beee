"""
The package's ActionClient matches a quick response to a request sent from another thread.

rclpy's ActionClient files a request's future only after sending it: a response the spinning
thread takes in between is dropped ("Ignoring unexpected goal response") and the caller waits
for ever. Here the gap is made wide on purpose (the client's handle pauses after each send, as
a preempted thread does on a busy machine), so that the response always comes inside it.
"""

import threading
import time

from control_msgs.action import FollowJointTrajectory
import pytest
import rclpy
from rclpy.action import ActionServer
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from sweetie_motion.ros.action_client import ActionClient
from waiting import wait_for

pytestmark = pytest.mark.ros


class PausingHandle:
    """An action client's handle that pauses after each request it sends (a preempted thread)."""

    def __init__(self, handle, pause: float) -> None:
        self._handle, self._pause = handle, pause

    def __getattr__(self, name):
        attribute = getattr(self._handle, name)
        if not name.startswith('send_'):
            return attribute

        def send(*args):
            sequence = attribute(*args)
            time.sleep(self._pause)   # the response arrives meanwhile
            return sequence
        return send


class LosingHandle:
    """An action client's handle whose goal responses are lost (as Fast DDS's RMW drops them)."""

    def __init__(self, handle) -> None:
        self._handle = handle
        self.lost = 0

    def __getattr__(self, name):
        attribute = getattr(self._handle, name)
        if name != 'take_goal_response':
            return attribute

        def take(*args):
            taken = attribute(*args)
            if all(taken):
                self.lost += 1
            return (None, None)
        return take


@pytest.fixture
def node():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node('action_client_race', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield node
    executor.shutdown(timeout_sec=5.0)
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    thread.join(5.0)


def test_a_goal_its_result_and_its_cancel_are_answered_though_the_answer_comes_first(node):
    def execute(handle):
        handle.succeed()
        return FollowJointTrajectory.Result(error_string='done')
    server = ActionServer(node, FollowJointTrajectory, 'race', execute_callback=execute)
    client = ActionClient(node, FollowJointTrajectory, 'race')
    assert client.wait_for_server(timeout_sec=10)
    client._client_handle = PausingHandle(client._client_handle, 0.3)
    for _ in range(3):
        sent = client.send_goal_async(FollowJointTrajectory.Goal())   # from this thread
        handle = wait_for(lambda: sent.done() and sent.result(), 10,
                          message='the goal response (dropped as unexpected?)')
        assert handle.accepted
        result = handle.get_result_async()
        wait_for(result.done, 10, message='the result response')
        assert result.result().result.error_string == 'done'
        cancel = handle.cancel_goal_async()   # of an ended goal: answered all the same
        wait_for(cancel.done, 10, message='the cancel response')
    server.destroy()
    client.destroy()


def test_a_goal_whose_response_is_lost_is_taken_as_accepted_from_the_status_topic(node):
    finish = threading.Event()

    def execute(handle):
        finish.wait(10)
        handle.succeed()
        return FollowJointTrajectory.Result(error_string='done')
    # the server spins apart: its execute callback holds a thread while the goal runs
    server_node = Node('action_server_apart', context=node.context)
    executor = MultiThreadedExecutor(num_threads=2, context=node.context)
    executor.add_node(server_node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    server = ActionServer(server_node, FollowJointTrajectory, 'lost', execute_callback=execute)
    client = ActionClient(node, FollowJointTrajectory, 'lost')
    assert client.wait_for_server(timeout_sec=10)
    losing = LosingHandle(client._client_handle)
    client._client_handle = losing
    sent = client.send_goal_async(FollowJointTrajectory.Goal())
    handle = wait_for(lambda: sent.done() and sent.result(), 10,
                      message='the goal taken as accepted from the status topic')
    assert handle.accepted
    wait_for(lambda: losing.lost == 1, 10, message='the goal response taken (and lost)')
    cancel = handle.cancel_goal_async()
    wait_for(cancel.done, 10, message='the cancel response')
    finish.set()
    result = handle.get_result_async()
    wait_for(result.done, 10, message='the result response')
    assert result.result().result.error_string == 'done'
    server.destroy()
    client.destroy()
    executor.shutdown(timeout_sec=5.0)
    server_node.destroy_node()
    spinning.join(5.0)


def test_a_stop_while_a_goal_awaits_its_acceptance_cancels_it_once_accepted(node):
    """MotionClient.stop() before the sending thread took the acceptance (the robot may move)."""
    from rclpy.action import CancelResponse, GoalResponse
    from sweetie_motion.ros.motion_client import ClientError, MotionClient
    from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
    arrived, cancelled, ended = threading.Event(), threading.Event(), threading.Event()

    def slow_acceptance(goal):
        arrived.set()
        time.sleep(1.0)   # the stop comes meanwhile
        return GoalResponse.ACCEPT

    def execute(handle):
        deadline = time.monotonic() + 10.0
        while not handle.is_cancel_requested and time.monotonic() < deadline:
            time.sleep(0.01)
        if handle.is_cancel_requested:
            cancelled.set()
            handle.canceled()
        else:
            handle.succeed()
        ended.set()
        return FollowJointTrajectory.Result()
    server_node = Node('slow_server', namespace='/acceptance', context=node.context)
    executor = MultiThreadedExecutor(num_threads=3, context=node.context)
    executor.add_node(server_node)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    server = ActionServer(server_node, FollowJointTrajectory,
                          '/acceptance/joint_trajectory/follow_joint_trajectory',
                          execute_callback=execute, goal_callback=slow_acceptance,
                          cancel_callback=lambda handle: CancelResponse.ACCEPT)
    client = MotionClient('acceptance', node=node, pendant=False, timeout=10.0)
    outcome = []

    def run() -> None:
        try:
            outcome.append(client.execute(TrajectoryGoal(['joint1'], [
                TrajectoryPoint(5.0, [0.5], [], [], [])])))
        except ClientError as error:
            outcome.append(error)
    sending = threading.Thread(target=run)
    sending.start()
    try:
        assert arrived.wait(10), 'the goal did not reach the server'
        client.stop()
        sending.join(10)
        assert outcome and isinstance(outcome[0], ClientError), outcome
        assert ended.wait(5), 'the goal ran on after the stop'
        assert cancelled.is_set(), 'the goal accepted after the stop was not cancelled'
    finally:
        sending.join(10)
        server.destroy()
        executor.shutdown(timeout_sec=5.0)
        server_node.destroy_node()
        spinning.join(5.0)
