"""Test-suite wide setup: DDS stays on this machine, every ROS test gets its own domain."""

import contextlib
import itertools
import os
import random
import sys
from typing import Iterator

import pytest

# Before anything can import rclpy: discovery on the loopback only, never on eth0.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.pop('ROS_LOCALHOST_ONLY', None)
os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
os.environ.setdefault('QT_QPA_PLATFORM', 'offscreen')
os.environ.setdefault('PYTHONUNBUFFERED', '1')

# Fast DDS accepts domain ids 0..101 on Linux (port arithmetic); spread parallel runs.
_DOMAINS = itertools.count(random.Random(os.getpid() ^ int.from_bytes(os.urandom(2), 'big'))
                           .randrange(0, 100))


def next_domain_id() -> int:
    """Return a domain id no other test of this run uses (wrapping within 1..100)."""
    return next(_DOMAINS) % 100 + 1


os.environ['ROS_DOMAIN_ID'] = str(next_domain_id())


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


@pytest.fixture
def domain_id(monkeypatch) -> int:
    """Give the test its own ROS_DOMAIN_ID, for itself and the processes it starts."""
    value = next_domain_id()
    monkeypatch.setenv('ROS_DOMAIN_ID', str(value))
    return value


@pytest.fixture
def artifacts_dir():
    """Directory for screenshots and plots that tests write for people to look at."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        'artifacts', 'test')
    os.makedirs(path, exist_ok=True)
    return path
