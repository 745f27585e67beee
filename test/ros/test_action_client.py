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
from rclpy.executors import SingleThreadedExecutor
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
