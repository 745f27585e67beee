"""
A node's watch over its clients' pendants (see :mod:`sweetie_motion.controllers.pendants`).

The node's goals and its FollowJointState input stop when the client that sent them is gone:
:class:`PendantWatch` takes the heartbeats of ``<namespace>/pendant`` and, every
:data:`CHECK_PERIOD`, hands the node the goals and streams whose client is gone (its process
ended, when it ran beside this one; its lease of silence ran out, when it ran elsewhere).
The checks run only while a client holds one of the node's goals or streams to it: an idle
node's timer does not wake the executor (three watches at 20 Hz were most of an idle
bringup's CPU, each firing rebuilding the executor's whole wait set twice).
"""

import threading
import time
from typing import Any, Callable, Iterable, Optional, Set

from sweetie_motion.controllers.pendants import (
    Lapse, PendantError, PendantLeases, process_alive, process_namespace,
)
from sweetie_motion.ros.pendant import PENDANT_QOS, PENDANT_TOPIC
from sweetie_motion_msgs.msg import Pendant

#: how often the node looks for clients that are gone [s]
CHECK_PERIOD = 0.05


class PendantWatch:
    """
    Watch the pendants of a node's clients; stop what a silent one started.

    An entity of the node (created in configure, destroyed with the others).

    :param node: the lifecycle node (its namespace is the robot's).
    :param group: the callback group of the heartbeats and the checks.
    :param goals: returns the ids (16 bytes) of the node's running action goals.
    :param stop_goal: stops a goal whose client lapsed (called once per goal, in the executor).
    :param inputs: the topics the node follows (full names), when it is a FollowJointState
        controller.
    :param hold: makes that controller hold where a brake ends (a streaming client lapsed).
    """

    def __init__(self, node: Any, group: Any, goals: Callable[[], Iterable[bytes]],
                 stop_goal: Callable[[bytes, Lapse], None], inputs: Iterable[str] = (),
                 hold: Optional[Callable[[Lapse], None]] = None) -> None:
        self.node = node
        self.leases = PendantLeases()
        self._goals = goals
        self._stop_goal = stop_goal
        self._inputs = set(inputs)
        self._hold = hold
        self._stopped: set = set()
        self._refused: Set[str] = set()
        self._last_check = time.monotonic()
        #: when the last look at the clients ended (time.monotonic) [s]; None: not yet
        self.looked: Optional[float] = None
        #: a client whose heartbeat names this is one whose process this node can see
        self._namespace = process_namespace()
        self._subscription = node.create_subscription(
            Pendant, PENDANT_TOPIC, self._on_heartbeat, PENDANT_QOS, callback_group=group)
        self._timer = node.create_timer(CHECK_PERIOD, self._check, callback_group=group)
        #: serialises arming (a heartbeat) and disarming (a check that found nothing to watch):
        #: the group may be reentrant
        self._arming = threading.Lock()
        self._idle = False
        self._destroyed = False

    def destroy(self) -> None:
        """Release the subscription and the timer."""
        with self._arming:
            # a destroyed watch watches nothing and is never armed again
            self._idle = self._destroyed = True
        self.node.destroy_timer(self._timer)
        self.node.destroy_subscription(self._subscription)

    def _on_heartbeat(self, msg: Pendant) -> None:
        local = bool(self._namespace) and msg.process_namespace == self._namespace
        try:
            self.leases.heartbeat(msg.client, msg.lease, (bytes(g.uuid) for g in msg.goals),
                                  msg.follow, time.monotonic(),
                                  (int(msg.pid), int(msg.start_time)) if local else None)
        except PendantError as error:
            if msg.client not in self._refused:   # said once per client, not ten times a second
                self._refused.add(msg.client)
                self.node.get_logger().warning(f'{error}: its motions are not watched')
            return
        if msg.goals or set(msg.follow) & self._inputs:
            self._arm()

    @property
    def idle(self) -> bool:
        """Whether nothing is watched now (no client holds a goal or streams to the node)."""
        return self._idle

    def _arm(self) -> None:
        """Start the checks again (a heartbeat named a goal or a stream)."""
        with self._arming:
            if self._idle and not self._destroyed:
                # the time idle is no stall of this node's: silence counts from now on
                self._last_check = time.monotonic()
                self._idle = False
                self._timer.reset()

    def _check(self) -> None:
        now = time.monotonic()
        late = now - self._last_check - CHECK_PERIOD
        self._last_check = now
        # a node held up (a stalled executor, a starved process) may have heartbeats waiting in
        # its queue: silence is judged at the next check, after them; an ended process at once
        silence = late <= CHECK_PERIOD
        running = set(self._goals())
        self._stopped &= running
        for goal in running - self._stopped:
            lapse = self.leases.goal_lapse(goal, now, process_alive, silence)
            if lapse is not None:
                self._stopped.add(goal)
                self.node.get_logger().warning(f'stopping a goal: {lapse.describe()}')
                self._stop_goal(goal, lapse)
        if self._inputs and self._hold is not None:
            for lapse in self.leases.stream_lapses(self.node.get_name(), self._inputs, now,
                                                   process_alive, silence):
                self.node.get_logger().warning(f'holding where a brake ends: '
                                               f'{lapse.describe()}')
                self._hold(lapse)
        self.looked = time.monotonic()
        with self._arming:
            if not self.leases.watching(self.node.get_name(), running - self._stopped,
                                        self._inputs) and not self._idle:
                self._idle = True
                self._timer.cancel()
