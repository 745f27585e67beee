"""
A window (the editor or the console) in a process of its own, driven as a person drives it.

The window runs through test/helpers/window_harness.py (the product's own ``main``, plus a
reader of the test's commands). Keys and clicks that matter go through the X server (xdotool),
signals through kill(2): what a person's keyboard, mouse and terminal do.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

from ros_util import HERE, ROOT

HARNESS = os.path.join(HERE, 'helpers', 'window_harness.py')


class WindowProcess:
    """
    ``sweetie-motion editor|console`` started with ``args`` on ``display``.

    :param which: 'editor' or 'console'.
    :param env: the environment (ROS_DOMAIN_ID, ...); DISPLAY is set to ``display``.
    """

    def __init__(self, which: str, args: List[str], display: str, env: dict) -> None:
        self.which = which
        self.display = display
        self.env = {**env, 'DISPLAY': display, 'QT_QPA_PLATFORM': 'xcb'}
        self.popen = subprocess.Popen(
            [sys.executable, HARNESS, which, *args], cwd=ROOT, env=self.env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            bufsize=1)
        self.lines: List[str] = []
        self._replies: 'queue.Queue[dict]' = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.popen.stdout:
            line = line.rstrip('\n')
            with self._lock:
                self.lines.append(line)
            if line.startswith('harness: '):
                self._replies.put(json.loads(line[len('harness: '):]))

    def output(self) -> str:
        """Return what the window's process printed so far."""
        with self._lock:
            return '\n'.join(self.lines)

    def alive(self) -> bool:
        """Return whether the process runs."""
        return self.popen.poll() is None

    def command(self, line: str, timeout: float = 15.0) -> dict:
        """Send a harness command; return its answer."""
        while not self._replies.empty():
            self._replies.get_nowait()
        self.popen.stdin.write(line + '\n')
        self.popen.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self._replies.get(timeout=0.1)
            except queue.Empty:
                if not self.alive():
                    break
                continue
            if 'pid' in reply:
                continue
            if 'error' in reply:
                raise AssertionError(f'{line}: {reply["error"]}\n{self.output()[-3000:]}')
            return reply
        raise AssertionError(f'no answer to {line!r} within {timeout:g} s\n'
                             f'{self.output()[-3000:]}')

    def state(self) -> dict:
        """Return what the window shows now: moving, questions, title, message."""
        return self.command('state')

    def xdotool(self, *args: str) -> str:
        """Run xdotool on the window's display; return what it printed."""
        done = subprocess.run(['xdotool', *args], env=self.env, capture_output=True, text=True,
                              timeout=20)
        assert done.returncode == 0, f'xdotool {" ".join(args)}: {done.stderr}'
        return done.stdout

    def middle_of(self, name: str) -> Tuple[int, int]:
        """Return the middle of the widget ``name`` on the screen (it must be visible)."""
        where = self.command(f'geometry {name}')
        assert where['visible'], f'{name} is not visible'
        return where['x'] + where['width'] // 2, where['y'] + where['height'] // 2

    def click(self, name: str) -> None:
        """Click the middle of the widget ``name`` with the X server's mouse."""
        self.click_at(*self.middle_of(name))

    def click_at(self, x: int, y: int) -> None:
        """Click the point (x, y) of the screen with the X server's mouse."""
        # no --sync: it waits for a motion, and there is none when the pointer is there already
        self.xdotool('mousemove', str(x), str(y), 'click', '1')

    def key(self, key: str) -> None:
        """Press ``key`` on the X server's keyboard (it goes to the focused window)."""
        self.xdotool('key', key)

    def signal(self, number: int) -> None:
        """Send a signal to the window's process (Ctrl+C in its terminal: SIGINT)."""
        self.popen.send_signal(number)

    def wait_exit(self, timeout: float = 20.0) -> int:
        """Wait for the process to end; return its exit code."""
        return self.popen.wait(timeout)

    def close(self) -> Optional[int]:
        """Kill the process if it still runs (the end of a test); return its exit code."""
        if self.alive():
            self.popen.send_signal(signal.SIGKILL)
        try:
            return self.popen.wait(10)
        finally:
            self.popen.stdin.close()
