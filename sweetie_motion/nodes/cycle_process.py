"""
The cycle process: the sync cycle with the controller cores, in a process of its own.

The bringup starts it (``python -m sweetie_motion.nodes.cycle_process IN OUT``, two pipe file
descriptors) and talks to it only through :mod:`sweetie_motion.host`; users never start it by
hand. Besides the cycle it publishes ``joint_states`` and ``joint_states_ref`` itself, from a
plain rclpy node (``sync_cycle`` in the robot namespace) that has nothing to receive: the robot
state keeps flowing whatever the ROS side of the motion process is busy with.

Threads: the cycle (SCHED_FIFO where permitted), the state publisher (SCHED_FIFO one below),
the command loop (main thread) and the event sender. SIGINT is ignored (Ctrl-C reaches the
whole process group; the bringup stops this process in order); the process ends when the
bringup says ``close`` or its pipe closes (the bringup died).
"""

import ctypes
from multiprocessing.connection import Connection
import os
import queue
import signal
import sys
import threading
import time
from typing import List, Optional, Sequence

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time
from sensor_msgs.msg import JointState
from sweetie_motion.conversions import fill_joint_state, joint_state
from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.host.client import HostSettings
from sweetie_motion.host.host import CycleHost, serve, Snapshot
from sweetie_motion.host.transport import Channel, encode_error
from sweetie_motion.model.description import load_robot_description


class JointStatePublisher:
    """
    Publishes the poses of a :class:`Snapshot` on ``joint_states`` and ``joint_states_ref``.

    A thread woken by each tick; each message is stamped with its tick's time on the ROS
    clock, not the (later) publishing time.

    :param node: the node that owns the publishers.
    :param names: the joint names, in RobotModel order.
    :param snapshot: the cycle's snapshot stage.
    """

    def __init__(self, node: Node, names: Sequence[str], snapshot: Snapshot) -> None:
        self.node = node
        self.names = list(names)
        self.snapshot = snapshot
        self.state_publisher = node.create_publisher(JointState, 'joint_states', 10)
        self.reference_publisher = node.create_publisher(JointState, 'joint_states_ref', 10)
        self._running = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self, rate: float, cycle_priority: int = 0) -> None:
        """
        Start publishing at ``rate`` [Hz] at most.

        :param cycle_priority: the cycle's SCHED_FIFO priority; the publisher runs one below
            it (the robot state is part of the real-time path), 0 = normal scheduling.
        """
        self.stop()
        self._running.set()
        priority = max(1, cycle_priority - 1) if cycle_priority > 0 else 0
        self._thread = threading.Thread(target=self._loop, args=(rate, priority),
                                        name='state_publisher', daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (after its current message)."""
        self._running.clear()
        self.snapshot.event.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None

    def destroy(self) -> None:
        """Stop and destroy the publishers."""
        self.stop()
        self.node.destroy_publisher(self.state_publisher)
        self.node.destroy_publisher(self.reference_publisher)

    def _loop(self, rate: float, priority: int) -> None:
        set_realtime_priority(priority)
        interval = 1.0 / rate
        next_time = 0.0
        # the names are set once: assigning a list of strings costs a check per element
        state_msg = joint_state(self.names, np.zeros(0), np.zeros(0))
        ref_msg = joint_state(self.names, np.zeros(0), np.zeros(0))
        clock = self.node.get_clock()
        while self._running.is_set():
            if not self.snapshot.event.wait(0.5):
                continue
            self.snapshot.event.clear()
            now = time.monotonic()
            if now < next_time or not self._running.is_set():
                continue
            next_time = max(next_time + interval, now - interval)
            poses = self.snapshot.poses.value
            if poses is None:
                continue
            measured, reference = poses
            if not self.node.context.ok():
                return
            ros_now = clock.now()
            age = max(0.0, time.monotonic() - reference.stamp)
            stamp = Time(nanoseconds=ros_now.nanoseconds - int(age * 1e9),
                         clock_type=ros_now.clock_type).to_msg()
            state_msg.header.stamp = ref_msg.header.stamp = stamp
            fill_joint_state(state_msg, measured.position, measured.velocity, measured.effort)
            fill_joint_state(ref_msg, reference.position, reference.velocity)
            try:
                self.state_publisher.publish(state_msg)
                self.reference_publisher.publish(ref_msg)
            except Exception as error:  # noqa: B902 -- e.g. the context shutting down
                if self._running.is_set() and self.node.context.ok():
                    self.node.get_logger().warning(f'publishing joint states failed: {error}')


def _die_with_parent() -> None:
    """Ask Linux to send SIGTERM to this process when the bringup dies (belt and braces)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run(requests: Channel, replies: Channel) -> int:
    """Serve one bringup: start from its settings, answer calls until it closes."""
    settings: HostSettings = requests.recv()
    events: 'queue.SimpleQueue[Optional[tuple]]' = queue.SimpleQueue()
    try:
        model = load_robot_description(settings.robot)
        model.configure()
        host = CycleHost(model, settings.period, events.put)
        rclpy.init(args=['sweetie_motion_cycle', *settings.ros_args])
        node = Node(settings.node_name, namespace=settings.namespace or None,
                    start_parameter_services=False,
                    parameter_overrides=[Parameter('start_type_description_service',
                                                   value=False)])
    except Exception as error:  # noqa: B902 -- tell the bringup why, then exit
        replies.send(('failed', f'{type(error).__name__}: {error}'))
        rclpy.try_shutdown()
        return 1
    publisher = JointStatePublisher(node, model.list_all_joints(), host.snapshot)
    host.publisher = publisher

    def send_events() -> None:
        while True:
            event = events.get()
            if event is None:
                return
            try:
                replies.send(('event', event))
            except OSError:
                return
            except Exception as error:  # noqa: B902 -- an event that cannot be pickled
                replies.send(('event', ('call_failed', '', 'event', encode_error(error)[2])))
    sender = threading.Thread(target=send_events, name='host_events', daemon=True)
    sender.start()
    replies.send(('ready', {'pid': os.getpid()}))
    try:
        serve(host, requests, replies, on_close=lambda: None)
    finally:
        host.shutdown()
        publisher.destroy()
        events.put(None)
        sender.join(2.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the cycle process (started by the bringup, not by users)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print('usage: python -m sweetie_motion.nodes.cycle_process IN_FD OUT_FD '
              '(started by sweetie-motion bringup)', file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    requests = Channel(Connection(int(argv[0]), writable=False))
    replies = Channel(Connection(int(argv[1]), readable=False))
    return run(requests, replies)


if __name__ == '__main__':
    sys.exit(main())
