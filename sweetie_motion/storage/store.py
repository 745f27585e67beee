"""
The trajectory store: a writable folder of trajectory files plus read-only library folders.

The store is what the ``trajectory_storage`` node persists through: every change is written
atomically before it is acknowledged, so a crash loses no acknowledged trajectory and leaves
no half-written file. Loading reports corrupt files and skips them; the others still load.
"""

from dataclasses import dataclass, field
from pathlib import Path
import threading
from typing import Dict, Iterable, List, Optional, Union

from sweetie_motion.storage.files import (
    check_name, dump_goal, is_temporary, load_goal_file, name_of, remove_durably, SUFFIX,
    TrajectoryFileError, write_atomically,
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
        self._origin: Dict[str, Path] = {}
        self._lock = threading.Lock()

    def load(self) -> LoadReport:
        """Load every folder; report what was loaded and what was skipped, and why."""
        report = LoadReport()
        self.directory.mkdir(parents=True, exist_ok=True)
        goals: Dict[str, TrajectoryGoal] = {}
        origin: Dict[str, Path] = {}
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
                try:
                    goal = load_goal_file(path)
                    check_structure(goal)
                except (TrajectoryFileError, GoalError) as error:
                    report.problems.append(f'{path}: {error}; skipped')
                    continue
                goals[name] = goal
                origin[name] = path
        with self._lock:
            self._goals, self._origin = goals, origin
        report.loaded = sorted(goals)
        return report

    def names(self) -> List[str]:
        """Return the names of every trajectory, sorted."""
        with self._lock:
            return sorted(self._goals)

    def get(self, name: str) -> Optional[TrajectoryGoal]:
        """Return a trajectory (None if unknown)."""
        with self._lock:
            return self._goals.get(name)

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
