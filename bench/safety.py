#!/usr/bin/env python3
"""
Safe references, measured from outside: starts, stops and switches as a client causes them.

    .venv/bin/python bench/safety.py [--json] [--source DIR]

Starts `sweetie-motion bringup` (the pony on the virtual robot with a torque switch, a
background FollowJointState, a whole-body and a head trajectory controller), records
``joint_states_ref`` (the reference the servos receive) from this process over DDS, and causes
one event after the other:

- far start: a goal whose first point lies 0.9 rad away at t = 0.1 s;
- abort on path tolerance: a goal for a jammed servo;
- cancel at speed; preemption by a faster goal;
- FollowJointState step of 1 rad; a chain handed back to FollowJointState whose input still
  streams; a takeover of the head by a second trajectory controller while it moves;
- torque on while a hand moves a leg.

For each event it prints, for the joint concerned, the peak velocity and acceleration of the
reference (from its positions and from its velocity field) against the joint's limits, whether
a stop overshot or reversed, and the safety stage's interventions. ``--json`` prints the same
as one JSON line (the test suite asserts on it); ``--source DIR`` runs the bringup from another
checkout (to measure the same events before a change).
"""

import argparse
import json
import os
from pathlib import Path
import random
import subprocess
import sys
import tempfile
import threading
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

import numpy as np  # noqa: E402

NS = 'safety_events'
PERIOD = 0.01
CONFIG = """
sweetie_motion:
  namespace: {ns}
  robot: sweetie_bot.yaml
  period: 0.01
  components:
    - {{name: virtual_robot, type: virtual_robot}}
    - name: torque_main_switch
      type: torque_main_switch
      parameters: {{controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes]}}
    - name: follow_joint_state
      type: follow_joint_state
      parameters: {{controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes],
                   activation_delay: 0.0, stay_operational: true}}
    - name: joint_trajectory
      type: joint_trajectory
      parameters: {{controlled_chains: [leg1, leg2, leg3, leg4, head, nose, eyes]}}
    - name: head_trajectory
      type: joint_trajectory
      parameters: {{controlled_chains: [head, nose, eyes]}}
"""


class Client:
    """This process's view of the motion process: the recorder and the clients."""

    def __init__(self):
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rcl_interfaces.srv import SetParameters
        from sensor_msgs.msg import JointState
        from std_srvs.srv import SetBool
        rclpy.init()
        self.rclpy = rclpy
        self.node = node = rclpy.create_node('safety_bench')
        self.lock = threading.Lock()
        self.rows = []   # (stamp, positions, velocities)
        self.names = None
        node.create_subscription(JointState, f'/{NS}/joint_states_ref', self._on_ref, 1000)
        self.fjt = ActionClient(node, FollowJointTrajectory,
                                f'/{NS}/joint_trajectory/follow_joint_trajectory')
        self.head = ActionClient(node, FollowJointTrajectory,
                                 f'/{NS}/head_trajectory/follow_joint_trajectory')
        self.set_pub = node.create_publisher(JointState, f'/{NS}/joint_states_set', 10)
        self.hand_pub = node.create_publisher(JointState, f'/{NS}/virtual_robot/move_by_hand',
                                              10)
        self.torque = node.create_client(SetBool, f'/{NS}/set_torque_off')
        self.params = node.create_client(SetParameters, f'/{NS}/virtual_robot/set_parameters')
        # one thread: rclpy's multi-threaded executor loses messages at 100 Hz here (it
        # rebuilds its wait set in Python for every queued task, see the README)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self):
        try:
            self.executor.spin()
        except Exception:  # noqa: B902 -- shutting down
            pass

    def _on_ref(self, msg):
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self.lock:
            if self.names is None:
                self.names = list(msg.name)
            self.rows.append((stamp, np.array(msg.position), np.array(msg.velocity)))

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def wait(self, future, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError('no answer from the motion process')
            time.sleep(0.005)
        return future.result()

    def goal(self, joints, rows, times):
        from control_msgs.action import FollowJointTrajectory
        from sweetie_motion.ros.conversions import seconds_to_duration
        from trajectory_msgs.msg import JointTrajectoryPoint
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(joints)
        for row, t in zip(rows, times):
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=[float(v) for v in row], time_from_start=seconds_to_duration(t)))
        return goal

    def send(self, action, goal):
        handle = self.wait(action.send_goal_async(goal))
        if not handle.accepted:
            raise RuntimeError('goal not accepted')
        return handle

    def result(self, handle, timeout=30.0):
        response = self.wait(handle.get_result_async(), timeout)
        return response.result.error_code, response.result.error_string

    def run(self, action, goal, timeout=30.0):
        return self.result(self.send(action, goal), timeout)

    def set_pose(self, names, positions, publisher=None):
        from sensor_msgs.msg import JointState
        (publisher or self.set_pub).publish(JointState(name=list(names),
                                                       position=[float(p) for p in positions]))

    def set_torque_off(self, off):
        from std_srvs.srv import SetBool
        if not self.torque.wait_for_service(timeout_sec=20):
            raise RuntimeError('no torque service')
        return self.wait(self.torque.call_async(SetBool.Request(data=off)))

    def block(self, joints):
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        request = SetParameters.Request(parameters=[Parameter(
            'blocked_joints', Parameter.Type.STRING_ARRAY, list(joints)).to_parameter_msg()])
        self.wait(self.params.call_async(request))

    def position(self, joint):
        with self.lock:
            return self.rows[-1][1][self.names.index(joint)]

    def settle(self, seconds=0.6):
        time.sleep(seconds)

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.thread.join(2.0)
        for action in (self.fjt, self.head):
            action.destroy()
        self.node.destroy_node()
        self.rclpy.try_shutdown()


def back(client, joint, value=0.0):
    """Move ``joint`` back to ``value`` calmly (not an event)."""
    client.run(client.fjt, client.goal([joint], [[value]], [2.0]))
    client.settle(0.8)


def events(client):
    """Cause every event; return [(label, joint, start, stop time or None, end, note)]."""
    out = []

    # far start: 0.9 rad away at t = 0.1 s
    start = client.now()
    code, text = client.run(client.fjt, client.goal(['joint12'], [[0.9], [0.9]], [0.1, 0.6]))
    client.settle()
    out.append(('far start', 'joint12', start, None, client.now(), f'{code}: {text}'))
    back(client, 'joint12')

    # abort on path tolerance: a jammed servo
    client.block(['joint43'])
    start = client.now()
    handle = client.send(client.fjt, client.goal(['joint43'], [[1.0], [0.0]], [1.0, 2.0]))
    code, text = client.result(handle)
    stop = client.now()
    client.settle(1.0)
    out.append(('abort on path tolerance', 'joint43', start, stop - 0.1, client.now(),
                f'{code}: {text}'))
    client.block([])
    back(client, 'joint43')

    # cancel at speed
    start = client.now()
    handle = client.send(client.fjt, client.goal(['joint13'], [[1.4]], [1.2]))
    time.sleep(0.6)
    stop = client.now()
    client.wait(handle.cancel_goal_async())
    code, text = client.result(handle)
    client.settle(1.0)
    out.append(('cancel', 'joint13', start, stop, client.now(), f'{code}: {text}'))
    back(client, 'joint13')

    # preemption by a faster goal
    start = client.now()
    first = client.send(client.fjt, client.goal(['joint12'], [[1.0], [0.0]], [1.5, 3.0]))
    time.sleep(0.8)
    code, text = client.run(client.fjt, client.goal(['joint12'], [[-0.4]], [0.3]))
    client.result(first)
    client.settle()
    out.append(('preempt', 'joint12', start, None, client.now(), f'{code}: {text}'))
    back(client, 'joint12')

    # FollowJointState: a step of 1 rad
    client.settle(2.5)    # the trajectory controller gives the legs back after its goals
    start = client.now()
    client.set_pose(['joint22'], [1.0])
    deadline = time.monotonic() + 10
    while abs(client.position('joint22') - 1.0) > 1e-4 and time.monotonic() < deadline:
        time.sleep(0.02)
    client.settle()
    out.append(('FollowJointState step', 'joint22', start, None, client.now(), ''))
    client.set_pose(['joint22'], [0.0])
    client.settle(2.0)

    # handover: the trajectory controller gives leg3 back to a FollowJointState whose input
    # still streams a pose far from where the goal ended
    streaming = threading.Event()
    streaming.set()

    def stream():
        while streaming.is_set():
            client.set_pose(['joint32'], [0.6])
            time.sleep(0.02)
    streamer = threading.Thread(target=stream, daemon=True)
    streamer.start()
    time.sleep(0.3)
    start = client.now()
    code, text = client.run(client.fjt, client.goal(['joint32'], [[-0.6]], [1.0]))
    client.settle(3.5)
    streaming.clear()
    streamer.join()
    out.append(('handover to a streaming FollowJointState', 'joint32', start, None,
                client.now(), f'{code}: {text}'))
    client.set_pose(['joint32'], [0.0])
    client.settle(2.0)

    # takeover: the head controller takes the head while the body controller moves it
    start = client.now()
    body = client.send(client.fjt, client.goal(['joint52'], [[0.8]], [1.0]))
    time.sleep(0.5)
    code, text = client.run(client.head, client.goal(['joint52'], [[-0.3]], [0.5]))
    client.result(body)
    client.settle()
    out.append(('takeover between controllers', 'joint52', start, None, client.now(),
                f'{code}: {text}'))
    client.run(client.head, client.goal(['joint52'], [[0.0]], [2.0]))
    client.settle(2.5)

    # torque on while a hand moves leg4 at 0.4 rad/s: the hand keeps pushing until the servos
    # hold (moves of a servo with torque on are ignored, as a real servo resists them)
    client.set_torque_off(True)
    client.settle(0.3)
    position = client.position('joint42')
    moving = threading.Event()
    moving.set()

    def hand():
        nonlocal position
        last = time.monotonic()
        while moving.is_set():
            time.sleep(0.01)
            now = time.monotonic()
            position += 0.4 * (now - last)   # 0.4 rad/s, however late this thread wakes
            last = now
            client.set_pose(['joint42'], [position], client.hand_pub)
    mover = threading.Thread(target=hand, daemon=True)
    mover.start()
    time.sleep(1.0)
    # the servos are on at most a tick after the request arrives: check from there on
    stop = client.now() + 0.015
    client.set_torque_off(False)
    moving.clear()
    mover.join()
    client.settle(1.0)
    out.append(('torque on while moved by hand', 'joint42', stop, stop, client.now(), ''))
    back(client, 'joint42')
    return out


def analyse(client, label, joint, start, stop, end, note, limits):
    """Return the figures of one event window."""
    with client.lock:
        margin = 0.0 if stop is not None and stop <= start else 0.05
        rows = [r for r in client.rows if start - margin <= r[0] <= end]
        k = client.names.index(joint)
    if len(rows) < 3:
        with client.lock:
            last = client.rows[-1][0] if client.rows else float('nan')
        return {'event': label, 'joint': joint, 'samples': len(rows), 'note': note,
                'problem': f'{len(rows)} references recorded in [{start:.3f}, {end:.3f}]; '
                           f'the newest is stamped {last:.3f}'}
    stamps = np.array([r[0] for r in rows])
    p = np.array([r[1][k] for r in rows])
    v = np.array([r[2][k] for r in rows])
    steps = np.maximum(np.round(np.diff(stamps) / PERIOD), 1) * PERIOD
    fd_v = np.diff(p) / steps
    # acceleration from positions only where three samples are one period apart (a sample
    # lost on the way would mix two step widths)
    single = np.isclose(steps, PERIOD)
    fd_a = (np.diff(fd_v) / steps[1:])[single[1:] & single[:-1]]
    stated_a = np.diff(v) / steps
    v_max, a_max = limits
    figures = {
        'event': label, 'joint': joint, 'samples': len(rows), 'note': note,
        'finite': bool(np.isfinite(p).all() and np.isfinite(v).all()),
        'v_peak': float(np.abs(fd_v).max(initial=0.0)),
        'v_stated_peak': float(np.abs(v).max(initial=0.0)),
        'a_peak': float(np.abs(fd_a).max(initial=0.0)),
        'a_stated_peak': float(np.abs(stated_a).max(initial=0.0)),
        'v_limit': v_max, 'a_limit': a_max,
        'gaps': int((steps > 1.5 * PERIOD).sum()),
    }
    if stop is not None:
        after = stamps >= stop
        if after.sum() > 2:
            index = int(np.argmax(after))
            direction = np.sign(v[max(index - 1, 0)]) or np.sign(p[-1] - p[index]) or 1.0
            tail = p[index:] * direction
            figures['reversal'] = float(max(0.0, -np.diff(tail).min(initial=0.0)))
            figures['overshoot'] = float(max(0.0, tail.max() - tail[-1]))
            figures['rest_velocity'] = float(abs(v[-1]))
    return figures


def stage_cost(repeat=3000):
    """Return [(label, mean us, p99 us)]: the safety stage per tick against the aggregator."""
    from sweetie_motion.core.cycle import Tick
    from sweetie_motion.core.ports import ControllerOutput, JointVector
    from sweetie_motion.core.component import CycleResources
    from sweetie_motion.model import load_robot_description
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    resources = CycleResources(model, PERIOD)
    n = len(model.list_all_joints())
    owner = type('Owner', (), {'name': 'owner', 'on_resources_changed': lambda *a: None})()
    resources.arbiter.request(owner, model.list_groups())
    safety, aggregator = resources.safety, resources.aggregator
    lower, upper = model.position_limits()
    middle = (lower + upper) / 2
    safety.reset(middle)
    state = {'t': 0.0}

    def tick(step):
        # a smooth motion of every joint (within the limits), or a jump of every joint
        state['t'] += PERIOD
        t = state['t']
        position = middle + (0.2 * np.sin(t) if step == 0 else 0.2 * (t % 2 < 1))
        velocity = np.full(n, 0.2 * np.cos(t)) if step == 0 else np.zeros(n)
        result = Tick(t, PERIOD, 0, JointVector.zeros(n), JointVector.zeros(n))
        result.outputs['owner'] = ControllerOutput(position, velocity,
                                                   frozenset(model.list_groups()))
        return result

    rows = []
    for label, stage, kind in (('baseline: the aggregator (merge of 32 joints)', aggregator, 0),
                               ('safety stage, reference within the limits', safety, 0),
                               ('safety stage, every joint corrected (ruckig)', safety, 1)):
        samples = []
        clock = time.perf_counter
        for _ in range(repeat):
            current = tick(kind)
            if stage is not aggregator:
                aggregator.update(current)
            begin = clock()
            stage.update(current)
            samples.append(clock() - begin)
        samples = np.array(samples[100:]) * 1e6
        rows.append((label, float(samples.mean()), float(np.percentile(samples, 99))))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--json', action='store_true', help='print one JSON line')
    parser.add_argument('--source', help='run the bringup from this checkout')
    parser.add_argument('--cost-only', action='store_true',
                        help='only the cost of the safety stage per tick (no ROS)')
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from targets import Targets
    targets = Targets('safe references, R-SYS-8')
    if args.cost_only or not args.json:
        cost = stage_cost()
        base = cost[0][1]
        print('--- cost of the safety stage per tick, 32 joints (same run) ---')
        for label, mean, p99 in cost:
            print(f'  {label:48s} mean {mean:7.1f} us  p99 {p99:7.1f} us  '
                  f'{mean / base:5.2f}x the aggregator')
        targets.check('safety stage per tick, references within the limits (mean)',
                      f'{cost[1][1]:.0f} us', '<= 50 us: 10 % of the 0.5 ms cycle budget',
                      cost[1][1] <= 50)
        if args.cost_only:
            return targets.report()
    root = Path(__file__).resolve().parent.parent
    folder = tempfile.mkdtemp(prefix='sm_safety_')
    config = Path(folder) / 'safety.yaml'
    config.write_text(CONFIG.format(ns=NS))
    env = dict(os.environ)
    if args.source:
        env['PYTHONPATH'] = os.pathsep.join([args.source, env.get('PYTHONPATH', '')])
    process = subprocess.Popen([sys.executable, '-m', 'sweetie_motion.cli', 'bringup',
                                '--config', str(config)], cwd=args.source or root, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = Client()
    try:
        deadline = time.monotonic() + 60
        while not client.rows and time.monotonic() < deadline:
            time.sleep(0.1)
        for action in (client.fjt, client.head):
            if not action.wait_for_server(timeout_sec=30):
                raise RuntimeError('no trajectory action server')
        time.sleep(1.5)
        happened = events(client)
        from sweetie_motion.model import load_robot_description
        model = load_robot_description('sweetie_bot.yaml')
        model.configure()
        figures = []
        for label, joint, start, stop, end, note in happened:
            info = model.get_joint_info(joint)
            acceleration = model.joint_limits().acceleration[info.index]
            figures.append(analyse(client, label, joint, start, stop, end, note,
                                   (info.velocity, float(acceleration))))
    finally:
        client.close()
        process.terminate()
        try:
            output = process.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0]
    if args.json:
        print(json.dumps({'events': figures, 'log': output[-4000:]}))
        return 0
    print(f'safe references, recorded from joint_states_ref over DDS '
          f'({"bringup from " + args.source if args.source else "this checkout"})')
    print(f'{"event":42s} {"joint":8s} {"v peak":>8s} {"(stated)":>9s} {"v limit":>8s} '
          f'{"a peak":>8s} {"(stated)":>9s} {"a limit":>8s} {"stop":>14s}')
    for f in figures:
        if 'problem' in f:
            print(f'{f["event"]:42s} {f["joint"]:8s} {f["problem"]}')
            continue
        stop = ''
        if 'reversal' in f:
            stop = f'rev {f["reversal"]:.3f} ovs {f["overshoot"]:.3f}'
        print(f'{f["event"]:42s} {f["joint"]:8s} {f["v_peak"]:8.2f} {f["v_stated_peak"]:9.2f} '
              f'{f["v_limit"]:8.2f} {f["a_peak"]:8.1f} {f["a_stated_peak"]:9.1f} '
              f'{f["a_limit"]:8.1f} {stop:>14s}')
        if f['note']:
            print(f'    result: {f["note"][:150]}')
    for f in figures:
        if 'problem' in f:
            targets.check(f'{f["event"]}: recorded', f['problem'][:14], 'recorded', False)
            continue
        ratio = max(f['v_peak'] / f['v_limit'], f['a_stated_peak'] / f['a_limit'],
                    (f['a_peak'] - 0.5) / f['a_limit'])
        targets.check(f'{f["event"]}: peak / limit', f'{ratio:.2f}', '<= 1.02',
                      ratio <= 1.02 and f['finite'])
        if 'reversal' in f:
            targets.check(f'{f["event"]}: reversal, overshoot [rad]',
                          f'{f["reversal"]:.4f}, {f["overshoot"]:.4f}', '0',
                          f['reversal'] < 1e-6 and f['overshoot'] < 1e-6)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
