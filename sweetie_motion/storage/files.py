"""Trajectory files: one YAML file per trajectory (trajectory.codec), written atomically."""

import os
from pathlib import Path
import tempfile
from typing import Optional, Union

from sweetie_motion.trajectory.codec import NAME_PATTERN

SUFFIX = '.yaml'


def write_atomically(path: Union[str, Path], text: str) -> None:
    """
    Replace ``path`` with ``text`` so that a crash leaves either the old or the new file.

    A temporary file in the same folder is written, flushed and fsync'ed, renamed over the
    target, and the folder is fsync'ed so that the rename itself survives a power loss.
    """
    path = Path(path)
    folder = path.parent
    descriptor, temporary = tempfile.mkstemp(prefix=f'.{path.name}.', suffix='.tmp',
                                             dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # like open() would: mkstemp makes it private
        with os.fdopen(descriptor, 'w', encoding='utf-8') as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    directory = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def remove_durably(path: Union[str, Path]) -> None:
    """Delete a file and fsync its folder."""
    path = Path(path)
    os.unlink(path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def is_temporary(path: Path) -> bool:
    """Return whether ``path`` is a leftover temporary file of :func:`write_atomically`."""
    return path.name.startswith('.') and path.name.endswith('.tmp')


def name_of(path: Path) -> Optional[str]:
    """Return the trajectory name of a file path (None if it is not a trajectory file)."""
    if path.suffix != SUFFIX or is_temporary(path):
        return None
    name = path.stem
    return name if NAME_PATTERN.fullmatch(name) else None
