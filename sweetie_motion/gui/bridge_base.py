"""
What the editor's and the console's bridges share: the newest pose, the event queue, the links.

ROS callbacks and worker threads never touch a presenter or a widget. They store the newest
``joint_states`` and put events; the GUI thread's ``poll`` takes the pose once, re-checks the
links now and then, and drains the events, in that order. No rclpy here: each bridge makes its
own subscriptions and says what its links are (:meth:`BridgeBase._check_links`).
"""

import math
import queue
import threading
from typing import List, Optional, Tuple, TYPE_CHECKING

if TYPE_CHECKING:
    from sweetie_motion.gui.events import LinksChanged

#: joint_states older than this mean the motion process is gone [s]
STALE_AFTER = 1.5
#: how often the links are checked [s]
LINK_PERIOD = 0.5

#: (joint names, positions) of one joint_states message
Pose = Tuple[Tuple[str, ...], Tuple[float, ...]]


class BridgeBase:
    """
    The pose buffer, the event queue and the links' re-check of a GUI's bridge.

    Subclasses call :meth:`_store_pose` from their joint_states callback, :meth:`_put` from
    any thread, and build ``poll`` from :meth:`_take_pose`, :meth:`_refresh_links` and
    :meth:`_drain`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: 'queue.SimpleQueue[object]' = queue.SimpleQueue()
        self._pose: Optional[Pose] = None
        self._pose_time = -math.inf
        self._pose_sent: Optional[Pose] = None
        self._links: Optional['LinksChanged'] = None
        self._links_time = -math.inf

    def _put(self, event: object) -> None:
        """Queue an event for the GUI thread (any thread)."""
        self._events.put(event)

    def _store_pose(self, names: Tuple[str, ...], positions: Tuple[float, ...],
                    now: float) -> None:
        """Keep the newest pose (call with :attr:`_lock` held)."""
        self._pose = (names, positions)
        self._pose_time = now

    def latest_pose(self) -> Optional[Pose]:
        """Return the newest (names, positions) of joint_states, None before the first."""
        with self._lock:
            return self._pose

    def _take_pose(self, now: float) -> Tuple[Optional[Pose], bool]:
        """Return (the newest pose if not taken before, else None; whether it is fresh)."""
        with self._lock:
            pose, fresh = self._pose, now - self._pose_time < STALE_AFTER
        if pose is None or pose is self._pose_sent:
            return None, fresh
        self._pose_sent = pose
        return pose, fresh

    def _refresh_links(self, now: float, fresh: bool, events: List[object]) -> None:
        """
        Check the links every :data:`LINK_PERIOD`, and at once when joint_states come or go.

        A change is added to ``events``.
        """
        shown = dict(self._links.links).get('joint_states') if self._links is not None \
            else None
        if now - self._links_time < LINK_PERIOD and (shown is None or shown == fresh):
            return
        self._links_time = now
        links = self._check_links(fresh)
        if links != self._links:
            self._links = links
            events.append(links)

    def _check_links(self, fresh: bool) -> 'LinksChanged':
        """Return the links' event (``fresh``: joint_states arrive); the bridge's own."""
        raise NotImplementedError

    def _drain(self, events: List[object]) -> None:
        """Add the queued events to ``events``, oldest first."""
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                return
