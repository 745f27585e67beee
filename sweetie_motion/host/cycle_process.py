"""
The cycle process: the sync cycle with the controller cores, in a process of its own.

The bringup starts it (``python -m sweetie_motion.host.cycle_process IN OUT``, two pipe file
descriptors) and talks to it only through :mod:`sweetie_motion.host`; users never start it by
hand. It imports no rclpy: rclpy holds the GIL in every call, and a call that waits inside DDS
would hold up the cycle. The cycle's poses go to a state board in shared memory, and a third
small process (:mod:`sweetie_motion.nodes.state_publisher`, started from here) publishes them on
``joint_states`` and ``joint_states_ref``.

Threads: the cycle (SCHED_FIFO where permitted), the command loop (main thread) and the event
sender, each one real-time priority below the one before, and the publisher process's
publishing thread below them all (its DDS threads keep the normal policy: a discovery burst,
each time a command starts, must not take the CPU above any real-time work): a thread that holds
the GIL must not wait for a CPU behind the ordinary processes of a busy machine while the cycle
waits for that GIL. They
sleep but for short calls. SIGINT is ignored (Ctrl-C reaches the whole process group; the
bringup stops this process in order); the process ends when the bringup says ``close`` or
its pipe closes (the bringup died), and the publisher with it.
"""

import ctypes
import gc
import json
from multiprocessing.connection import Connection
import os
import queue
import signal
import subprocess
import sys
import threading
from typing import List, Optional

from sweetie_motion.core.cycle import set_realtime_priority
from sweetie_motion.core.events import CallFailed, CycleEvent
from sweetie_motion.host.client import HostSettings
from sweetie_motion.host.host import CycleHost, serve
from sweetie_motion.host.transport import Channel, encode_error
from sweetie_motion.model.description import load_robot_description

#: the interpreter's switch interval in the cycle process [s]: the helper threads only make
#: short calls, and a thread that wakes up during a tick waits for the tick to end instead of
#: taking the GIL from the cycle halfway (at 0.5 ms, an input arriving mid-tick added 0.5 ms)
SWITCH_INTERVAL = 0.005
#: the module of the publisher process
PUBLISHER_MODULE = 'sweetie_motion.nodes.state_publisher'


def start_publisher(host: CycleHost, settings: HostSettings,
                    priority: int) -> subprocess.Popen:
    """Start the process that publishes the state board (it ends when the pipe closes)."""
    writer = host.board_writer
    arguments = json.dumps({
        'board': writer.board.path, 'joints': host.resources.model.list_all_joints(),
        'wake_fd': writer.wake_read_fd, 'namespace': settings.namespace,
        'ros_args': list(settings.ros_args), 'node_name': settings.node_name,
        'priority': priority})
    process = subprocess.Popen([sys.executable, '-m', PUBLISHER_MODULE, arguments],
                               pass_fds=(writer.wake_read_fd,), env=os.environ.copy())
    os.close(writer.wake_read_fd)  # the publisher holds it now
    writer.wake_read_fd = -1
    return process


def die_with_parent() -> None:
    """Ask Linux to send SIGTERM to this process when the bringup dies (belt and braces)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run(requests: Channel, replies: Channel) -> int:
    """Serve one bringup: start from its settings, answer calls until it closes."""
    settings: HostSettings = requests.recv()
    sys.setswitchinterval(SWITCH_INTERVAL)
    # the threads that may hold this process's GIL (calls, events) come right below the cycle;
    # the publisher process, whose DDS threads can be busy for long, below them: it must never
    # keep a thread off the CPU that the cycle waits for
    below = [max(1, settings.priority - k) if settings.priority > 0 else 0 for k in (1, 2, 3)]
    set_realtime_priority(below[0])  # this thread answers the calls
    events: 'queue.SimpleQueue[Optional[CycleEvent]]' = queue.SimpleQueue()
    try:
        model = load_robot_description(settings.robot, settings.urdf_xml)
        model.configure()
        host = CycleHost(model, settings.period, events.put)
        publisher = start_publisher(host, settings, below[2])
    except Exception as error:  # noqa: B902 -- tell the bringup why, then exit
        replies.send(('failed', f'{type(error).__name__}: {error}'))
        return 1

    def send_events() -> None:
        set_realtime_priority(below[1])
        while True:
            event = events.get()
            if event is None:
                return
            try:
                replies.send(('event', event))
            except OSError:
                return
            except Exception as error:  # noqa: B902 -- an event that cannot be pickled
                replies.send(('event', CallFailed('', type(event).__name__,
                                                  encode_error(error)[2])))
    sender = threading.Thread(target=send_events, name='host_events', daemon=True)
    sender.start()
    # What the start-up made (modules, the model) lives as long as the process: out of the
    # collector's sight, so that a collection triggered during a tick walks only young objects
    # (a full collection of the start-up heap takes milliseconds).
    gc.freeze()
    replies.send(('ready', {'pid': os.getpid(), 'publisher_pid': publisher.pid}))
    try:
        serve(host, requests, replies)
    finally:
        host.shutdown()  # closes the board's pipe: the publisher process ends
        gc.unfreeze()  # let the exit free the start-up objects (ruckig reports leaks else)
        events.put(None)
        sender.join(2.0)
        try:
            publisher.wait(5.0)
        except subprocess.TimeoutExpired:
            publisher.kill()
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the cycle process (started by the bringup, not by users)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print('usage: python -m sweetie_motion.host.cycle_process IN_FD OUT_FD '
              '(started by sweetie-motion bringup)', file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    requests = Channel(Connection(int(argv[0]), writable=False))
    replies = Channel(Connection(int(argv[1]), readable=False))
    return run(requests, replies)


if __name__ == '__main__':
    sys.exit(main())
