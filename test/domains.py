"""ROS domain ids for the tests: each test or module-scoped fixture gets one no other uses."""

import contextlib
import itertools
import os
import random
from typing import Iterator

#: Fast DDS accepts domain ids 0..101 on Linux (port arithmetic); the tests use 1..100
FIRST, COUNT = 1, 100


def _worker_range() -> range:
    """
    Return the domain ids of this test process.

    Under pytest-xdist each worker (gw0, gw1, ...) takes its own slice of 1..100, so that two
    workers never share a domain; a single run takes them all. Parallel runs of the suite are
    spread by a random start within the slice.
    """
    worker = os.environ.get('PYTEST_XDIST_WORKER', '')
    workers = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1') or 1)
    if not worker.startswith('gw') or workers <= 1:
        return range(FIRST, FIRST + COUNT)
    index = int(worker[2:])
    size = COUNT // workers
    return range(FIRST + index * size, FIRST + (index + 1) * size)


_RANGE = _worker_range()
_DOMAINS = itertools.count(random.Random(os.getpid() ^ int.from_bytes(os.urandom(2), 'big'))
                           .randrange(0, len(_RANGE)))


def next_domain_id() -> int:
    """Return a domain id no other test of this run uses (wrapping within this worker's)."""
    return _RANGE[next(_DOMAINS) % len(_RANGE)]


@contextlib.contextmanager
def own_domain() -> Iterator[int]:
    """Give a module-scoped fixture its own ROS_DOMAIN_ID; restore the previous one after."""
    value = next_domain_id()
    previous = os.environ.get('ROS_DOMAIN_ID')
    os.environ['ROS_DOMAIN_ID'] = str(value)
    try:
        yield value
    finally:
        if previous is None:
            os.environ.pop('ROS_DOMAIN_ID', None)
        else:
            os.environ['ROS_DOMAIN_ID'] = previous
