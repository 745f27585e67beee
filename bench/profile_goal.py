#!/usr/bin/env python3
"""
Where the time goes when a client sends a goal, and how long each step holds the GIL.

    .venv/bin/python bench/profile_goal.py [--points 10000]

For one FollowJointTrajectory goal of POINTS x 32 joints it times every step the motion process
takes (rclpy's conversions, our checks, the spline, the hand-over to the cycle process) and,
with a thread that wants the GIL every millisecond, the longest time each step kept that thread
waiting: what a cycle thread in the same process would lose. Then the cost per malformed goal,
per published JointState and per wake-up of the executor. The figures feed
docs/cycle_timing.md. No process of the motion process is started; DDS is not used.
"""

import argparse
import gc
from multiprocessing.connection import Pipe
import os
import sys
import threading
import time

os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
import numpy as np  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from sweetie_motion.controllers.goals import GoalPlanner  # noqa: E402, I100
from sweetie_motion.controllers.joint_trajectory import StartGoal  # noqa: E402
from sweetie_motion.core.ports import JointVector  # noqa: E402
from sweetie_motion.host.transport import Channel  # noqa: E402
from sweetie_motion.model import load_robot_description  # noqa: E402
from sweetie_motion.ros.conversions import goal_arrays_from_msg, goal_from_msg  # noqa: E402
from sweetie_motion.trajectory.tolerances import ToleranceDefaults  # noqa: E402
from sweetie_motion.trajectory.validation import GoalError, validate_goal  # noqa: E402
from load_clients import large_goal  # noqa: E402, I100


class GilProbe:
    """A thread that asks for the GIL every millisecond and records how late it gets it."""

    def __init__(self):
        self.gaps = []
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        last = time.perf_counter()
        while self._running:
            time.sleep(0.001)
            now = time.perf_counter()
            self.gaps.append(now - last - 0.001)
            last = now

    def measure(self, function, repeat=3):
        """Return (best seconds, longest wait of the probe [s]) of ``function``, and its value."""
        best, worst, value = float('inf'), 0.0, None
        for _ in range(repeat):
            time.sleep(0.02)
            self.gaps.clear()
            started = time.perf_counter()
            value = function()
            best = min(best, time.perf_counter() - started)
            time.sleep(0.003)
            worst = max(worst, max(self.gaps, default=0.0))
        return best, worst, value

    def stop(self):
        self._running = False
        self._thread.join()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=int, default=10000)
    args = parser.parse_args()
    sys.setswitchinterval(0.0005)  # as in the motion process
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    view = model.view()
    joints = model.list_all_joints()
    lower, upper = view.position_limits()
    middle = np.clip(0.0, np.maximum(lower, -3.0) + 0.1, np.minimum(upper, 3.0) - 0.1)
    planner = GoalPlanner('joint_trajectory', view, view.list_chains() + ['eyes'],
                          ToleranceDefaults())
    pose = JointVector(middle.copy(), np.zeros(len(joints)), np.zeros(len(joints)))
    probe = GilProbe()
    rows = []

    def step(label, function, repeat=3):
        seconds, hold, value = probe.measure(function, repeat)
        rows.append((label, seconds, hold))
        return value

    print(f'one goal of {args.points} points x {len(joints)} joints (best of 3; longest GIL '
          'wait of a thread that wants it every 1 ms)\n')
    goal = step('client: build the message (rclpy message objects)',
                lambda: large_goal(FollowJointTrajectory, joints, middle, args.points, 0.0), 1)
    blob = step('rclpy: serialize (a client sending it; a publisher)',
                lambda: serialize_message(goal))
    message = step('rclpy: deserialize into Python objects (every take)',
                   lambda: deserialize_message(blob, FollowJointTrajectory.Goal))
    old = step('before: goal_from_msg -> TrajectoryGoal (per-point lists)',
               lambda: goal_from_msg(message))
    step('before: validate_goal point by point', lambda: validate_goal(old, view))
    step('before: np.array of the nested lists',
         lambda: np.array([p.positions for p in old.points]))
    arrays = step('now: goal_arrays_from_msg (array rows joined in C)',
                  lambda: goal_arrays_from_msg(message))
    step('now: validate_goal on the arrays (numpy)', lambda: validate_goal(arrays, view))
    plan = step('now: GoalPlanner.plan (validation, spline, speed check)',
                lambda: planner.plan(arrays, lambda: (pose, pose)))
    out_end, in_end = Pipe()
    sender, receiver = Channel(in_end), Channel(out_end)
    received = []
    reader = threading.Thread(target=lambda: received.append(receiver.recv()))

    def hand_over():
        received.clear()
        thread = threading.Thread(target=lambda: received.append(receiver.recv()))
        thread.start()
        sender.send(('call', 1, StartGoal('joint_trajectory', b'id', plan)))
        thread.join()
        return received[0]
    del reader
    step('now: hand the plan to the cycle process (pickle + memory-mapped arrays)', hand_over)
    size = plan.spline.coefficients.nbytes
    step('dropping the message objects', lambda: message.trajectory.points.clear(), 1)
    step('gc.collect() with the goal alive', gc.collect, 1)
    probe_rows = list(rows)
    rows.clear()

    malformed = FollowJointTrajectory.Goal()
    malformed.trajectory.joint_names = ['joint11', 'joint12']
    malformed.trajectory.points = [JointTrajectoryPoint(
        positions=[0.0, 0.0], time_from_start=Duration(sec=0, nanosec=500_000_000)),
        JointTrajectoryPoint(positions=[0.1, 0.1], time_from_start=Duration(sec=0,
                                                                            nanosec=200_000_000))]

    def refuse_malformed():
        try:
            planner.plan(goal_arrays_from_msg(malformed), lambda: (pose, pose))
        except GoalError:
            pass
    count = 2000
    seconds, hold, _ = probe.measure(lambda: [refuse_malformed() for _ in range(count)], 1)
    probe.stop()

    publish, wakeup = ros_costs()
    width = max(len(label) for label, _, _ in probe_rows) + 2
    print(f'{"step":{width}s}{"time":>12s}{"GIL wait":>12s}')
    for label, seconds_, hold_ in probe_rows:
        print(f'{label:{width}s}{seconds_ * 1e3:9.1f} ms{hold_ * 1e3:9.1f} ms')
    print(f'\nspline handed over: {size / 1e6:.1f} MB of coefficients, serialized message '
          f'{len(blob) / 1e6:.1f} MB')
    print(f'{count} malformed goals (times out of order), our part: {seconds * 1e3:.0f} ms in '
          f'all, {seconds / count * 1e6:.0f} us each, longest GIL wait {hold * 1e3:.1f} ms')
    print(f'publishing one 32-joint JointState (fill + publish, no subscriber): '
          f'{publish * 1e6:.0f} us')
    for entities, seconds_ in wakeup:
        print(f'one executor wake-up with {entities} services waiting (the wait set rebuilt in '
              f'Python): {seconds_ * 1e6:.0f} us of CPU')
    return 0


def ros_costs():
    """Return (seconds per JointState publish, [(services, CPU seconds per wake-up)])."""
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool
    from sweetie_motion.nodes.executor import MotionExecutor
    from sweetie_motion.ros.conversions import fill_joint_state, joint_state
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = Node('profile_costs', context=context)
        publisher = node.create_publisher(JointState, 'profile_joint_states', 10)
        msg = joint_state([f'j{k}' for k in range(32)], np.zeros(0), np.zeros(0))
        values = np.zeros(32)
        started = time.perf_counter()
        for _ in range(2000):
            fill_joint_state(msg, values, values, values)
            publisher.publish(msg)
        publish = (time.perf_counter() - started) / 2000
        wakeups = []
        for services in (10, 100):
            waiting = Node(f'profile_wait_{services}', context=context)
            for k in range(services):
                waiting.create_service(SetBool, f'profile_service_{services}_{k}',
                                       lambda request, response: response)
            ticks = []
            waiting.create_timer(0.005, lambda: ticks.append(1))
            executor = MotionExecutor(num_threads=2, context=context)
            executor.add_node(waiting)
            thread = threading.Thread(target=executor.spin, daemon=True)
            thread.start()
            time.sleep(0.5)
            cpu, count = time.process_time(), len(ticks)
            time.sleep(3.0)
            wakeups.append((services, (time.process_time() - cpu) / max(1, len(ticks) - count)))
            executor.shutdown()
            thread.join(5)
            waiting.destroy_node()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return publish, wakeups


if __name__ == '__main__':
    sys.exit(main())
