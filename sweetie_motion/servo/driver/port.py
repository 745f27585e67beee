"""
The serial port of one line: open, read, write, lost, reopened; never raising into the driver.

A port that fails (a USB adapter unplugged, a pty closed) is *lost*: it is closed, the reason
kept, and :meth:`LinePort.reopen_due` says when to try again (every ``reconnect_interval``).
Reads and writes on a lost port do nothing. The bytes in and out are counted.
"""

import ctypes
import ctypes.util
import math
import os
from typing import Any, Callable, Optional

import serial

from sweetie_motion.servo.driver.config import BusPortError

#: an open port: a serial.Serial or a pyserial-like object (read, write, in_waiting, fileno,
#: close); pyserial ships no type stubs
SerialHandle = Any
#: opens a port: f(path, baud) -> a pyserial-like object
SerialFactory = Callable[[str, int], SerialHandle]


def open_serial(port: str, baud: int) -> SerialHandle:
    """Open a serial port for the driver: non-blocking reads, low latency where there is such."""
    handle = serial.Serial(port=port, baudrate=baud, timeout=0, write_timeout=0.5)
    try:
        handle.set_low_latency_mode(True)   # a pty has no such flag: the error is fine
    except (OSError, ValueError, AttributeError, serial.SerialException):
        pass
    return handle


class LinePort:
    """
    One line's port (see the module docstring).

    :param bus: the bus name (for messages).
    :param path: the port path.
    :param baud: line speed [Bd].
    :param reconnect_interval: pause between attempts to reopen a lost port [s].
    :param factory: opens the port (default :func:`open_serial`).
    """

    def __init__(self, bus: str, path: str, baud: int, reconnect_interval: float,
                 factory: Optional[SerialFactory] = None) -> None:
        self.bus = bus
        self.path = path
        self.baud = baud
        self.reconnect_interval = reconnect_interval
        self.factory = factory or open_serial
        self.handle: SerialHandle = None
        #: why the port was lost ('' while open)
        self.error = ''
        self.reopen_at = math.inf
        self.bytes_in = 0
        self.bytes_out = 0
        self.reopened = 0

    @property
    def is_open(self) -> bool:
        """Return whether the port is open."""
        return self.handle is not None

    def fileno(self) -> int:
        """Return the port's file descriptor (only while open)."""
        return self.handle.fileno()

    def connect(self) -> None:
        """
        Open the port the first time (a failure is the caller's).

        :raises BusPortError: it cannot be opened.
        """
        try:
            self.handle = self.factory(self.path, self.baud)
        except (serial.SerialException, OSError, ValueError) as error:
            raise BusPortError(self.bus, self.path, str(error)) from None
        self.error = ''

    def reopen(self, now: float) -> bool:
        """Try to open a lost port again if it is time; return whether it is open now."""
        if self.handle is not None:
            return True
        if now < self.reopen_at:
            return False
        try:
            self.handle = self.factory(self.path, self.baud)
        except (serial.SerialException, OSError, ValueError) as error:
            self.error = str(error)
            self.reopen_at = now + self.reconnect_interval
            return False
        self.reopen_at = math.inf
        self.error = ''
        self.reopened += 1
        return True

    def lose(self, now: float, error: BaseException) -> None:
        """Close a port that failed, keep why, try again after ``reconnect_interval``."""
        self.error = str(error) or type(error).__name__
        self.close()
        self.reopen_at = now + self.reconnect_interval

    def close(self) -> None:
        """Close the port (a dead port may fail in any way while closing)."""
        if self.handle is None:
            return
        try:
            self.handle.close()
        except Exception:   # noqa: B902 - closing a dead port may fail in any way
            pass
        self.handle = None

    def read(self, now: float) -> bytes:
        """Return what arrived (b'' on a lost port; a failure loses the port)."""
        if self.handle is None:
            return b''
        try:
            data = self.handle.read(max(1, self.handle.in_waiting))
        except (serial.SerialException, OSError, TypeError) as error:
            self.lose(now, error)
            return b''
        self.bytes_in += len(data or b'')
        return data or b''

    def write(self, data: bytes, now: float) -> bool:
        """Write ``data``; return whether it was written (a failure loses the port)."""
        if self.handle is None:
            return False
        try:
            self.handle.write(data)
        except (serial.SerialException, OSError) as error:
            self.lose(now, error)
            return False
        self.bytes_out += len(data)
        return True


def _gil_keeping_write() -> Callable[[int, bytes], int]:
    """
    Return write(fd, data) that does not release the GIL (libc through ctypes.PyDLL).

    os.write releases the GIL: the line thread it wakes takes the GIL and the cycle's send()
    waits for that thread's whole turn to get it back. Keeping the GIL, the woken thread runs
    when the cycle thread next sleeps, as the cycle's own sleeper does
    (:mod:`sweetie_motion.core.cycle`).
    """
    name = ctypes.util.find_library('c')
    try:
        libc = ctypes.PyDLL(name) if name else None
        function = libc.write if libc is not None else None
    except (OSError, AttributeError):
        function = None
    if function is None:
        return os.write
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    function.restype = ctypes.c_ssize_t
    return lambda fd, data: function(fd, data, len(data))


_write_keeping_gil = _gil_keeping_write()


class Waker:
    """A pipe that wakes a line thread out of its ``select`` (next to the port's descriptor)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def fileno(self) -> int:
        """Return the descriptor to wait on."""
        return self._read

    def wake(self) -> None:
        """Wake the thread (never blocks; a full pipe already wakes it)."""
        try:
            _write_keeping_gil(self._write, b'\0')
        except (BlockingIOError, OSError):
            pass

    def drain(self) -> None:
        """Empty the pipe (the thread is awake)."""
        try:
            while os.read(self._read, 4096):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        """Close the pipe."""
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
