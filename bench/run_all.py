#!/usr/bin/env python3
"""Run every benchmark of bench/ in turn (`make bench`)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = ['cycle.py', 'trajectory.py']


def main():
    """Run the benchmarks; return the number that failed."""
    failed = 0
    for name in BENCHMARKS:
        print(f'=== bench/{name} ===', flush=True)
        failed += subprocess.call([sys.executable, os.path.join(HERE, name)]) != 0
    return failed


if __name__ == '__main__':
    sys.exit(main())
