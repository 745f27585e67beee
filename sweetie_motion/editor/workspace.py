"""
The editor's own files (no Qt, no ROS): timestamped backups and the tables behind stored names.

``<workspace>/backups/``
    ``<YYYYmmdd-HHMMSS-ffffff>_<name>.yaml``: the whole table (disabled rows, markers, labels,
    actions), written on a timer while there are unsaved changes; only the newest
    :attr:`Workspace.keep` are kept (:mod:`sweetie_motion.gui.backups`). ``clean_exit`` holds
    the stamp of the last close that left nothing unsaved: a newer backup means the editor
    ended with unsaved work (killed, crashed, or the changes were kept on purpose) and is
    offered for restore at the next start.
``<workspace>/tables/<name>.yaml``
    The table last saved under ``name``. A stored trajectory holds only the active rows' times
    and positions (a FollowJointTrajectory goal); Load takes the labels, disabled rows, markers
    and actions from here when this table still builds exactly the stored goal (otherwise the
    trajectory changed elsewhere and the stored goal wins).

Saved numbers are rounded to :data:`DECIMALS` decimals: poses read from joint_states and times
scaled by a factor carry float noise (-0.20000000000000012) that nobody wants in a file.
"""

from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Tuple, Union

from sweetie_motion.gui.backups import BackupFolder
from sweetie_motion.storage.files import write_atomically
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.waypoints import WaypointError, WaypointsList
import yaml

#: saved positions [rad] and times [s] are rounded to this many decimals (1 µrad, 1 µs)
DECIMALS = 6


def tidy(value: float) -> float:
    """Return ``value`` rounded to :data:`DECIMALS` decimals (and -0.0 as 0.0)."""
    return round(float(value), DECIMALS) + 0.0


def tidy_goal(goal: TrajectoryGoal) -> TrajectoryGoal:
    """Return the goal with its times and positions rounded (see the module docstring)."""
    points = [TrajectoryPoint(tidy(p.time), [tidy(v) for v in p.positions],
                              [tidy(v) for v in p.velocities],
                              [tidy(v) for v in p.accelerations], list(p.effort))
              for p in goal.points]
    return replace(goal, points=points)


def tidy_document(document: dict) -> dict:
    """Return a :meth:`WaypointsList.to_document` document with its numbers rounded."""
    out = dict(document)
    out['waypoints'] = [dict(row, t=tidy(row['t']), positions=[tidy(v) for v in
                                                               row['positions']])
                        for row in document.get('waypoints') or []]
    return out


def dump_table(waypoints: WaypointsList, name: str = '') -> str:
    """Return the YAML text of a whole table (what Dump... and the backups write)."""
    document = tidy_document(waypoints.to_document())
    if name:
        document = {'name': name, **document}
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=100)


def read_table(path: Union[str, Path]) -> Tuple[WaypointsList, str]:
    """
    Read a table dump, a backup, a trajectory file or an old robot's goal file (JSON).

    :return: the list and the name written in the file ('' when none).
    :raises WaypointError: unreadable, or not a table or trajectory file (naming the path).
    """
    from sweetie_motion.storage.migration import goal_from_ros1, MigrationError
    try:
        with open(path, encoding='utf-8') as stream:
            document = yaml.safe_load(stream)   # JSON is YAML: the old robot's files too
        if isinstance(document, dict) and 'trajectory' in document and 'format' not in document:
            # the old robot's FollowJointTrajectory goal (its animations' JSON files)
            return (WaypointsList.from_goal(goal_from_ros1(document, str(path))),
                    Path(path).stem)
        waypoints = WaypointsList.from_document(document)
    except (OSError, yaml.YAMLError) as error:
        raise WaypointError(f'cannot read {path}: {error}') from None
    except (WaypointError, MigrationError) as error:
        raise WaypointError(f'{path}: {error}') from None
    name = document.get('name', '') if isinstance(document, dict) else ''
    return waypoints, name if isinstance(name, str) else ''


def same_goal(first: TrajectoryGoal, second: TrajectoryGoal) -> bool:
    """Return whether two goals have the same joints, times and positions (rounded)."""
    if first.joint_names != second.joint_names or len(first.points) != len(second.points):
        return False
    for a, b in zip(first.points, second.points):
        if tidy(a.time) != tidy(b.time) or [tidy(v) for v in a.positions] != \
                [tidy(v) for v in b.positions]:
            return False
    return True


class Workspace:
    """
    The editor's folder of backups and tables.

    :param directory: the folder (created on the first write).
    :param keep: how many backups to keep (the oldest go first).
    """

    def __init__(self, directory: Union[str, Path], keep: int = 20) -> None:
        self.directory = Path(directory).expanduser()
        self.keep = max(1, int(keep))
        #: the timestamped backups of the tables
        self.backup = BackupFolder(self.directory, '.yaml', self.keep)

    @property
    def backup_dir(self) -> Path:
        """Return the folder of the backups."""
        return self.backup.backup_dir

    @property
    def table_dir(self) -> Path:
        """Return the folder of the tables behind stored names."""
        return self.directory / 'tables'

    def backups(self) -> List[Path]:
        """Return the backup files, newest first."""
        return self.backup.files()

    # --- tables behind stored names ------------------------------------------------------------

    def save_table(self, name: str, waypoints: WaypointsList) -> Path:
        """
        Keep the whole table saved under ``name`` (labels, disabled rows, markers, actions).

        :raises OSError: the folder is not writable.
        """
        path = self.table_dir / f'{name}.yaml'
        self.table_dir.mkdir(parents=True, exist_ok=True)
        write_atomically(path, dump_table(waypoints, name))
        return path

    def table_for(self, name: str, goal: TrajectoryGoal) -> Optional[WaypointsList]:
        """
        Return the table saved under ``name`` if it still builds exactly ``goal``.

        :return: None when there is none, it is unreadable, or the stored goal differs.
        """
        path = self.table_dir / f'{name}.yaml'
        if not path.is_file():
            return None
        try:
            waypoints, _ = read_table(path)
            built = tidy_goal(waypoints.build_goal(whole=True))
        except WaypointError:
            return None
        return waypoints if same_goal(built, goal) else None
