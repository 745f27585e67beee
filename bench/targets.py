"""
Targets of the benchmarks: each printed with its value, its limit and ok / MISSED / FLOOR.

FLOOR: missed, but the machine itself failed at the same moments (a floor measurement of the
same run proves it, and the note gives its figures); not counted as missed.
"""


class Targets:
    """Collects target checks of one benchmark and prints them."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.rows = []

    def check(self, name: str, value: str, limit: str, ok: bool, note: str = '',
              floor: bool = False) -> None:
        """
        Record one target: ``value`` against ``limit``, met or not.

        :param floor: a miss that the machine's floor explains entirely (see the module).
        """
        self.rows.append((name, value, limit, 'ok' if ok else 'FLOOR' if floor else 'MISSED',
                          note))

    def report(self) -> int:
        """Print every target; return how many were missed."""
        print(f'targets ({self.title}):')
        for name, value, limit, mark, note in self.rows:
            print(f'  {mark:6s} {name:60s} {value:>14s}  (target {limit}){note}', flush=True)
        return sum(row[3] == 'MISSED' for row in self.rows)
