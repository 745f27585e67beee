"""
The trajectory store: a writable folder of trajectory files plus read-only library folders.

The store is what the ``trajectory_storage`` node persists through: every change is written
atomically before it is acknowledged, so a crash loses no acknowledged trajectory and leaves
no half-written file. Loading reports corrupt files and skips them; the others still load.
Files unchanged since the last load come from a cache (:mod:`sweetie_motion.storage.cache`)
and become goals only when asked for.
"""

from dataclasses import dataclass, field
from pathlib import Path
import threading
from typing import Dict, Iterable, List, Optional, Union

from sweetie_motion.storage.cache import CACHE_NAME, file_key, LoadCache
from sweetie_motion.storage.files import (
    is_temporary, name_of, remove_durably, SUFFIX, write_atomically,
)
from sweetie_motion.trajectory.codec import (
    check_name, dump_goal, goal_from_document, goal_to_document, load_goal_file,
    TrajectoryFileError,
)
from sweetie_motion.trajectory.goal import TrajectoryGoal
from sweetie_motion.trajectory.validation import check_structure, GoalError


@dataclass
class LoadReport:
    """What loading the folders found."""

    loaded: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    removed_temporaries: List[str] = field(default_factory=list)


class TrajectoryStore:
    """
    Named trajectories in files.

    :param directory: writable folder for saves (created if missing).
    :param library: read-only folders loaded first (built-in animations); the writable folder
        overrides a library trajectory of the same name.
    """

    def __init__(self, directory: Union[str, Path],
                 library: Iterable[Union[str, Path]] = ()) -> None:
        self.directory = Path(directory).expanduser()
        self.library = [Path(p).expanduser() for p in library]
        self._goals: Dict[str, TrajectoryGoal] = {}
        #: checked documents not yet turned into goals (from the cache)
        self._documents: Dict[str, dict] = {}
        self._origin: Dict[str, Path] = {}
        self._lock = threading.Lock()
        self.cache = LoadCache(self.directory / CACHE_NAME)

    def load(self) -> LoadReport:
        """Load every folder; report what was loaded and what was skipped, and why."""
        report = LoadReport()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.cache.read()
        goals: Dict[str, TrajectoryGoal] = {}
        documents: Dict[str, dict] = {}
        origin: Dict[str, Path] = {}
        loaded: List[Path] = []
        for folder in self.library + [self.directory]:
            if not folder.is_dir():
                if folder != self.directory:
                    report.problems.append(f'{folder}: library folder does not exist')
                continue
            for path in sorted(folder.iterdir()):
                if is_temporary(path):
                    if folder == self.directory:  # left by a crash during a save
                        try:
                            path.unlink()
                            report.removed_temporaries.append(path.name)
                        except OSError:
                            pass
                    continue
                if path.suffix != SUFFIX:
                    continue
                name = name_of(path)
                if name is None:
                    report.problems.append(f'{path}: not a valid trajectory name, skipped')
                    continue
                key = file_key(path)
                document = self.cache.document(path, key) if key else None
                if document is not None:  # checked before, unchanged since
                    loaded.append(path)
                    documents[name] = document
                    goals.pop(name, None)
                    origin[name] = path
                    continue
                try:
                    goal = load_goal_file(path)
                    check_structure(goal)
                except (TrajectoryFileError, GoalError) as error:
                    report.problems.append(f'{path}: {error}; skipped')
                    continue
                if key is not None:
                    self.cache.put_document(path, key, goal_to_document(goal, name))
                loaded.append(path)
                goals[name] = goal
                documents.pop(name, None)
                origin[name] = path
        self.cache.keep_only(loaded)
        with self._lock:
            self._goals, self._documents, self._origin = goals, documents, origin
        report.loaded = sorted(origin)
        return report

    def write_cache(self) -> bool:
        """Keep what this load parsed for the next one; return whether the cache was written."""
        return self.cache.write()

    def derived(self, name: str, kind: str) -> Optional[bytes]:
        """Return derived data ``kind`` of trajectory ``name`` as loaded (None if unknown)."""
        with self._lock:
            path = self._origin.get(name)
        return self.cache.derived(path, kind) if path is not None else None

    def put_derived(self, name: str, kind: str, data: bytes) -> None:
        """Keep derived data of trajectory ``name`` as loaded, for the next load."""
        with self._lock:
            path = self._origin.get(name)
        if path is not None:
            self.cache.put_derived(path, kind, data)

    def names(self) -> List[str]:
        """Return the names of every trajectory, sorted."""
        with self._lock:
            return sorted(self._origin)

    def get(self, name: str) -> Optional[TrajectoryGoal]:
        """Return a trajectory (None if unknown)."""
        with self._lock:
            goal = self._goals.get(name)
            if goal is None and name in self._documents:
                goal = self._goals[name] = goal_from_document(self._documents.pop(name), name)
            return goal

    def is_library(self, name: str) -> bool:
        """Return whether ``name`` comes from a read-only library folder."""
        with self._lock:
            path = self._origin.get(name)
        return path is not None and path.parent != self.directory

    def save(self, name: str, goal: TrajectoryGoal) -> Path:
        """
        Validate and write a trajectory; return its file. Returns only once it is durable.

        :raises TrajectoryFileError: invalid name.
        :raises GoalError: the trajectory itself is invalid.
        """
        check_name(name)
        check_structure(goal)
        path = self.directory / f'{name}{SUFFIX}'
        write_atomically(path, dump_goal(goal, name))
        with self._lock:
            self._goals[name] = goal
            self._documents.pop(name, None)
            self._origin[name] = path
        return path

    def delete(self, name: str) -> None:
        """
        Delete a saved trajectory.

        :raises TrajectoryFileError: unknown name, or a read-only library trajectory.
        """
        check_name(name)
        with self._lock:
            path = self._origin.get(name)
        if path is None:
            raise TrajectoryFileError(f'no trajectory named {name!r}')
        if path.parent != self.directory:
            raise TrajectoryFileError(
                f'{name!r} is a built-in trajectory ({path}); it cannot be deleted')
        remove_durably(path)
        with self._lock:
            self._goals.pop(name, None)
            self._documents.pop(name, None)
            self._origin.pop(name, None)
        for folder in reversed(self.library):  # a built-in of that name shows again
            candidate = folder / f'{name}{SUFFIX}'
            if candidate.is_file():
                try:
                    goal = load_goal_file(candidate)
                    check_structure(goal)
                except (TrajectoryFileError, GoalError):
                    continue  # load() skips it too
                with self._lock:
                    self._goals[name], self._origin[name] = goal, candidate
                break
