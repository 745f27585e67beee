"""
Pendant leases: which clients still hold their motions alive (pure; no rclpy).

A teach pendant stops its robot when the operator lets go or its cable is cut. A client of the
motion process (the editor, the console, a command) is its robot's pendant the same way: it
sends a heartbeat (sweetie_motion_msgs/Pendant) naming the goals it sent and the topics it
streams poses to (FollowJointState inputs), and promises another within its ``lease``.
When a client falls silent for longer — it was killed, it crashed, its terminal was closed —
the controllers stop what it named: a goal is cancelled (it decelerates and holds), a
FollowJointState controller holds where a brake ends. Nothing watches a goal no heartbeat ever
named: plain action clients (``ros2 action send_goal``, MoveIt) keep the behaviour they know.

This module keeps the bookkeeping; the nodes feed it heartbeats and ask it at their own rate
(:class:`~sweetie_motion.nodes.pendant_watch.PendantWatch`).
"""

from dataclasses import dataclass
import math
import threading
from typing import Dict, Iterable, List, Optional, Set, Tuple

from sweetie_motion.errors import SweetieMotionError

#: the shortest and the longest lease a client may ask for [s]
MIN_LEASE = 0.1
MAX_LEASE = 10.0
#: how long a client's goals and streams are remembered after its last heartbeat [s]
REMEMBERED = 60.0


class PendantError(SweetieMotionError):
    """A heartbeat that cannot be taken (its lease is outside the allowed range)."""


@dataclass(frozen=True)
class Lapse:
    """
    A client that fell silent.

    :param client: who (as its heartbeat named itself).
    :param lease: the silence it allowed [s]; :param silent: how long it has been silent [s].
    """

    client: str
    lease: float
    silent: float

    def describe(self) -> str:
        """Return what a log line or a goal's result says of it."""
        return (f'its client {self.client or "(unnamed)"} fell silent (no pendant heartbeat '
                f'for {self.silent:.2f} s, lease {self.lease:g} s)')


@dataclass
class _Client:
    lease: float
    last: float
    goals: Set[bytes]
    follow: Set[str]
    #: the watchers told of this silence already (a stream lapses once per silence)
    told: Set[str]


class PendantLeases:
    """
    The heartbeats of the clients, and whose silence has outlasted its lease (thread-safe).

    A goal stays held by the client whose heartbeat named it last; a client that names a goal
    no more lets it go (it ended, for the client).
    """

    def __init__(self) -> None:
        self._clients: Dict[str, _Client] = {}
        self._holder: Dict[bytes, str] = {}
        self._lock = threading.Lock()

    def heartbeat(self, client: str, lease: float, goals: Iterable[bytes],
                  follow: Iterable[str], now: float) -> None:
        """
        Take a heartbeat.

        :param client: who sends it; :param lease: [s], within :data:`MIN_LEASE` ..
            :data:`MAX_LEASE`; :param goals: the goal ids (16 bytes each) it holds;
        :param follow: the topics it streams poses to (FollowJointState inputs, full names);
        :param now: [s].
        :raises PendantError: a lease outside the allowed range (the heartbeat is not taken).
        """
        if not (math.isfinite(lease) and MIN_LEASE <= lease <= MAX_LEASE):
            raise PendantError(f'the pendant of {client or "(unnamed)"} asks for a lease of '
                               f'{lease} s; allowed: {MIN_LEASE:g} .. {MAX_LEASE:g} s')
        goals, follow = set(goals), set(follow)
        with self._lock:
            known = self._clients.get(client)
            if known is not None:
                for goal in known.goals - goals:
                    if self._holder.get(goal) == client:
                        del self._holder[goal]
            self._clients[client] = _Client(float(lease), float(now), goals, follow, set())
            for goal in goals:
                self._holder[goal] = client
            self._forget_old(now)

    def goal_lapse(self, goal: bytes, now: float) -> Optional[Lapse]:
        """Return the lapse of the client holding ``goal``, None while it beats (or none does)."""
        with self._lock:
            client = self._holder.get(goal)
            if client is None:
                return None
            state = self._clients.get(client)
            if state is None or now - state.last <= state.lease:
                return None
            return Lapse(client, state.lease, now - state.last)

    def stream_lapses(self, watcher: str, inputs: Set[str], now: float) -> List[Lapse]:
        """
        Return the clients streaming to ``inputs`` that fell silent since ``watcher`` asked.

        Each silence is told to a watcher once; a client that beats again may lapse again.

        :param watcher: who asks (a FollowJointState node's name);
        :param inputs: the topics it follows (full names).
        """
        lapses = []
        with self._lock:
            for client, state in self._clients.items():
                if state.follow & inputs and watcher not in state.told and \
                        now - state.last > state.lease:
                    state.told.add(watcher)
                    lapses.append(Lapse(client, state.lease, now - state.last))
        return lapses

    def forget_goal(self, goal: bytes) -> None:
        """Stop watching ``goal`` (it ended)."""
        with self._lock:
            self._holder.pop(goal, None)

    def watched(self) -> Tuple[int, int]:
        """Return how many clients and goals are watched now."""
        with self._lock:
            return len(self._clients), len(self._holder)

    def _forget_old(self, now: float) -> None:
        old = [c for c, state in self._clients.items() if now - state.last > REMEMBERED]
        for client in old:
            for goal in self._clients.pop(client).goals:
                if self._holder.get(goal) == client:
                    del self._holder[goal]
