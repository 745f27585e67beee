"""
A client's pendant: the heartbeat that keeps its motions alive (the client's side).

The editor, the console and the commands publish sweetie_motion_msgs/Pendant on
``<namespace>/pendant`` every :data:`PERIOD`: who they are, the goals they sent and have not
seen end, the topics they stream poses to (FollowJointState inputs), and their process. When
the client is gone — the process was killed, it crashed, its terminal was closed — the motion
process stops those goals and holds those controllers: at once when the client ran beside it,
after :data:`DEFAULT_LEASE` of silence when it ran on another machine
(:mod:`sweetie_motion.controllers.pendants`). A client that publishes no pendant (``ros2
action send_goal``, MoveIt) is not watched.

The heartbeat is published from a thread of its own, neither a GUI thread nor the node's
executor (which may be busy with a backlog of joint_states), so a window busy drawing does not
stop its own motion; a goal is named the moment it is sent (:meth:`Pendant.hold`), before the
server can accept it.
"""

import itertools
import os
import socket
import sys
import threading
import time
from typing import Any, Iterable, Set

from rclpy.duration import Duration
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sweetie_motion_msgs.msg import Pendant as PendantMsg
from unique_identifier_msgs.msg import UUID

#: the topic of the heartbeats, relative to the robot namespace
PENDANT_TOPIC = 'pendant'
#: the heartbeats' QoS: every one counts, none is kept for a late subscriber
PENDANT_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)
#: how often the heartbeat goes [s]
PERIOD = 0.1
#: how long a closing client waits for its last heartbeat to be acknowledged [s]
FAREWELL_TIMEOUT = 0.5
#: the silence after which a client on another machine is taken for gone [s]: three heartbeats
#: lost in a row, and short enough that its robot stops within half a second (the node checks
#: every 0.05 s). A client beside the motion process is gone when its process ends.
DEFAULT_LEASE = 0.3
#: numbers the pendants of one process: the motion process tells clients apart by name
_numbers = itertools.count(1)
#: the program ``python -m sweetie_motion.cli`` runs (what sys.argv[0] is then)
_CLI_MAIN = os.path.join('sweetie_motion', 'cli', '__main__.py')


def client_name(program: str = '') -> str:
    """Return a new name for a client's heartbeat: program, pid, host (and a number)."""
    if not program:
        path = sys.argv[0] or 'python'
        program = os.path.basename(path)
        # `sweetie-motion play`, say, or `python -m sweetie_motion.cli play`
        if program == 'sweetie-motion' or path.endswith(_CLI_MAIN):
            command = sys.argv[1] if len(sys.argv) > 1 else ''
            program = 'sweetie-motion' + (f' {command}' if command[:1].isalpha() else '')
    number = next(_numbers)
    suffix = f' #{number}' if number > 1 else ''
    return f'{program} (pid {os.getpid()} on {socket.gethostname()}){suffix}'


class Pendant:
    """
    The heartbeat of one client (thread-safe).

    :param node: the client's rclpy node (spun by its owner).
    :param namespace: the robot namespace of the motion process ('/sweetie_bot').
    :param client: how the motion process names this client in logs and results (unique
        among its clients); default: :func:`client_name`.
    :param lease: [s] silence after which the client's motions stop.
    """

    def __init__(self, node: Any, namespace: str, client: str = '',
                 lease: float = DEFAULT_LEASE) -> None:
        self.node = node
        self.client = client or client_name()
        self.lease = float(lease)
        self._goals: Set[bytes] = set()
        self._follow: Set[str] = set()
        self._lock = threading.Lock()
        from sweetie_motion.controllers.pendants import process_namespace, process_start
        self._process = (process_namespace(), os.getpid(), process_start(os.getpid()) or 0)
        space = namespace.strip('/')
        #: the motion process's namespace, as the graph names its nodes' namespaces
        self._namespace = f'/{space}'
        self._publisher = node.create_publisher(
            PendantMsg, f'/{space}/{PENDANT_TOPIC}' if space else f'/{PENDANT_TOPIC}',
            PENDANT_QOS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat_on, name='pendant', daemon=True)
        self._thread.start()

    def _beat_on(self) -> None:
        # absolute deadlines: a late beat does not delay the ones after it
        deadline = time.monotonic()
        while not self._stop.is_set():
            self.beat()
            deadline = max(deadline + PERIOD, time.monotonic())
            self._stop.wait(max(0.0, deadline - time.monotonic()))

    def hold(self, goal_id: bytes) -> None:
        """Name a goal (its 16-byte id) in the heartbeats from now on; beat at once."""
        with self._lock:
            self._goals.add(bytes(goal_id))
        self.beat()

    def release(self, goal_id: bytes) -> None:
        """Stop naming a goal (it ended, or was refused)."""
        with self._lock:
            self._goals.discard(bytes(goal_id))

    def follow(self, topics: Iterable[str]) -> None:
        """Name topics (full names) this client streams poses to; beat at once if new."""
        topics = set(topics)
        with self._lock:
            new = topics - self._follow
            self._follow |= topics
        if new:
            self.beat()

    @property
    def goals(self) -> Set[bytes]:
        """Return the goals named now."""
        with self._lock:
            return set(self._goals)

    def beat(self) -> None:
        """Publish one heartbeat now (the timer does every :data:`PERIOD`)."""
        with self._lock:
            msg = PendantMsg(client=self.client, lease=self.lease,
                             goals=[UUID(uuid=list(g)) for g in sorted(self._goals)],
                             follow=sorted(self._follow), process_namespace=self._process[0],
                             pid=self._process[1], start_time=self._process[2])
        try:
            self._publisher.publish(msg)
        except Exception:  # noqa: B902 -- the node is being destroyed: nothing to keep alive
            pass

    def wait_heard(self, watchers: Iterable[str], timeout: float) -> bool:
        """
        Wait until each node of ``watchers`` (the motion process's) takes the heartbeats.

        A client that moves the robot before its pendant is heard has a motion that nothing
        stops should the client die in between: discovering a new client took the motion
        process 0.05-3 s (a busy machine, Fast DDS repairing a lost announcement). Heard: the
        node's watch is subscribed and a heartbeat sent now was acknowledged (the topic is
        reliable).

        :param watchers: node names in the motion process's namespace ('follow_joint_state').
        :return: whether all were heard within ``timeout`` [s].
        """
        deadline = time.monotonic() + timeout
        topic = self._publisher.topic_name
        wanted = set(watchers)
        while time.monotonic() < deadline:
            subscribed = {info.node_name for info in self.node.get_subscriptions_info_by_topic(
                topic) if info.node_namespace == self._namespace}
            if wanted <= subscribed and self._publisher.get_subscription_count() >= len(wanted):
                self.beat()
                left = max(0.01, deadline - time.monotonic())
                if self._publisher.wait_for_all_acked(Duration(seconds=left)):
                    return True
            time.sleep(0.02)
        return False

    def destroy(self) -> None:
        """
        Stop the heartbeat; the motion process then stops the goals still named.

        The streams are let go first (a last heartbeat names none): a client that closes has
        sent its last pose, and the FollowJointState it streamed to may be another client's
        by the time this one's silence counts — holding it then would stop that client's
        motion. A client that dies (killed, crashed) sends no last heartbeat: what it streamed
        to holds where a brake ends.
        """
        self._stop.set()
        self._thread.join(2.0)
        with self._lock:
            self._follow.clear()
        self.beat()
        try:
            # the last heartbeat must leave before its publisher goes (reliable: acknowledged)
            self._publisher.wait_for_all_acked(Duration(seconds=FAREWELL_TIMEOUT))
        except Exception:  # noqa: B902 -- a context already shut down: nothing to tell
            pass
        self.node.destroy_publisher(self._publisher)
