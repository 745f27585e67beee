"""
A sweetie_motion ManagedNode that publishes only while active, driven from another process.

Usage: python lifecycle_talker.py NODE_NAME
"""

import sys

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from std_msgs.msg import String
from sweetie_motion.nodes.lifecycle import ManagedNode


class Talker(ManagedNode):
    """Creates its publisher on configure, talks while active, releases it on cleanup."""

    def __init__(self, name):
        super().__init__(name)
        self.publisher = None
        self.timer = None
        self.count = 0

    def on_configure(self, state):
        self.publisher = self.create_lifecycle_publisher(String, 'chatter', 10)
        self.timer = self.create_timer(0.05, self.tick)
        return TransitionCallbackReturn.SUCCESS

    def tick(self):
        self.count += 1
        self.publisher.publish(String(data=f'{self.get_name()} {self.count}'))

    def on_cleanup(self, state):
        self.destroy_timer(self.timer)
        self.destroy_lifecycle_publisher(self.publisher)
        self.publisher = self.timer = None
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        return TransitionCallbackReturn.SUCCESS


def main():
    rclpy.init()
    node = Talker(sys.argv[1])
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
