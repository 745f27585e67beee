"""
Pendant leases: which clients still hold their motions alive (pure; no rclpy).

A teach pendant stops its robot when the operator lets go or its cable is cut. A client of the
motion process (the editor, the console, a command) is its robot's pendant the same way: it
sends a heartbeat (sweetie_motion_msgs/Pendant) naming the goals it sent and the topics it
streams poses to (FollowJointState inputs). When the client is gone — killed, crashed, its
terminal closed — the controllers stop what it named: a goal is cancelled (it decelerates and
holds), a FollowJointState controller holds where a brake ends. Nothing watches a goal no
heartbeat ever named: plain action clients (``ros2 action send_goal``, MoveIt) keep the
behaviour they know.

When is a client gone? Silence alone cannot tell a dead client from a live one that a saturated
machine did not schedule for a while (measured: heartbeats 0.1 s apart arrived up to 1.2 s
apart beside real-time servo simulators), and stopping a live client's motion is a false alarm.
So:

- a client in the motion process's own process namespace (same machine, same PID namespace:
  the heartbeat says so) is gone the moment its process no longer exists — checked at every
  look, whatever its heartbeat does — or when it has been silent for :data:`PATIENCE` (a hung
  client);
- any other client (on another machine) is gone when it has been silent for its ``lease``.

This module keeps the bookkeeping; the nodes feed it heartbeats and ask it at their own rate
(:class:`~sweetie_motion.nodes.pendant_watch.PendantWatch`), giving it the check of a local
process.
"""

from dataclasses import dataclass
import math
import threading
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from sweetie_motion.errors import SweetieMotionError

#: the shortest and the longest lease a client may ask for [s]
MIN_LEASE = 0.1
MAX_LEASE = 10.0
#: how long a client whose process still exists may be silent before its motions stop [s]
PATIENCE = 3.0
#: how long a client's goals and streams are remembered after its last heartbeat [s]
REMEMBERED = 60.0

#: a local client's process: (pid, start time in clock ticks since boot)
Process = Tuple[int, int]
#: whether a local process still exists (pid, start time) -> bool
Alive = Callable[[int, int], bool]


class PendantError(SweetieMotionError):
    """A heartbeat that cannot be taken (its lease is outside the allowed range)."""


@dataclass(frozen=True)
class Lapse:
    """
    A client that is gone.

    :param client: who (as its heartbeat named itself).
    :param lease: the silence it allowed [s]; :param silent: how long it has been silent [s].
    :param ended: its process no longer exists (a local client).
    """

    client: str
    lease: float
    silent: float
    ended: bool = False

    def describe(self) -> str:
        """Return what a log line or a goal's result says of it."""
        who = self.client or '(unnamed)'
        if self.ended:
            return f'its client {who} ended (its process is gone)'
        return f'its client {who} fell silent (no pendant heartbeat for {self.silent:.2f} s)'


@dataclass
class _Client:
    lease: float
    last: float
    goals: Set[bytes]
    follow: Set[str]
    #: its process when it runs beside the motion process, else None
    process: Optional[Process]
    #: the watchers told of this client's end already (a stream lapses once per end)
    told: Set[str]


class PendantLeases:
    """
    The heartbeats of the clients, and which clients are gone (thread-safe).

    A goal stays held by the client whose heartbeat named it last; a client that names a goal
    no more lets it go (it ended, for the client).
    """

    def __init__(self) -> None:
        self._clients: Dict[str, _Client] = {}
        self._holder: Dict[bytes, str] = {}
        self._lock = threading.Lock()

    def heartbeat(self, client: str, lease: float, goals: Iterable[bytes],
                  follow: Iterable[str], now: float, process: Optional[Process] = None) -> None:
        """
        Take a heartbeat.

        :param client: who sends it; :param lease: [s], within :data:`MIN_LEASE` ..
            :data:`MAX_LEASE`; :param goals: the goal ids (16 bytes each) it holds;
        :param follow: the topics it streams poses to (FollowJointState inputs, full names);
        :param now: [s]; :param process: the client's process if it runs in the motion
            process's PID namespace (None: elsewhere).
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
            self._clients[client] = _Client(float(lease), float(now), goals, follow,
                                            process, set())
            for goal in goals:
                self._holder[goal] = client
            self._forget_old(now)

    def _gone(self, client: str, state: _Client, now: float, alive: Alive,
              silence: bool) -> Optional[Lapse]:
        silent = now - state.last
        if state.process is not None:
            if not alive(*state.process):
                return Lapse(client, state.lease, silent, ended=True)
            limit = PATIENCE
        else:
            limit = state.lease
        return Lapse(client, state.lease, silent) if silence and silent > limit else None

    def goal_lapse(self, goal: bytes, now: float, alive: Alive,
                   silence: bool = True) -> Optional[Lapse]:
        """
        Return how the client holding ``goal`` is gone, None while it is there (or none holds it).

        :param alive: whether a local client's process still exists.
        :param silence: whether silence counts now (not when the asker was held up itself:
            heartbeats may wait in its queue).
        """
        with self._lock:
            client = self._holder.get(goal)
            if client is None:
                return None
            state = self._clients.get(client)
            return None if state is None else self._gone(client, state, now, alive, silence)

    def stream_lapses(self, watcher: str, inputs: Set[str], now: float, alive: Alive,
                      silence: bool = True) -> List[Lapse]:
        """
        Return the clients streaming to ``inputs`` that are gone, once per client per watcher.

        A client that beats again may lapse again later.

        :param watcher: who asks (a FollowJointState node's name);
        :param inputs: the topics it follows (full names);
        :param alive: whether a local client's process still exists;
        :param silence: whether silence counts now (see :meth:`goal_lapse`).
        """
        lapses = []
        with self._lock:
            for client, state in self._clients.items():
                if not state.follow & inputs or watcher in state.told:
                    continue
                lapse = self._gone(client, state, now, alive, silence)
                if lapse is not None:
                    state.told.add(watcher)
                    lapses.append(lapse)
        return lapses

    def watching(self, watcher: str, goals: Iterable[bytes], inputs: Set[str]) -> bool:
        """
        Return whether a look could find a lapse for ``watcher``.

        True when a client holds one of ``goals``, or streams to one of ``inputs`` and has not
        been told to ``watcher`` as gone: with neither, nothing can lapse until a heartbeat
        names a goal or a stream.
        """
        with self._lock:
            if any(goal in self._holder for goal in goals):
                return True
            return any(state.follow & inputs and watcher not in state.told
                       for state in self._clients.values())

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


# --- processes beside the motion process (Linux: /proc) ----------------------------------------


def process_namespace() -> str:
    """
    Return what names this PID namespace on this machine ('' where /proc cannot tell).

    The kernel's boot id (the machine, since its start) and the PID namespace's inode: two
    processes with the same value see each other's PIDs.
    """
    import os
    try:
        with open('/proc/sys/kernel/random/boot_id', encoding='ascii') as stream:
            boot = stream.read().strip()
        return f'{boot}:{os.stat("/proc/self/ns/pid").st_ino}'
    except OSError:
        return ''


def _stat(pid: int) -> Optional[Tuple[str, int]]:
    """Return a process's (state, start time [clock ticks since boot]), None: no such process."""
    try:
        with open(f'/proc/{int(pid)}/stat', encoding='ascii', errors='replace') as stream:
            text = stream.read()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: count from its end
    fields = text[text.rfind(')') + 2:].split()
    try:
        return fields[0], int(fields[19])          # fields 3 and 22 of proc(5)'s stat
    except (IndexError, ValueError):
        return None


def process_start(pid: int) -> Optional[int]:
    """Return a process's start time [clock ticks since boot], None if it does not exist."""
    stat = _stat(pid)
    return None if stat is None else stat[1]


def process_alive(pid: int, start: int) -> bool:
    """Return whether the process ``pid`` that started at ``start`` still runs (no zombie)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ('Z', 'X') and stat[1] == int(start)
