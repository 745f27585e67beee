"""flake8 with ament's configuration, on everything Python in the repository."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATHS = ['sweetie_motion', 'test', 'bench', 'scripts', 'launch', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    # In a fresh interpreter: flake8 forks worker processes, and forking this test process
    # (with the threads of earlier ROS and Qt tests) can deadlock.
    paths = [os.path.join(ROOT, p) for p in PATHS if os.path.exists(os.path.join(ROOT, p))]
    code = 'import sys; from ament_flake8.main import main; sys.exit(main(sys.argv[1:]))'
    result = subprocess.run([sys.executable, '-c', code, *paths], capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, f'code style errors:\n{result.stdout}\n{result.stderr}'
