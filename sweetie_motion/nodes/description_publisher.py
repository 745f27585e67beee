"""
The robot's URDF on the latched ``robot_description`` topics, where nobody else publishes it.

robot_state_publisher publishes the URDF (std_msgs/String, transient local) on
``robot_description``; tools read it there (rqt_joint_trajectory_controller takes each joint's
slider range from its ``<limit>``). A motion process running without robot_state_publisher
publishes its own URDF on each configured topic that has no publisher once discovery had time
to find one: it never competes with a robot_state_publisher that runs.
"""

from typing import List, Sequence

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

#: how long discovery is given to find another publisher of a topic [s]
DISCOVERY_WAIT = 2.0

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


class DescriptionPublisher:
    """
    Publish ``urdf`` on each of ``topics`` that no other node publishes.

    :param node: the node that publishes (its namespace resolves relative topics).
    :param topics: topic names ('robot_description' is the robot namespace's,
        '/robot_description' the global one).
    :param urdf: the URDF document.
    """

    def __init__(self, node: Node, topics: Sequence[str], urdf: str) -> None:
        self.node = node
        self.urdf = urdf
        self.topics = [node.resolve_topic_name(t) for t in topics]
        #: the topics this process publishes the URDF on (after the discovery wait)
        self.published: List[str] = []
        self._publishers: List = []
        self._timer = node.create_timer(DISCOVERY_WAIT, self._publish) if self.topics else None

    def _publish(self) -> None:
        self._cancel_timer()
        for topic in self.topics:
            if self.node.count_publishers(topic) > 0:
                continue  # robot_state_publisher (or another motion process) has it
            publisher = self.node.create_publisher(String, topic, LATCHED)
            publisher.publish(String(data=self.urdf))
            self._publishers.append(publisher)
            self.published.append(topic)
        if self.published:
            self.node.get_logger().info(f'robot description published on '
                                        f'{", ".join(self.published)}')

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self.node.destroy_timer(self._timer)
            self._timer = None

    def destroy(self) -> None:
        """Stop publishing (the topics' latched value goes with the publishers)."""
        self._cancel_timer()
        for publisher in self._publishers:
            self.node.destroy_publisher(publisher)
        self._publishers = []
        self.published = []
