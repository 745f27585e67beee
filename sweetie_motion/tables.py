"""Plain text tables for the command line (no other import: a command loads only what it uses)."""

from typing import Sequence


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Lay rows out under a header as a plain text table, columns padded."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells + [list(header)]) for i in range(len(header))]
    line = '  '.join('-' * w for w in widths)
    out = ['  '.join(str(h).ljust(w) for h, w in zip(header, widths)), line]
    out += ['  '.join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return '\n'.join(row.rstrip() for row in out)
