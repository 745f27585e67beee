"""
One motion process per namespace, for certain: two bringups started together, one runs.

Ten pairs here (each pair: two `sweetie-motion bringup` started at the same instant in one
namespace; one must refuse naming the other's pid while the other comes up); fifty in
``bench/one_per_namespace.py``.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'bench'))
from one_per_namespace import race  # noqa: E402,I100

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PAIRS = 10


def test_of_two_bringups_started_together_one_refuses_every_time(domain_id):
    outcomes = [race('race') for _ in range(PAIRS)]
    failed = [o.note for o in outcomes if not o.refused]
    assert not failed, f'{len(failed)} of {PAIRS} pairs: {failed}'
