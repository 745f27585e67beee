#!/usr/bin/env python3
"""
Benchmarks of stored motions, each against a simple baseline measured in the same run.

    .venv/bin/python bench/trajectory.py [--quick]

1. latency: a FollowJointTrajectory goal accepted -> first changed joint_states_ref, in cycles,
   against a JointState sent to FollowJointState (the topic path), over real DDS;
2. spline build for 200 points x 32 joints: ours (akima, Hermite, quintic) against scipy's
   CubicSpline built per joint and built for all joints at once;
3. sampling cost per cycle (position + velocity of 32 joints): ours against scipy;
4. loading 1000 stored trajectories: the trajectory_storage node configured (files -> checked
   goals -> BYTE_ARRAY parameters), on a normal start (load cache valid) and on the first start
   after every file changed, against yaml.safe_load of every file.

Prints every target with ok/MISSED (issue #8: latency <= 1 cycle p50 and <= 2 max, 1000
trajectories in <= 1 s).
"""

import argparse
import os
from pathlib import Path
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import timeit

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

import numpy as np  # noqa: E402
from scipy.interpolate import CubicSpline  # noqa: E402
import yaml  # noqa: E402

from sweetie_motion.trajectory.codec import dump_goal  # noqa: E402, I100

from sweetie_motion.storage.files import write_atomically  # noqa: E402, I100
from sweetie_motion.storage.store import TrajectoryStore  # noqa: E402
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint  # noqa: E402
from sweetie_motion.trajectory.spline import build_spline  # noqa: E402
from targets import Targets  # noqa: E402

POINTS, JOINTS = 200, 32


def best(function, number, repeat=5):
    """Return the best time per call [s] of ``function`` over ``repeat`` batches."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def keyframes():
    rng = np.random.default_rng(1)
    times = np.cumsum(rng.uniform(0.05, 0.3, POINTS))
    positions = np.cumsum(rng.normal(0, 0.05, (POINTS, JOINTS)), axis=0)
    velocities = np.gradient(positions, times, axis=0)
    accelerations = np.gradient(velocities, times, axis=0)
    return times, positions, velocities, accelerations


def bench_splines():
    times, p, v, a = keyframes()
    rows = [
        ('ours: akima (position-only keyframes)', lambda: build_spline(times, p)),
        ('ours: cubic Hermite (with velocities)', lambda: build_spline(times, p, v)),
        ('ours: quintic (with accelerations)', lambda: build_spline(times, p, v, a)),
        ('scipy CubicSpline, all joints at once', lambda: CubicSpline(times, p, axis=0)),
        ('baseline: scipy CubicSpline per joint',
         lambda: [CubicSpline(times, p[:, j]) for j in range(JOINTS)]),
    ]
    results = [(label, best(f, 20)) for label, f in rows]
    baseline = results[-1][1]
    print(f'--- spline build, {POINTS} points x {JOINTS} joints ---')
    for label, seconds in results:
        print(f'  {label:44s} {seconds * 1e3:8.3f} ms   {baseline / seconds:6.1f}x vs baseline')

    ours = build_spline(times, p)
    scipy_all = CubicSpline(times, p, axis=0)
    scipy_all_d = scipy_all.derivative()
    per_joint = [CubicSpline(times, p[:, j]) for j in range(JOINTS)]
    per_joint_d = [s.derivative() for s in per_joint]
    grid = np.linspace(times[0], times[-1], 1000)
    state = {'k': 0}

    def next_t():
        state['k'] = (state['k'] + 1) % len(grid)
        return grid[state['k']]
    rows = [
        ('ours: JointSpline.sample (pos, vel, acc)', lambda: ours.sample(next_t())),
        ('scipy CubicSpline all joints (pos, vel)',
         lambda: (scipy_all(t := next_t()), scipy_all_d(t))),
        ('baseline: scipy CubicSpline per joint (pos, vel)',
         lambda: [(s(t := next_t()), d(t)) for s, d in zip(per_joint, per_joint_d)]),
    ]
    results = [(label, best(f, 2000)) for label, f in rows]
    baseline = results[-1][1]
    print(f'--- sampling per cycle, {JOINTS} joints ---')
    for label, seconds in results:
        print(f'  {label:44s} {seconds * 1e6:8.1f} us   {baseline / seconds:6.1f}x vs baseline')


def bench_storage(count, targets):
    import rclpy
    from sweetie_motion.nodes.storage import TrajectoryStorageNode
    folder = Path(tempfile.mkdtemp(prefix='sm_bench_store_'))
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        rng = np.random.default_rng(2)
        joints = [f'joint{leg}{k}' for leg in range(1, 5) for k in range(1, 6)]
        for n in range(count):
            points = [TrajectoryPoint(0.2 * (k + 1), rng.uniform(-0.5, 0.5, 20).tolist())
                      for k in range(10)]
            goal = TrajectoryGoal(joints, points)
            write_atomically(folder / f'move_{n}.yaml', dump_goal(goal, f'move_{n}'))
        runs = {'n': 0}

        def node_start():
            runs['n'] += 1
            node = TrajectoryStorageNode(None, f'bench_storage_{runs["n"]}', parameters={
                'storage_dir': str(folder), 'library_dirs': []}, context=context)
            started = time.perf_counter()
            node.trigger_configure()
            seconds = time.perf_counter() - started
            declared = len(node.get_parameters_by_prefix('joint_trajectory'))
            node.destroy_node()
            assert declared == count, declared
            return seconds

        def store_only():
            report = TrajectoryStore(folder).load()
            assert len(report.loaded) == count

        def baseline():
            for path in sorted(folder.glob('*.yaml')):
                with open(path, encoding='utf-8') as stream:
                    yaml.safe_load(stream)
        first = node_start()  # no cache yet: every file parsed
        normal = min(node_start() for _ in range(3))
        (folder / '.sweetie_motion-cache.json').unlink()
        t_store = best(store_only, 1, 1)
        t_base = best(baseline, 1, 2)
        print(f'--- loading {count} stored trajectories (10 points x 20 joints) ---')
        for label, seconds in (
                ('ours: storage node start, normal (cache valid)', normal),
                ('ours: storage node start, every file changed', first),
                ('ours: TrajectoryStore.load, every file changed', t_store),
                ('baseline: yaml.safe_load per file', t_base)):
            print(f'  {label:50s} {seconds * 1e3:8.1f} ms   {t_base / seconds:6.1f}x vs baseline')
        targets.check(f'{count} stored trajectories loaded (storage node start)',
                      f'{normal:.2f} s', '<= 1 s', normal <= 1.0,
                      f'  [first start after every file changed: {first:.2f} s]')
    finally:
        rclpy.try_shutdown(context=context)
        shutil.rmtree(folder)


def bench_latency(repeats, targets):
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from sweetie_motion.ros.conversions import goal_to_msg
    root = Path(__file__).resolve().parent.parent
    store = tempfile.mkdtemp(prefix='sm_bench_')
    config = Path(store) / 'bench.yaml'
    config.write_text("""
sweetie_motion:
  namespace: bench_latency
  robot: sweetie_bot.yaml
  period: 0.01
  components:
    - {name: virtual_robot, type: virtual_robot}
    - name: follow_joint_state
      type: follow_joint_state
      parameters: {controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes],
                   activation_delay: 0.0, stay_operational: true,
                   smoothing: {type: none}}
    - name: joint_trajectory
      type: joint_trajectory
      parameters: {controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes]}
""")
    process = subprocess.Popen([sys.executable, '-m', 'sweetie_motion.cli', 'bringup',
                                '--config', str(config)], cwd=root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rclpy.init()
    node = rclpy.create_node('latency_bench')
    changes = []
    lock = threading.Lock()
    last = {}

    def on_reference(msg):
        value = msg.position[list(msg.name).index('joint12')]
        with lock:
            if 'value' in last and abs(value - last['value']) > 1e-9 and last.get('armed'):
                changes.append(time.monotonic())
                last['armed'] = False
            last['value'] = value
    node.create_subscription(JointState, '/bench_latency/joint_states_ref', on_reference, 50)
    client = ActionClient(node, FollowJointTrajectory,
                          '/bench_latency/joint_trajectory/follow_joint_trajectory')
    publisher = node.create_publisher(JointState, '/bench_latency/joint_states_set', 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        assert client.wait_for_server(timeout_sec=30), 'motion process did not start'
        time.sleep(1.0)
        fjt, topic = [], []
        for k in range(repeats):
            target = 0.2 if k % 2 == 0 else -0.2
            goal = TrajectoryGoal(['joint12'], [TrajectoryPoint(0.5, [target])])
            with lock:
                last['armed'] = True
                count = len(changes)
            sent = time.monotonic()
            future = client.send_goal_async(goal_to_msg(goal))
            while not future.done():
                time.sleep(0.0005)
            accepted = time.monotonic()
            while len(changes) == count:
                time.sleep(0.0005)
            fjt.append((changes[-1] - accepted, changes[-1] - sent))
            result = future.result().get_result_async()
            while not result.done():
                time.sleep(0.005)
            time.sleep(0.3 + random.uniform(0.0, 0.01))  # no phase lock with the cycle
            with lock:
                last['armed'] = True
                count = len(changes)
            sent = time.monotonic()
            publisher.publish(JointState(name=['joint12'], position=[0.0]))
            while len(changes) == count:
                time.sleep(0.0005)
            topic.append(changes[-1] - sent)
            time.sleep(0.6 + random.uniform(0.0, 0.01))
        period = 0.01
        fjt = np.array(fjt) / period
        topic = np.array(topic) / period
        print(f'--- latency to the first changed joint_states_ref, {repeats} times, in cycles '
              '(10 ms) ---')
        print(f'  {"FollowJointTrajectory: accepted -> changed":44s} p50 '
              f'{np.percentile(fjt[:, 0], 50):5.2f}  max {fjt[:, 0].max():5.2f}')
        print(f'  {"FollowJointTrajectory: sent -> changed":44s} p50 '
              f'{np.percentile(fjt[:, 1], 50):5.2f}  max {fjt[:, 1].max():5.2f}')
        print(f'  {"baseline: JointState to FollowJointState":44s} p50 '
              f'{np.percentile(topic, 50):5.2f}  max {topic.max():5.2f}')
        p50, worst = float(np.percentile(fjt[:, 0], 50)), float(fjt[:, 0].max())
        targets.check('goal accepted -> first changed reference, p50', f'{p50:.2f} cycles',
                      '<= 1 cycle', p50 <= 1.0)
        targets.check('goal accepted -> first changed reference, max', f'{worst:.2f} cycles',
                      '<= 2 cycles', worst <= 2.0)
    finally:
        executor.shutdown()
        thread.join(5)
        node.destroy_node()
        rclpy.try_shutdown()
        process.send_signal(2)
        process.wait(10)
        shutil.rmtree(store)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='fewer repetitions')
    parser.add_argument('--only-latency', action='store_true', help='only the latency part')
    args = parser.parse_args()
    targets = Targets('stored motions, R-FJT/R-STORE')
    if not args.only_latency:
        bench_splines()
        bench_storage(200 if args.quick else 1000, targets)
    bench_latency(5 if args.quick else 20, targets)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
