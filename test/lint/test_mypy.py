"""mypy over every module that imports neither rclpy nor PyQt5 (make lint)."""

import os
import subprocess
import sys

from layers import ROOT, typed_files
import pytest


@pytest.mark.linter
def test_mypy_finds_no_error_in_the_modules_without_rclpy_or_qt():
    pytest.importorskip('mypy')
    # the files by test/layers.py's rule, the options from setup.cfg's [mypy] section; the
    # cache stays out of the tree
    files = typed_files()
    assert 'sweetie_motion/console/presenter.py' in files   # the GUIs' Qt-free presenters
    cache = os.path.join(ROOT, 'build', 'mypy_cache')
    result = subprocess.run([sys.executable, '-m', 'mypy', '--cache-dir', cache, *files],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, f'type errors:\n{result.stdout}\n{result.stderr}'
