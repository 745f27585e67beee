"""
Where sweetie_motion finds its shared files (config/, launch/).

Run from a source checkout (the venv of `make setup` installs the package in editable mode)
the files are those of the checkout; installed by colcon they are in the package's share
directory of the ament index.
"""

import os
from pathlib import Path

PACKAGE = 'sweetie_motion'


def share_dir() -> Path:
    """Return the directory that holds config/ and launch/ of sweetie_motion."""
    source = Path(__file__).resolve().parent.parent
    if (source / 'package.xml').is_file() and (source / 'config').is_dir():
        return source
    os.environ.setdefault('AMENT_PREFIX_PATH', os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(__file__))))))
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory(PACKAGE))


def config_path(name: str) -> Path:
    """Return the path of ``name`` under config/; absolute names are returned unchanged."""
    path = Path(name)
    return path if path.is_absolute() else share_dir() / 'config' / path
