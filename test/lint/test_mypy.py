"""mypy over the pure core, as setup.cfg's [mypy] section declares it (make lint)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.linter
def test_mypy_finds_no_error_in_the_pure_core():
    pytest.importorskip('mypy')
    # the files and the exclusions come from setup.cfg; the cache stays out of the tree
    cache = os.path.join(ROOT, 'build', 'mypy_cache')
    result = subprocess.run([sys.executable, '-m', 'mypy', '--cache-dir', cache],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, f'type errors:\n{result.stdout}\n{result.stderr}'
