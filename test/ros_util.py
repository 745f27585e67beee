"""Helpers for tests that talk ROS with other processes over real DDS."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from typing import Iterator, List, Optional
import xml.dom.minidom

from sweetie_motion.ros.background import BackgroundNode
from waiting import wait_for  # noqa: F401 (the ROS tests' one way to wait)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def joint_limits(urdf: str, joints):
    """Return joint -> (lower, upper, velocity) from the URDF's <limit>, as rqt_jtc reads them."""
    robot = xml.dom.minidom.parseString(urdf).getElementsByTagName('robot')[0]
    limits = {}
    for joint in robot.getElementsByTagName('joint'):
        name = joint.getAttribute('name')
        if name in joints and joint.getAttribute('type') != 'fixed':
            limit = joint.getElementsByTagName('limit')[0]
            limits[name] = tuple(float(limit.getAttribute(k))
                                 for k in ('lower', 'upper', 'velocity'))
    return limits


class Process:
    """A child process whose output goes to a log file shown when a test fails."""

    def __init__(self, args: List[str], name: str, env: Optional[dict] = None) -> None:
        self.name = name
        self.log = tempfile.NamedTemporaryFile(prefix=f'{name}-', suffix='.log', delete=False)
        # The environment passes through unchanged: the ROS wheels' bootstrap variables must
        # travel together (see toolchain notes).
        self.popen = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                      env=env or os.environ.copy(), cwd=ROOT)

    def output(self) -> str:
        """Return everything the process has printed so far."""
        self.log.flush()
        with open(self.log.name, encoding='utf-8', errors='replace') as stream:
            return stream.read()

    def alive(self) -> bool:
        """Return True while the process runs."""
        return self.popen.poll() is None

    def stop(self, sig: int = signal.SIGINT, timeout: float = 10.0) -> int:
        """Send ``sig`` and wait; kill after ``timeout``. Return the exit code."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        return self.popen.returncode


@contextlib.contextmanager
def python_process(script: str, *args: str, name: str = 'child') -> Iterator[Process]:
    """Run ``python script args...`` for the duration of a with-block; print its log on error."""
    process = Process([sys.executable, script, *args], name)
    try:
        yield process
    except BaseException:
        process.stop()
        sys.stderr.write(f'\n----- output of {name} -----\n{process.output()}\n')
        raise
    finally:
        process.stop()
        os.unlink(process.log.name)


class RosPeer(BackgroundNode):
    """The package's background node (context, node, spinning thread) in a test's domain."""

    def __init__(self, name: str, domain_id: Optional[int] = None) -> None:
        super().__init__(name, domain_id=domain_id)

    def __enter__(self) -> 'RosPeer':
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def wait_future(future, timeout: float, message: str = 'future'):
    """Wait for an rclpy future being completed by another thread's executor."""
    wait_for(future.done, timeout, message=message)
    return future.result()


def call_idempotent(client, request, timeout: float, every: float = 3.0):
    """
    Call a service whose request may be repeated; ask again every ``every`` s without answer.

    Fast DDS drops the answer to a client it has not matched yet ("failed to send response
    (timeout)"); a request that does the same the second time (a query, set to a value) is
    simply sent again.
    """
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        end = min(deadline, time.monotonic() + every)
        while not future.done() and time.monotonic() < end:
            time.sleep(0.01)
        if future.done():
            return future.result()
        client.remove_pending_request(future)
        assert time.monotonic() < deadline, f'no answer from {client.srv_name} in {timeout} s'
