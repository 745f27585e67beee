"""
rclpy's ActionClient without its race between a request and its response (rclpy 7.1, Jazzy).

rclpy's ActionClient sends a goal (or a cancel, or a result request) and only then files the
future its response will complete; the executor's thread takes the response and looks for that
future. When the request is sent from another thread than the one spinning — a command's main
thread, a GUI's worker, an action server's execute callback — a quick response can be taken
before the future is filed: rclpy logs "Ignoring unexpected goal response. There may be more
than one action server" and the caller waits for ever, though the server accepted the goal and
runs it (seen in a test suite beside a busy loop: ``play nod`` got no goal response in 15 s).
rclpy's service Client files its future under a lock; this class does the same for actions:
a request and the filing of its future are one step, and a response is matched only after it.

Given a :class:`~sweetie_motion.ros.pendant.Pendant`, the client names every goal it sends in
its heartbeat from before the request leaves until the goal ends (or is refused): the motion
process then stops the goal if the client falls silent (it was killed).
"""

import threading
from typing import Any, Optional
import uuid

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient as _RclpyActionClient
from sweetie_motion.ros.pendant import Pendant
from unique_identifier_msgs.msg import UUID

#: the statuses a goal ends in
_ENDED = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)


class ActionClient(_RclpyActionClient):
    """
    An rclpy ActionClient whose requests may be sent from any thread.

    Same constructor and methods as rclpy's; only the matching of responses is made safe.

    :param pendant: names every goal sent in this client's heartbeat until it ends; None:
        the goals are not watched (as with any plain action client).
    """

    def __init__(self, *args: Any, pendant: Optional[Pendant] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._requests = threading.RLock()
        self.pendant = pendant

    def send_goal_async(self, goal: Any, feedback_callback: Any = None,
                        goal_uuid: Any = None) -> Any:
        """Send a goal; return the future of its goal handle (see rclpy's)."""
        pendant = self.pendant
        if pendant is not None:
            if goal_uuid is None:
                goal_uuid = UUID(uuid=list(uuid.uuid4().bytes))
            pendant.hold(bytes(goal_uuid.uuid))
        with self._requests:
            future = super().send_goal_async(goal, feedback_callback, goal_uuid)
        if pendant is not None:
            key = bytes(goal_uuid.uuid)

            def answered(done: Any) -> None:
                try:
                    handle = done.result()
                except Exception:  # noqa: B902 -- no answer: the goal is not held
                    handle = None
                if handle is None or not handle.accepted:
                    pendant.release(key)
            future.add_done_callback(answered)
        return future

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._requests:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._requests:
            return super()._get_result_async(goal_handle)

    async def execute(self, taken_data: Any) -> None:
        """Match the responses taken to their requests (see rclpy's), after any filing."""
        with self._requests:
            await super().execute(taken_data)
        pendant = self.pendant
        if pendant is not None and 'status' in taken_data:
            for status in taken_data['status'].status_list:
                if status.status in _ENDED:
                    pendant.release(bytes(status.goal_info.goal_id.uuid))
