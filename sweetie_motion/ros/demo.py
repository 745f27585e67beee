"""
`sweetie-motion demo`: the main job on the built-in virtual robot, end to end.

1. prints the robot's chains, groups and joints and draws its kinematic tree;
2. starts the motion process (a separate process, as on a robot) on the virtual robot;
3. drives the head and a leg through FollowJointState for a few seconds from this process, with
   a live status line (cycle rate, jitter, resource owners), and plots reference vs measured;
4. plays the stored animation ``greeting`` by name (the play_trajectory action), with progress
   and result, and plots the played joints.

Everything stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST unless set).
"""

import math
import os
from pathlib import Path
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional

DEMO_NAMESPACE = 'sweetie_demo'
#: how long the demo waits for the motion process to hear its pendant before it drives [s]
PENDANT_HEARD_TIMEOUT = 10.0


class DemoClient:
    """A plain rclpy node that watches and drives the motion process."""

    def __init__(self, namespace: str) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile
        from sensor_msgs.msg import JointState
        from sweetie_motion_msgs.msg import ResourceOwnership
        from sweetie_motion.ros.dds_profile import use_package_profile
        use_package_profile()
        rclpy.init()
        self.rclpy = rclpy
        self.ns = f'/{namespace}'
        self.node = rclpy.create_node('sweetie_motion_demo')
        self.lock = threading.Lock()
        self.samples: List[tuple] = []
        self.reference = None
        self.measured = None
        self.owners: Dict[str, str] = {}
        self.cycle: Dict[str, str] = {}
        self.node.create_subscription(JointState, f'{self.ns}/joint_states',
                                      self._on_measured, 50)
        self.node.create_subscription(JointState, f'{self.ns}/joint_states_ref',
                                      self._on_reference, 50)
        self.node.create_subscription(
            ResourceOwnership, f'{self.ns}/resource_owners',
            lambda m: self.owners.update(zip(m.resources, m.owners)),
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
        self.set_pose = self.node.create_publisher(JointState, f'{self.ns}/joint_states_set',
                                                   10)
        self.JointState = JointState
        from sweetie_motion.ros.pendant import Pendant
        #: should the demo die (kill -9), the motion process stops what it started
        self.pendant = Pendant(self.node, self.ns)
        self.pendant.follow([f'{self.ns}/joint_states_set'])
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _on_measured(self, msg) -> None:
        with self.lock:
            self.measured = msg

    def _on_reference(self, msg) -> None:
        # both are published with the same stamp, the measured pose first
        with self.lock:
            self.reference = msg
            if self.measured is not None and self.measured.header.stamp == msg.header.stamp:
                stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
                self.samples.append((stamp, self.measured, msg))

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name.startswith(self.ns.strip('/')) and status.name.endswith('cycle'):
                self.cycle = {kv.key: kv.value for kv in status.values}

    def wait_ready(self, timeout: float) -> bool:
        """Wait for the first joint_states and the ownership topic."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.measured is not None and self.owners:
                return True
            time.sleep(0.1)
        return False

    def status_line(self, elapsed: float) -> str:
        """Return a one-line summary of the motion process's state."""
        rate = float(self.cycle.get('rate', 'nan'))
        jitter = float(self.cycle.get('jitter_p99', 'nan')) * 1e3
        compute = float(self.cycle.get('compute_p99', 'nan')) * 1e3
        by_owner: Dict[str, List[str]] = {}
        for resource, owner in self.owners.items():
            by_owner.setdefault(owner or 'free', []).append(resource)
        owners = '; '.join(f'{o}: {",".join(r)}' for o, r in by_owner.items())
        return (f't={elapsed:4.1f}s  cycle {rate:5.1f} Hz  compute p99 {compute:.2f} ms  '
                f'jitter p99 {jitter:.2f} ms  owners: {owners}')

    def close(self) -> None:
        """Shut the demo node down."""
        self.executor.shutdown(timeout_sec=5.0)
        self.node.destroy_node()
        self.rclpy.try_shutdown()


def start_motion_process(namespace: str, log: Path) -> subprocess.Popen:
    """Start `sweetie-motion bringup` on the virtual robot as a separate process."""
    from sweetie_motion.command_line import start_own_bringup
    stream = open(log, 'w', encoding='utf-8')
    store = log.parent / 'trajectories'  # the demo's saves stay in the demo's folder
    return start_own_bringup(['--namespace', namespace, '--storage-dir', str(store)],
                             stdout=stream, stderr=subprocess.STDOUT, env=os.environ.copy())


def drive_with_follow_joint_state(client: DemoClient, seconds: float, out: Path) -> Path:
    """Move the head and leg 1 through FollowJointState; plot reference vs measured."""
    from sweetie_motion.plots import plot_joint_series
    joints = ['joint51', 'joint53', 'joint12', 'joint13']
    print(f'driving {", ".join(joints)} through FollowJointState (joint_states_set) '
          f'for {seconds:.0f} s')
    start = time.monotonic()
    with client.lock:
        client.samples.clear()
    next_status = 0.0
    while (elapsed := time.monotonic() - start) < seconds:
        phase = 2 * math.pi * elapsed / 4.0
        positions = [-0.35 + 0.3 * math.sin(phase), 0.35 * math.sin(2 * phase),
                     0.5 * math.sin(phase), 0.6 - 0.6 * math.cos(phase)]
        client.set_pose.publish(client.JointState(name=joints, position=positions))
        if elapsed >= next_status:
            if sys.stdout.isatty():  # a live line on a terminal, one line a second in a log
                print('\r' + client.status_line(elapsed), end='', flush=True)
                next_status = elapsed + 0.25
            else:
                print(client.status_line(elapsed), flush=True)
                next_status = elapsed + 1.0
        time.sleep(0.05)
    print(('\r' if sys.stdout.isatty() else '') + client.status_line(seconds))
    with client.lock:
        samples = list(client.samples)
    t0 = samples[0][0]
    names = list(samples[0][1].name)
    series = {}
    for joint in joints:
        k = names.index(joint)
        series[joint] = {'reference (joint_states_ref)': [s[2].position[k] for s in samples],
                         'measured (joint_states)': [s[1].position[k] for s in samples]}
    return plot_joint_series(out, [s[0] - t0 for s in samples], series,
                             'FollowJointState on the virtual robot: reference vs measured')


def play_by_name(client: DemoClient, name: str, out: Path) -> bool:
    """Play a stored trajectory by name with a progress line; plot what was played."""
    from sweetie_motion.ros.motion_client import MotionClient
    from sweetie_motion.plots import plot_joint_series
    api = MotionClient(client.ns, node=client.node, pendant=client.pendant)
    goal = api.load(name)
    print(f'\nplaying {name!r} by name: {len(goal.points)} keyframes, '
          f'{len(goal.joints())} joints, {goal.duration:.1f} s')
    with client.lock:
        client.samples.clear()
    tty = sys.stdout.isatty()
    shown = [-1.0]

    def progress(elapsed: float, duration: float, fraction: float) -> None:
        if tty:
            bar = '#' * int(fraction * 30)
            print(f'\r  [{bar:<30}] {elapsed:5.2f} / {duration:.2f} s', end='', flush=True)
        elif fraction - shown[0] >= 0.2 or (fraction >= 0.999 and shown[0] < 0.999):
            shown[0] = fraction
            print(f'  {elapsed:5.2f} / {duration:.2f} s ({fraction:.0%})', flush=True)
    outcome = api.play(name, feedback=progress)
    if tty:
        print()
    print(f'  result: {"succeeded" if outcome.succeeded else "FAILED"} '
          f'(error_code {outcome.error_code}): {outcome.error_string}')
    time.sleep(0.3)
    with client.lock:
        samples = list(client.samples)
    if not samples:
        return outcome.succeeded
    t0 = samples[0][0]
    names = list(samples[0][1].name)
    series = {}
    for joint in goal.joints():
        k = names.index(joint)
        series[joint] = {'reference': [s[2].position[k] for s in samples],
                         'measured': [s[1].position[k] for s in samples]}
    path = plot_joint_series(out, [s[0] - t0 for s in samples], series,
                             f'{name!r} played by name on the virtual robot')
    print(f'  played joints: {path}')
    return outcome.succeeded


def main(argv: Optional[List[str]] = None) -> int:
    """Run the demo; return the exit code."""
    from sweetie_motion.command_line import CommandParser, positive_seconds
    parser = CommandParser(
        prog='sweetie-motion demo',
        description='The main job on the built-in virtual robot, end to end: print the robot '
                    'and draw its kinematic tree; start the motion process; drive the head and '
                    'a leg through FollowJointState with a live status line and plot reference '
                    'against measured; play the stored animation greeting by name and plot it. '
                    'Everything stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST '
                    'unless set). Ctrl+C stops the robot.')
    parser.add_argument('--out', default='artifacts', help='folder for the PNG files')
    parser.add_argument('--seconds', type=positive_seconds, default=6.0,
                        help='how long to drive the robot through FollowJointState')
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from sweetie_motion.model import load_robot_description
    from sweetie_motion.model.report import describe_model
    from sweetie_motion.plots import plot_kinematic_tree
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    print(describe_model(model))
    print(f'\nkinematic tree in the zero pose: '
          f'{plot_kinematic_tree(model, str(out / "robot_tree.png"))}')
    print('\nstarting the motion process on the virtual robot '
          f'(log: {out / "motion_process.log"})')
    process = start_motion_process(DEMO_NAMESPACE, out / 'motion_process.log')
    client = None
    try:
        client = DemoClient(DEMO_NAMESPACE)
        if not client.wait_ready(30.0):
            print('the motion process did not come up; see its log', file=sys.stderr)
            return 1
        # the stream's watch must know this client before it streams: killed then, the
        # demo's motion is held where a brake ends
        if not client.pendant.wait_heard(['follow_joint_state'], PENDANT_HEARD_TIMEOUT):
            print(f'the motion process has not heard the pendant of this demo within '
                  f'{PENDANT_HEARD_TIMEOUT:g} s: driving all the same (should the demo die, '
                  'its stream stops where it is)', file=sys.stderr)
        plot = drive_with_follow_joint_state(client, args.seconds,
                                             out / 'follow_joint_state.png')
        print(f'reference vs measured: {plot}')
        ok = play_by_name(client, 'greeting', out / 'greeting.png')
        return 0 if ok else 1
    finally:
        if client is not None:
            client.close()
        process.send_signal(2)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == '__main__':
    sys.exit(main())
