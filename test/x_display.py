"""An X server of the tests' own: a free display number, its life, its window manager."""

import os
import shutil
import subprocess


def free_display() -> int:
    """Return the number of an X display no server uses."""
    for number in range(90, 200):
        if not os.path.exists(f'/tmp/.X11-unix/X{number}') and \
                not os.path.exists(f'/tmp/.X{number}-lock'):
            return number
    raise RuntimeError('no free X display number in 90..199')


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
