"""Helpers for tests that talk ROS with other processes over real DDS."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Iterator, List, Optional

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from waiting import wait_for  # noqa: F401 (the ROS tests' one way to wait)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


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


class RosPeer:
    """An rclpy context + node + executor thread living in the test process."""

    def __init__(self, name: str, domain_id: Optional[int] = None) -> None:
        self.context = Context()
        kwargs = {'domain_id': domain_id} if domain_id is not None else {}
        rclpy.init(context=self.context, **kwargs)
        self.node = Node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: B902 -- the context shuts down under the executor
            pass

    def close(self) -> None:
        """Shut the node and context down."""
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self._thread.join(5)

    def __enter__(self) -> 'RosPeer':
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def wait_future(future, timeout: float, message: str = 'future'):
    """Wait for an rclpy future being completed by another thread's executor."""
    wait_for(future.done, timeout, message=message)
    return future.result()
