#!/usr/bin/env python3
"""
Clients that load the motion process from another process, for bench/cycle.py and the tests.

    python bench/load_clients.py large NS --points 10000 --count 5 --every 2.0
    python bench/load_clients.py storm NS --count 2000
    python bench/load_clients.py watch NS --seconds 20

``large`` sends FollowJointTrajectory goals of many points to NS/joint_trajectory, each
preempting the one before; ``storm`` sends malformed goals as fast as rclpy can (every one must
come back aborted with an error code); ``watch`` records NS/joint_states. Each prints one JSON
line with what it saw. DDS stays on the loopback.
"""

import argparse
import json
import os
import random
import sys
import threading
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

from action_msgs.msg import GoalStatus  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402


def _spin_quietly(executor):
    try:
        executor.spin()
    except Exception:  # noqa: B902 -- the executor is shut down under the spinning thread
        pass


def _spin(node):
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=_spin_quietly, args=(executor,), daemon=True)
    thread.start()
    return executor, thread


def _stop(executor, thread, node):
    executor.shutdown()
    thread.join(5)
    if node is not None:
        node.destroy_node()


def _goal_client(node, namespace):
    from control_msgs.action import FollowJointTrajectory
    client = ActionClient(node, FollowJointTrajectory,
                          f'/{namespace}/joint_trajectory/follow_joint_trajectory')
    if not client.wait_for_server(timeout_sec=30):
        raise SystemExit('joint_trajectory action server not found')
    return client, FollowJointTrajectory


def robot(robot='sweetie_bot.yaml'):
    """Return (joint names, a safe middle position of each) of the robot description."""
    from sweetie_motion.model import load_robot_description
    model = load_robot_description(robot)
    model.configure()
    lower, upper = model.position_limits()
    middle = np.clip(0.0, np.maximum(lower, -3.0) + 0.1, np.minimum(upper, 3.0) - 0.1)
    return model.list_all_joints(), middle


def large_goal(fjt_type, joints, middle, points, phase):
    """Return a goal of ``points`` points 10 ms apart: a small sine around ``middle``."""
    from sweetie_motion.ros.conversions import seconds_to_duration
    from trajectory_msgs.msg import JointTrajectoryPoint
    goal = fjt_type.Goal()
    goal.trajectory.joint_names = list(joints)
    offsets = 0.1 * np.arange(len(joints))
    rows = []
    for k in range(points):
        t = 0.2 + 0.01 * k
        rows.append(JointTrajectoryPoint(
            positions=(middle + 0.05 * np.sin(t + phase + offsets)).tolist(),
            time_from_start=seconds_to_duration(t)))
    goal.trajectory.points = rows
    return goal


def malformed_goals(fjt_type, joints, count):
    """Return ``count`` goals, each wrong in one of several ways."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectoryPoint

    def point(t, values):
        return JointTrajectoryPoint(positions=values, time_from_start=Duration(
            sec=int(t), nanosec=int((t % 1) * 1e9)))
    kinds = [
        lambda: (['no_such_joint'], [point(0.5, [0.0])]),                       # unknown joint
        lambda: (joints[:2], [point(0.5, [0.0, 0.0]), point(0.2, [0.1, 0.1])]),  # time order
        lambda: (joints[:2], [point(0.5, [0.0])]),                             # wrong count
        lambda: (joints[:2], [point(0.5, [float('nan'), 0.0])]),               # NaN
        lambda: (joints[:2], []),                                              # no points
        lambda: (joints[:1] * 2, [point(0.5, [0.0, 0.0])]),                    # duplicates
    ]
    goals = []
    for k in range(count):
        goal = fjt_type.Goal()
        goal.trajectory.joint_names, goal.trajectory.points = kinds[k % len(kinds)]()
        goals.append(goal)
    return goals


def run_large(namespace, points, count, every):
    node = rclpy.create_node('load_large_goals')
    executor, thread = _spin(node)
    client, fjt = _goal_client(node, namespace)
    joints, middle = robot()
    accepted, unanswered, latencies, results = 0, 0, [], []
    for k in range(count):
        goal = large_goal(fjt, joints, middle, points, phase=k)
        started = time.monotonic()
        future = client.send_goal_async(goal)
        while not future.done() and time.monotonic() < started + 30.0:
            time.sleep(0.001)
        if not future.done():
            unanswered += 1
            continue
        latencies.append(time.monotonic() - started)
        handle = future.result()
        accepted += bool(handle.accepted)
        results.append(handle.get_result_async())
        time.sleep(max(0.0, every - (time.monotonic() - started)))
    deadline = time.monotonic() + 10
    while not all(r.done() for r in results[:-1]) and time.monotonic() < deadline:
        time.sleep(0.01)
    codes = [r.result().result.error_code for r in results if r.done()]
    print(json.dumps({'sent': count, 'accepted': accepted, 'unanswered': unanswered,
                      'points': points, 'answer_s_max': max(latencies, default=float('nan')),
                      'codes': codes}), flush=True)
    _stop(executor, thread, node)


#: goal requests a storm keeps in flight: DDS keeps only the newest 10 requests of a service
#: (rclpy's default service QoS), so a client firing thousands at once loses most of them
STORM_WINDOW = 8
#: how many of the storm's goals have their results checked
RESULT_SAMPLE = 50


def run_storm(namespace, count):
    node = rclpy.create_node('load_storm')
    executor, thread = _spin(node)
    client, fjt = _goal_client(node, namespace)
    goals = malformed_goals(fjt, robot()[0], count)
    started = time.monotonic()
    deadline = started + 120
    step = max(1, count // RESULT_SAMPLE)
    futures, results = [], []

    def ask_result(future, sampled):
        # results of a sample, asked at once as clients do (the server forgets finished
        # goals after its result_timeout); rclpy's client slows down with every goal it tracks
        if sampled and future.result().accepted:
            results.append(future.result().get_result_async())
    for k, goal in enumerate(goals):
        while sum(not f.done() for f in futures[-STORM_WINDOW:]) >= STORM_WINDOW and \
                time.monotonic() < deadline:
            time.sleep(0.0005)
        future = client.send_goal_async(goal)
        future.add_done_callback(lambda f, sampled=k % step == 0: ask_result(f, sampled))
        futures.append(future)
    while not all(f.done() for f in futures) and time.monotonic() < deadline:
        time.sleep(0.01)
    handles = [f.result() for f in futures if f.done()]
    sent_seconds = time.monotonic() - started
    while not all(r.done() for r in results) and time.monotonic() < deadline:
        time.sleep(0.01)
    codes, forgotten = {}, 0
    for r in results:
        if not r.done():
            continue
        if r.result().status == GoalStatus.STATUS_UNKNOWN:
            # asked after the server's result_timeout (a busy client): its default result,
            # error code 0, is no answer about the goal
            forgotten += 1
            continue
        code = r.result().result.error_code
        codes[code] = codes.get(code, 0) + 1
    print(json.dumps({'sent': count, 'answered': len(handles),
                      'accepted': sum(h.accepted for h in handles), 'sample_codes': codes,
                      'forgotten': forgotten, 'sample': len(results),
                      'seconds': sent_seconds}), flush=True)
    _stop(executor, thread, node)


def cycle_status(msg, namespace):
    """Return the key/values of the sync cycle's status in a DiagnosticArray (or None)."""
    for status in msg.status:
        if status.name == f'{namespace}: sync cycle':
            return {kv.key: kv.value for kv in status.values}
    return None


def run_watch(namespace, seconds):
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState
    node = rclpy.create_node('load_watch')
    arrivals, stamps, cycle = [], [], []

    def on_state(msg):
        arrivals.append(time.monotonic())
        stamps.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)

    def on_diagnostics(msg):
        values = cycle_status(msg, namespace)
        if values and 'lost' in values:
            cycle.append(values)
    node.create_subscription(JointState, f'/{namespace}/joint_states', on_state, 100)
    node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
    executor, thread = _spin(node)
    deadline = time.monotonic() + 30
    while not (arrivals and cycle) and time.monotonic() < deadline:
        time.sleep(0.01)
    start = len(cycle)  # the late ticks of every report from here on are the window's
    first = dict(cycle[start - 1]) if start else {}
    print('watching', flush=True)  # the parent starts the load when it sees this line
    if seconds > 0:
        time.sleep(seconds)
    else:
        sys.stdin.read()  # until the parent closes our input: the load is over
    wait = time.monotonic() + 2.5  # one more diagnostics message after the window
    count = len(cycle)
    while len(cycle) == count and time.monotonic() < wait:
        time.sleep(0.01)
    _stop(executor, thread, None)
    last = cycle[-1] if cycle else {}
    lost = int(float(last.get('lost', 0))) - int(float(first.get('lost', 0)))
    stamp_gaps = np.diff(stamps) if len(stamps) > 1 else np.zeros(1)
    arrival_gaps = np.diff(arrivals) if len(arrivals) > 1 else np.zeros(1)
    # each report lists the late ticks since the one before: the window's are all of theirs
    late_ticks = [tuple(float(x) for x in item.split(':'))
                  for values in cycle[start:] for item in values.get('late_ticks', '').split()]
    print(json.dumps({'lost': lost, 'scheduling': last.get('scheduling', '?'),
                      'late_ticks': late_ticks,
                      'late_ticks_lost': int(sum(t[2] for t in late_ticks)),
                      'compute_max': float(last.get('compute_max', 'nan')),
                      'compute_p99': float(last.get('compute_p99', 'nan')),
                      'messages': len(stamps), 'stamp_gap_max': float(stamp_gaps.max()),
                      'arrival_gap_max': float(arrival_gaps.max()),
                      'arrival_gap_p99': float(np.percentile(arrival_gaps, 99))}), flush=True)
    node.destroy_node()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('kind', choices=['large', 'storm', 'watch'])
    parser.add_argument('namespace')
    parser.add_argument('--points', type=int, default=10000)
    parser.add_argument('--count', type=int, default=5)
    parser.add_argument('--every', type=float, default=2.0)
    parser.add_argument('--seconds', type=float, default=20.0,
                        help='watch: how long; 0 = until standard input closes')
    args = parser.parse_args()
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
    if args.kind == 'watch':
        # the measuring instrument must not starve behind the load it measures, DDS threads
        # included (rclpy.init creates them; they inherit this thread's scheduling): else a
        # writer's history (10 messages) overflows while it waits, and the gaps are its own
        from sweetie_motion.core.cycle import set_realtime_priority
        set_realtime_priority(30)
    rclpy.init()
    try:
        if args.kind == 'large':
            run_large(args.namespace, args.points, args.count, args.every)
        elif args.kind == 'storm':
            run_storm(args.namespace, args.count)
        else:
            run_watch(args.namespace, args.seconds)
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
