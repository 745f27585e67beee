"""
The trajectory codec: a TrajectoryGoal as a human-readable YAML document, and back.

Format (``format: sweetie_motion/trajectory 1``)::

    name: nod
    joint_names: [joint51, joint53]
    goal_time_tolerance: 1.0
    path_tolerance: [{name: joint53, position: 0.3}]
    goal_tolerance: []
    points:
      - {t: 0.0, positions: [0.0, 0.0]}
      - {t: 0.5, positions: [-0.1, 0.3], velocities: [0.0, 0.0]}

Zero tolerance fields, empty velocities/accelerations/effort and an empty frame are omitted.
Trajectory names and what a document may hold live here too; storage (sweetie_motion.storage)
writes the files. Pure: no rclpy.
"""

from pathlib import Path
import re
from typing import Any, Dict, List, Mapping, Type, Union

from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.paths import describe_file_error
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
import yaml

FORMAT = 'sweetie_motion/trajectory 1'
#: trajectory names: one ROS parameter name component (no dots, slashes, or leading digits)
NAME_PATTERN = re.compile(r'[A-Za-z][A-Za-z0-9_]{0,63}')

try:  # the C loader and dumper are several times faster; fall back when libyaml is missing
    _Loader: Any = yaml.CSafeLoader
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Loader, _Dumper = yaml.SafeLoader, yaml.SafeDumper


class TrajectoryFileError(SweetieMotionError):
    """A trajectory file or name is invalid."""


def check_name(name: str) -> str:
    """
    Return ``name`` if it is a valid trajectory name.

    Names become a parameter name component and a file name: letters, digits and underscores,
    starting with a letter, at most 64 characters. This rules out path traversal ('../x'),
    sub-namespaces ('a.b') and hidden files.

    :raises TrajectoryFileError: with what is wrong.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise TrajectoryFileError(
            f'invalid trajectory name {name!r}: use letters, digits and underscores, starting '
            'with a letter (at most 64 characters)')
    return name


def _tolerances(entries: List[JointTolerance]) -> List[Dict[str, Any]]:
    out = []
    for t in entries:
        entry: Dict[str, Any] = {'name': t.name}
        for field in ('position', 'velocity', 'acceleration'):
            value = getattr(t, field)
            if value:
                entry[field] = float(value)
        out.append(entry)
    return out


def goal_to_document(goal: TrajectoryGoal, name: str) -> Dict[str, Any]:
    """Return the YAML document (a dict) of a goal."""
    points = []
    for p in goal.points:
        point: Dict[str, Any] = {'t': round(float(p.time), 9),
                                 'positions': [float(v) for v in p.positions]}
        for field in ('velocities', 'accelerations', 'effort'):
            values = getattr(p, field)
            if values:
                point[field] = [float(v) for v in values]
        points.append(point)
    document: Dict[str, Any] = {'format': FORMAT, 'name': name,
                                'joint_names': list(goal.joint_names),
                                'goal_time_tolerance': float(goal.goal_time_tolerance),
                                'path_tolerance': _tolerances(goal.path_tolerance),
                                'goal_tolerance': _tolerances(goal.goal_tolerance),
                                'points': points}
    if goal.frame_id:
        document['frame_id'] = goal.frame_id
    return document


def _floats(values: object, where: str) -> List[float]:
    if values is None:
        return []
    if not isinstance(values, list):
        raise TrajectoryFileError(f'{where}: expected a list of numbers')
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError):
        raise TrajectoryFileError(f'{where}: expected a list of numbers') from None


def parse_tolerances(entries: object, where: str,
                     error: Type[SweetieMotionError] = TrajectoryFileError
                     ) -> List[JointTolerance]:
    """
    Read a list of ``{name, position, velocity, acceleration}`` tolerance entries.

    Our files and the old robot's JSON goals write tolerances the same way.

    :raises error: naming ``where`` and the entry that is wrong.
    """
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise error(f'{where} must be a list')
    out = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get('name'), str):
            raise error(f'{where}: entries need a name')
        try:
            out.append(JointTolerance(entry['name'], float(entry.get('position', 0.0)),
                                      float(entry.get('velocity', 0.0)),
                                      float(entry.get('acceleration', 0.0))))
        except (TypeError, ValueError):
            raise error(f'{where} of {entry["name"]}: not a number') from None
    return out


def goal_from_document(document: object, where: str = 'trajectory') -> TrajectoryGoal:
    """
    Build a goal from a YAML document.

    :raises TrajectoryFileError: naming the field that is wrong.
    """
    if not isinstance(document, Mapping):
        raise TrajectoryFileError(f'{where}: not a trajectory document (expected a mapping)')
    if document.get('format', FORMAT) != FORMAT:
        raise TrajectoryFileError(f'{where}: unknown format {document.get("format")!r}')
    names = document.get('joint_names')
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TrajectoryFileError(f'{where}: joint_names must be a list of names')
    raw_points = document.get('points')
    if not isinstance(raw_points, list):
        raise TrajectoryFileError(f'{where}: points must be a list')
    points = []
    for k, raw in enumerate(raw_points):
        if not isinstance(raw, Mapping) or 't' not in raw or 'positions' not in raw:
            raise TrajectoryFileError(f'{where}: point {k} needs t and positions')
        try:
            time = float(raw['t'])
        except (TypeError, ValueError):
            raise TrajectoryFileError(f'{where}: point {k}: t is not a number') from None
        points.append(TrajectoryPoint(
            time, _floats(raw['positions'], f'{where}: point {k} positions'),
            _floats(raw.get('velocities'), f'{where}: point {k} velocities'),
            _floats(raw.get('accelerations'), f'{where}: point {k} accelerations'),
            _floats(raw.get('effort'), f'{where}: point {k} effort')))

    def tolerances(key: str) -> List[JointTolerance]:
        return parse_tolerances(document.get(key), f'{where}: {key}')
    try:
        goal_time = float(document.get('goal_time_tolerance', 0.0))
    except (TypeError, ValueError):
        raise TrajectoryFileError(f'{where}: goal_time_tolerance is not a number') from None
    return TrajectoryGoal(names, points, tolerances('path_tolerance'),
                          tolerances('goal_tolerance'), goal_time,
                          str(document.get('frame_id', '')))


def dump_goal(goal: TrajectoryGoal, name: str) -> str:
    """Return the YAML text of a goal."""
    header = f'# sweetie_motion trajectory {name!r}: {len(goal.points)} points, ' \
             f'{len(goal.joint_names)} joints, {goal.duration:.2f} s\n'
    return header + yaml.dump(goal_to_document(goal, name), Dumper=_Dumper,
                              default_flow_style=None, sort_keys=False, width=100)


def load_goal_file(path: Union[str, Path]) -> TrajectoryGoal:
    """
    Read one trajectory file.

    :raises TrajectoryFileError: unreadable, not YAML, or not a trajectory.
    """
    path = Path(path)
    try:
        with open(path, encoding='utf-8') as stream:
            document = yaml.load(stream, Loader=_Loader)
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as error:
        raise TrajectoryFileError(describe_file_error(path, error)) from None
    return goal_from_document(document, str(path))
