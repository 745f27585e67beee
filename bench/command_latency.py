#!/usr/bin/env python3
"""
How long a command takes against a running bringup (#38 item 6), before and after, same run.

Starts one `sweetie-motion bringup` (the pony, virtual robot) and times, from the start of the
process: `list`, `status`, `show nod` (until they exit), `play nod` (until its first progress
line: the goal was accepted), `play nodd` (until it says the name is unknown) and
`servo status` (until it says there is no servo bus). Each command runs with the package as it
is now ("after") and as it was at ``--before`` (a git revision, exported to a temporary
folder; default: the commit before the fix), interleaved, against the same bringup; and the
floor of any command, a Python that imports rclpy. Prints p50 of each, after/before and
after/floor; and the anchor on its own terms: the smallest ROS command there is, a plain
rclpy client that waits for one service of the same bringup (its storage's ``get_state``),
calls it once and exits. The issue's target, p50 <= 1 s for ``list``, ``status``, ``show``
and ``play`` (accepted), is checked as measured here, beside after/anchor. ROS_DOMAIN_ID 158
unless set, discovery on this machine.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from targets import Targets  # noqa: E402  (bench/ is not a package)

#: the last commit before the causes were fixed
BEFORE = 'ba5b64f'
NAMESPACE = 'bench_latency'
#: the commands the issue wants answered within a second (p50)
WITHIN_A_SECOND = ('list', 'status', 'show', 'play (accepted)')
#: the anchor: a plain rclpy client of one service of the bringup (start, discover, call, exit)
ANCHOR = f"""
import rclpy
from lifecycle_msgs.srv import GetState
rclpy.init()
node = rclpy.create_node('latency_anchor')
client = node.create_client(GetState, '/{NAMESPACE}/trajectory_storage/get_state')
assert client.wait_for_service(timeout_sec=30.0)
future = client.call_async(GetState.Request())
rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
assert future.result() is not None
node.destroy_node()
rclpy.shutdown()
"""
COMMANDS = {'list': ['list'], 'status': ['status'], 'show': ['show', 'nod'],
            'play (accepted)': ['play', 'nod'], 'play nodd (told)': ['play', 'nodd'],
            'servo status, no bus (told)': ['servo', 'status']}


def timed(argv: List[str], cwd: str, first_line: bool = False, limit: float = 60.0) -> float:
    """Run ``argv``; return the seconds until it exits (or until its first output line)."""
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ))
    if first_line:
        process.stdout.readline()
        elapsed = time.monotonic() - started
        process.send_signal(signal.SIGINT)   # the motion is cancelled: it holds
        process.communicate(timeout=limit)
        return elapsed
    process.communicate(timeout=limit)
    return time.monotonic() - started


def export(revision: str) -> str:
    """Return a temporary folder holding the package as it was at ``revision``."""
    folder = tempfile.mkdtemp(prefix='before-')
    archive = subprocess.run(['git', 'archive', revision, 'sweetie_motion'], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(['tar', '-x', '-C', folder], input=archive, check=True)
    # compiled as the package is: the comparison is of the code (the venv's bytecode, which
    # setup now writes, serves both)
    subprocess.run([sys.executable, '-m', 'compileall', '-q', folder], check=True,
                   stdout=subprocess.DEVNULL)
    return folder


def main(argv: Optional[List[str]] = None) -> int:
    """Measure; print the table; return the number of targets missed."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=7, help='runs of each command and version')
    parser.add_argument('--before', default=BEFORE, help='the git revision to compare with')
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_DOMAIN_ID', '158')
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    before = export(args.before)
    cli = [sys.executable, '-m', 'sweetie_motion.cli']
    log = tempfile.NamedTemporaryFile(prefix='bringup-', suffix='.log', delete=False)
    bringup = subprocess.Popen(cli + ['bringup', '--namespace', NAMESPACE, '--storage-dir',
                                      tempfile.mkdtemp(prefix='store-')],
                               stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    times: Dict[str, Dict[str, List[float]]] = {}
    try:
        deadline = time.monotonic() + 180
        while b'motion process ready' not in open(log.name, 'rb').read():
            if bringup.poll() is not None or time.monotonic() > deadline:
                print(open(log.name).read())
                return 1
            time.sleep(0.2)
        for _ in range(2):   # the bringup settles; its storage judges its motions once
            timed(cli + ['list', '--namespace', NAMESPACE], ROOT)
        floor, anchor = [], []
        for run in range(args.runs):
            floor.append(timed([sys.executable, '-c', 'import rclpy'], ROOT))
            anchor.append(timed([sys.executable, '-c', ANCHOR], ROOT))
            for name, words in COMMANDS.items():
                slow = name.endswith('(told)') and run >= 3   # before: up to the timeout
                for version, cwd in (('after', ROOT), ('before', before)):
                    if slow:
                        continue
                    times.setdefault(name, {}).setdefault(version, []).append(timed(
                        cli + words + ['--namespace', NAMESPACE], cwd,
                        first_line=name == 'play (accepted)'))
            print(f'run {run + 1} of {args.runs} done', flush=True)
    finally:
        bringup.send_signal(signal.SIGINT)
        try:
            bringup.wait(30)
        except subprocess.TimeoutExpired:
            bringup.kill()
        os.unlink(log.name)
    base, plain = statistics.median(floor), statistics.median(anchor)
    print(f'\nfloor (python -c "import rclpy"): p50 {base:.2f} s; anchor (a plain rclpy client '
          f'of one service): p50 {plain:.2f} s ({min(anchor):.2f}-{max(anchor):.2f}); load '
          f'average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n')
    print(f'{"command":30s} {"before p50":>11s} {"after p50":>10s} {"after/before":>13s} '
          f'{"after/floor":>12s} {"after/anchor":>13s} {"after range":>12s}')
    targets = Targets('command latency against a running bringup')
    for name, by in times.items():
        old, new = statistics.median(by['before']), statistics.median(by['after'])
        spread = f'{min(by["after"]):.2f}-{max(by["after"]):.2f}'
        print(f'{name:30s} {old:10.2f}s {new:9.2f}s {new / old:13.2f} {new / base:12.2f} '
              f'{new / plain:13.2f} {spread:>12s}')
        targets.check(f'{name}: after / before', f'{new / old:.2f}', '< 1', new < old)
    for name in WITHIN_A_SECOND:
        new = statistics.median(times[name]['after'])
        targets.check(f'{name}: p50 [s]', f'{new:.2f}', '<= 1', new <= 1.0)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
