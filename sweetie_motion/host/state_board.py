"""
The state board: the cycle's newest poses in shared memory, for a process that publishes them.

The cycle writes the measured and the reference full pose of each tick into a small file on a
memory file system, mapped by both processes, under a sequence lock (odd while writing), and
wakes the reader through a pipe. The reader copies a consistent snapshot whenever it likes; the
writer never waits for it. This keeps rclpy out of the cycle process: rclpy holds the GIL while
it publishes, and a publish that waits inside DDS (up to 5 ms measured on a busy machine) would
hold up the cycle. Pure: no rclpy.
"""

import mmap
import os
import tempfile
import time
from typing import Optional, Tuple

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import JointVector
from sweetie_motion.host.transport import FILE_PREFIX, SHARED_MEMORY_DIR

#: header: sequence number, tick index, tick time (monotonic) [s]
_HEADER = 3


class StateBoard:
    """
    A mapped file of ``n`` joints: a header, the measured and the reference pose.

    Measured: position, velocity, effort; reference: position, velocity.

    :param path: the file (created with :meth:`create`, opened by the reader).
    :param size: number of joints.
    """

    def __init__(self, path: str, size: int) -> None:
        self.path = path
        self.size = size
        with open(path, 'r+b') as stream:
            self._mapping = mmap.mmap(stream.fileno(), self.nbytes(size))
        values = np.frombuffer(self._mapping, dtype=np.float64)
        self._header = values[:_HEADER].view(np.uint64)[:1]
        self._index = values[1:2]
        self._stamp = values[2:3]
        self._poses = values[_HEADER:].reshape(5, size)

    @staticmethod
    def nbytes(size: int) -> int:
        """Return the size of the board of ``size`` joints [bytes]."""
        return 8 * (_HEADER + 5 * size)

    @classmethod
    def create(cls, size: int) -> 'StateBoard':
        """Create a new board file (zeros) and map it."""
        descriptor, path = tempfile.mkstemp(prefix=f'{FILE_PREFIX}{os.getpid()}-board-',
                                            dir=SHARED_MEMORY_DIR)
        try:
            os.ftruncate(descriptor, cls.nbytes(size))
        finally:
            os.close(descriptor)
        return cls(path, size)

    @property
    def sequence(self) -> int:
        """Return the number of writes so far (times two; odd while one is in progress)."""
        return int(self._header[0])

    def write(self, measured: JointVector, reference: JointVector, index: int,
              stamp: float) -> None:
        """Publish one tick's poses (one writer only)."""
        header = self._header
        header[0] += 1  # odd: a reader that sees this retries
        poses = self._poses
        poses[0] = measured.position
        poses[1] = measured.velocity
        poses[2] = measured.effort
        poses[3] = reference.position
        poses[4] = reference.velocity
        self._index[0] = index
        self._stamp[0] = stamp
        header[0] += 1

    def read(self, timeout: float = 0.01) -> Optional[Tuple[JointVector, JointVector, int]]:
        """
        Return a consistent copy: (measured, reference, tick index), None before any write.

        Retries while a write is in progress, for at most ``timeout`` [s].
        """
        deadline = time.monotonic() + timeout
        while True:
            before = int(self._header[0])
            if before and not before % 2:
                poses = self._poses.copy()
                index, stamp = int(self._index[0]), float(self._stamp[0])
                if int(self._header[0]) == before:
                    return (JointVector(poses[0], poses[1], poses[2], stamp),
                            JointVector(poses[3], poses[4], np.zeros(self.size), stamp), index)
            if time.monotonic() > deadline or not before:
                return None

    def unlink(self) -> None:
        """Remove the file (the mappings stay valid)."""
        try:
            os.unlink(self.path)
        except OSError:
            pass


class BoardWriter:
    """
    Cycle stage 'observer': writes each tick to a new board and wakes its reader.

    The reader is woken through a pipe, at most at the rate set.

    :param size: number of joints.
    """

    name = 'state_board'

    def __init__(self, size: int) -> None:
        self.board = StateBoard.create(size)
        #: the reader waits on this end: a byte per tick to publish, end of file at close
        self.wake_read_fd, self.wake_fd = os.pipe()
        os.set_blocking(self.wake_fd, False)
        self.interval = 0.0
        self._next = 0.0

    def set_rate(self, rate: float) -> None:
        """Wake the reader at most ``rate`` times a second [Hz]."""
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0

    def update(self, tick: Tick) -> None:
        """Write the tick's poses; wake the reader when it is time to publish."""
        self.board.write(tick.measured, tick.reference, tick.index, tick.now)
        if tick.now + 1e-6 < self._next:
            return
        self._next = max(self._next + self.interval, tick.now)
        try:
            os.write(self.wake_fd, b'!')
        except (BlockingIOError, BrokenPipeError):
            pass  # a reader behind or gone: the board holds the newest tick anyway

    def close(self) -> None:
        """Tell the reader (end of file) and remove the board's file."""
        for descriptor in (self.wake_fd, self.wake_read_fd):
            try:
                os.close(descriptor)
            except OSError:
                pass
        self.board.unlink()


def wait_for_tick(wake_fd: int) -> bool:
    """Block until the writer signals a tick (True) or closed the pipe (False)."""
    return bool(os.read(wake_fd, 4096))  # a reader behind takes every pending signal at once
