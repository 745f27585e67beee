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
    # Show steps through the findings in time (a warning within the margin comes first)
    for _ in result.findings:
        click(qtbot, window.check_line.show_button)
        if window.play_head_time == pytest.approx(first.time, abs=1e-6):
            break
    assert window.play_head_time == pytest.approx(first.time, abs=1e-6)
    marks = window.robot_view.marks
    assert marks is not None
    assert any(link.startswith('bone1') for link in marks.touching), marks.touching
    assert any(link.startswith('bone2') for link in marks.touching), marks.touching
    # the body rests on the face of its hooves it would stand on (three or four of them)
    assert marks.com is not None and len(marks.support) >= 3 and marks.balanced
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


def test_simulate_shows_the_fall_on_its_row_and_the_pony_fallen_in_the_3d_view(
        qtbot, robot, editor, tmp_path, artifacts_dir):
    # issue #34 item 4: every leg swung back 0.9 rad, hooves flat: the body leans past its
    # front hooves and falls, which the physics says and the 3D view shows
    import math
    import numpy as np
    from sweetie_motion.trajectory.codec import dump_goal
    from sweetie_motion.trajectory.goal import TrajectoryGoal, TrajectoryPoint
    window = editor.window
    joints = ['joint12', 'joint22', 'joint32', 'joint42', 'joint14', 'joint24', 'joint34',
              'joint44']
    pose = [-0.9] * 4 + [0.9] * 4
    lean = TrajectoryGoal(joints, [TrajectoryPoint(0.0, [0.0] * 8),
                                   TrajectoryPoint(2.0, pose), TrajectoryPoint(3.0, pose)])
    path = tmp_path / 'lean.yaml'
    path.write_text(dump_goal(lean, 'lean'), encoding='utf-8')
    assert window.load_file(str(path))
    line = window.physics_line
    click(qtbot, line.simulate_button)
    until(qtbot, lambda: 'FALLS' in line.label.text() and 'simulating' not in
          line.label.text(), 60, 'the simulation says the lean falls')
    result = line.simulator.result
    fall = next(f for f in result.findings if 'falls' in f.finding.message)
    assert fall.finding.severity == 'refuse' and fall.finding.check == 'physics'
    times = [w.time for w in editor.presenter.waypoints.waypoints]
    assert times[0] < fall.time <= times[-1] + 2.0
    model = window.table_model
    assert model.headerData(fall.row, Qt.Vertical).endswith('!')
    assert 'falls' in model.headerData(fall.row, Qt.Vertical, Qt.ToolTipRole)
    until(qtbot, lambda: any(abs(t - fall.time) < 1e-6
                             for t, _ in window.trajectory_plot.findings), 5, 'the plot mark')
    # Show steps through the simulation's findings in time: the fall is one of them
    shown = []
    for _ in result.findings:
        click(qtbot, line.show_button)
        shown.append(window.play_head_time)
        if window.play_head_time == pytest.approx(min(fall.time, times[-1]), abs=1e-6):
            break
    assert shown[-1] == pytest.approx(min(fall.time, times[-1]), abs=1e-6), shown
    # a refused table: Execute is red and refuses, naming the fall
    assert 'refused' in window.execute_button.toolTip()
    click(qtbot, window.execute_button)
    assert editor.presenter.execution is None
    # (the balance check sees the tip-over too: whichever refuses first is named)
    text = editor.presenter.message.text
    assert text.startswith('not executed: the') and 'refuse' in text
    assert 'falls' in text or 'tips over' in text, text
    # the pony drawn where the physics has it: tilted well past a rock
    rotation, position = window.robot_view.base
    assert math.degrees(math.acos(np.clip(rotation[2, 2], -1, 1))) > 20
    window.robot_view.redraw()
    screenshot(editor, Path(artifacts_dir) / 'editor_physics_fall.png')
    # the first row: standing on the floor, upright
    window.show_time(times[0])
    rotation, position = window.robot_view.base
    assert rotation[2, 2] > math.cos(math.radians(5)) and position[2] > 0.1
    # an edit while Simulate is on simulates the new table; a small lean stays up
    for column in range(FIXED, FIXED + 8):
        edit_cell(qtbot, editor, 1, column, f'{-0.2 if column < FIXED + 4 else 0.2}')
        edit_cell(qtbot, editor, 2, column, f'{-0.2 if column < FIXED + 4 else 0.2}')
    until(qtbot, lambda: 'stays up' in line.label.text() and 'simulating' not in
          line.label.text(), 90, 'the simulation of the edited table')
