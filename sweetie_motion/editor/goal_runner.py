"""
Execute's goals on the trajectory controller, as the editor's bridge runs them.

A goal is sent, asked again once when no answer comes within the bridge's time-out (DDS drops a
request that leaves before a restarted server has matched this client), followed through its
feedback and ended with exactly one ``GoalFinished``: its result, or ``lost`` when no answer,
no result by its deadline, or no joint_states come any more.
"""

import math
import threading
import time
from typing import Any, Callable, Dict, Optional

from sweetie_motion.editor.requests import (
    CancelGoal, ExecuteGoal, FAILED, GoalAccepted, GoalFeedback, GoalFinished, LOST, STOPPED,
    SUCCEEDED,
)


class _Goal:
    """A goal on its way: its handle and deadlines (guarded by the runner's lock)."""

    def __init__(self, goal_id: int, accept_deadline: float, result_timeout: float,
                 duration: float) -> None:
        self.goal_id = goal_id
        self.accept_deadline = accept_deadline
        self.result_timeout = result_timeout
        self.result_deadline = math.inf
        self.duration = duration
        self.handle: Any = None
        self.cancel = False
        self.done = False
        #: sends the goal request (again); set once, before the first send
        self.send: Optional[Callable[[], None]] = None
        self.resent = False


class GoalRunner:
    """
    Run the editor's goals on a trajectory controller's FollowJointTrajectory action.

    :param action: the action client (:class:`~sweetie_motion.ros.action_client.ActionClient`).
    :param lock: the bridge's lock (the goals are read by its deadline check too).
    :param put: hands an event to the presenter (thread-safe).
    :param timeout: how long to wait for the controller's answer [s].
    """

    def __init__(self, action: Any, lock: threading.Lock, put: Callable[[object], None],
                 timeout: float) -> None:
        self._action = action
        self._lock = lock
        self._put = put
        self.timeout = timeout
        self._goals: Dict[int, _Goal] = {}

    def execute(self, request: ExecuteGoal) -> None:
        """Send ``request``'s goal; its events follow (accepted, feedback, finished)."""
        from sweetie_motion.ros.conversions import goal_to_msg
        goal = _Goal(request.goal_id, time.monotonic() + self.timeout, request.result_timeout,
                     request.goal.duration)
        if not self._action.server_is_ready():
            self._put(GoalFinished(request.goal_id, FAILED, 0,
                                   'the trajectory controller is not available'))
            return
        with self._lock:
            self._goals[goal.goal_id] = goal
        message = goal_to_msg(request.goal)
        goal.send = lambda: self._action.send_goal_async(
            message, feedback_callback=lambda feedback: self._feedback(goal, feedback)
        ).add_done_callback(lambda future: self._accepted(goal, future))
        goal.send()

    def cancel(self, request: CancelGoal) -> None:
        """Ask the controller to stop the goal (it decelerates and holds)."""
        with self._lock:
            goal = self._goals.get(request.goal_id)
            if goal is None:
                return
            goal.cancel = True
            handle = goal.handle
            # a cancel that is never answered must not keep "stopping..." forever
            goal.result_deadline = min(goal.result_deadline, time.monotonic() + self.timeout)
        if handle is not None:
            handle.cancel_goal_async()

    def check_deadlines(self, now: float, fresh: bool) -> None:
        """
        Ask again, or end as lost, the goals whose answers are overdue.

        :param now: time.monotonic() [s]; :param fresh: joint_states still come.
        """
        with self._lock:
            goals = list(self._goals.values())
        for goal in goals:
            if goal.handle is None and now > goal.accept_deadline and not goal.resent and \
                    goal.send is not None and self._action.server_is_ready():
                # DDS drops a request that leaves before a restarted server has matched this
                # client, and the answer to one it had not matched yet: ask once more (should
                # both arrive, the later one takes over at the controller)
                with self._lock:
                    goal.resent = True
                    goal.accept_deadline = now + self.timeout
                goal.send()
            elif goal.handle is None and now > goal.accept_deadline:
                self._finish(goal, LOST, 0, 'no answer from the trajectory controller within '
                             f'{self.timeout:g} s, asked twice (is the motion process running?)')
            elif now > goal.result_deadline:
                self._finish(goal, LOST, 0, 'no result from the trajectory controller by the '
                             'end of the motion')
            elif not fresh:
                self._finish(goal, LOST, 0, 'the motion process stopped publishing '
                             'joint_states (it died or was stopped)')

    def _feedback(self, goal: _Goal, message: Any) -> None:
        from sweetie_motion.ros.conversions import duration_to_seconds
        with self._lock:
            # a goal the controller retimed (slower within the limits) runs longer than
            # planned: while it reports progress, its result is not overdue
            goal.result_deadline = max(goal.result_deadline,
                                       time.monotonic() + max(2.0 * self.timeout, 5.0))
        self._put(GoalFeedback(goal.goal_id, duration_to_seconds(
            message.feedback.desired.time_from_start), goal.duration))

    def _accepted(self, goal: _Goal, future: Any) -> None:
        handle = future.result()
        with self._lock:
            late = goal.done
            again = goal.handle is not None     # the answer to the repeated request too
            if not late and handle is not None and handle.accepted:
                goal.handle = handle            # the later one runs: it took over
                goal.result_deadline = time.monotonic() + goal.result_timeout
        if late:
            if handle is not None and handle.accepted:
                handle.cancel_goal_async()   # the editor gave up on it: do not let it run
            return
        if handle is None or not handle.accepted:
            if not again:
                self._finish(goal, FAILED, 0, 'the trajectory controller rejected the goal')
            return
        if not again:
            self._put(GoalAccepted(goal.goal_id))
        if goal.cancel:
            handle.cancel_goal_async()
        handle.get_result_async().add_done_callback(
            lambda result, ran=handle: self._finished(goal, result, ran))

    def _finished(self, goal: _Goal, future: Any, ran: Any) -> None:
        from action_msgs.msg import GoalStatus
        with self._lock:
            if goal.handle is not ran:
                return      # the first of two requests: the repeated one took over
        response = future.result()
        if response is None:
            self._finish(goal, LOST, 0, 'the trajectory controller gave no result')
            return
        status = response.status
        result = response.result
        if status == GoalStatus.STATUS_SUCCEEDED:
            outcome = SUCCEEDED
        elif status == GoalStatus.STATUS_CANCELED:
            outcome = STOPPED
        else:
            outcome = FAILED
        self._finish(goal, outcome, int(result.error_code),
                     result.error_string or f'status {status}')

    def _finish(self, goal: _Goal, outcome: str, code: int, message: str) -> None:
        with self._lock:
            if goal.done:
                return
            goal.done = True
            self._goals.pop(goal.goal_id, None)
        self._put(GoalFinished(goal.goal_id, outcome, code, message))
