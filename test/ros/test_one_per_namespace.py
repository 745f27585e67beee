"""
One motion process per namespace, for certain: two bringups started together, one runs.

Three pairs here (each pair: two `sweetie-motion bringup` started at the same instant in one
namespace; one must refuse naming the other's pid while the other comes up); fifty in
``bench/one_per_namespace.py``. A bringup the lock cannot see (another machine's) is found by
discovery when discovery reaches beyond this machine.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'bench'))
from one_per_namespace import Bringup, race, START_TIMEOUT  # noqa: E402,I100
from waiting import wait_for  # noqa: E402,I100

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PAIRS = 3   # each pair brings a bringup up (about 20 s on 2 cores): fifty in the bench


def test_of_two_bringups_started_together_one_refuses_every_time(domain_id):
    outcomes = [race('race') for _ in range(PAIRS)]
    failed = [o.note for o in outcomes if not o.refused]
    assert not failed, f'{len(failed)} of {PAIRS} pairs: {failed}'


def test_a_bringup_the_lock_cannot_see_is_found_by_discovery(domain_id, tmp_path):
    # another machine, as far as the lock knows: a lock folder of its own; discovery reaches
    # it through a static peer (here this machine: nothing leaves it)
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.setdefault('AMENT_PREFIX_PATH', sys.prefix)
    first = Bringup('elsewhere', env)
    second = None
    try:
        wait_for(lambda: 'motion process ready' in first.output() or
                 first.popen.poll() is not None, START_TIMEOUT, message='the first bringup')
        assert first.popen.poll() is None, first.output()
        elsewhere = dict(env, ROS_STATIC_PEERS='127.0.0.1', SWEETIE_MOTION_LOCK_DIR=str(tmp_path))
        second = Bringup('elsewhere', elsewhere)
        wait_for(lambda: second.popen.poll() is not None or
                 'motion process ready' in second.output(), START_TIMEOUT,
                 message='the second bringup to refuse')
        said = second.output()
        assert second.popen.poll() == 1, said
        assert 'a motion process already runs in /elsewhere: node /elsewhere/motion' in said
    finally:
        for bringup in (second, first):
            if bringup is not None:
                bringup.stop()
