"""
The cases of the stop matrix: a window put in a state, a stop action, what must follow.

A :class:`StopBench` holds one robot (its bringup runs apart from the windows), the peer that
records its reference and the laptop display; :meth:`StopBench.open_window` starts a window on it.
Each window kind has its states (how to get the robot moving, a question open beside it) in
:class:`ConsoleStates` and :class:`EditorStates`.
"""

import os
import signal
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

from stopping import AT_REST, judge_stop, speed_of, StopFigures, wait_until_moving
from waiting import wait_for
from window_process import WindowProcess
from x_display import close_window

#: what a person's stop may take to reach the cycle (a click, a key, a signal) [s], a bound a
#: loaded 2-core machine meets: beside a busy loop and the other test worker the stops of a
#: typical run came to rest 0.03-0.26 s after the act (fresh clone runs T-W), the slowest 0.47 s
#: with 0.08 s of braking (run R: the window's event loop starved while another test peaked),
#: which 0.3 s failed
REACTION = 0.5
#: after kill -9: the pendant's lease (0.3 s), a check period (0.05 s) and the cancel's way [s]
KILLED_REACTION = 0.5
#: the ways that leave the window open whatever it shows
KEEP_WINDOW = ('button', 'Esc', 'F12')
#: the figures of every case of the session (conftest writes them to artifacts/)
FIGURES: List[Dict[str, object]] = []


class StopBench:
    """
    A robot, its recorder and the display the windows open on.

    :param which: 'console' or 'editor'; :param peer: records the reference (MotionClient of
        test/motion_process.py); :param model: the robot's configured model;
    :param joints: the joints the window's motions move; :param display: the X display;
    :param window_args: the window's options (namespace, robot ...).
    """

    def __init__(self, which: str, peer, model, joints: List[str], display: str,
                 window_args: List[str]) -> None:
        self.which = which
        self.peer = peer
        self.model = model
        self.joints = joints
        self.display = display
        self.window_args = window_args
        self.stop_button = 'stop_button' if which == 'console' else 'stop_all_button'

    def open_window(self, workspace: Optional[str] = None) -> WindowProcess:
        """Start a window with a fresh workspace; wait until every part it uses answers."""
        workspace = workspace or tempfile.mkdtemp(prefix=f'stops_{self.which}_')
        own = (['--workspace', workspace] if self.which == 'console' else
               ['--ros-args', '-p', f'workspace_dir:={workspace}'])
        window = WindowProcess(self.which, self.window_args + own, self.display,
                               dict(os.environ))
        window.workspace = workspace
        try:
            wait_for(lambda: 'the window is open' in window.output() or not window.alive(),
                     60, period=0.1, message=f'the {self.which} window open')
            assert window.alive(), window.output()
            wait_for(lambda: all(v for k, v in window.state()['links'].items()
                                 if k != 'gripper'), 60, period=0.2,
                     message=f'the {self.which} connected to every part')
        except BaseException:
            window.close()
            raise
        return window

    # --- acting ---------------------------------------------------------------------------------

    def main_window_id(self, window: WindowProcess) -> str:
        """Return the X id of the window's main window (not of a question beside it)."""
        title = 'sweetie-motion console' if self.which == 'console' else 'trajectory editor'
        found = window.xdotool('search', '--onlyvisible', '--pid', str(window.popen.pid),
                               '--name', title).split()
        assert found, f'no visible window titled {title!r}'
        return found[0]

    def act(self, window: WindowProcess, way: str) -> float:
        """Do ``way`` to the window; return when (time.time())."""
        if way in ('Esc', 'F12') and not window.state()['questions']:
            window.command('activate')          # the key goes to the focused window
        target = self.main_window_id(window) if way == 'close' else ''
        # where the button is, asked before the act: the window's answer is the harness's
        # round trip, not a part of the person's stop (under load it took tenths of a second)
        button = window.middle_of(self.stop_button) if way == 'button' else None
        acted = time.time()
        if way == 'button':
            window.click_at(*button)
        elif way == 'Esc':
            window.key('Escape')
        elif way == 'F12':
            window.key('F12')
        elif way == 'close':
            # what the window manager sends when the title bar's close button is clicked
            close_window(self.display, int(target))
        else:
            window.signal({'SIGINT': signal.SIGINT, 'SIGTERM': signal.SIGTERM,
                           'kill': signal.SIGKILL}[way])
        return acted

    def judge(self, window: WindowProcess, acted: float, state: str, way: str,
              outcome: str) -> StopFigures:
        """Check that the robot came to rest and stays there; record the figures."""
        reaction = KILLED_REACTION if way == 'kill' else REACTION
        figures = judge_stop(self.peer, self.model, self.joints, acted, reaction)
        FIGURES.append({'window': self.which, 'state': state, 'way': way,
                        'speed': figures.speed, 'rest_after': max(figures.rest_after, 0.0),
                        'braking': figures.braking_time, 'outcome': outcome})
        print(f'{self.which} {state} {way}: {figures.speed:.2f} rad/s, at rest after '
              f'{figures.rest_after:.2f} s (braking {figures.braking_time:.2f} s); {outcome}')
        assert figures.within(reaction), '\n'.join(figures.lines) + f'\n{figures}\n' \
            f'the window said:\n{window.output()[-3000:]}'
        return figures

    def at_rest_now(self) -> bool:
        """Return whether the newest reference is at rest."""
        with self.peer.lock:
            msg = self.peer.reference
        return msg is not None and speed_of(msg, self.joints) < AT_REST


def wait_question(window: WindowProcess, name: str, timeout: float = 15.0) -> dict:
    """Wait until the question ``name`` is open; return the window's state."""
    found: Dict[str, dict] = {}

    def open_() -> bool:
        found['state'] = window.state()
        return name in found['state']['questions']
    wait_for(open_, timeout, period=0.05, message=f'the question {name}')
    return found['state']


def close_questions(window: WindowProcess) -> None:
    """Answer every open question with Cancel (or close the file dialog)."""
    for _ in range(5):
        questions = window.state()['questions']
        if not questions:
            return
        window.command('answer Cancel')
        wait_for(lambda: len(window.state()['questions']) < len(questions), 10, period=0.05,
                 message='the question closed')
    raise AssertionError('questions keep opening')


def wait_still(window: WindowProcess, timeout: float = 20.0) -> None:
    """Wait until nothing the window started moves (its stop confirmed)."""
    wait_for(lambda: not window.state()['moving'], timeout, period=0.05,
             message='the window saying nothing moves')


class WindowStates:
    """How to put a window in each state of the matrix (the subclass for each window)."""

    #: the states the robot moves in (beside the questions)
    MOVING: Tuple[str, ...] = ('moving',)

    def __init__(self, bench: StopBench) -> None:
        self.bench = bench

    def rest(self, window: WindowProcess) -> str:
        """Bring the window to a state at rest; return its name."""
        raise NotImplementedError

    def start_motion(self, window: WindowProcess) -> None:
        """Start a motion of the window and wait until the robot is under way."""
        raise NotImplementedError

    def questions(self) -> Dict[str, Callable[[WindowProcess], None]]:
        """Return, per dialog state, how to open its question (the robot moving)."""
        raise NotImplementedError

    def make_unsaved(self, window: WindowProcess) -> None:
        """Make an unsaved edit."""
        raise NotImplementedError

    def enter(self, window: WindowProcess, state: str) -> None:
        """Put the window in ``state`` ('moving', 'dialog: ...', 'idle', ...)."""
        if state == 'idle':
            wait_still(window)
            return
        self.start_motion(window)
        if state.startswith('dialog: '):
            self.questions()[state[len('dialog: '):]](window)
            wait_until_moving(self.bench.peer, self.bench.joints, speed=0.05)
