"""
The skeleton both windows run in: their robot, their node, their Qt loop, their end.

`sweetie-motion editor` and `sweetie-motion console` differ in what they build; how they start
and end is the same, and it is written here once:

- ``--with-robot`` starts the bringup in a session of its own (:func:`own_robot`): Ctrl+C in
  the terminal reaches the window only, which stops the robot first; the bringup is ended
  after the window;
- :func:`run_window` refuses to start without a display, makes the application and the
  window's ROS node (spun in the background), builds the window, hands the terminal's signals
  to its stops, says in the terminal how to stop, and runs the Qt loop; at the end it lets
  the window's parts finish while the node still spins, stops the node, then releases what
  must go once nothing spins.
"""

from contextlib import contextmanager
from dataclasses import dataclass
import gc
import os
import sys
from typing import Any, Callable, Iterator, List, Optional, Sequence

#: how long the window's own bringup may take to end once asked [s]
ROBOT_END_TIMEOUT = 10.0


def _nothing() -> None:
    """Do nothing: a window part without an end of that kind."""


@dataclass
class WindowParts:
    """
    A built window, as the skeleton runs it.

    :param window: the main window (its ``stops``: a StopFirst).
    :param close: ends the window's work while the node still spins (stops a job in progress,
        says goodbye to the motion process).
    :param release: releases the node's entities once nothing spins any more.
    """

    window: object
    close: Callable[[], None] = _nothing
    release: Callable[[], None] = _nothing


@contextmanager
def own_robot(bringup_arguments: Optional[Sequence[str]]) -> Iterator[None]:
    """
    Run the window's own bringup on the virtual robot around the window (None: no robot).

    Everything stays on this machine unless the user chose otherwise
    (ROS_AUTOMATIC_DISCOVERY_RANGE); the bringup is asked to end (SIGINT) after the window.
    """
    os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    if bringup_arguments is None:
        yield
        return
    from sweetie_motion.command_line import start_own_bringup
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    robot = start_own_bringup(list(bringup_arguments))
    try:
        yield
    finally:
        robot.send_signal(2)
        robot.wait(ROBOT_END_TIMEOUT)


def run_window(application: str, ros_args: List[str], build: Callable[[Any], WindowParts],
               announce: str, screenshot: Optional[str] = None,
               quit_after: Optional[float] = None) -> int:
    """
    Create the application and the node, build the window on the node, run the Qt loop.

    :param application: the program's name for Qt.
    :param ros_args: the node's arguments, as rclpy takes them (the node's name first).
    :param build: builds the window's parts on the BackgroundNode (its ``node`` keeps
        spinning meanwhile; its ``streams`` node is for 100 Hz topics).
    :param announce: the line the terminal is told once the window is open.
    :param screenshot: a PNG to save before closing after ``quit_after`` seconds.
    :returns: the Qt loop's exit code.
    :raises SweetieMotionError: no display, or what ``build`` raises.
    """
    from sweetie_motion.command_line import require_display
    from sweetie_motion.gui.stop_first import release_window
    from sweetie_motion.gui.widgets import close_after
    from sweetie_motion.ros.background import BackgroundNode
    from PyQt5.QtWidgets import QApplication
    require_display()
    app = QApplication.instance() or QApplication([application])
    ros = BackgroundNode(ros_args[0], ros_args)
    parts: Optional[WindowParts] = None
    try:
        parts = build(ros)
        window = parts.window
        window.show()
        # what start-up made (the model, Qt's wrappers) is left out of the garbage collector's
        # full passes: a pass over it holds Python's lock for tens of ms, which the window's
        # streaming threads would feel as a stall
        gc.collect()
        gc.freeze()
        window.stops.handle_signals()
        print(announce, flush=True)
        if quit_after is not None:
            close_after(window, quit_after, screenshot)
        return app.exec_()
    finally:
        if parts is not None:
            parts.close()
        ros.close(parts.release if parts is not None else None)
        if parts is not None:
            release_window(parts.window)


#: what both windows tell the terminal once they are open
STOP_ANNOUNCEMENT = ('the window is open; Ctrl+C here closes it as its close button does '
                     '(stopping the robot first); STOP, Esc or F12 in the window stop the robot')
