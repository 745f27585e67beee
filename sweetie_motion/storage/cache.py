"""
A cache of what loading trajectory files produces, valid while a file is unchanged.

Parsing YAML is most of what loading a thousand trajectories costs (PyYAML builds every number
in Python, even with the C parser: 1.3-1.9 s for 1000 files of 10 points x 20 joints). The
files stay the truth: the cache keeps, per file (path, modification time in ns, size), the
checked document and opaque derived data (the storage node keeps the serialized goal there),
and anything not matching a file exactly is parsed again. The cache is one JSON file, written
atomically; a broken or foreign cache file is ignored and rewritten.
"""

import base64
import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from sweetie_motion.storage.files import write_atomically

#: name of the cache file in the store's writable folder
CACHE_NAME = '.sweetie_motion-cache.json'
#: changes when the cached structure changes: older caches are ignored
CACHE_FORMAT = 'sweetie_motion/trajectory-cache 1'

FileKey = Tuple[int, int]


def file_key(path: Path) -> Optional[FileKey]:
    """Return (modification time [ns], size [bytes]) of a file, None if it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


class LoadCache:
    """
    Documents and derived data of trajectory files, by path.

    :param path: the cache file.
    """

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = Path(path)
        self._entries: Dict[str, Dict[str, Any]] = {}
        self._dirty = False

    def read(self) -> None:
        """Read the cache file (a missing, broken or older-format file counts as empty)."""
        self._entries, self._dirty = {}, False
        try:
            with open(self.path, encoding='utf-8') as stream:
                content = json.load(stream)
        except (OSError, ValueError):
            return
        if isinstance(content, dict) and content.get('format') == CACHE_FORMAT and \
                isinstance(content.get('files'), dict):
            self._entries = content['files']

    def document(self, path: Path, key: FileKey) -> Optional[Dict[str, Any]]:
        """Return the cached document of ``path`` if the file is exactly the one cached."""
        entry = self._entries.get(str(path))
        if entry is None or entry.get('key') != list(key):
            return None
        return entry.get('document')

    def put_document(self, path: Path, key: FileKey, document: Dict[str, Any]) -> None:
        """Remember the checked document of a file version (drops its derived data)."""
        self._entries[str(path)] = {'key': list(key), 'document': document}
        self._dirty = True

    def derived(self, path: Path, kind: str) -> Optional[bytes]:
        """Return derived data ``kind`` of the cached version of ``path`` (None if absent)."""
        entry = self._entries.get(str(path))
        value = entry.get('derived', {}).get(kind) if entry else None
        return base64.b64decode(value) if isinstance(value, str) else None

    def put_derived(self, path: Path, kind: str, data: bytes) -> None:
        """Keep derived data of the cached version of ``path`` (ignored if not cached)."""
        entry = self._entries.get(str(path))
        if entry is not None:
            entry.setdefault('derived', {})[kind] = base64.b64encode(data).decode('ascii')
            self._dirty = True

    def keep_only(self, paths) -> None:
        """Forget the files not in ``paths`` (deleted or renamed)."""
        wanted = {str(p) for p in paths}
        gone = [p for p in self._entries if p not in wanted]
        for path in gone:
            del self._entries[path]
        self._dirty = self._dirty or bool(gone)

    def write(self) -> bool:
        """Write the cache file if anything changed; return whether it was written."""
        if not self._dirty:
            return False
        try:
            write_atomically(self.path, json.dumps(
                {'format': CACHE_FORMAT, 'files': self._entries}, separators=(',', ':')))
        except OSError:
            return False  # a read-only folder: loading stays correct, only slower
        self._dirty = False
        return True
