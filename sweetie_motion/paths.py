"""
Where sweetie_motion finds its shared files (config/, launch/), and how config files are read.

Run from a source checkout (the venv of `make setup` installs the package in editable mode)
the files are those of the checkout; installed by colcon they are in the package's share
directory of the ament index.
"""

import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Union

from sweetie_motion.errors import did_you_mean

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
    """
    Return the file a user means by ``name``.

    An absolute path as it is; a relative one against the current directory first (what a
    person typing ``--config ./my.yaml`` means), then the package's config/ (the shipped
    files: ``--config sweetie_bot_motion.yaml``). A name found in neither place comes back as
    the current directory's, so that the error names the file the user typed.
    """
    path = Path(name).expanduser()
    if path.is_absolute():
        return path
    if path.exists():
        return path.resolve()
    shipped = share_dir() / 'config' / path
    return shipped if shipped.exists() else path.resolve()


def describe_file_error(path: Union[str, Path], error: BaseException) -> str:
    """
    Say in one line why a file could not be read: ``FILE:LINE:COLUMN: problem`` for YAML.

    PyYAML's own message spans four lines (the context, the mark, the problem and its mark);
    an editor jumps to ``file:line:column``.
    """
    mark = getattr(error, 'problem_mark', None)
    problem = getattr(error, 'problem', None)
    if mark is not None and problem:
        context = getattr(error, 'context', None)
        where = f' ({context})' if context else ''
        return f'{path}:{mark.line + 1}:{mark.column + 1}: {problem}{where}'
    if isinstance(error, FileNotFoundError):
        return f'{path}: no such file{nearby_file(path)}'
    if isinstance(error, OSError):
        return f'{path}: {error.strerror or error}'
    return f'{path}: {" ".join(str(error).split())}'


def nearby_file(path: Union[str, Path]) -> str:
    """
    Return " (did you mean 'X'?)" for an existing file named like the missing ``path``.

    Looks beside it and, for a relative path, among the shipped config files (where
    :func:`config_path` also looks); X is written as the user would type it.
    """
    import difflib
    path = Path(path)
    typed: Dict[str, str] = {}  # file name -> how to type it

    def offer(folder: Path, prefix: str) -> None:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.is_file():
                typed.setdefault(entry.name, prefix + entry.name)
    here = str(path.parent) == '.' or path.parent == Path.cwd()
    offer(path.parent, '' if here else f'{path.parent}/')
    if here:
        offer(share_dir() / 'config', '')
        offer(share_dir() / 'config' / 'programs', 'programs/')
        offer(share_dir() / 'config' / 'paths', 'paths/')
    close = difflib.get_close_matches(path.name, list(typed), n=1, cutoff=0.75)
    return f' (did you mean {typed[close[0]]!r}?)' if close else ''


def load_yaml(path: Union[str, Path], error: Callable[[str], Exception]) -> Any:
    """
    Read a YAML file; raise ``error`` with a one-line reason when it cannot be read.

    :param error: the exception class of the caller's layer (it takes the message), or a
        function making one from the message.
    """
    import yaml
    try:
        with open(path, encoding='utf-8') as stream:
            return yaml.safe_load(stream)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as problem:
        raise error(f'cannot read {describe_file_error(path, problem)}') from None


class LineMap(dict):
    """A YAML mapping that remembers the line of each key (:func:`load_yaml_lines`)."""

    lines: Dict[object, int]

    def line(self, key: object) -> Optional[int]:
        """Return the 1-based line of ``key`` in its file (None if unknown)."""
        return getattr(self, 'lines', {}).get(key)


def load_yaml_lines(path: Union[str, Path], error: Callable[[str], Exception]) -> Any:
    """
    Read a YAML file as :func:`load_yaml` does, its mappings as :class:`LineMap`.

    So a message about a key can say ``file:line``.
    """
    import yaml

    class Loader(yaml.SafeLoader):

        def construct_mapping(self, node, deep=False):
            mapping = LineMap(super().construct_mapping(node, deep=True))
            mapping.lines = {self.construct_object(key, deep=True): key.start_mark.line + 1
                             for key, _ in node.value}
            return mapping

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                           Loader.construct_mapping)
    try:
        with open(path, encoding='utf-8') as stream:
            return yaml.load(stream, Loader=Loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as problem:
        raise error(f'cannot read {describe_file_error(path, problem)}') from None


def check_keys(where: str, section: Mapping, known: Iterable[str],
               error: Callable[[str, str], Exception]) -> None:
    """
    Refuse a config section with a key outside ``known``, naming the first one.

    :param where: the section's place in the document (e.g. 'servo_bus.buses.leg12').
    :param error: makes the caller's exception from (key, reason).
    """
    known = set(known)
    unknown = set(section) - known
    if unknown:
        key = sorted(unknown)[0]
        raise error(f'{where}.{key}', f'unknown key{did_you_mean(key, known)} (known: '
                                      f'{", ".join(sorted(known))})')


def config_number(key: str, value: Any, error: Callable[[str], Exception], low: float = 0.0,
                  high: float = float('inf'), above: bool = False) -> float:
    """
    Return a config value as a finite float within its range, or refuse it in one line.

    :param key: where the value is (e.g. 'checks.balance.margin').
    :param error: the exception class of the caller's layer (it takes the message).
    :param low: the smallest value allowed (``above``: values must be greater).
    :param high: the largest value allowed.
    :raises Exception: ``error('KEY: expected a number >= LOW, got VALUE')`` (with the upper
        bound when it is finite).
    """
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        (value > low if above else value >= low) and value <= high
    if not ok:
        bound = f'{">" if above else ">="} {low:g}'
        if high != float('inf'):
            bound += f' and <= {high:g}'
        raise error(f'{key}: expected a number {bound}, got {value!r}')
    return float(value)
