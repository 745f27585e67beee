"""pep257 (pydocstyle) with ament's convention, on the package and its tools."""

import os

from ament_pep257.main import main
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    paths = [os.path.join(ROOT, p) for p in ('sweetie_motion', 'test', 'bench', 'scripts',
                                             'launch', 'setup.py')
             if os.path.exists(os.path.join(ROOT, p))]
    rc = main(argv=paths)
    assert rc == 0, 'Found code style errors / warnings'
