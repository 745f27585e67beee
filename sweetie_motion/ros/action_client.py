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

A goal response can also be lost on the server's side: Fast DDS's RMW drops a response when
the server has not yet discovered the client's response reader (it waits 100 ms for it), and
a busy machine discovers slowly — the goal runs, its client waits for the acceptance until its
timeout (seen once in about ten starts of a console beside a busy loop: the robot moved, the
console knew nothing of the goal). The action's status topic is latched and names every goal
the server accepted: a goal this client sent that appears there is accepted, whether or not
its response ever comes (a response that comes after all is then dropped quietly).

Given a :class:`~sweetie_motion.ros.pendant.Pendant`, the client names every goal it sends in
its heartbeat from before the request leaves until the goal ends (or is refused): the motion
process then stops the goal if the client falls silent (it was killed).
"""

import threading
from typing import Any, Optional, Set
import uuid
import weakref

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.action.client import ClientGoalHandle
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
        #: the goal requests (sequence numbers) the status topic answered before the response
        self._accepted_by_status: Set[int] = set()

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
            if 'goal' in taken_data and taken_data['goal'][0] in self._accepted_by_status:
                self._accepted_by_status.discard(taken_data['goal'][0])
                taken_data = {k: v for k, v in taken_data.items() if k != 'goal'}
            await super().execute(taken_data)
            if 'status' in taken_data:
                self._accept_from_status(taken_data['status'])
        pendant = self.pendant
        if pendant is not None and 'status' in taken_data:
            for status in taken_data['status'].status_list:
                if status.status in _ENDED:
                    pendant.release(bytes(status.goal_info.goal_id.uuid))

    def _accept_from_status(self, statuses: Any) -> None:
        """Take a goal still waiting for its response as accepted when the status names it."""
        waiting = {bytes(goal_id.uuid): sequence for sequence, goal_id
                   in self._goal_sequence_number_to_goal_id.items()}
        for status in statuses.status_list:
            key = bytes(status.goal_info.goal_id.uuid)
            sequence = waiting.get(key)
            future = self._pending_goal_requests.get(sequence)
            if future is None or future.done():
                continue
            response = self._action_type.Impl.SendGoalService.Response(
                accepted=True, stamp=status.goal_info.stamp)
            handle = ClientGoalHandle(self, status.goal_info.goal_id, response)
            handle._status = status.status
            if status.status not in _ENDED:
                self._goal_handles[key] = weakref.ref(handle)
            self._accepted_by_status.add(sequence)
            future.set_result(handle)
