"""
How old a servo's measurement is: a fixed-bin histogram of ages, pure.

The driver samples the age of every servo's newest measurement once a cycle (now minus the
time the servo sampled it); the bus simulator records the gaps between the intact position
replies it sends each servo (the age the master's measurement reaches just before the next
one). Both summarise them here: p50 / p99 / max, cheaply enough to add a value every cycle for
every servo and to answer a diagnostics request without sorting.
"""

from dataclasses import dataclass
import math
from typing import Dict

import numpy as np


@dataclass(frozen=True)
class AgeSummary:
    """
    Percentiles of a set of ages.

    :param count: how many ages were added.
    :param p50: median [s]; :param p99: 99th percentile [s]; :param largest: the largest [s].
    """

    count: int
    p50: float
    p99: float
    largest: float

    def as_dict(self) -> Dict[str, float]:
        """Return the figures as plain values (milliseconds)."""
        return {'count': self.count, 'p50_ms': self.p50 * 1e3, 'p99_ms': self.p99 * 1e3,
                'max_ms': self.largest * 1e3}

    def describe(self) -> str:
        """Return e.g. 'p50 8.1 / p99 19.0 / max 27.5 ms'."""
        if not self.count:
            return 'no samples'
        return (f'p50 {self.p50 * 1e3:.1f} / p99 {self.p99 * 1e3:.1f} / '
                f'max {self.largest * 1e3:.1f} ms')


class AgeHistogram:
    """
    Ages in bins of ``resolution`` up to ``limit`` (longer ones in the last bin; max is exact).

    :param resolution: bin width [s].
    :param limit: the largest age binned exactly [s].
    """

    def __init__(self, resolution: float = 0.0005, limit: float = 2.0) -> None:
        self.resolution = float(resolution)
        self._bins = np.zeros(int(math.ceil(limit / resolution)) + 1, dtype=np.int64)
        self.count = 0
        self.largest = 0.0

    def add(self, age: float) -> None:
        """Add one age [s] (negative ages count as 0, infinite ones are skipped)."""
        if not math.isfinite(age):
            return
        age = max(0.0, age)
        self._bins[min(len(self._bins) - 1, int(age / self.resolution))] += 1
        self.count += 1
        self.largest = max(self.largest, age)

    def add_many(self, ages: np.ndarray) -> None:
        """Add several ages [s] at once (non-finite ones are skipped)."""
        ages = np.asarray(ages, dtype=float)
        ages = np.maximum(ages[np.isfinite(ages)], 0.0)
        if not ages.size:
            return
        index = np.minimum((ages / self.resolution).astype(np.int64), len(self._bins) - 1)
        np.add.at(self._bins, index, 1)
        self.count += int(ages.size)
        self.largest = max(self.largest, float(ages.max()))

    def percentile(self, q: float) -> float:
        """Return the age below which ``q`` % of them lie [s] (its bin's upper edge, capped)."""
        if not self.count:
            return math.nan
        rank = math.ceil(self.count * q / 100.0)
        k = int(np.searchsorted(np.cumsum(self._bins), max(1, rank)))
        return min(self.largest, (k + 1) * self.resolution)

    def count_above(self, age: float) -> int:
        """Return how many ages were longer than ``age`` [s] (to the bin's resolution)."""
        return int(self._bins[int(math.ceil(age / self.resolution)):].sum())

    def summary(self) -> AgeSummary:
        """Return p50, p99 and max."""
        return AgeSummary(self.count, self.percentile(50), self.percentile(99),
                          self.largest if self.count else math.nan)

    def reset(self) -> None:
        """Forget every age."""
        self._bins[:] = 0
        self.count = 0
        self.largest = 0.0
