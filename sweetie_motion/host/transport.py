"""
Messages between the ROS side and the cycle process: pickle frames, large arrays through memory.

A :class:`Channel` sends Python objects over one end of a pipe. Objects are pickled with protocol
5; numpy arrays larger than ``inline_limit`` bytes travel out of band: they are written into one
file on a memory file system (``/dev/shm``) and the receiver maps that file and unpickles the
arrays as read-only views of the mapping, without copying them. A 10 000-point trajectory's
spline (15 MB) thus costs the receiving process a ``mmap`` instead of a copy made while it
holds its GIL, and its release an ``munmap`` made without it. The file is unlinked as soon as
it is mapped; the memory goes when the last array using it does.
"""

import importlib
import mmap
from multiprocessing.connection import Connection
import os
import pickle
import tempfile
import threading
from typing import Any, List, Tuple

#: arrays at least this large [bytes] go through a memory-mapped file instead of the pipe
INLINE_LIMIT = 256 * 1024

#: where the out-of-band files are written: RAM, not a disk
SHARED_MEMORY_DIR = '/dev/shm' if os.path.isdir('/dev/shm') else tempfile.gettempdir()

#: out-of-band files of one sender start with this, followed by its process id
FILE_PREFIX = 'sweetie_motion-'


class Channel:
    """
    One direction of a pipe carrying pickled objects; ``send`` may be called from any thread.

    :param connection: a multiprocessing Connection (one end of a pipe).
    :param inline_limit: arrays below this size [bytes] are copied through the pipe.
    """

    def __init__(self, connection: Connection, inline_limit: int = INLINE_LIMIT) -> None:
        self.connection = connection
        self.inline_limit = inline_limit
        self._send_lock = threading.Lock()

    def send(self, message: object) -> None:
        """
        Send ``message`` (any picklable object).

        :raises OSError: the other end is gone (BrokenPipeError).
        """
        large: List[pickle.PickleBuffer] = []

        def out_of_band(buffer: pickle.PickleBuffer) -> bool:
            if buffer.raw().nbytes < self.inline_limit:
                return True  # in band: copied into the pickle stream
            large.append(buffer)
            return False
        data = pickle.dumps(message, protocol=5, buffer_callback=out_of_band)
        path, spans = (None, []) if not large else _write_buffers(large)
        frame = pickle.dumps((data, path, spans), protocol=5)
        with self._send_lock:
            self.connection.send_bytes(frame)

    def recv(self) -> Any:
        """
        Receive the next object (blocks; one reader at a time).

        :raises EOFError: the other end closed the pipe.
        """
        data, path, spans = pickle.loads(self.connection.recv_bytes())
        buffers = _map_buffers(path, spans) if path else None
        return pickle.loads(data, buffers=buffers)

    def close(self) -> None:
        """Close this end of the pipe."""
        self.connection.close()


def _write_buffers(buffers: List[pickle.PickleBuffer]) -> Tuple[str, List[Tuple[int, int]]]:
    descriptor, path = tempfile.mkstemp(prefix=f'{FILE_PREFIX}{os.getpid()}-',
                                        dir=SHARED_MEMORY_DIR)
    spans = []
    offset = 0
    try:
        for buffer in buffers:
            view = buffer.raw()
            spans.append((offset, view.nbytes))
            written = 0
            while written < view.nbytes:  # os.write releases the GIL while it copies
                written += os.write(descriptor, view[written:])
            offset += view.nbytes
    except BaseException:
        os.close(descriptor)
        os.unlink(path)
        raise
    os.close(descriptor)
    return path, spans


def _map_buffers(path: str, spans: List[Tuple[int, int]]) -> List[memoryview]:
    # mapped, not read: no copy, and a mapping is unmapped with the GIL released (freeing a
    # 64 MB bytearray held the GIL for 4-12 ms, unmapping as much for under 2 ms)
    with open(path, 'rb') as stream:
        size = os.fstat(stream.fileno()).st_size
        mapping = mmap.mmap(stream.fileno(), size, access=mmap.ACCESS_READ) if size else None
    os.unlink(path)  # the mapping stays valid; the memory goes with the last view
    if mapping is None:
        return [memoryview(b'') for _ in spans]
    whole = memoryview(mapping)
    return [whole[offset:offset + size] for offset, size in spans]


def remove_leftovers(pid: int) -> int:
    """Delete out-of-band files a process ``pid`` wrote that nobody mapped; return how many."""
    prefix = f'{FILE_PREFIX}{pid}-'
    removed = 0
    try:
        names = os.listdir(SHARED_MEMORY_DIR)
    except OSError:
        return 0
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(SHARED_MEMORY_DIR, name))
                removed += 1
            except OSError:
                pass
    return removed


class RemoteError(Exception):
    """An error raised on the other side that cannot be rebuilt here as its own class."""


def encode_error(error: BaseException) -> Tuple[str, str, str, dict]:
    """Return a picklable form of an exception: (module, class name, message, attributes)."""
    attributes = {}
    for key, value in getattr(error, '__dict__', {}).items():
        try:
            pickle.dumps(value)
        except Exception:  # noqa: B902 -- whatever cannot travel stays behind
            continue
        attributes[key] = value
    cls = type(error)
    return cls.__module__, cls.__qualname__, str(error), attributes


def decode_error(encoded: Tuple[str, str, str, dict]) -> BaseException:
    """
    Rebuild an exception from :func:`encode_error` (same class, message and attributes).

    Exceptions whose class is not importable here become :class:`RemoteError`.
    """
    module_name, qualname, message, attributes = encoded
    try:
        module = importlib.import_module(module_name)
        cls: object = module
        for part in qualname.split('.'):
            cls = getattr(cls, part)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise TypeError(qualname)
        error = cls.__new__(cls)
        BaseException.__init__(error, message)
        error.__dict__.update(attributes)
        return error
    except Exception:  # noqa: B902 -- fall back to a plain error with the same text
        return RemoteError(f'{qualname}: {message}')
