"""Waiting for a condition with a deadline: the one way tests wait (never a fixed sleep)."""

import time
from typing import Callable, TypeVar

T = TypeVar('T')


def wait_for(predicate: Callable[[], T], timeout: float = 5.0, period: float = 0.02,
             message: str = 'condition') -> T:
    """
    Poll ``predicate`` until it returns a true value and return that value.

    :raises AssertionError: after ``timeout`` seconds, naming ``message``.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout} s waiting for {message}')
        time.sleep(period)


def poll_until(predicate: Callable[[], T], timeout: float, period: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds passed (False)."""
    try:
        wait_for(predicate, timeout, period)
    except AssertionError:
        return False
    return True
