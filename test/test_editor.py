"""
The trajectory editor's real widgets, driven with pytest-qt (R-EDIT).

The motion process and the storage node run in another process on the virtual robot.
"""

from pathlib import Path
import re

from motion_process import motion_process, MotionClient
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QApplication, QLineEdit
import pytest
from pytestqt.exceptions import TimeoutError as QtTimeoutError
from ros_util import HERE, wait_for
from sweetie_motion.storage.files import load_goal_file

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NS = 'pony_editor'
POSES = [  # four key poses set through FollowJointState
    {'joint12': 0.0, 'joint13': 0.0, 'joint51': 0.0, 'joint53': 0.0},
    {'joint12': -0.6, 'joint13': 0.8, 'joint51': -0.3, 'joint53': 0.3},
    {'joint12': -0.9, 'joint13': 1.1, 'joint51': -0.5, 'joint53': 0.5},
    {'joint12': -0.3, 'joint13': 0.4, 'joint51': -0.2, 'joint53': 0.1},
]


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    from conftest import own_domain
    from sweetie_motion.editor.app import load_poses
    from sweetie_motion.editor.bridge import EditorBridge
    from sweetie_motion.editor.window import EditorWindow
    from sweetie_motion.model import load_robot_description
    tmp = tmp_path_factory.mktemp('editor')
    storage = tmp / 'store'
    config = tmp / 'editor_test.yaml'
    config.write_text((Path(HERE) / 'config' / 'editor_test.yaml').read_text().replace(
        'STORAGE_DIR', str(storage)))
    app = QApplication.instance() or QApplication(['test'])
    with own_domain() as domain:
        with motion_process(str(config), NS):
            with MotionClient(NS, domain) as robot:
                robot.wait_ready(['motion', 'trajectory_storage', 'follow_joint_state',
                                  'joint_trajectory', 'torque_main_switch'])
                bridge = EditorBridge(['editor', '--ros-args', '-p', f'namespace:={NS}',
                                       '-p', f'backup_file:={tmp / "backup.yaml"}'])
                model = load_robot_description('sweetie_bot.yaml')
                model.configure()
                window = EditorWindow(bridge, model, load_poses())
                window.assume_yes = True
                window.show()
                wait_for(lambda: (app.processEvents() or True) and window.current_pose, 20,
                         message='the editor sees joint_states')
                yield robot, window, storage, tmp
                window.close()
                bridge.close()


def pump(qtbot, seconds):
    qtbot.wait(int(seconds * 1000))


def until(qtbot, condition, timeout=15.0, message='condition'):
    try:
        qtbot.waitUntil(lambda: bool(condition()), timeout=int(timeout * 1000))
    except QtTimeoutError:
        text = message() if callable(message) else message
        raise AssertionError(f'timed out after {timeout} s waiting for {text}') from None


def set_robot_pose(robot, qtbot, window, pose, tolerance=0.01):
    for _ in range(5):
        robot.publish('joint_states_set', list(pose), list(pose.values()))
        pump(qtbot, 0.05)
    until(qtbot, lambda: all(abs(window.current_pose.get(j, 9) - v) < tolerance
                             for j, v in pose.items()), message='the robot in the pose')


def click(qtbot, button):
    qtbot.mouseClick(button, Qt.LeftButton)


def edit_cell(qtbot, window, row, column, text):
    table = window.table
    index = table.model().index(row, column)
    table.setCurrentIndex(index)
    table.edit(index)
    editor = table.viewport().findChildren(QLineEdit)[-1]
    editor.setFocus()
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key_Return)
    pump(qtbot, 0.05)   # the delegate commits in a queued call


def screenshot(window, artifacts_dir, name):
    path = Path(artifacts_dir) / f'editor_{name}.png'
    assert window.grab().save(str(path))
    return path


def test_build_save_reload_execute_a_four_keyframe_trajectory(setup, qtbot, artifacts_dir):
    robot, window, storage, _ = setup
    for pose in POSES:
        set_robot_pose(robot, qtbot, window, pose)
        click(qtbot, window.add_pose_button)
    waypoints = window.waypoints
    assert len(waypoints) == 4
    assert [w.time for w in waypoints.waypoints] == [0.0, 1.0, 2.0, 3.0]
    for row, pose in enumerate(POSES):
        for joint, value in pose.items():
            assert waypoints.pose(row)[joint] == pytest.approx(value, abs=0.01)
    assert window.modified_label.text() == 'unsaved changes'
    # edit the time of the last row by typing into the table
    edit_cell(qtbot, window, 3, 2, '3.5')
    assert waypoints.waypoints[3].time == pytest.approx(3.5)
    screenshot(window, artifacts_dir, 'four_keyframes')

    window.name_combo.setEditText('editor_made')
    click(qtbot, window.save_button)
    until(qtbot, lambda: (storage / 'editor_made.yaml').exists(), message='saved file')
    until(qtbot, lambda: not window.document.modified, message='clean after save')
    saved = load_goal_file(storage / 'editor_made.yaml')
    assert len(saved.points) == 4 and saved.points[3].time == pytest.approx(3.5)

    # reload: the table comes back from the storage node
    window.document.edit('clear', lambda w: [w.delete(0) for _ in range(len(w))])
    assert len(window.waypoints) == 0
    window.name_combo.setEditText('editor_made')
    click(qtbot, window.load_button)
    until(qtbot, lambda: len(window.waypoints) == 4, message='reloaded')
    assert window.waypoints.pose(2)['joint12'] == pytest.approx(POSES[2]['joint12'], abs=0.01)

    # execute from the first pose: the robot follows and ends at the last keyframe
    set_robot_pose(robot, qtbot, window, POSES[0])
    click(qtbot, window.execute_button)
    until(qtbot, lambda: window.result_label.text().startswith(('succeeded', 'FAILED')),
          timeout=20, message='execution result')
    assert window.result_label.text().startswith('succeeded'), window.result_label.text()
    pump(qtbot, 0.3)
    for joint, value in POSES[3].items():
        assert robot.position(joint) == pytest.approx(value, abs=0.03)

    # backward: from the last keyframe back to the first
    window.backward_check.setChecked(True)
    click(qtbot, window.execute_button)
    until(qtbot, lambda: window.result_label.text().startswith(('succeeded', 'FAILED')) and
          window.execute_button.isEnabled(), timeout=20, message='backward result')
    window.backward_check.setChecked(False)
    assert window.result_label.text().startswith('succeeded'), window.result_label.text()
    pump(qtbot, 0.3)
    for joint, value in POSES[0].items():
        assert robot.position(joint) == pytest.approx(value, abs=0.03)


def test_speed_scale_changes_the_duration_and_apply_scale_rewrites_the_times(setup, qtbot):
    robot, window, _, _ = setup
    durations = {}
    # slower, not faster: at 200 % these keyframes exceed the joint limits and the controller
    # retimes them (R-SYS-8), so twice the speed would not halve the duration
    for percent in (100, 50):
        window.speed_slider.setValue(percent)
        assert window.speed_label.text() == f'speed {percent} %'
        # exactly at the first keyframe: no approach is added to the measured duration
        set_robot_pose(robot, qtbot, window, POSES[0], tolerance=0.002)
        click(qtbot, window.execute_button)
        until(qtbot, lambda: window.execute_button.isEnabled() and
              window.result_label.text().startswith(('succeeded', 'FAILED')), timeout=40,
              message=lambda: f'the result at {percent} %: {window.result_label.text()!r}')
        text = window.result_label.text()
        assert text.startswith('succeeded'), text
        durations[percent] = float(re.search(r'duration ([0-9.]+) s', text).group(1))
    assert durations[50] == pytest.approx(durations[100] * 2, abs=0.05)
    before = [w.time for w in window.waypoints.waypoints]
    window.speed_slider.setValue(50)
    click(qtbot, window.apply_scale_button)
    assert [w.time for w in window.waypoints.waypoints] == pytest.approx(
        [2 * t for t in before])
    assert window.speed_slider.value() == 100
    click(qtbot, window.undo_button)
    assert [w.time for w in window.waypoints.waypoints] == pytest.approx(before)
    click(qtbot, window.redo_button)
    click(qtbot, window.undo_button)


def test_bad_edits_are_refused_with_a_message(setup, qtbot):
    _, window, _, _ = setup
    rows_before = window.waypoints.to_document()
    edit_cell(qtbot, window, 1, 2, '5.0')   # after row 3: times out of order
    assert 'times must increase' in window.message_label.text()
    edit_cell(qtbot, window, 2, 3, 'abc')   # not a number
    assert "'abc' is not a number" in window.message_label.text()
    window.select_row(0)
    click(qtbot, window.start_button)
    window.select_row(0)
    window.table.model().setData(window.table.model().index(0, 0), Qt.Unchecked,
                                 Qt.CheckStateRole)
    assert 'carries the start marker' in window.message_label.text()
    window.select_row(0)
    click(qtbot, window.end_button)
    assert 'end marker must be after the start marker' in window.message_label.text()
    window.name_combo.setEditText('../escape')
    click(qtbot, window.save_button)
    assert 'invalid trajectory name' in window.message_label.text()
    document = window.waypoints.to_document()
    document['start'] = rows_before['start']
    assert document['waypoints'] == rows_before['waypoints']
    assert window.waypoints.waypoints[0].active


def test_row_selection_publishes_the_marker_and_set_robot_pose_moves_the_robot(setup, qtbot):
    robot, window, _, _ = setup
    from sensor_msgs.msg import JointState
    markers = []
    robot.node.create_subscription(JointState, f'/{NS}/joint_states_marker_set',
                                   markers.append, 10)
    pump(qtbot, 0.5)
    window.select_row(2)
    until(qtbot, lambda: markers, message='marker published')
    marker = dict(zip(markers[-1].name, markers[-1].position))
    assert marker['joint12'] == pytest.approx(POSES[2]['joint12'], abs=0.01)
    click(qtbot, window.set_pose_button)
    until(qtbot, lambda: abs(robot.position('joint12') - POSES[2]['joint12']) < 0.02,
          message='robot moved to row 3')


def test_servos_off_pose_by_hand_and_add_pose(setup, qtbot, artifacts_dir):
    robot, window, _, _ = setup
    click(qtbot, window.servos_button)
    until(qtbot, lambda: 'OFF' in window.servo_indicator.text(), message='servos off')
    for k in range(20):   # a person bends the leg
        robot.publish('virtual_robot/move_by_hand', ['joint12', 'joint13'],
                      [-0.2 - 0.02 * k, 0.3 + 0.03 * k])
        pump(qtbot, 0.03)
    until(qtbot, lambda: abs(window.current_pose['joint12'] + 0.58) < 0.01,
          message='the hand pose reaches the editor')
    screenshot(window, artifacts_dir, 'servos_off')
    rows = len(window.waypoints)
    window.select_row(rows - 1)
    click(qtbot, window.add_pose_button)
    assert len(window.waypoints) == rows + 1
    assert window.waypoints.pose(rows)['joint12'] == pytest.approx(-0.58, abs=0.01)
    assert window.waypoints.pose(rows)['joint13'] == pytest.approx(0.87, abs=0.01)
    click(qtbot, window.servos_button)
    until(qtbot, lambda: 'ON' in window.servo_indicator.text(), message='servos on')
    pump(qtbot, 0.5)
    assert robot.position('joint12') == pytest.approx(-0.58, abs=0.02)  # holds the pose
    click(qtbot, window.undo_button)
    assert len(window.waypoints) == rows


def test_support_legs_are_published(setup, qtbot):
    robot, window, _, _ = setup
    from sweetie_motion_msgs.msg import SupportState
    seen = []
    robot.node.create_subscription(SupportState, f'/{NS}/support_state_override', seen.append,
                                   10)
    pump(qtbot, 0.5)
    window.findChild(type(window.publish_support_check), 'leg_leg1').setChecked(False)
    window.publish_support_check.setChecked(True)
    until(qtbot, lambda: any(dict(zip(m.name, m.support)).get('leg1') == 0.0 for m in seen),
          message='SupportState')
    state = dict(zip(seen[-1].name, seen[-1].support))
    assert state == {'leg1': 0.0, 'leg2': 1.0, 'leg3': 1.0, 'leg4': 1.0}
    window.publish_support_check.setChecked(False)
    window.findChild(type(window.publish_support_check), 'leg_leg1').setChecked(True)


def test_setup_tolerances_and_joint_set(setup, qtbot):
    _, window, _, _ = setup
    window.tabs.setCurrentIndex(1)
    names = [window.joint_list.item(k).text() for k in range(window.joint_list.count())]
    assert 'joint11' in names and 'eyes_pitch' in names and 'support/leg1' in names
    window.path_all.setValue(0.4)
    click(qtbot, window.path_all_button)
    assert window.waypoints.path_tolerance['joint12'] == pytest.approx(0.4)
    assert window.tolerance_model.data(window.tolerance_model.index(0, 0)) == '0.400'
    window.goal_all.setValue(-1)
    click(qtbot, window.goal_all_button)
    assert window.waypoints.goal_tolerance['joint51'] == -1
    before = list(window.waypoints.joints)
    for k in range(window.joint_list.count()):
        item = window.joint_list.item(k)
        if item.text() == 'joint11':
            item.setCheckState(Qt.Unchecked)
        if item.text() == 'eyes_yaw':
            item.setCheckState(Qt.Checked)
    click(qtbot, window.apply_joints_button)
    assert 'joint11' not in window.waypoints.joints and 'eyes_yaw' in window.waypoints.joints
    assert all(len(w.positions) == len(window.waypoints.joints)
               for w in window.waypoints.waypoints)
    click(qtbot, window.undo_button)
    assert window.waypoints.joints == before
    window.tabs.setCurrentIndex(0)


def test_named_pose_dump_load_and_backup(setup, qtbot, tmp_path):
    _, window, _, tmp = setup
    rows = len(window.waypoints)
    window.named_pose_combo.setCurrentText('hoof_up')
    window.select_row(rows - 1)
    click(qtbot, window.add_named_pose_button)
    assert len(window.waypoints) == rows + 1
    assert window.waypoints.pose(rows)['joint12'] == pytest.approx(-1.2)
    assert window.waypoints.waypoints[rows].label == 'hoof_up'
    window.document.edit('disable', lambda w: w.set_active(1, False))
    path = window.dump_to_file(str(tmp_path / 'table.yaml'))
    text = path.read_text()
    assert 'hoof_up' in text and 'active: false' in text
    document = window.waypoints.to_document()
    window.document.edit('clear', lambda w: [w.delete(0) for _ in range(len(w))])
    assert window.load_from_file(str(path))
    assert window.waypoints.to_document() == document
    assert not window.load_from_file(str(tmp_path / 'missing.yaml'))
    assert 'cannot load' in window.message_label.text()
    backup = window.backup()
    assert backup == tmp / 'backup.yaml' and backup.exists()


def test_plots_and_robot_view_show_the_trajectory(setup, qtbot, artifacts_dir):
    _, window, _, _ = setup
    window.select_row(1)
    figure = window.trajectory_plot.figure
    assert len(figure.axes) >= 2
    lines = [line for axes in figure.axes for line in axes.get_lines()]
    assert any(len(line.get_xdata()) >= 100 for line in lines)   # the interpolated curve
    assert window.robot_view.figure.axes
    row = window.waypoints.active_indices()[1]
    window.document.edit('outside', lambda w: w.set_position(row, 'joint51', 0.6))
    window.select_row(row)
    assert any('joint51' in v for v in window.trajectory_plot.violations)
    plotted = [axes.get_ylabel() for axes in window.trajectory_plot.figure.axes]
    assert 'joint51' in plotted   # a joint breaking a limit is plotted first
    index = window.table_model.index(row, 3 + window.waypoints.joints.index('joint51'))
    assert 'outside its position limits' in window.table_model.data(index, Qt.ToolTipRole)
    screenshot(window, artifacts_dir, 'limits')
    click(qtbot, window.undo_button)


def test_the_waypoint_model_passes_qt_model_tests(setup, qtmodeltester):
    _, window, _, _ = setup
    qtmodeltester.check(window.table_model)
    qtmodeltester.check(window.tolerance_model)
