"""
The state board: the cycle's recent poses in shared memory, for a process that publishes them.

The cycle writes the measured and the reference full pose of each tick into the next slot of a
ring of :data:`SLOTS` ticks in a small file on a memory file system, mapped by both processes,
each slot under a sequence lock (odd while writing), and wakes the reader through a pipe. The
reader copies the ticks it has not seen yet whenever it likes; the writer never waits for it. A
reader that was held up for a moment (its process busy, a publish waiting inside DDS) therefore
catches up on every tick it was due to publish instead of skipping to the newest, so the
published stream has no gap while the reader is less than :data:`SLOTS` ticks behind. This
keeps rclpy out of the cycle process: rclpy holds the GIL while it publishes, and a publish
that waits inside DDS (up to 5 ms measured on a busy machine) would hold up the cycle. Pure: no
rclpy.
"""

import mmap
import os
import tempfile
import time
from typing import List, Optional, Tuple

import numpy as np

from sweetie_motion.core.cycle import Tick
from sweetie_motion.core.ports import JointVector
from sweetie_motion.host.transport import FILE_PREFIX, SHARED_MEMORY_DIR

#: ticks the ring holds: how far (0.64 s at 100 Hz) a reader may fall behind without a gap
SLOTS = 64
#: slot header: sequence number, tick index, tick time (monotonic) [s], to be published (0/1)
_SLOT_HEADER = 4
#: board header: the newest slot's tick index + 1 (0: nothing written yet)
_HEADER = 1

#: a tick of the board: (measured, reference, tick index)
BoardTick = Tuple[JointVector, JointVector, int]


class StateBoard:
    """
    A mapped file of ``n`` joints: a header and a ring of ticks (measured and reference pose).

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
        self._newest = values[:_HEADER].view(np.uint64)
        slots = values[_HEADER:].reshape(SLOTS, _SLOT_HEADER + 5 * size)
        self._sequence = slots[:, 0].view(np.uint64)
        self._index = slots[:, 1]
        self._stamp = slots[:, 2]
        self._publish = slots[:, 3]
        self._poses = slots[:, _SLOT_HEADER:].reshape(SLOTS, 5, size)

    @staticmethod
    def nbytes(size: int) -> int:
        """Return the size of the board of ``size`` joints [bytes]."""
        return 8 * (_HEADER + SLOTS * (_SLOT_HEADER + 5 * size))

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
    def newest(self) -> Optional[int]:
        """Return the tick index of the newest write (None before any)."""
        value = int(self._newest[0])
        return value - 1 if value else None

    def write(self, measured: JointVector, reference: JointVector, index: int,
              stamp: float, publish: bool = True) -> None:
        """
        Write one tick's poses into the ring (one writer only).

        :param publish: whether the reader is to publish this tick (the publish rate may be
            below the cycle rate).
        """
        slot = index % SLOTS
        sequence = self._sequence
        sequence[slot] += 1  # odd: a reader that sees this retries or skips the slot
        poses = self._poses[slot]
        poses[0] = measured.position
        poses[1] = measured.velocity
        poses[2] = measured.effort
        poses[3] = reference.position
        poses[4] = reference.velocity
        self._index[slot] = index
        self._stamp[slot] = stamp
        self._publish[slot] = 1.0 if publish else 0.0
        sequence[slot] += 1
        self._newest[0] = index + 1

    def _read_slot(self, index: int, deadline: float) -> Optional[Tuple[BoardTick, bool]]:
        slot = index % SLOTS
        while True:
            before = int(self._sequence[slot])
            if before and not before % 2:
                poses = self._poses[slot].copy()
                written, stamp = int(self._index[slot]), float(self._stamp[slot])
                publish = bool(self._publish[slot])
                if int(self._sequence[slot]) == before:
                    if written != index:
                        return None  # overwritten by a newer tick, or not that one
                    return ((JointVector(poses[0], poses[1], poses[2], stamp),
                             JointVector(poses[3], poses[4], np.zeros(self.size), stamp),
                             index), publish)
            if time.monotonic() > deadline or not before:
                return None

    def read(self, timeout: float = 0.01) -> Optional[BoardTick]:
        """
        Return a consistent copy of the newest tick: (measured, reference, tick index).

        None before any write. Retries while a write is in progress, for at most ``timeout``.
        """
        deadline = time.monotonic() + timeout
        for _ in range(3):  # the writer may move on while we read: take the newer one then
            newest = self.newest
            if newest is None:
                return None
            found = self._read_slot(newest, deadline)
            if found is not None:
                return found[0]
        return None

    def read_since(self, last: Optional[int], timeout: float = 0.01) -> List[BoardTick]:
        """
        Return the ticks to publish that are newer than tick ``last``, oldest first.

        At most the ring's :data:`SLOTS` newest ticks; ``last`` None: only the newest tick to
        publish.

        :param last: the index of the newest tick the caller has already.
        """
        newest = self.newest
        if newest is None:
            return []
        deadline = time.monotonic() + timeout
        first = newest if last is None else max(last + 1, newest - SLOTS + 2)
        ticks = []
        for index in range(first, newest + 1):
            found = self._read_slot(index, deadline)
            if found is not None and found[1]:
                ticks.append(found[0])
        if last is None and not ticks:
            newest_tick = self.read(timeout)
            return [newest_tick] if newest_tick is not None else []
        return ticks

    def unlink(self) -> None:
        """Remove the file (the mappings stay valid)."""
        try:
            os.unlink(self.path)
        except OSError:
            pass


class BoardWriter:
    """
    Cycle stage of role StageRole.OBSERVER: writes each tick to a new board and wakes its reader.

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
        publish = tick.now + 1e-6 >= self._next
        self.board.write(tick.measured, tick.reference, tick.index, tick.now, publish)
        if not publish:
            return
        self._next = max(self._next + self.interval, tick.now)
        try:
            os.write(self.wake_fd, b'!')
        except (BlockingIOError, BrokenPipeError):
            pass  # a reader behind or gone: the board holds the ticks anyway

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
