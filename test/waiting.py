"""Waiting for a condition with a deadline: the one way tests wait (never a fixed sleep)."""

import time
from typing import Callable, TypeVar, Union

T = TypeVar('T')


def wait_for(predicate: Callable[[], T], timeout: float = 5.0, period: float = 0.02,
             message: Union[str, Callable[[], str]] = 'condition') -> T:
    """
    Poll ``predicate`` until it returns a true value and return that value.

    :param message: what is awaited, or a function that says it (called on a timeout, to show
        what the test saw instead).
    :raises AssertionError: after ``timeout`` seconds, naming ``message``.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            raise AssertionError(f'timed out after {timeout} s waiting for {text}')
        time.sleep(period)


def poll_until(predicate: Callable[[], T], timeout: float, period: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds passed (False)."""
    try:
        wait_for(predicate, timeout, period)
    except AssertionError:
        return False
    return True


def stays(predicate: Callable[[], object], duration: float, period: float = 0.02) -> bool:
    """
    Return whether ``predicate`` stays true at every poll for ``duration`` seconds.

    For what must *not* happen (a command ignored, a pose held): the window is the scenario,
    and the check fails at the first poll that sees it happen.
    """
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(period)
    return bool(predicate())
