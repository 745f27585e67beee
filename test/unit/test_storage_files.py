"""Trajectory files and the trajectory store: names, YAML round trip, atomic writes, loading."""

import os

import pytest
from sweetie_motion.storage.files import write_atomically
from sweetie_motion.storage.store import LoadReport, TrajectoryStore
from sweetie_motion.trajectory.codec import (
    check_name, dump_goal, goal_from_document, goal_to_document, load_goal_file,
    TrajectoryFileError,
)
from sweetie_motion.trajectory.goal import JointTolerance, TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.validation import GoalError
import yaml


def nod(shift=0.0):
    """Return a small valid goal (``shift`` moves every position)."""
    return TrajectoryGoal(['joint51', 'joint53'], [
        TrajectoryPoint(0.0, [0.0 + shift, 0.0]),
        TrajectoryPoint(0.5, [-0.1 + shift, 0.3]),
        TrajectoryPoint(1.25, [0.05 + shift, -0.2]),
    ])


def rich():
    """Return a goal using every field the file format keeps."""
    return TrajectoryGoal(
        ['joint51', 'joint53', 'support/leg1'],
        [TrajectoryPoint(0.0, [0.1 + 0.2, -1e-7, 1.0], [0.0, 0.0, 0.0], [0.5, -0.25, 0.0],
                         [1.5, 2.5, 0.0]),
         TrajectoryPoint(0.123456789, [-3.141592653589793, 2.5e-12, 0.0], [0.3, -0.7, 0.0],
                         [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]),
         TrajectoryPoint(2.5, [0.2, 1234.5678, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                         [1.0, 1.0, 1.0])],
        path_tolerance=[JointTolerance('joint51', 0.2, -1.0, 3.0),
                        JointTolerance('joint53', 0.0, 0.5)],
        goal_tolerance=[JointTolerance('joint53', 0.05)],
        goal_time_tolerance=0.75, frame_id='base_link')


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize('name', ['nod', 'Nod', 'a', 'wave_2', 'x' * 64, 'look_Around_3b',
                                  'a_'])
def test_valid_names_are_accepted(name):
    assert check_name(name) == name


@pytest.mark.parametrize('name', ['../etc', 'a.b', 'a/b', '', '1abc', '.hidden', 'x' * 65,
                                  '_nod', 'nod-2', 'nod ', ' nod', 'nöd', 'nod\n', 'a\nb'])
def test_invalid_names_are_rejected(name):
    with pytest.raises(TrajectoryFileError, match='invalid trajectory name'):
        check_name(name)


@pytest.mark.parametrize('name', [None, 42, b'nod', ['nod']])
def test_non_string_names_are_rejected(name):
    with pytest.raises(TrajectoryFileError):
        check_name(name)


# --- file format ---------------------------------------------------------------------------------


def test_yaml_round_trip_keeps_every_value(tmp_path):
    goal = rich()
    path = tmp_path / 'rich.yaml'
    path.write_text(dump_goal(goal, 'rich'), encoding='utf-8')
    loaded = load_goal_file(path)
    assert loaded == goal
    assert goal_from_document(goal_to_document(goal, 'rich')) == goal


def test_round_trip_of_a_goal_without_rates():
    goal = nod()
    document = goal_to_document(goal, 'nod')
    assert all(set(p) == {'t', 'positions'} for p in document['points'])
    assert 'frame_id' not in document
    back = goal_from_document(yaml.safe_load(dump_goal(goal, 'nod')))
    assert back == goal
    assert all(p.velocities == [] and p.accelerations == [] and p.effort == []
               for p in back.points)


def test_zero_tolerance_fields_are_omitted_and_minus_one_kept():
    document = goal_to_document(rich(), 'rich')
    assert document['path_tolerance'] == [
        {'name': 'joint51', 'position': 0.2, 'velocity': -1.0, 'acceleration': 3.0},
        {'name': 'joint53', 'velocity': 0.5}]
    assert document['goal_tolerance'] == [{'name': 'joint53', 'position': 0.05}]


def test_the_file_is_human_readable():
    text = dump_goal(rich(), 'rich')
    lines = text.splitlines()
    assert lines[0].startswith('#') and "'rich'" in lines[0] and '3 points' in lines[0]
    assert 'name: rich' in lines
    assert 'joint_names: [joint51, joint53, support/leg1]' in lines
    assert 'frame_id: base_link' in lines
    positions = [line.strip() for line in lines if line.strip().startswith('positions:')]
    assert len(positions) == 3                              # one line per point
    assert positions[2] == 'positions: [0.2, 1234.5678, 1.0]'
    assert not any(line.startswith('!!') or '!!python' in line for line in lines)


def test_a_long_point_stays_readable():
    names = [f'joint{leg}{k}' for leg in range(1, 5) for k in range(1, 7)]
    goal = TrajectoryGoal(names, [TrajectoryPoint(0.0, [0.123456] * 24),
                                  TrajectoryPoint(1.0, [-0.654321] * 24)])
    text = dump_goal(goal, 'wide')
    assert max(len(line) for line in text.splitlines()) <= 110
    assert load_goal_file_text(text) == goal


def load_goal_file_text(text):
    """Parse a dumped goal the way load_goal_file does."""
    return goal_from_document(yaml.safe_load(text))


@pytest.mark.parametrize('text', [
    'joint_names: [a, b\npoints: [',                            # not YAML
    '{"unclosed": \n',                                          # not YAML either
    '',                                                         # empty
    '- just\n- a list\n',                                       # not a mapping
    'joint_names: joint51\npoints: []\n',                       # names not a list
    'joint_names: [joint51, 3]\npoints: []\n',                  # a number as a name
    'joint_names: [joint51]\n',                                 # no points
    'joint_names: [joint51]\npoints: {t: 0}\n',                 # points not a list
    'joint_names: [joint51]\npoints: [{t: 0}]\n',               # no positions
    'joint_names: [joint51]\npoints: [{positions: [0.0]}]\n',   # no time
    'joint_names: [joint51]\npoints: [{t: soon, positions: [0.0]}]\n',
    'joint_names: [joint51]\npoints: [{t: 0, positions: [fast]}]\n',
    'joint_names: [joint51]\npoints: [{t: 0, positions: 0.5}]\n',
    'joint_names: [joint51]\npoints: [{t: 0, positions: [0], velocities: [x]}]\n',
    'joint_names: [joint51]\npoints: [{t: 0, positions: [0], effort: {a: 1}}]\n',
    'joint_names: [joint51]\npoints: [{t: 0, positions: [0.0]}]\ngoal_time_tolerance: long\n',
    'joint_names: [joint51]\npoints: []\npath_tolerance: {name: joint51}\n',
    'joint_names: [joint51]\npoints: []\ngoal_tolerance: [{position: 0.1}]\n',
    'joint_names: [joint51]\npoints: []\ngoal_tolerance: [{name: joint51, position: big}]\n',
    'format: sweetie_motion/trajectory 2\njoint_names: [joint51]\npoints: []\n',
    'joint_names: [joint51]\npoints: [[0.0, 0.1]]\n',
])
def test_corrupt_files_raise_naming_the_file(tmp_path, text):
    path = tmp_path / 'broken_one.yaml'
    path.write_text(text, encoding='utf-8')
    with pytest.raises(TrajectoryFileError, match='broken_one.yaml'):
        load_goal_file(path)


def test_a_file_that_is_not_utf8_or_missing_raises(tmp_path):
    path = tmp_path / 'binary.yaml'
    path.write_bytes(b'\xff\xfe\x00joint_names')
    with pytest.raises(TrajectoryFileError, match='binary.yaml'):
        load_goal_file(path)
    with pytest.raises(TrajectoryFileError, match='absent.yaml'):
        load_goal_file(tmp_path / 'absent.yaml')


def test_an_error_names_the_point(tmp_path):
    path = tmp_path / 'p.yaml'
    path.write_text('joint_names: [a]\npoints:\n- {t: 0, positions: [0]}\n'
                    '- {t: 1, positions: [nope]}\n', encoding='utf-8')
    with pytest.raises(TrajectoryFileError, match='point 1 positions'):
        load_goal_file(path)


def test_write_atomically_replaces_content_and_leaves_no_temporary(tmp_path):
    path = tmp_path / 'nod.yaml'
    write_atomically(path, 'first\n')
    assert path.read_text(encoding='utf-8') == 'first\n'
    write_atomically(path, 'second ünïcode\n')
    assert path.read_text(encoding='utf-8') == 'second ünïcode\n'
    assert sorted(os.listdir(tmp_path)) == ['nod.yaml']


def test_write_atomically_keeps_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / 'nod.yaml'
    write_atomically(path, 'old\n')
    with pytest.raises(UnicodeEncodeError):
        write_atomically(path, 'half \udcff written')       # a lone surrogate cannot be encoded
    assert path.read_text(encoding='utf-8') == 'old\n'
    assert sorted(os.listdir(tmp_path)) == ['nod.yaml']


# --- the store -----------------------------------------------------------------------------------


def write_goal(folder, name, goal):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f'{name}.yaml').write_text(dump_goal(goal, name), encoding='utf-8')


@pytest.fixture
def folders(tmp_path):
    """Return (writable folder, library folder) with one built-in trajectory 'bow'."""
    saved, library = tmp_path / 'saved', tmp_path / 'library'
    write_goal(library, 'bow', nod(0.1))
    return saved, library


def test_save_then_load_in_a_new_store(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    assert store.load().loaded == ['bow']
    path = store.save('nod', rich())
    assert path == saved / 'nod.yaml' and path.is_file()
    assert store.get('nod') == rich()
    assert sorted(os.listdir(saved)) == ['nod.yaml']
    again = TrajectoryStore(saved, [library])
    report = again.load()
    assert report == LoadReport(loaded=['bow', 'nod'], problems=[], removed_temporaries=[])
    assert again.names() == ['bow', 'nod']
    assert again.get('nod') == rich() and again.get('bow') == nod(0.1)
    assert again.get('nothing') is None


def test_load_creates_the_writable_folder(tmp_path):
    store = TrajectoryStore(tmp_path / 'a' / 'b')
    assert store.load().loaded == []
    assert (tmp_path / 'a' / 'b').is_dir()


def test_a_missing_library_folder_is_reported(tmp_path):
    store = TrajectoryStore(tmp_path / 'saved', [tmp_path / 'nowhere'])
    report = store.load()
    assert len(report.problems) == 1 and 'nowhere' in report.problems[0]


def test_is_library(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    store.load()
    store.save('nod', nod())
    assert store.is_library('bow')
    assert not store.is_library('nod')
    assert not store.is_library('unknown')


def test_a_corrupt_file_is_reported_and_the_others_load(folders):
    saved, library = folders
    write_goal(saved, 'good', nod())
    write_goal(saved, 'zeta', nod(0.2))
    (saved / 'broken.yaml').write_text('joint_names: [joint51\npoints: [', encoding='utf-8')
    (saved / 'wrong.yaml').write_text('joint_names: [joint51]\npoints: [{t: 0, positions: '
                                      '[fast]}]\n', encoding='utf-8')
    (library / 'libbad.yaml').write_text('- not a goal\n', encoding='utf-8')
    store = TrajectoryStore(saved, [library])
    report = store.load()
    assert report.loaded == ['bow', 'good', 'zeta']
    assert store.names() == ['bow', 'good', 'zeta']
    assert len(report.problems) == 3
    for name in ('broken.yaml', 'wrong.yaml', 'libbad.yaml'):
        assert sum(name in problem for problem in report.problems) == 1, report.problems
    assert all('skipped' in problem for problem in report.problems)
    assert (saved / 'broken.yaml').exists()                  # reported, not deleted


def test_a_structurally_invalid_file_is_reported(folders):
    saved, library = folders
    bad = nod()
    bad.points[2].time = 0.5                                 # times not increasing
    write_goal(saved, 'stutter', bad)
    write_goal(saved, 'fine', nod())
    report = TrajectoryStore(saved, [library]).load()
    assert report.loaded == ['bow', 'fine']
    assert len(report.problems) == 1
    assert 'stutter.yaml' in report.problems[0] and 'point 2' in report.problems[0]


def test_files_with_invalid_names_are_reported_and_other_files_ignored(folders):
    saved, library = folders
    write_goal(saved, 'good', nod())
    (saved / '2fast.yaml').write_text(dump_goal(nod(), 'x'), encoding='utf-8')
    (saved / 'notes.txt').write_text('not a trajectory', encoding='utf-8')
    (saved / 'good.yaml.bak').write_text('old', encoding='utf-8')
    report = TrajectoryStore(saved, [library]).load()
    assert report.loaded == ['bow', 'good']
    assert len(report.problems) == 1 and '2fast.yaml' in report.problems[0]


def test_a_leftover_temporary_file_is_removed_and_reported(folders):
    saved, library = folders
    write_goal(saved, 'nod', nod())
    leftover = saved / '.nod.yaml.k3j_x9q2.tmp'
    leftover.write_text('half a fi', encoding='utf-8')
    store = TrajectoryStore(saved, [library])
    report = store.load()
    assert report.removed_temporaries == ['.nod.yaml.k3j_x9q2.tmp']
    assert not leftover.exists()
    assert report.loaded == ['bow', 'nod'] and report.problems == []
    assert store.get('nod') == nod()


def test_a_saved_trajectory_shadows_the_library_and_delete_unshadows_it(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    store.load()
    store.save('bow', nod(0.3))
    assert store.get('bow') == nod(0.3) and not store.is_library('bow')
    reloaded = TrajectoryStore(saved, [library])
    reloaded.load()
    assert reloaded.get('bow') == nod(0.3) and not reloaded.is_library('bow')
    store.delete('bow')
    assert not (saved / 'bow.yaml').exists()
    assert (library / 'bow.yaml').exists()
    assert store.get('bow') == nod(0.1) and store.is_library('bow')
    assert store.names() == ['bow']


def test_the_last_library_folder_wins_also_after_delete(tmp_path):
    saved, first, second = tmp_path / 'saved', tmp_path / 'first', tmp_path / 'second'
    write_goal(first, 'bow', nod(0.1))
    write_goal(second, 'bow', nod(0.2))
    store = TrajectoryStore(saved, [first, second])
    store.load()
    assert store.get('bow') == nod(0.2)
    store.save('bow', nod(0.3))
    store.delete('bow')
    assert store.get('bow') == nod(0.2)


def test_after_delete_the_store_shows_what_a_fresh_load_shows(folders):
    saved, library = folders
    bad = nod(0.1)
    bad.points[1].time = 0.0                                 # an invalid built-in 'wave'
    write_goal(library, 'wave', bad)
    store = TrajectoryStore(saved, [library])
    assert store.load().loaded == ['bow']
    store.save('wave', nod())
    store.delete('wave')
    fresh = TrajectoryStore(saved, [library])
    fresh.load()
    assert store.names() == fresh.names() == ['bow']
    assert store.get('wave') is None


def test_delete_of_a_built_in_is_refused(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    store.load()
    with pytest.raises(TrajectoryFileError, match='built-in'):
        store.delete('bow')
    assert (library / 'bow.yaml').exists() and store.get('bow') == nod(0.1)


def test_delete_of_an_unknown_or_invalid_name(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    store.load()
    with pytest.raises(TrajectoryFileError, match='ghost'):
        store.delete('ghost')
    with pytest.raises(TrajectoryFileError, match='invalid trajectory name'):
        store.delete('../library/bow')
    assert (library / 'bow.yaml').exists()


def test_delete_removes_the_file(folders):
    saved, library = folders
    store = TrajectoryStore(saved, [library])
    store.load()
    store.save('nod', nod())
    store.delete('nod')
    assert store.get('nod') is None and store.names() == ['bow']
    assert os.listdir(saved) == []
    fresh = TrajectoryStore(saved, [library])
    assert fresh.load().loaded == ['bow']


@pytest.mark.parametrize('name', ['../evil', 'a.b', '', '.hidden', 'x' * 65])
def test_save_with_an_invalid_name_writes_nothing(tmp_path, name):
    saved = tmp_path / 'saved'
    store = TrajectoryStore(saved)
    store.load()
    with pytest.raises(TrajectoryFileError):
        store.save(name, nod())
    assert os.listdir(saved) == []
    assert sorted(os.listdir(tmp_path)) == ['saved']
    assert store.names() == []


def test_save_of_an_invalid_goal_writes_nothing(tmp_path):
    saved = tmp_path / 'saved'
    store = TrajectoryStore(saved)
    store.load()
    store.save('nod', nod())
    bad = nod(0.5)
    bad.points[2].time = 0.4                                 # times not increasing
    with pytest.raises(GoalError, match='point 2'):
        store.save('nod', bad)
    with pytest.raises(GoalError):
        store.save('empty', TrajectoryGoal(['joint51'], []))
    assert sorted(os.listdir(saved)) == ['nod.yaml']
    assert store.get('nod') == nod() and store.names() == ['nod']
    assert load_goal_file(saved / 'nod.yaml') == nod()


def test_save_overwrites_and_leaves_no_temporary(tmp_path):
    store = TrajectoryStore(tmp_path)
    store.load()
    store.save('nod', nod())
    store.save('nod', nod(0.2))
    assert sorted(os.listdir(tmp_path)) == ['nod.yaml']
    assert load_goal_file(tmp_path / 'nod.yaml') == nod(0.2)


# --- the load cache ------------------------------------------------------------------------------


def test_unchanged_files_load_from_the_cache_and_changed_ones_are_parsed_again(
        folders, monkeypatch):
    import sweetie_motion.storage.store as store_module
    saved, library = folders
    first = TrajectoryStore(saved, [library])
    first.load()
    first.save('nod', rich())
    again = TrajectoryStore(saved, [library])
    again.load()                     # parses nod.yaml (saved since) and caches it
    again.put_derived('nod', 'blob', b'\x00\x01')
    assert again.write_cache()
    parsed = []
    real = store_module.load_goal_file
    monkeypatch.setattr(store_module, 'load_goal_file',
                        lambda path: parsed.append(path.name) or real(path))
    third = TrajectoryStore(saved, [library])
    assert third.load().loaded == ['bow', 'nod'] and parsed == []
    assert third.get('nod') == rich() and third.get('bow') == nod(0.1)
    assert third.derived('nod', 'blob') == b'\x00\x01'
    write_goal(saved, 'nod', nod(0.3))   # changed: the cache entry no longer matches
    fourth = TrajectoryStore(saved, [library])
    assert fourth.load().loaded == ['bow', 'nod'] and parsed == ['nod.yaml']
    assert fourth.get('nod') == nod(0.3) and fourth.derived('nod', 'blob') is None


def test_a_broken_cache_file_is_ignored_and_rewritten(folders):
    from sweetie_motion.storage.cache import CACHE_NAME
    saved, library = folders
    saved.mkdir()
    (saved / CACHE_NAME).write_text('{"format": "sweetie_motion/trajectory-cache 1", "fil')
    store = TrajectoryStore(saved, [library])
    assert store.load().loaded == ['bow'] and store.get('bow') == nod(0.1)
    assert store.write_cache()
    assert TrajectoryStore(saved, [library]).load().problems == []


def test_a_corrupt_file_is_reported_again_at_every_load(folders):
    saved, library = folders
    saved.mkdir()
    (saved / 'broken.yaml').write_text('points: [ {t: 0')
    for _ in range(2):
        store = TrajectoryStore(saved, [library])
        report = store.load()
        store.write_cache()
        assert report.loaded == ['bow'] and 'broken.yaml' in report.problems[0]
