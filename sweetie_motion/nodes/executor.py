"""
The executor of the motion process: rclpy's MultiThreadedExecutor without its busy loop.

rclpy's executor (Jazzy, rclpy 7.1) yields a task again while it waits in the thread pool's
queue ("tasks in progress" are re-offered until they start executing). The
MultiThreadedExecutor then submits the same task over and over, rebuilding the whole wait set in
Python each time, until a pool thread picks it up: measured here, 200 messages at 50 Hz cost a
full core (213 634 wait-set rounds) against 6 % with the single-threaded executor. This class
remembers which tasks it has handed to the pool and, when one is offered again before it
started, waits for it to start instead of spinning. It also survives entities destroyed while
it builds its wait set (a lifecycle cleanup running in another thread), which ends rclpy's.
"""

import threading
from typing import Dict, Optional

from rclpy.executors import (
    ConditionReachedException, ExternalShutdownException, MultiThreadedExecutor,
    ShutdownException, TimeoutException,
)
from rclpy.logging import get_logger
from rclpy.task import Task
from sweetie_motion.nodes.rclpy_private import (forget_ready_callbacks, InvalidHandle,
                                                RCLError, submitted, thread_pool)


class MotionExecutor(MultiThreadedExecutor):
    """A MultiThreadedExecutor that does not re-submit tasks waiting in its pool."""

    def __init__(self, num_threads: Optional[int] = None, **kwargs) -> None:
        super().__init__(num_threads=num_threads, **kwargs)
        self._started: Dict[Task, threading.Event] = {}
        self._started_lock = threading.Lock()

    def _run(self, task: Task, started: threading.Event) -> None:
        started.set()
        try:
            task()
            error = task.exception()
            if error is not None and not isinstance(error, InvalidHandle):
                # a callback raised: report it, keep serving (the process never dies of input)
                get_logger('sweetie_motion.executor').error(
                    f'a callback failed: {type(error).__name__}: {error}')
        except InvalidHandle:
            pass  # its entity was destroyed meanwhile (a cleanup): nothing left to do
        finally:
            with self._started_lock:
                self._started.pop(task, None)

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            handler, entity, node = self.wait_for_ready_callbacks(
                timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException,
                ConditionReachedException):
            return
        except (InvalidHandle, RCLError):
            # an entity was destroyed (a lifecycle cleanup in another thread) while its wait
            # set was being built: start over without it instead of ending the process
            forget_ready_callbacks(self)
            return
        with self._started_lock:
            started = self._started.get(handler)
            submit = started is None
            if submit:
                started = self._started[handler] = threading.Event()
        futures = submitted(self)
        if submit:
            futures.append(thread_pool(self).submit(self._run, handler, started))
        else:
            # offered again while queued: let a pool thread start it instead of spinning
            started.wait(0.05)
        for future in futures[:]:
            if future.done():
                futures.remove(future)
                future.result()  # raise any exceptions
