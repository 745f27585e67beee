"""
A worker thread for the editor's table where the newest table wins; no Qt, no rclpy.

The motion checks (:mod:`sweetie_motion.editor.table_checks`) and Simulate
(:mod:`sweetie_motion.editor.table_simulation`) take a while per table, and a person edits
faster than that: each runs its jobs here, one at a time, so that editing never waits. A job
asked for while another runs waits in its place, and a newer one replaces it (older tables are
never run); :meth:`NewestTableWorker.poll` gives the answer of the newest table asked for, once.
"""

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Generic, Optional, TypeVar

#: an answer: it says which table it answers in its ``key``
Answer = TypeVar('Answer')


class NewestTableWorker(Generic[Answer]):
    """
    Runs jobs in one worker thread; a waiting job is replaced by a newer one.

    :param thread_name: the worker thread's name prefix.
    :param key_of: returns the table an answer is for (compared with the newest asked for).
    """

    def __init__(self, thread_name: str, key_of: Callable[[Answer], object]) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self._key_of = key_of
        self._wanted: object = None
        self._future: Optional['Future[Answer]'] = None
        self._waiting: Optional[Callable[[], Answer]] = None
        #: the newest answer given by :meth:`poll`
        self.result: Optional[Answer] = None

    @property
    def busy(self) -> bool:
        """Return whether a job runs or waits."""
        return self._future is not None

    def want(self, key: object) -> bool:
        """Take ``key`` as the newest table; return False when it is the one asked for already."""
        if key == self._wanted:
            return False
        self._wanted = key
        return True

    def submit(self, job: Callable[[], Answer]) -> None:
        """Run ``job`` now, or after the running one (in place of any job waiting)."""
        if self._future is not None and not self._future.done():
            self._waiting = job     # the newest table waits; older ones are never run
        else:
            self._future = self._executor.submit(job)

    def poll(self) -> Optional[Answer]:
        """Return a new answer for the newest table asked for, once (None: none yet)."""
        future = self._future
        if future is None or not future.done():
            return None
        self._future = None
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._future = self._executor.submit(waiting)
        result = future.result()
        if self._key_of(result) != self._wanted:
            return None
        self.result = result
        return result

    def close(self) -> None:
        """Stop taking work; a running job finishes in its thread, unread."""
        self._executor.shutdown(wait=False, cancel_futures=True)
