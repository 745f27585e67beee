"""Fixtures of the presenters' tests: a clock the test moves and the requests they send."""

import pytest


class Clock:
    """A monotonic clock that moves only when the test sets ``now`` [s]."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def sent():
    """Collect the requests a presenter sends to its adapters, in order."""
    return []
