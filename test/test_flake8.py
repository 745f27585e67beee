"""flake8 with ament's configuration, on everything Python in the repository."""

import os

from ament_flake8.main import main_with_errors
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = ['sweetie_motion', 'test', 'bench', 'scripts', 'launch', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    paths = [os.path.join(ROOT, p) for p in PATHS if os.path.exists(os.path.join(ROOT, p))]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
