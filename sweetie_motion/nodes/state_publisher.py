"""
Publishes the cycle's state board on ``joint_states`` and ``joint_states_ref``.

With the cycle in a process of its own (the default), this runs as a third small process,
``python -m sweetie_motion.nodes.state_publisher SETTINGS``, started by the cycle process,
with a node of its own (``cycle_state`` in the robot namespace) that only publishes: rclpy
holds the GIL while it publishes, and neither the cycle nor the ROS side of the motion process
can then make the robot state pause. With the cycle inside the ROS process, the motion node
runs the same loop in a thread.

Each message is stamped with its tick's time on the ROS clock, not the (later) publishing time.
The process ends when the cycle process closes the wake-up pipe (it stopped or died).
"""

import json
import os
import signal
import sys
import threading
import time
from typing import List, Optional, Sequence

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time
from sensor_msgs.msg import JointState
from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.host.cycle_process import die_with_parent
from sweetie_motion.host.state_board import StateBoard, wait_for_tick
from sweetie_motion.ros.conversions import fill_joint_state, joint_state


#: more ticks than this between two publications is reported as a pause
PAUSE_TICKS = 5
#: samples each publisher keeps for reliable readers (1 s at 100 Hz)
HISTORY = 100


class JointStatePublisher:
    """
    Waits for the cycle's signal, reads the state board and publishes the two poses.

    :param node: the node that owns the publishers.
    :param names: the joint names, in RobotModel order.
    :param board: the cycle's state board.
    :param wake_fd: read end of the cycle's wake-up pipe.
    :param wake_write_fd: its write end, where the cycle is in this process (to stop the
        thread between ticks).
    """

    def __init__(self, node: Node, names: Sequence[str], board: StateBoard,
                 wake_fd: int, wake_write_fd: Optional[int] = None) -> None:
        self.node = node
        self.names = list(names)
        self.board = board
        self.wake_fd = wake_fd
        self.wake_write_fd = wake_write_fd
        # a history of one second: a reliable reader that missed samples (its process busy
        # for a moment) gets them resent instead of seeing a gap
        self.state_publisher = node.create_publisher(JointState, 'joint_states', HISTORY)
        self.reference_publisher = node.create_publisher(JointState, 'joint_states_ref',
                                                         HISTORY)
        self._running = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Publish in a thread of this process (the cycle in the same process)."""
        self._running.set()
        self._thread = threading.Thread(target=self.run, name='state_publisher', daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread."""
        self._running.clear()
        if self._thread is not None:
            if self.wake_write_fd is not None:
                try:
                    os.write(self.wake_write_fd, b'!')
                except OSError:
                    pass
            self._thread.join(1.0)
            self._thread = None

    def destroy(self) -> None:
        """Stop and destroy the publishers."""
        self.stop()
        self.node.destroy_publisher(self.state_publisher)
        self.node.destroy_publisher(self.reference_publisher)

    def run(self) -> None:
        """Publish after every signal of the cycle until the pipe closes or stop()."""
        # the names are set once: assigning a list of strings costs a check per element
        state_msg = joint_state(self.names, np.zeros(0), np.zeros(0))
        ref_msg = joint_state(self.names, np.zeros(0), np.zeros(0))
        clock = self.node.get_clock()
        os.set_blocking(self.wake_fd, True)
        in_thread = self._thread is not None
        last_index = None
        while True:
            try:
                if not wait_for_tick(self.wake_fd):
                    return  # the cycle is gone
            except OSError:
                return
            if in_thread and not self._running.is_set():
                return
            ticks = self.board.read_since(last_index)
            if not ticks or not self.node.context.ok():
                continue
            # every tick due since the last round, oldest first: a round held up for a moment
            # catches up instead of leaving a gap in the stream
            first = ticks[0][2]
            if last_index is not None and first - last_index > PAUSE_TICKS:
                # ticks the cycle made that this loop could not publish any more: say so
                self.node.get_logger().warning(
                    f'joint_states paused for {first - last_index} ticks of the cycle',
                    throttle_duration_sec=5.0)
            last_index = ticks[-1][2]
            ros_now = clock.now()
            monotonic_now = time.monotonic()
            for measured, reference, _ in ticks:
                age = max(0.0, monotonic_now - reference.stamp)
                stamp = Time(nanoseconds=ros_now.nanoseconds - int(age * 1e9),
                             clock_type=ros_now.clock_type).to_msg()
                state_msg.header.stamp = ref_msg.header.stamp = stamp
                fill_joint_state(state_msg, measured.position, measured.velocity,
                                 measured.effort)
                fill_joint_state(ref_msg, reference.position, reference.velocity)
                try:
                    self.state_publisher.publish(state_msg)
                    self.reference_publisher.publish(ref_msg)
                except Exception as error:  # noqa: B902 -- e.g. the context shutting down
                    if self.node.context.ok():
                        self.node.get_logger().warning(
                            f'publishing joint states failed: {error}',
                            throttle_duration_sec=10.0)
                    break


def _spin(executor: SingleThreadedExecutor) -> None:
    try:
        executor.spin()
    except Exception:  # noqa: B902 -- the context shuts down under the executor at exit
        pass


def normal_scheduling() -> None:
    """Put the calling thread back to the normal policy (SCHED_OTHER), where it is not."""
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except (OSError, AttributeError):
        pass


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the publisher process (started by the cycle process, not by users)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print('usage: python -m sweetie_motion.nodes.state_publisher SETTINGS_JSON '
              '(started by the cycle process)', file=sys.stderr)
        return 2
    settings = json.loads(argv[0])
    # a publish then only queues the sample: a reader that is slow to acknowledge (a busy
    # subscriber process) never holds this loop up
    os.environ.setdefault('RMW_FASTRTPS_PUBLICATION_MODE', 'ASYNCHRONOUS')
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the cycle process ends us (pipe closed)
    die_with_parent()
    # started by the cycle process's real-time command thread: this process inherited its
    # policy; DDS must make its threads with the normal one (see below)
    normal_scheduling()
    try:
        board = StateBoard(settings['board'], len(settings['joints']))
    except FileNotFoundError:
        return 0   # the cycle process ended (the bringup stopped) before this one started
    # mapped by both processes now: the file can go, and a process killed later leaves none
    board.unlink()
    # no rclpy signal handlers: this process ignores SIGINT and dies of SIGTERM (its parent's
    # death); rclpy's handler thread, still running when the process exited, printed
    # 'terminate called without an active exception' after a bringup that did not start
    rclpy.init(args=['sweetie_motion_state', *settings['ros_args']],
               signal_handler_options=SignalHandlerOptions.NO)
    node = Node(settings['node_name'], namespace=settings['namespace'] or None,
                parameter_overrides=[Parameter('start_type_description_service', value=False)])
    # its parameter services (ros2 param on every node) answer from a thread of their own;
    # it waits in rcl without the GIL, so the publishing loop does not notice it
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=_spin, args=(executor,), name='parameters', daemon=True)
    spinner.start()
    # Only the publishing loop is real-time, and only from here on: the threads DDS made above
    # (discovery, receive, the asynchronous writer) and the parameter spinner keep the normal
    # policy. Made real-time with the process, they ran each participant's discovery above
    # every ordinary process: each command typed beside the robot (a new participant), each
    # play (new action endpoints) took the CPU from whatever real-time work sits below this
    # priority — servo simulators, or a machine's other real-time tasks — for up to tenths of
    # a second, which showed as lines falling silent around commands.
    set_realtime_priority(settings['priority'])
    try:
        JointStatePublisher(node, settings['joints'], board, settings['wake_fd']).run()
    finally:
        executor.shutdown(timeout_sec=1.0)
        # a thread still inside rclpy's wait at exit aborted the process ('terminate called
        # without an active exception') when the bringup stopped right after it started
        spinner.join(2.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
