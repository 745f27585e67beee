"""
A window's 100 Hz topics are heard on a lean node of its own, spun apart (BackgroundNode.streams).

What a user sees of it: ``ros2 node list`` shows ``<window's node>_streams`` beside the window's
node, in its namespace, without parameter services; a ``__node`` remap of the window does not
give both nodes one name; messages reach the streams node's subscriptions; closing ends both.
"""

import threading
import time

import pytest
from waiting import wait_for

pytestmark = [pytest.mark.ros]


def node_names(ros, namespace: str):
    """Return the names of the nodes the graph shows in ``namespace``."""
    return {name for name, space in ros.node.get_node_names_and_namespaces()
            if space == namespace}


def test_the_streams_node_is_lean_named_after_the_window_and_hears_the_topic():
    from sensor_msgs.msg import JointState
    from sweetie_motion.ros.background import BackgroundNode
    ros = BackgroundNode('probe_window', ['probe_window', '--ros-args', '-r', '__ns:=/probe',
                                          '-r', '__node:=renamed_window'])
    try:
        streams = ros.streams
        assert streams is ros.streams, 'one streams node per BackgroundNode'
        named = (streams.get_name(), streams.get_namespace())
        assert named == ('renamed_window_streams', '/probe'), named
        wait_for(lambda: {'renamed_window', 'renamed_window_streams'} <= node_names(ros, '/probe'),
                 10.0, message='both nodes in the graph')
        services = {name for name, _ in streams.get_service_names_and_types_by_node(
            'renamed_window_streams', '/probe')}
        assert not services, f'the streams node offers services: {sorted(services)}'
        heard = []
        streams.create_subscription(JointState, '/probe/joint_states', heard.append, 10)
        publisher = ros.node.create_publisher(JointState, '/probe/joint_states', 10)

        def delivered() -> bool:
            publisher.publish(JointState(name=['a'], position=[1.0]))
            return bool(heard)
        wait_for(delivered, 10.0, period=0.05, message='a message on the streams node')
        assert list(heard[0].name) == ['a']
    finally:
        started = time.monotonic()
        ros.close()
    assert time.monotonic() - started < 10.0
    ours = {'probe_window_ros', 'renamed_window_streams'}
    spinning = {t.name for t in threading.enumerate()} & ours
    assert not spinning, f'still spinning after close: {spinning}'
