"""
The motion checks in the editor (R-SYS-9, issue #22 item 4), as an author meets them.

Flagged rows and times, the marks in the 3D view, while posing a motion.

The motion process runs in another process on the virtual robot (the session's ``robot``).
"""

from pathlib import Path

from editor_helpers import add_poses, click, edit_cell, screenshot, until
from PyQt5.QtCore import Qt
import pytest
from sweetie_motion.editor.models import FIXED, TIME

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: the front legs swing into each other (the pony's checks refuse collisions)
CROSSING = [{'joint11': 0.0, 'joint21': 0.0}, {'joint11': 0.3, 'joint21': -0.3},
            {'joint11': 0.0, 'joint21': 0.0}]


def test_crossing_legs_are_flagged_on_their_row_and_shown_in_the_3d_view(
        qtbot, robot, editor, artifacts_dir):
    window = editor.window
    add_poses(qtbot, robot, editor, CROSSING, joints=['joint11', 'joint21'])
    label = window.check_line.label
    until(qtbot, lambda: 'collision' in label.text() and 'checking' not in label.text(), 30,
          'the checks flag the crossing legs')
    result = window.table_checker.result
    first = next(f for f in result.findings if f.finding.check == 'collision')
    assert first.finding.severity == 'refuse'
    times = [w.time for w in editor.presenter.waypoints.waypoints]
    assert times[0] < first.time < times[-1]
    # the row nearest the finding is marked: its number, its time cell, a tooltip in words
    model = window.table_model
    assert model.headerData(first.row, Qt.Vertical).endswith('!')
    assert 'bone1' in model.headerData(first.row, Qt.Vertical, Qt.ToolTipRole)
    assert model.data(model.index(first.row, TIME), Qt.BackgroundRole) is not None
    unflagged = [k for k in range(len(times)) if k not in result.rows()]
    assert unflagged and not model.headerData(unflagged[0], Qt.Vertical).endswith('!')
    # the plot marks the time; Show puts the play head there and the 3D view marks the legs
    until(qtbot, lambda: any(abs(t - first.time) < 1e-6
                             for t, _ in window.trajectory_plot.findings), 5, 'the plot mark')
    click(qtbot, window.check_line.show_button)
    assert window.play_head_time == pytest.approx(first.time, abs=1e-6)
    marks = window.robot_view.marks
    assert marks is not None
    assert any(link.startswith('bone1') for link in marks.touching), marks.touching
    assert any(link.startswith('bone2') for link in marks.touching), marks.touching
    assert marks.com is not None and len(marks.support) == 4 and marks.balanced
    screenshot(editor, Path(artifacts_dir) / 'editor_checks.png')
    # the first row: standing, nothing too close
    window.show_time(times[0])
    assert window.robot_view.marks.touching == frozenset()
    # an edit that takes the crossing away clears the marks when its check comes back
    for column in (FIXED, FIXED + 1):
        edit_cell(qtbot, editor, 1, column, '0')
    until(qtbot, lambda: window.table_checker.result is not None and
          not window.table_checker.result.findings and 'ok' in label.text(), 30,
          'the checks pass the standing table')
    assert not any(model.headerData(k, Qt.Vertical).endswith('!')
                   for k in range(model.rowCount()))
    assert window.trajectory_plot.findings == []
