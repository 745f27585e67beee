"""
The operator console (R-CART-5) driving the winding arm's bringup on the virtual robot.

A person's actions (sliders, jog buttons, the program editor, Check, Run, Step, Stop) in a real
window; what the arm does is read from its joint_states_ref over DDS by another node, and the
tool pose from the robot model's forward kinematics. Screenshots of each step go to
artifacts/test/console/.
"""

import math
import os

from console_helpers import (
    at_rest, click, cruise_speeds, JOINTS, move_sliders, newest_stamp, reference, speeds, tool,
    type_program, until, wait_at_rest, wait_job,
)
from editor_helpers import answer
import numpy as np
from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import QMessageBox
import pytest
from ros_util import ROOT
from sweetie_motion.cartesian.frames import Pose, rot_z, rotation_angle

pytestmark = [pytest.mark.ros, pytest.mark.slow]

PAPER = os.path.join(ROOT, 'config', 'programs', 'paper_path.txt')
#: a pose away from the wrist singularity (q5 = 0) [rad]
BENT = {'joint1': -1.2, 'joint2': -0.3, 'joint3': 0.4, 'joint4': 0.3, 'joint5': 0.8,
        'joint6': -0.2}


# The paper's program runs first, on the freshly started arm: after a HOME from elsewhere the
# reference is ~1e-6 rad off the home pose, and from some such poses next to the wrist
# singularity the Cartesian planner refuses the paper's path (joint4 acceleration at
# t = 0.17 s; see test_console_presenter.py's xfail test, reported to the lead).
def test_the_papers_program_runs_from_the_console_to_its_last_waypoint(
        qtbot, console, arm, arm_model, shots):
    import yaml
    window = console.window
    with open(PAPER, encoding='utf-8') as stream:
        type_program(console, stream.read())
    until(qtbot, lambda: window.check_button.isEnabled(), 10, 'Check enabled')
    click(qtbot, window.check_button)
    until(qtbot, lambda: 'within the limits' in console.presenter.message.text, 60,
          lambda: f'the check: {console.presenter.message.text}')
    assert '12 segments' in window.status_label.text()
    until(qtbot, lambda: window.robot_view.painted_path == len(console.presenter.plan.tool),
          10, 'the planned path drawn')
    shots(console, 'checked')
    # the preview: the checked motion played by the robot drawn dashed, before anything moves
    before = reference(arm)
    middle = window.preview_slider.maximum() // 2
    window.preview_slider.setValue(middle)
    ghost = window.robot_view.ghost
    plan = console.presenter.plan
    # the time and the line there (issue #37): the MOVL whose waypoint the tool heads for
    t, line = plan.at(middle)
    assert ghost is not None and 3 <= line <= 11 and \
        window.preview_label.text() == f'{t:.1f} s / {plan.duration:.1f} s \N{EM DASH} line {line}'
    shown = arm_model.forward_kinematics('arm', [ghost[j] for j in JOINTS])[:3, 3]
    assert np.linalg.norm(shown - plan.tool[middle]) < 1e-6
    # as a person moves the slider by the keyboard: its end is the last MOVL's
    window.preview_slider.setFocus()
    qtbot.keyClick(window.preview_slider, Qt.Key_End)
    assert window.preview_label.text() == \
        f'{plan.duration:.1f} s / {plan.duration:.1f} s \N{EM DASH} line 11'
    qtbot.keyClick(window.preview_slider, Qt.Key_Home)
    assert window.preview_label.text() == f'0.0 s / {plan.duration:.1f} s \N{EM DASH} line 3'
    # the wrist flip before the path, the tool still, is marked
    (first, end), = plan.reconfiguring
    window.preview_slider.setValue(first + 1)
    assert window.preview_label.text().endswith('line 5, reconfiguring')
    window.preview_slider.setValue(middle)
    assert np.abs(reference(arm) - before).max() < 1e-6
    shots(console, 'preview')

    lines = []
    console.presenter.subscribe(lambda topic: topic == 'job' and lines.append(
        console.presenter.running_line))
    shot = []

    def halfway() -> bool:
        # on the way to waypoint 6 (line 9), the winding machine
        if not shot and console.presenter.running_line == 9 and \
                tool(arm, arm_model).position[1] > 0.5:
            shot.append(shots(console, 'running'))
        return console.presenter.job is None

    # from HOME the path starts with a wrist flip of 106 deg, the tool still: Run asks first
    # (issue #37), the status says it; Cancel moves nothing
    assert 'line 5 starts with a reconfiguration of more than 90 deg' in \
        window.status_label.text()
    question = answer(qtbot, QMessageBox.Cancel, lambda: click(qtbot, window.run_button))
    assert 'Line 5 starts with a reconfiguration' in question and 'joint4 by 106' in question
    assert console.presenter.job is None and 'Run not made' in console.presenter.message.text
    assert np.abs(reference(arm) - before).max() < 1e-6
    answer(qtbot, QMessageBox.Yes, lambda: click(qtbot, window.run_button))
    assert window.editor.isReadOnly()
    assert window.robot_view.ghost is None, 'the preview stays beside the running robot'
    until(qtbot, halfway, 180, lambda: f'the program to end: {console.presenter.message.text}')
    assert 'the program is done' in console.presenter.message.text, \
        console.presenter.message.text
    # HOME, then every MOVL's line as the tool heads for its waypoint
    assert set(range(3, 12)) <= set(lines), lines
    assert shot, 'the tool never passed y = 0.5 m on the path'
    with open(os.path.join(ROOT, 'config', 'paths', 'paper_path.yaml')) as stream:
        last = Pose.from_mm_zyz(*yaml.safe_load(stream)['waypoints'][-1], degrees=True)
    reached = tool(arm, arm_model)
    assert np.linalg.norm(reached.position - last.position) < 1e-3
    assert rotation_angle(reached.rotation, last.rotation) < 0.01
    assert not window.editor.isReadOnly()
    shots(console, 'done')


def test_the_sliders_move_the_arm_at_the_speed_set(qtbot, console, arm, arm_model, shots):
    window = console.window
    assert console.presenter.slider_joints == JOINTS
    shots(console, 'connected')
    window.sliders.speed.setValue(20)
    wait_at_rest(qtbot, arm)
    since = newest_stamp(arm)
    start = reference(arm)
    move_sliders(qtbot, console, arm, BENT)
    wait_at_rest(qtbot, arm)
    goal = np.array(list(BENT.values()))
    assert np.abs(reference(arm) - goal).max() < 2e-3
    limits = arm_model.joint_limits().velocity[arm_model.get_chain_indices('arm')]
    cruise = cruise_speeds(arm, since, start, goal)
    moved = np.abs(goal - start) > 0.3
    # the speed a person sees: 20 % of each joint's limit over the middle of its move (a
    # stream held up for a moment loses that time: slower, never faster; on a loaded machine,
    # with another test beside this one, 0.71 of it was seen)
    ratio = cruise[moved] / (0.2 * limits[moved])
    assert np.all((ratio > 0.5) & (ratio < 1.1)), (ratio, cruise, limits)
    # FollowJointState catches up a stream held up for a moment (this process's threads share
    # one Python lock with pytest's and the peer's) faster: never beyond the joints' limits
    assert np.all(speeds(arm, since) <= limits), speeds(arm, since)
    label = window.sliders.values['joint5'].text()
    assert label.startswith(f'{math.degrees(BENT["joint5"]):+.1f}'), label
    shots(console, 'moved')


def test_jog_moves_the_tool_one_step_in_the_base_and_the_tool_frame(
        qtbot, console, arm, arm_model, shots):
    window = console.window
    move_sliders(qtbot, console, arm, BENT)
    wait_at_rest(qtbot, arm)
    panel = window.jog_panel
    panel.translation_step.setCurrentText('10')
    panel.rotation_step.setCurrentText('5')
    panel.translation_speed.setValue(40)

    def jog(button: str) -> Pose:
        before = tool(arm, arm_model)
        until(qtbot, lambda: console.presenter.can('jog'), 10, 'jog allowed')
        click(qtbot, console.find(type(panel.buttons[('x', 1)]), button))
        message = wait_job(qtbot, console)
        assert console.presenter.message.level == 'info', message
        return before

    before = jog('jog_x_plus')
    after = tool(arm, arm_model)
    assert np.allclose(after.position - before.position, [0.010, 0, 0], atol=3e-4)
    assert rotation_angle(after.rotation, before.rotation) < 2e-3
    shots(console, 'base_x_plus')

    click(qtbot, panel.frame_buttons['tool'])
    assert console.presenter.jog_frame == 'tool'
    before = jog('jog_z_minus')
    after = tool(arm, arm_model)
    assert np.allclose(after.position - before.position, -0.010 * before.rotation[:, 2],
                       atol=3e-4)

    click(qtbot, panel.frame_buttons['base'])
    before = jog('jog_rz_plus')
    after = tool(arm, arm_model)
    assert np.linalg.norm(after.position - before.position) < 5e-4  # the tool point stays
    assert rotation_angle(after.rotation, rot_z(math.radians(5)) @ before.rotation) < 3e-3
    shots(console, 'base_rz_plus')

    # stumble 6: with the arm almost straight, a 10 mm step along y swings the wrist; the
    # console asks first (Cancel: nothing moves; Yes: the step is made)
    qtbot.keyClicks(window.command_line, 'MOVJ 0 0 0 0 0.05 0 V30')
    qtbot.keyClick(window.command_line, Qt.Key_Return)
    wait_job(qtbot, console)
    wait_at_rest(qtbot, arm)
    until(qtbot, lambda: console.presenter.can('jog'), 10, 'jog allowed')
    button = console.find(type(panel.buttons[('y', 1)]), 'jog_y_plus')
    before = tool(arm, arm_model)
    text = answer(qtbot, QMessageBox.Cancel, lambda: click(qtbot, button))
    assert 'joint4 by' in text and 'joint6 by' in text and 'singularity' in text, text
    assert console.presenter.job is None and 'nothing moved' in console.presenter.message.text
    assert np.linalg.norm(tool(arm, arm_model).position - before.position) < 1e-4
    answer(qtbot, QMessageBox.Yes, lambda: click(qtbot, button))
    wait_job(qtbot, console)
    after = tool(arm, arm_model)
    assert np.allclose(after.position - before.position, [0, 0.010, 0], atol=3e-4)

    click(qtbot, window.clamp_button)
    wait_job(qtbot, console)
    until(qtbot, lambda: 'clamped' in window.gripper_label.text(), 10, 'the gripper clamped')
    click(qtbot, window.release_button)
    wait_job(qtbot, console)
    until(qtbot, lambda: 'released' in window.gripper_label.text(), 10,
          'the gripper released')


def test_step_takes_a_path_one_movl_at_a_time(qtbot, console, arm, arm_model, shots):
    # Step went HOME, then the whole path of every MOVL in one; each MOVL is a step now, the
    # tool stopping at its waypoint, and the highlight shows the line to run next
    window = console.window
    presenter = console.presenter
    type_program(console, 'HOME\nMOVL X0 Y-384.8 Z830.2 A-90 B90 C180 F100\n'
                          'MOVL Y-364.8 R10\nMOVL Z850.2\n')
    until(qtbot, lambda: window.step_button.isEnabled(), 10, 'Step enabled')
    targets = {2: (0.0, -0.3848, 0.8302), 3: (0.0, -0.3648, 0.8302), 4: (0.0, -0.3648, 0.8502)}
    click(qtbot, window.step_button)   # HOME
    wait_job(qtbot, console)
    for line in (2, 3, 4):
        assert presenter.next_line == line and window.editor.highlighted.get('next') == line
        click(qtbot, window.step_button)
        message = wait_job(qtbot, console)
        assert presenter.message.level == 'info', message
        wait_at_rest(qtbot, arm)
        reached = tool(arm, arm_model).position
        assert np.linalg.norm(reached - targets[line]) < 1e-3, (line, reached)
        shots(console, f'stepped_line_{line}')
    assert presenter.next_line == 0 and 'the program is done' in presenter.message.text


def move_to_the_target(qtbot, console, arm, arm_model) -> Pose:
    """Click Move, wait for the job to end well and the arm at rest; return the tool pose."""
    click(qtbot, console.window.target_panel.move_button)
    message = wait_job(qtbot, console)
    assert console.presenter.message.level == 'info', message
    wait_at_rest(qtbot, arm)
    return tool(arm, arm_model)


def test_a_typed_tool_pose_is_solved_shown_and_moved_to_on_move(
        qtbot, console, arm, arm_model, shots):
    # as MoveIt's RViz plugin: the joints and the robot at the target first, then Move
    window = console.window
    panel = window.target_panel
    wait_at_rest(qtbot, arm)
    start = reference(arm)
    click(qtbot, panel.use_current)
    here = [float(v) for v in panel.text.text().split()]
    assert len(here) == 6
    goal = Pose.from_mm_zyz(here[0] + 40.0, here[1] - 30.0, here[2] - 50.0, *here[3:],
                            degrees=True)
    panel.text.setText(' '.join(f'{v:.2f}' for v in goal.mm_zyz(degrees=True)))
    click(qtbot, panel.solve_button)
    until(qtbot, lambda: console.presenter.target is not None, 10, 'the target solved')
    assert 'joint1' in panel.result.text() and window.robot_view.ghost is not None
    assert panel.move_button.isEnabled()
    assert np.abs(reference(arm) - start).max() < 1e-6, 'the robot moved before Move'
    shots(console, 'target_solved')
    reached = move_to_the_target(qtbot, console, arm, arm_model)
    assert np.linalg.norm(reached.position - goal.position) < 1e-3
    assert rotation_angle(reached.rotation, goal.rotation) < 0.01
    assert window.robot_view.ghost is None and not panel.move_button.isEnabled()
    shots(console, 'target_reached')


def test_a_point_shift_clicked_in_the_3d_view_becomes_the_target_solved_before_move(
        qtbot, console, arm, arm_model, shots):
    # RViz's marker moves in the plane facing the viewer; a shift+click here does the same:
    # the target goes under the mouse, at the tool's depth, keeping the typed orientation
    from PyQt5.QtCore import QPoint
    window = console.window
    view = window.robot_view
    panel = window.target_panel
    wait_at_rest(qtbot, arm)
    start = reference(arm)
    click(qtbot, panel.use_current)
    typed = Pose.from_mm_zyz(*[float(v) for v in panel.text.text().split()], degrees=True)
    here = tool(arm, arm_model)
    x, y = view.project(here.position)[0] + (25.0, -15.0)
    qtbot.mouseClick(view, Qt.LeftButton, Qt.ShiftModifier, QPoint(round(x), round(y)))
    until(qtbot, lambda: console.presenter.target is not None, 10,
          lambda: f'the picked target solved: {console.presenter.message.text}')
    target = console.presenter.target.pose
    # under the mouse (the text keeps 0.1 mm), at the tool's depth, the typed orientation
    assert np.abs(view.project(target.position)[0] - (round(x), round(y))).max() < 0.5
    az, el = np.radians(view.azimuth), np.radians(view.elevation)
    depth = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    assert abs(float((target.position - here.position) @ depth)) < 2e-4
    assert np.linalg.norm(target.position - here.position) > 0.01
    assert rotation_angle(target.rotation, typed.rotation) < 1e-3
    assert window.robot_view.ghost is not None and 'joint1' in panel.result.text()
    assert np.abs(reference(arm) - start).max() < 1e-6, 'the robot moved before Move'
    shots(console, 'target_picked')
    reached = move_to_the_target(qtbot, console, arm, arm_model)
    assert np.linalg.norm(reached.position - target.position) < 1e-3


def test_step_runs_one_step_and_stop_stops_the_arm(qtbot, console, arm, arm_model, shots):
    window = console.window
    presenter = console.presenter
    type_program(console, 'HOME\nMOVL X10 Q3\n')
    until(qtbot, lambda: presenter.error_line == 2, 10, 'the error shown on line 2')
    assert not window.run_button.isEnabled() and not window.step_button.isEnabled()
    assert window.editor.highlighted.get('error') == 2
    status = window.status_label.text()
    assert status.startswith('line 2:10: unexpected') and status.endswith('^'), status
    shots(console, 'parse_error')

    type_program(console, 'HOME\nMOVJ -90 -20 30 0 45 0 V30\nMOVJ 0 -20 30 0 45 0 V8\n')
    until(qtbot, lambda: window.step_button.isEnabled(), 10, 'Step enabled')
    click(qtbot, window.step_button)
    ended = wait_job(qtbot, console)
    # the job ends with the goal's success (within its goal tolerance): the arm then settles
    home = arm_model.get_chain_property('arm', 'home')
    until(qtbot, lambda: np.abs(reference(arm) - home).max() < 2e-3, 10,
          lambda: f'the arm at home {home}: reference {reference(arm)}, the job said {ended!r}, '
          f'the console says {presenter.message.text!r}')
    assert presenter.next_line == 2 and window.editor.highlighted.get('next') == 2
    click(qtbot, window.step_button)
    wait_job(qtbot, console)
    assert presenter.next_line == 3
    shots(console, 'stepped')

    click(qtbot, window.run_button)
    until(qtbot, lambda: reference(arm, ['joint1'])[0] > math.radians(-70), 30,
          'joint1 on its way')
    shots(console, 'before_stop')
    # the stop acts at the press: the button held down, the job ends
    qtbot.mousePress(window.program_stop_button, Qt.LeftButton)
    message = wait_job(qtbot, console)
    qtbot.mouseRelease(window.program_stop_button, Qt.LeftButton)
    assert 'stopped' in message and presenter.message.level == 'warning', message
    wait_at_rest(qtbot, arm)
    stopped = reference(arm, ['joint1'])[0]
    assert stopped < math.radians(-20), 'the arm went on after Stop'
    assert at_rest(peer=arm)
    assert presenter.next_line == 0  # Run starts it from the top
    shots(console, 'stopped')

    # one command typed and run at once
    qtbot.keyClicks(window.command_line, 'MOVJ joint6=10 V20')
    qtbot.keyClick(window.command_line, Qt.Key_Return)
    message = wait_job(qtbot, console)
    assert presenter.message.level != 'error' and 'command MOVJ' in message, message
    # done within the goal tolerance; the reference this test hears may come later (CI run)
    until(qtbot, lambda: abs(reference(arm, ['joint6'])[0] - math.radians(10)) < 2e-3, 10,
          'joint6 at 10 deg')
    assert window.command_line.text() == ''
    qtbot.keyClicks(window.command_line, 'MOVJ joint9=10')
    qtbot.keyClick(window.command_line, Qt.Key_Return)
    until(qtbot, lambda: presenter.job is None and 'joint9' in presenter.message.text, 10,
          'the unknown joint named')
    assert window.command_line.text() == 'MOVJ joint9=10'


def test_an_edited_program_is_marked_saved_by_ctrl_s_and_not_lost_on_close(
        qtbot, console, tmp_path, shots):
    window, presenter = console.window, console.presenter
    path = tmp_path / 'square.txt'
    path.write_text('HOME\n')
    assert presenter.load_file(str(path))
    until(qtbot, lambda: window.windowTitle().startswith('square.txt'), 5,
          'the file name in the title')
    assert not window.isWindowModified()
    window.editor.setPlainText('HOME\nMOVJ joint1=10 V5\n')
    until(qtbot, window.isWindowModified, 5, 'the modified marker in the title')
    shots(console, 'modified')
    text = answer(qtbot, QMessageBox.Cancel, window.close)
    assert 'square.txt has unsaved changes' in text, text
    assert window.isVisible(), 'Cancel closed the console'
    # Ctrl+S is the window's shortcut: the window the question box gave back the focus to
    # (on a busy machine the window manager takes a moment)
    window.activateWindow()
    until(qtbot, window.isActiveWindow, 5, 'the console active again')
    qtbot.keyClick(window.editor, Qt.Key_S, Qt.ControlModifier)
    until(qtbot, lambda: not window.isWindowModified(), 5, 'saved by Ctrl+S')
    assert path.read_text() == 'HOME\nMOVJ joint1=10 V5\n'
    window.editor.setPlainText('HOME\n')
    answer(qtbot, QMessageBox.Discard, window.close)
    until(qtbot, lambda: not window.isVisible(), 5, 'closed after Discard')
    assert path.read_text() == 'HOME\nMOVJ joint1=10 V5\n'


def test_stop_names_the_line_the_tool_is_on_and_resume_goes_on_from_there(
        qtbot, console, arm, arm_model, shots):
    # issue #37: in a blended path Stop named the path's first MOVL, and Run after a Stop
    # started from the top; Stop names the line the tool is on, Resume goes on there
    window = console.window
    presenter = console.presenter
    type_program(console, 'HOME\nMOVL X0 Y-384.8 Z850.2 A-90 B90 C180 F100\n'
                          'MOVL Y-600 R20\nMOVL X200 R20\nMOVL Y-450 R20\nMOVL X50\n')
    until(qtbot, lambda: window.run_button.isEnabled(), 10, 'Run enabled')
    assert not window.resume_button.isEnabled()
    lines = []
    presenter.subscribe(lambda topic: topic == 'job' and presenter.job is not None and
                        lines.append(presenter.running_line))
    click(qtbot, window.run_button)
    # on line 4 (to X200 Y-600), short of its corner's blend
    until(qtbot, lambda: presenter.running_line == 4 and tool(arm, arm_model).position[0] > 0.03,
          60, lambda: f'the tool on line 4: {presenter.running_line}, {lines}, '
          f'{presenter.message.text}')
    click(qtbot, window.program_stop_button)
    message = wait_job(qtbot, console)
    wait_at_rest(qtbot, arm)
    stopped = tool(arm, arm_model).position
    assert stopped[0] < 0.18 and abs(stopped[1] + 0.6) < 2e-3, stopped   # on line 4's leg
    assert 'stopped at line 4' in message and 'Resume goes on from line 4' in message, message
    assert window.resume_button.isEnabled() and window.editor.highlighted.get('next') == 4
    assert {2, 3, 4} <= set(lines), lines
    shots(console, 'stopped_on_line_4')
    lines.clear()
    click(qtbot, window.resume_button)
    assert lines and lines[0] == 4, lines      # from the stopped line, not from the top
    message = wait_job(qtbot, console, 60)
    assert 'the program is done' in message, message
    assert {4, 5, 6} <= set(lines) and not {1, 2, 3} & set(lines), lines
    wait_at_rest(qtbot, arm)
    assert np.linalg.norm(tool(arm, arm_model).position - (0.05, -0.45, 0.8502)) < 1e-3
    assert not window.resume_button.isEnabled() and window.run_button.isEnabled()
    shots(console, 'resumed_to_the_end')


def test_solve_refuses_what_move_would_and_a_target_beyond_the_reach_says_so(
        qtbot, console, arm, arm_model, shots):
    # issue #37: Solve said 'Move goes there' and Move was refused (tool0 in the turntable); a
    # target 2.5 m away read as a near miss of IK
    window = console.window
    panel = window.target_panel
    presenter = console.presenter
    start = reference(arm)
    for typed, words in (('1100 0 640 0 90 180', ('Move would be refused', 'turntable')),
                         ('2500 60 740 0 90 180', ("beyond the arm's reach (about 1361 mm",))):
        panel.text.clear()
        qtbot.keyClicks(panel.text, typed)
        click(qtbot, panel.solve_button)
        text = presenter.message.text
        assert all(w in text for w in words) and presenter.message.level == 'error', text
        assert presenter.target is None and window.robot_view.ghost is None
        assert not panel.move_button.isEnabled()
    shots(console, 'target_refused')
    # the same target in a program: named so by Check, on its line
    type_program(console, 'HOME\nMOVL X2500 Y60 Z740\n')
    until(qtbot, lambda: window.check_button.isEnabled(), 10, 'Check enabled')
    click(qtbot, window.check_button)
    until(qtbot, lambda: "beyond the arm's reach" in window.status_label.text(), 30,
          lambda: f'the check: {window.status_label.text()}')
    assert window.editor.highlighted.get('error') == 2
    assert np.abs(reference(arm) - start).max() < 1e-6, 'the robot moved'
