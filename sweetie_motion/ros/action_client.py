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
"""

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient


class ActionClient(_RclpyActionClient):
    """
    An rclpy ActionClient whose requests may be sent from any thread.

    Same constructor and methods as rclpy's; only the matching of responses is made safe.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._requests = threading.RLock()

    def send_goal_async(self, goal: Any, feedback_callback: Any = None,
                        goal_uuid: Any = None) -> Any:
        """Send a goal; return the future of its goal handle (see rclpy's)."""
        with self._requests:
            return super().send_goal_async(goal, feedback_callback, goal_uuid)

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
