"""
The editor's table checked in the background: findings on rows and table times, marks per moment.

What the editor shows of the motion checks (R-SYS-9, R-EDIT-5) without Qt: the row and the
table time of each finding, the links too close and the centre of mass over the support polygon
at any moment, and only the newest table's answer.
"""

import time

import numpy as np
import pytest
from sweetie_motion.checks.marks import support_polygon
from sweetie_motion.editor.play_head import table_key
from sweetie_motion.editor.table_checks import TableChecker
from sweetie_motion.model.description import load_robot_description
from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
from sweetie_motion.trajectory.waypoints import WaypointsList


@pytest.fixture(scope='module')
def pony():
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    return model


@pytest.fixture
def checker(pony):
    checker = TableChecker(pony)
    yield checker
    checker.close()


def table(joints, rows):
    """Return a table of rows (table time, positions...)."""
    return WaypointsList.from_goal(TrajectoryGoal(
        list(joints), [TrajectoryPoint(float(t), [float(v) for v in values])
                       for t, *values in rows]))


def answer(checker, deadline=60.0):
    """Return the checker's next answer, waiting for it up to ``deadline`` [s]."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        result = checker.poll()
        if result is not None:
            return result
        time.sleep(0.01)
    raise AssertionError(f'no check answer within {deadline} s')


def test_crossing_front_legs_are_flagged_on_the_row_and_time_where_they_meet(checker):
    # the table starts at 1 s: the findings are in table time, as the rows and the plot are
    legs = table(['joint11', 'joint21'], [(1.0, 0.0, 0.0), (3.0, 0.3, -0.3), (4.0, 0.3, -0.3)])
    assert checker.request(legs, 'akima')
    result = answer(checker)
    assert result.error == '', result.error
    collision = [f for f in result.findings if f.finding.check == 'collision']
    assert collision, result.summary()
    first = collision[0]
    assert first.time == pytest.approx(1.0 + first.finding.time)
    assert 1.3 < first.time <= 3.0
    nearest = min(range(3), key=lambda k: abs(legs.waypoints[k].time - first.time))
    assert first.row == nearest and first.row in result.rows()
    assert 'bone1' in first.finding.message and 'bone2' in first.finding.message
    assert result.summary().startswith('checks: ') and 'REFUSED' in result.summary()
    # at that moment the two legs' links are marked; at the start none is
    touching = result.marks_at(first.time).touching
    assert any(link.startswith('bone1') for link in touching), touching
    assert any(link.startswith('bone2') for link in touching), touching
    assert result.marks_at(1.0).touching == frozenset()
    # the same table is not checked twice
    assert not checker.request(legs, 'akima')


def test_a_standing_nod_has_its_centre_of_mass_inside_four_feet(checker):
    nod = table(['joint52'], [(0.0, 0.0), (1.0, 0.4), (2.0, 0.0)])
    checker.request(nod, 'akima')
    result = answer(checker)
    assert result.findings == [], result.summary()
    assert result.summary().startswith('checks: ok')
    marks = result.marks_at(1.0)
    assert marks.support is not None and len(marks.support) == 4
    assert marks.com_margin > 0.02 and marks.zmp_margin > 0.0 and marks.balanced
    # the CoM's foot lies on the plane of the feet, below the CoM
    assert marks.com_on_ground[2] < marks.com[2]
    assert 'CoM' in marks.describe() and 'inside' in marks.describe()


def test_only_the_newest_table_is_answered(checker):
    first = table(['joint52'], [(0.0, 0.0), (1.0, 0.4)])
    second = table(['joint52'], [(0.0, 0.0), (1.0, -0.4)])
    checker.request(first, 'akima')
    checker.request(second, 'akima')
    result = answer(checker)
    assert result.key == table_key(second, 'akima')
    assert checker.result is result


def test_a_table_that_makes_no_motion_is_reported_not_checked(checker):
    empty = WaypointsList([])
    checker.request(empty, 'akima')
    result = answer(checker)
    assert result.error and 'no joints' in result.error
    assert result.summary().startswith('checks: not run')
    assert result.marks_at(0.0) is None


def test_the_support_polygon_is_the_hull_in_order():
    feet = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.2, 0.3, 0.0], [1.0, 0.0, 0.0],
                     [0.0, 1.0, 0.0]])
    hull = support_polygon(feet, np.array([0.0, 0.0, 1.0]))
    assert len(hull) == 4 and not any(np.allclose(c, feet[2]) for c in hull)
    # in order around it: consecutive corners are neighbours (no diagonal as an edge)
    edges = np.linalg.norm(np.diff(np.vstack((hull, hull[:1])), axis=0), axis=1)
    assert np.allclose(edges, 1.0)
    assert len(support_polygon(feet[:2], np.array([0.0, 0.0, 1.0]))) == 2
