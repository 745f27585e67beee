"""Helpers of the console tests: the arm's bringup, a console window, a person's actions."""

import contextlib
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence

from editor_helpers import click, screenshot as _screenshot, until
import numpy as np

#: the arm's bringup, as a user starts it
CONFIG = 'winding_arm_motion.yaml'
#: the nodes the console uses
NODES = ['motion', 'follow_joint_state', 'joint_trajectory', 'cartesian', 'gripper']
#: the arm's joints
JOINTS = [f'joint{k}' for k in range(1, 7)]

__all__ = ['click', 'until']


def start_arm(namespace: str, check_exit: bool = True):
    """Return the context manager of the arm's motion process in ``namespace``."""
    from motion_process import motion_process
    return motion_process(CONFIG, namespace, check_exit=check_exit)


class Console:
    """A console window on its own rclpy node (what `sweetie-motion console` builds)."""

    def __init__(self, namespace: str, model, workspace: Optional[Path] = None) -> None:
        from dataclasses import replace
        import tempfile
        from sweetie_motion.console.app import build_console, console_settings
        from sweetie_motion.ros.background import BackgroundNode
        self.ros = BackgroundNode('sweetie_motion_console', ['console_test'])
        #: the backups' folder: the test's own, never the user's
        self.workspace = workspace or Path(tempfile.mkdtemp(prefix='console_workspace_'))
        settings = replace(console_settings(CONFIG, namespace), workspace_dir=str(self.workspace))
        self.parts = build_console(self.ros.node, settings, model, streams=self.ros.streams)
        self.window = self.parts.window
        self.presenter = self.parts.presenter

    def find(self, kind, name: str):
        """Return the window's widget named ``name`` (fails the test when there is none)."""
        widget = self.window.findChild(kind, name)
        assert widget is not None, f'the console has no {kind.__name__} named {name!r}'
        return widget

    def kill(self) -> None:
        """Take the window away without closing it, as if the console were killed."""
        self.window._timer.stop()
        self.window._view_timer.stop()
        self.window.hide()
        self.window.deleteLater()
        self.parts.close()
        self.ros.close()

    def close(self) -> None:
        """Close the window (it stops what moves) and release the node; edits are given up."""
        self.presenter.discard_changes()
        self.window.close()
        self.window.deleteLater()
        self.parts.close()
        self.ros.close()


@contextlib.contextmanager
def open_console(qtbot, namespace: str, model, connected: bool = True) -> Iterator[Console]:
    """Open a console window for the duration of a with-block; wait until it is connected."""
    console = Console(namespace, model)
    try:
        console.window.show()
        qtbot.waitExposed(console.window, timeout=10000)
        if connected:
            until(qtbot, lambda: all(console.presenter.links.values()), 30,
                  lambda: f'the console connected: {console.presenter.links}')
        yield console
    finally:
        console.close()


def screenshot(console: Console, path: Path) -> Path:
    """Save what a person sees of the console (the screen's pixels under a window manager)."""
    from PyQt5.QtWidgets import QApplication
    console.window.robot_view.redraw()
    console.window.robot_view.repaint()  # now, not at the next idle moment
    QApplication.processEvents()
    return _screenshot(console, path)


# --- what the robot does -------------------------------------------------------------------------


def reference(peer, joints: Sequence[str] = JOINTS) -> np.ndarray:
    """Return the newest joint_states_ref of ``joints`` [rad]."""
    with peer.lock:
        msg = peer.reference
    index = {n: i for i, n in enumerate(msg.name)}
    return np.array([msg.position[index[j]] for j in joints])


def tool(peer, model):
    """Return the tool's pose in the newest joint_states_ref."""
    from sweetie_motion.cartesian.frames import Pose
    return Pose.from_matrix(model.forward_kinematics('arm', reference(peer)))


def recent(peer, seconds: float, joints: Sequence[str] = JOINTS):
    """Return (stamps [s], positions (n, joints)) of joint_states_ref of the last ``seconds``."""
    with peer.lock:
        history = list(peer.history[-int(seconds * 150) - 10:])
    if not history:
        return np.zeros(0), np.zeros((0, len(joints)))
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in history])
    index = {n: i for i, n in enumerate(history[-1].name)}
    positions = np.array([[m.position[index[j]] for j in joints] for m in history])
    keep = stamps >= stamps[-1] - seconds
    return stamps[keep], positions[keep]


def at_rest(peer, seconds: float = 0.5, tolerance: float = 1e-5) -> bool:
    """Return whether joint_states_ref stood still over the last ``seconds`` (of its stamps)."""
    stamps, positions = recent(peer, seconds)
    if len(stamps) < 2 or stamps[-1] - stamps[0] < seconds * 0.9:
        return False
    return float(np.ptp(positions, axis=0).max()) < tolerance


def wait_at_rest(qtbot, peer, timeout: float = 30.0) -> None:
    """Wait until the arm stands still."""
    until(qtbot, lambda: at_rest(peer), timeout, 'the arm at rest')


def speeds(peer, since: float, joints: Sequence[str] = JOINTS) -> np.ndarray:
    """Return the peak joint speeds [rad/s] in joint_states_ref since the stamp ``since``."""
    with peer.lock:
        history = list(peer.history)
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in history])
    index = {n: i for i, n in enumerate(history[-1].name)}
    positions = np.array([[m.position[index[j]] for j in joints] for m in history])
    keep = stamps >= since
    stamps, positions = stamps[keep], positions[keep]
    dt = np.diff(stamps)
    good = dt > 1e-4
    return np.max(np.abs(np.diff(positions, axis=0)[good] / dt[good][:, None]), axis=0)


def cruise_speeds(peer, since: float, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
    """
    Return each joint's mean speed [rad/s] between 20 % and 80 % of its way from start to goal.

    Joints that do not move get 0. The joint_states_ref since the stamp ``since``.
    """
    with peer.lock:
        history = list(peer.history)
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in history])
    index = {n: i for i, n in enumerate(history[-1].name)}
    keep = stamps >= since
    positions = np.array([[m.position[index[j]] for j in JOINTS] for m in history])[keep]
    stamps = stamps[keep]
    result = np.zeros(len(JOINTS))
    for k in range(len(JOINTS)):
        way = goal[k] - start[k]
        if abs(way) < 1e-3:
            continue
        done = (positions[:, k] - start[k]) / way
        first, last = np.argmax(done >= 0.2), np.argmax(done >= 0.8)
        result[k] = 0.6 * abs(way) / (stamps[last] - stamps[first])
    return result


def newest_stamp(peer) -> float:
    """Return the stamp of the newest joint_states_ref [s]."""
    with peer.lock:
        stamp = peer.reference.header.stamp
    return stamp.sec + stamp.nanosec * 1e-9


def wait_job(qtbot, console: Console, timeout: float = 60.0) -> str:
    """Wait until the console's job ended; return its last message."""
    until(qtbot, lambda: console.presenter.job is None, timeout,
          lambda: f'the job to end: {console.presenter.message.text}')
    return console.presenter.message.text


def move_sliders(qtbot, console: Console, peer, targets: Dict[str, float],
                 timeout: float = 30.0) -> None:
    """Move sliders as a person would; wait until the arm's reference is there."""
    for joint, value in targets.items():
        console.window.sliders.set_position(joint, value)
    names: List[str] = list(targets)
    goal = np.array([targets[j] for j in names])
    until(qtbot, lambda: np.abs(reference(peer, names) - goal).max() < 2e-3, timeout,
          lambda: f'the arm at {targets}: {reference(peer, names)}')


def type_program(console: Console, text: str) -> None:
    """Put ``text`` into the program editor, as a paste does."""
    editor = console.window.editor
    editor.selectAll()
    editor.insertPlainText(text)
