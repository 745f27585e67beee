"""Targets of the benchmarks: each printed with its value, its limit and ok/MISSED."""


class Targets:
    """Collects target checks of one benchmark and prints them."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.rows = []

    def check(self, name: str, value: str, limit: str, ok: bool, note: str = '') -> None:
        """Record one target: ``value`` against ``limit``, met or not."""
        self.rows.append((name, value, limit, ok, note))

    def report(self) -> int:
        """Print every target; return how many were missed."""
        print(f'targets ({self.title}):')
        for name, value, limit, ok, note in self.rows:
            mark = 'ok' if ok else 'MISSED'
            print(f'  {mark:6s} {name:60s} {value:>14s}  (target {limit}){note}', flush=True)
        return sum(not row[3] for row in self.rows)
