"""A client knows when the motion process hears its pendant, before it moves the robot."""

import threading
import time

import pytest
from waiting import wait_for

pytestmark = pytest.mark.ros


def test_a_pendant_is_heard_once_the_named_watch_takes_its_heartbeats():
    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from sweetie_motion.ros.pendant import Pendant, PENDANT_QOS
    from sweetie_motion_msgs.msg import Pendant as PendantMsg
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(context=context)
    client = rclpy.create_node('heard_client', context=context)
    executor.add_node(client)
    pendant = Pendant(client, '/heard_ns', 'the client')
    try:
        # nobody listens yet: not heard, and the wait ends at its timeout
        started = time.monotonic()
        assert not pendant.wait_heard(['follow_joint_state'], 0.5)
        assert time.monotonic() - started >= 0.5
        watch = rclpy.create_node('follow_joint_state', namespace='heard_ns', context=context)
        taken = []
        watch.create_subscription(PendantMsg, '/heard_ns/pendant', taken.append, PENDANT_QOS)
        executor.add_node(watch)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        assert pendant.wait_heard(['follow_joint_state'], 10.0)
        # acknowledged by the watch's reader: its node takes it at its next spin
        wait_for(lambda: any(m.client == 'the client' for m in list(taken)), 5, period=0.02,
                 message='the heartbeat taken')
        # every watch named must be there
        assert not pendant.wait_heard(['follow_joint_state', 'joint_trajectory'], 0.3)
    finally:
        pendant.destroy()
        executor.shutdown()
        rclpy.shutdown(context=context)
