#!/usr/bin/env python3
"""Run every benchmark of bench/ in turn (`make bench`)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = ['cycle.py', 'trajectory.py', 'safety.py', 'ik.py', 'paper_path.py', 'retime.py',
              'servo_bus.py', 'servo_ident_lines.py', 'editor_edits.py', 'checks.py',
              'physics.py', 'physics_bus.py', 'command_latency.py']


def main():
    """Run the benchmarks; return the number of targets missed (each prints its own)."""
    missed = 0
    for name in BENCHMARKS:
        print(f'=== bench/{name} ===', flush=True)
        code = subprocess.call([sys.executable, os.path.join(HERE, name)])
        print(f'=== bench/{name}: ' + ('every target met' if code == 0 else
                                       f'{code} target(s) MISSED or the benchmark failed'),
              flush=True)
        missed += code
    return min(missed, 255)


if __name__ == '__main__':
    sys.exit(main())
