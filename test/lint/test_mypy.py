"""mypy over every module that imports neither rclpy nor PyQt5 (make lint)."""

import configparser
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
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, 'setup.cfg'))
    # one rule: no second list of files or exclusions in setup.cfg to drift from it
    assert not {'files', 'exclude'} & set(config['mypy']), 'setup.cfg [mypy] lists files'
    # the GUIs' Qt-free modules (their presenters) are in, wherever they are
    assert [f for f in files if f.startswith('sweetie_motion/console/')]
    assert [f for f in files if f.startswith('sweetie_motion/editor/')]
    cache = os.path.join(ROOT, 'build', 'mypy_cache')
    result = subprocess.run([sys.executable, '-m', 'mypy', '--cache-dir', cache, *files],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, f'type errors:\n{result.stdout}\n{result.stderr}'
