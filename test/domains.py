"""ROS domain ids for the tests: each test or module-scoped fixture gets one no other uses."""

import contextlib
import itertools
import os
import random
from typing import Iterator

# Fast DDS accepts domain ids 0..101 on Linux (port arithmetic); spread parallel runs.
_DOMAINS = itertools.count(random.Random(os.getpid() ^ int.from_bytes(os.urandom(2), 'big'))
                           .randrange(0, 100))


def next_domain_id() -> int:
    """Return a domain id no other test of this run uses (wrapping within 1..100)."""
    return next(_DOMAINS) % 100 + 1


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
