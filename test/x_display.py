"""An X server of the tests' own: a free display number, its life, its window manager."""

import contextlib
import os
import shutil
import subprocess
from typing import Iterator


def free_display() -> int:
    """
    Return the number of an X display no server uses.

    pytest-xdist's workers look in ranges of their own (gw0 from 90, gw1 from 130, ...), so that
    two of them starting an X server at once do not pick the same number.
    """
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    first = 90 + 40 * int(worker[2:]) if worker.startswith('gw') else 90
    for number in range(first, first + 40):
        if not os.path.exists(f'/tmp/.X11-unix/X{number}') and \
                not os.path.exists(f'/tmp/.X{number}-lock'):
            return number
    raise RuntimeError(f'no free X display number in {first}..{first + 39}')


def die_with_parent() -> None:
    """
    Have the kernel stop the child when pytest ends (Linux prctl PR_SET_PDEATHSIG).

    The X server must outlive every Qt window: Qt ends the process when its X connection
    breaks, so it is not stopped at the fixture's teardown but when pytest itself exits.
    """
    import ctypes
    import signal
    ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, int(signal.SIGTERM))


def window_manager_runs(display: str) -> bool:
    """Return whether an EWMH window manager owns the display (it sets the desktop count)."""
    if not shutil.which('xdotool'):
        return False
    result = subprocess.run(['xdotool', 'get_num_desktops'], env={**os.environ,
                            'DISPLAY': display}, capture_output=True, timeout=10)
    return result.returncode == 0


def start_window_manager(display: str, timeout: float = 30.0) -> subprocess.Popen:
    """
    Start openbox on ``display`` and wait until it manages it; return its process.

    An openbox started the moment the X server's socket appears may find the server not yet
    answering and exit: it is started again until it runs (a fixed 20 s wait failed so).

    :raises RuntimeError: no window manager within ``timeout`` [s].
    """
    import time
    deadline = time.monotonic() + timeout
    process = None
    while time.monotonic() < deadline:
        if process is None or process.poll() is not None:
            process = subprocess.Popen(['openbox', '--sm-disable'],
                                       env={**os.environ, 'DISPLAY': display},
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       preexec_fn=die_with_parent)
        if window_manager_runs(display):
            return process
        time.sleep(0.2)
    raise RuntimeError(f'openbox did not manage {display} within {timeout:g} s')


@contextlib.contextmanager
def own_display(width: int, height: int) -> Iterator[str]:
    """
    Run an X server with a ``width`` x ``height`` screen and openbox on it; yield its name.

    :raises RuntimeError: Xvfb, openbox or xdotool is missing.
    """
    if not (shutil.which('Xvfb') and shutil.which('openbox') and shutil.which('xdotool')):
        raise RuntimeError('Xvfb, openbox and xdotool are needed (apt-get install xvfb '
                           'openbox xdotool)')
    import time
    number = free_display()
    name = f':{number}'
    server = subprocess.Popen(
        ['Xvfb', name, '-screen', '0', f'{width}x{height}x24', '-nolisten', 'tcp'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    manager = None
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(f'/tmp/.X11-unix/X{number}'):
            if time.monotonic() > deadline:
                raise RuntimeError(f'Xvfb {name} did not start within 20 s')
            time.sleep(0.05)
        manager = start_window_manager(name)
        yield name
    finally:
        for process in (manager, server):
            if process is not None:
                process.terminate()
                process.wait(10)


def close_window(display: str, window: int) -> None:
    """
    Ask ``window`` to close as a window manager's close button does (WM_DELETE_WINDOW).

    The window manager sends the window a WM_PROTOCOLS client message; so does this, through
    libX11 (ctypes), to exactly that window whatever has the focus (Alt+F4 closes the focused
    window, which may be a dialog beside it).
    """
    import ctypes

    class ClientMessage(ctypes.Structure):
        _fields_ = [('type', ctypes.c_int), ('serial', ctypes.c_ulong),
                    ('send_event', ctypes.c_int), ('display', ctypes.c_void_p),
                    ('window', ctypes.c_ulong), ('message_type', ctypes.c_ulong),
                    ('format', ctypes.c_int), ('data', ctypes.c_long * 5)]

    class Event(ctypes.Union):
        _fields_ = [('message', ClientMessage), ('pad', ctypes.c_long * 24)]

    xlib = ctypes.CDLL('libX11.so.6')
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XInternAtom.restype = ctypes.c_ulong
    xlib.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    xlib.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                                ctypes.POINTER(Event)]
    xlib.XFlush.argtypes = [ctypes.c_void_p]
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    connection = xlib.XOpenDisplay(display.encode())
    if not connection:
        raise RuntimeError(f'cannot open display {display}')
    try:
        event = Event()
        event.message.type = 33                                   # ClientMessage
        event.message.window = window
        event.message.message_type = xlib.XInternAtom(connection, b'WM_PROTOCOLS', 0)
        event.message.format = 32
        event.message.data[0] = xlib.XInternAtom(connection, b'WM_DELETE_WINDOW', 0)
        event.message.data[1] = 0                                 # CurrentTime
        xlib.XSendEvent(connection, window, 0, 0, ctypes.byref(event))
        xlib.XFlush(connection)
    finally:
        xlib.XCloseDisplay(connection)
