#!/usr/bin/env python3
"""
Benchmark of the sync cycle: in-process ports against the same components on rclpy topics.

    .venv/bin/python bench/cycle.py [--seconds 10] [--rates 100 500]

For each rate it measures, in one run:
- the floor: a bare absolute-deadline sleep loop (no ROS, no work) -> period error;
- sweetie_motion: the real motion process (motion core, virtual robot, three active
  FollowJointState controllers with three different smoothing filters fed at 50 Hz over DDS,
  joint_states and joint_states_ref published) -> compute time per cycle, period error, lost
  cycles, CPU share of the whole process;
- the baseline: the same core objects as separate rclpy nodes in one process exchanging
  JointState messages on topics each cycle (bus -> 3 controllers -> aggregator -> bus), driven
  by an rclpy timer -> end-to-end time per cycle, timer period error, lost cycles, CPU share.

Prints a table and the ratios against the floor and the baseline. DDS stays on the loopback.
"""

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('ROS_DOMAIN_ID', str(random.randint(1, 100)))
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.executors import ExternalShutdownException  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
import yaml  # noqa: E402

from sweetie_motion.controllers.joint_state import FollowJointStateCore  # noqa: E402, I100
from sweetie_motion.conversions import joint_state  # noqa: E402
from sweetie_motion.core.aggregator import Aggregator  # noqa: E402
from sweetie_motion.core.arbiter import Arbiter  # noqa: E402
from sweetie_motion.core.cycle import Tick  # noqa: E402
from sweetie_motion.core.ports import ControllerOutput, JointVector  # noqa: E402
from sweetie_motion.core.smoothing import create_filter  # noqa: E402
from sweetie_motion.model import load_robot_description  # noqa: E402
from sweetie_motion.nodes.bringup import MotionBringup, SWITCH_INTERVAL  # noqa: E402
from sweetie_motion.nodes.executor import MotionExecutor  # noqa: E402
from sweetie_motion.process_config import load_process_config  # noqa: E402
from sweetie_motion.servo.virtual import VirtualServoBus  # noqa: E402

FEED_RATE = 10.0  # Hz: joint_state_publisher_gui's default rate; set by --feed-rate
CONTROLLERS = [  # name, chains, smoothing
    ('legs', ['leg1', 'leg2', 'leg3', 'leg4'], {'type': 'critically_damped'}),
    ('head', ['head', 'nose'], {'type': 'transient', 'transient_time': 0.3}),
    ('eyes', ['eyes'], {'type': 'jerk_limited'}),
]


def percentiles(values):
    values = np.abs(np.asarray(values))
    return (float(np.percentile(values, 50)), float(np.percentile(values, 99)),
            float(values.max()))


def spin_quietly(executor):
    """Spin until shut down; the executor may complain while the nodes go away."""
    try:
        executor.spin()
    except Exception:  # noqa: B902 -- shutting down
        pass


def bare_sleep_loop(period, seconds):
    """Measure the period error of an absolute-deadline sleep loop doing nothing."""
    errors = []
    deadline = time.monotonic() + period
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        errors.append(time.monotonic() - deadline)
        deadline += period
    return {'jitter': percentiles(errors), 'lost': 0}


class Feeder:
    """A JointState stream from another process, as joint_state_publisher_gui sends one."""

    def __init__(self, topic, joints):
        self.process = None
        if FEED_RATE > 0:
            self.process = subprocess.Popen(
                [sys.executable, __file__, '--feeder', topic, str(FEED_RATE)] + list(joints))

    def stop(self):
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(10)


def feeder_main(topic, rate, joints):
    """Publish a slowly moving pose on ``topic`` at ``rate`` until SIGINT."""
    rclpy.init()
    node = Node('bench_feeder')
    publisher = node.create_publisher(JointState, topic, 10)
    start = time.monotonic()

    def tick():
        t = time.monotonic() - start
        publisher.publish(JointState(name=joints, position=[
            0.3 * np.sin(t + 0.1 * i) for i in range(len(joints))]))

    node.create_timer(1.0 / rate, tick)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()


def run_sweetie_motion(period, seconds):
    """Run the real motion process with three controllers; return its cycle statistics."""
    config = {'sweetie_motion': {
        'namespace': 'bench', 'robot': 'sweetie_bot.yaml', 'period': period,
        'components': [{'name': 'virtual_robot', 'type': 'virtual_robot'}] + [
            {'name': name, 'type': 'follow_joint_state',
             'parameters': {'controlled_chains': chains, 'activation_delay': 0.0,
                            'stay_operational': True, 'smoothing': smoothing}}
            for name, chains, smoothing in CONTROLLERS]}}
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as stream:
        yaml.safe_dump(config, stream)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        bringup = MotionBringup(load_process_config(stream.name), context=context)
        executor = MotionExecutor(num_threads=4, context=context)
        for node in bringup.nodes:
            executor.add_node(node)
        feeder = Feeder('/bench/joint_states_set', bringup.process.model.list_all_joints())
        spinner = threading.Thread(target=spin_quietly, args=(executor,), daemon=True)
        spinner.start()
        failed = bringup.start()
        assert not failed, failed
        time.sleep(1.0)  # warm-up
        stats = bringup.process.cycle.statistics
        first_count, first_lost = stats.count, stats.lost
        cpu0, wall0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0)
        n = min(stats.count - first_count, stats.window)
        slots = [(stats.count - 1 - k) % stats.window for k in range(n)]
        print('  stage means [us]: ' + ', '.join(
            f'{k} {v * 1e6:.0f}' for k, v in stats.stage_time.items()))
        result = {'compute': percentiles(stats.compute[slots]),
                  'jitter': percentiles(stats.period_error[slots]),
                  'lost': stats.lost - first_lost, 'ticks': stats.count - first_count,
                  'cpu': cpu}
        feeder.stop()
        executor.shutdown()
        spinner.join(5)
        bringup.stop()
        for node in bringup.nodes:
            node.destroy_node()
        return result
    finally:
        rclpy.try_shutdown(context=context)
        os.unlink(stream.name)


def run_baseline(period, seconds):
    """Run the same core objects as rclpy nodes passing JointState messages each cycle."""
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    view = model.view()
    names = model.list_all_joints()
    n = len(names)
    servo = [j for j in names if not model.is_virtual(j)]
    servo_idx = view.get_joint_indices(servo)
    bus = VirtualServoBus(servo, view.velocity_limits()[servo_idx], delay=1)
    arbiter = Arbiter(model.list_groups())
    context = rclpy.Context()
    rclpy.init(context=context)
    reference = JointVector.zeros(n)
    record = {'start': {}, 'total': [], 'timer': [], 'lost': 0}
    nodes = []

    class BusNode(Node):
        """Reads the bus on a timer, sends what the aggregator publishes."""

        def __init__(self):
            super().__init__('bus', context=context, namespace='baseline')
            self.pub = self.create_publisher(JointState, 'measured', 10)
            self.create_subscription(JointState, 'reference', self.on_reference, 10)
            self.tick = 0
            self.next = None
            self.timer = self.create_timer(period, self.on_timer)

        def on_timer(self):
            now = time.monotonic()
            if self.next is None:
                self.next = now
            late = now - self.next
            if late >= period:
                record['lost'] += int(late // period)
                self.next += int(late // period) * period
            record['timer'].append(now - self.next)
            self.next += period
            state = bus.receive(now)
            self.tick += 1
            record['start'][self.tick] = now
            msg = joint_state(servo, state.position, state.velocity)
            msg.header.frame_id = str(self.tick)
            self.pub.publish(msg)

        def on_reference(self, msg):
            bus.send(time.monotonic(), np.asarray(msg.position)[servo_idx],
                     np.asarray(msg.velocity)[servo_idx])
            start = record['start'].pop(int(msg.header.frame_id), None)
            if start is not None:
                record['total'].append(time.monotonic() - start)

    class ControllerNode(Node):
        """One controller core behind topics."""

        def __init__(self, name, chains, smoothing):
            super().__init__(name, context=context, namespace='baseline')
            kind = smoothing['type']
            params = {k: v for k, v in smoothing.items() if k != 'type'}
            self.core = FollowJointStateCore(
                name, view, arbiter, chains, 0.0, True,
                lambda joints: create_filter(kind, joints, period, params))
            self.core.start(reference)
            self.core.acquire()
            self.pub = self.create_publisher(JointState, f'{name}/output', 10)
            self.create_subscription(JointState, 'measured', self.on_measured, 10)
            self.create_subscription(JointState, '/bench_base/joint_states_set',
                                     lambda m: self.core.set_input(m.name, m.position), 10)
            self.reference = JointVector.zeros(n)
            self.create_subscription(JointState, 'reference', self.on_reference, 10)

        def on_reference(self, msg):
            self.reference.position[:] = msg.position

        def on_measured(self, msg):
            measured = JointVector.zeros(n)
            measured.position[servo_idx] = msg.position
            measured.velocity[servo_idx] = msg.velocity
            tick = Tick(time.monotonic(), period, 0, measured, self.reference.copy())
            self.core.update(tick)
            out = tick.outputs.get(self.core.name)
            if out is not None:
                reply = joint_state(names, out.position, out.velocity)
                reply.header.frame_id = f'{msg.header.frame_id} {",".join(out.resources)}'
                self.pub.publish(reply)

    class AggregatorNode(Node):
        """Merges the three outputs of a tick and publishes the reference."""

        def __init__(self):
            super().__init__('aggregator', context=context, namespace='baseline')
            self.aggregator = Aggregator({g: view.get_group_indices(g)
                                          for g in model.list_groups()}, arbiter.owners)
            self.pending = {}
            self.pub = self.create_publisher(JointState, 'reference', 10)
            for name, _, _ in CONTROLLERS:
                self.create_subscription(JointState, f'{name}/output',
                                         lambda m, name=name: self.on_output(name, m), 10)

        def on_output(self, name, msg):
            tick, resources = msg.header.frame_id.split(' ')
            outputs = self.pending.setdefault(tick, {})
            outputs[name] = ControllerOutput(np.asarray(msg.position),
                                             np.asarray(msg.velocity),
                                             frozenset(resources.split(',')))
            if len(outputs) == len(CONTROLLERS):
                del self.pending[tick]
                self.aggregator.merge(reference.position, reference.velocity, outputs,
                                      arbiter.owners())
                reply = joint_state(names, reference.position, reference.velocity)
                reply.header.frame_id = tick
                self.pub.publish(reply)

    try:
        nodes = [BusNode(), AggregatorNode()] + [ControllerNode(*c) for c in CONTROLLERS]
        feeder = Feeder('/bench_base/joint_states_set', names)
        executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        spinner = threading.Thread(target=spin_quietly, args=(executor,), daemon=True)
        spinner.start()
        time.sleep(1.0)
        record['total'].clear()
        record['timer'].clear()
        record['lost'] = 0
        cpu0, wall0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        cpu = (time.process_time() - cpu0) / (time.monotonic() - wall0)
        total, timer, lost = list(record['total']), list(record['timer']), record['lost']
        feeder.stop()
        executor.shutdown()
        spinner.join(5)
        return {'compute': percentiles(total), 'jitter': percentiles(timer), 'lost': lost,
                'ticks': len(timer), 'cpu': cpu, 'completed': len(total)}
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


def ms(values):
    return ' / '.join(f'{v * 1e3:6.3f}' for v in values)


def main():
    global FEED_RATE
    if len(sys.argv) > 3 and sys.argv[1] == '--feeder':
        feeder_main(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--rates', type=float, nargs='+', default=[100.0, 500.0])
    parser.add_argument('--feed-rate', type=float, default=10.0,
                        help='rate of the JointState stream to the controllers [Hz]')
    args = parser.parse_args()
    FEED_RATE = args.feed_rate
    sys.setswitchinterval(SWITCH_INTERVAL)
    print(f'sync cycle benchmark: {args.seconds:.0f} s per run, 32 joints, 3 controllers, '
          f'{os.cpu_count()} cores\n')
    verdicts = []
    for rate in args.rates:
        period = 1.0 / rate
        floor = bare_sleep_loop(period, args.seconds)
        ours = run_sweetie_motion(period, args.seconds)
        base = run_baseline(period, args.seconds)
        print(f'--- {rate:.0f} Hz (period {period * 1e3:.1f} ms) '
              '--- times in ms as p50 / p99 / max')
        print(f'{"":28s}{"compute per cycle":>28s}{"period error":>28s}{"lost":>7s}'
              f'{"CPU":>8s}')
        print(f'{"bare sleep loop (floor)":28s}{"-":>28s}{ms(floor["jitter"]):>28s}'
              f'{0:>7d}{"-":>8s}')
        print(f'{"sweetie_motion (ports)":28s}{ms(ours["compute"]):>28s}'
              f'{ms(ours["jitter"]):>28s}{ours["lost"]:>7d}{ours["cpu"] * 100:>7.1f}%')
        print(f'{"baseline (rclpy topics)":28s}{ms(base["compute"]):>28s}'
              f'{ms(base["jitter"]):>28s}{base["lost"]:>7d}{base["cpu"] * 100:>7.1f}%')
        jitter_ratio = ours['jitter'][1] / max(floor['jitter'][1], 1e-9)
        compute_ratio = base['compute'][0] / max(ours['compute'][0], 1e-9)
        cpu_ratio = base['cpu'] / max(ours['cpu'], 1e-9)
        print(f'ratios: period error p99 ours/floor = {jitter_ratio:.2f} (target <= 1.2); '
              f'compute p50 baseline/ours = {compute_ratio:.1f}x; '
              f'CPU baseline/ours = {cpu_ratio:.1f}x; baseline completed '
              f'{base["completed"]}/{base["ticks"]} cycles\n')
        verdicts.append((rate, ours['compute'][1] <= 0.0005, ours['lost'] == 0,
                         jitter_ratio <= 1.2, ours['cpu'] <= 0.15 if rate <= 100 else None))
    print('targets: compute p99 <= 0.5 ms | no lost cycles | period error p99 <= 1.2 x floor '
          '| CPU <= 15 % at 100 Hz')
    for rate, compute, lost, jitter, cpu in verdicts:
        marks = ['ok' if v else 'MISSED' for v in (compute, lost, jitter)]
        marks.append('-' if cpu is None else ('ok' if cpu else 'MISSED'))
        print(f'  {rate:5.0f} Hz: ' + ' | '.join(marks))
    return 0


if __name__ == '__main__':
    sys.exit(main())
