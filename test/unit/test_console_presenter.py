"""
The operator console's presenter and offline planner without Qt or ROS.

The presenter's requests are collected as the bridge would receive them; its events are those
the bridge produces. Kinematics, limits, programs and plans are the real ones of the winding
arm (pinocchio, the Cartesian planner).
"""

import math
import os

import numpy as np
import pytest
from sweetie_motion.cartesian.frames import euler_zyz, Pose, rot_z, rotation_angle
from sweetie_motion.cartesian.path import EQRADIUS
from sweetie_motion.cartesian.program import load_program, parse_program
from sweetie_motion.cartesian.runner import chain_home, program_steps
from sweetie_motion.console.manual_moves import jog_target, SETTLE
from sweetie_motion.console.planning import OfflinePlanner
from sweetie_motion.console.presenter import ConsolePresenter, PARTS
from sweetie_motion.console.program_text import PLAN_DELAY
from sweetie_motion.console.requests import (
    CommandGripper, FAILED, GripperState, JobFinished, JogTool, LineReached, MoveHome,
    PlanProgram, ProgramPlanned, RunSteps, StepFinished, StepStarted, StopJob, STOPPED,
    StopStream, StreamDone, StreamJoints, SUCCEEDED,
)
from sweetie_motion.console.stream import JointStream, MAX_STEP
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.model import load_robot_description
from waiting import wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAPER = os.path.join(ROOT, 'config', 'programs', 'paper_path.txt')
#: a pose of the arm away from the wrist singularity [rad]
BENT = [-1.2, -0.3, 0.4, 0.3, 0.8, -0.2]


@pytest.fixture(scope='module')
def model():
    model = load_robot_description('winding_arm.yaml')
    model.configure()
    return model


def connect(presenter, up=PARTS):
    presenter.handle(LinksChanged(tuple((part, part in up) for part in PARTS)))


def state(presenter, positions):
    presenter.handle(PoseReceived(tuple(presenter.joints), tuple(float(v) for v in positions)))


@pytest.fixture
def presenter(model, sent, clock):
    p = ConsolePresenter(sent.append, model, 'arm', clock=clock)
    connect(p)
    state(p, BENT)
    return p


def of(sent, kind):
    return [r for r in sent if isinstance(r, kind)]


def finish(presenter, outcome=SUCCEEDED, message='', **kwargs):
    presenter.handle(JobFinished(presenter.job.job_id, outcome, message, **kwargs))


# --- jog -------------------------------------------------------------------------------------


def test_a_jog_step_moves_along_or_turns_about_the_base_or_the_tool_axes():
    pose = Pose(np.array([0.5, -0.2, 0.8]), euler_zyz(30, 70, -20, degrees=True))
    moved = jog_target(pose, 'y', 0.01, 'base')
    assert np.allclose(moved.position - pose.position, [0, 0.01, 0])
    assert rotation_angle(moved.rotation, pose.rotation) < 1e-12
    moved = jog_target(pose, 'z', -0.02, 'tool')
    assert np.allclose(moved.position - pose.position, -0.02 * pose.rotation[:, 2])
    turned = jog_target(pose, 'rz', math.radians(5), 'base')
    assert np.allclose(turned.position, pose.position)
    assert np.allclose(turned.rotation, rot_z(math.radians(5)) @ pose.rotation)
    turned = jog_target(pose, 'rz', math.radians(5), 'tool')
    assert np.allclose(turned.rotation, pose.rotation @ rot_z(math.radians(5)))
    assert np.allclose(turned.rotation[:, 2], pose.rotation[:, 2])  # about the tool's own z
    with pytest.raises(ValueError, match='jog axis'):
        jog_target(pose, 'w', 0.01, 'base')
    with pytest.raises(ValueError, match='jog frame'):
        jog_target(pose, 'x', 0.01, 'world')


def test_jog_sends_the_step_and_the_speed_and_waits_for_its_end(presenter, sent):
    presenter.set_jog(frame='tool', translation_step=5.0, translation_speed=20.0)
    assert presenter.jog('x', -1)
    jog = of(sent, JogTool)[-1]
    assert (jog.axis, jog.frame) == ('x', 'tool')
    assert jog.amount == pytest.approx(-0.005) and jog.speed == pytest.approx(0.020)
    assert presenter.busy and not presenter.can('jog')
    assert not presenter.jog('x', 1)  # one motion at a time
    assert 'running' in presenter.message.text and len(of(sent, JogTool)) == 1
    finish(presenter, message='linear move done')
    assert not presenter.busy and presenter.can('jog')
    presenter.set_jog(rotation_step=10.0, rotation_speed=30.0)
    assert presenter.jog('ry', 1)
    jog = of(sent, JogTool)[-1]
    assert jog.amount == pytest.approx(math.radians(10))
    # the planner turns an orientation-only span at path speed / EQRADIUS
    assert jog.speed / EQRADIUS == pytest.approx(math.radians(30))


def test_jog_is_refused_without_the_cartesian_node_or_the_motion_process(presenter, sent):
    connect(presenter, up=[p for p in PARTS if p != 'cartesian'])
    assert not presenter.jog('z', 1)
    assert 'Cartesian motion' in presenter.message.text
    connect(presenter, up=[])
    assert not presenter.jog('z', 1)
    assert 'disconnected' in presenter.message.text
    assert not of(sent, JogTool)
    assert not presenter.set_jog(translation_step=0)
    assert not presenter.set_jog(frame='world')


# --- sliders ---------------------------------------------------------------------------------


def test_a_slider_streams_towards_its_target_at_the_joint_speed_until_the_robot_is_there(
        presenter, sent, clock, model):
    presenter.set_joint_speed(50)
    limits = model.joint_limits()
    indices = model.get_chain_indices('arm')
    assert presenter.move_slider('joint2', 0.2)
    stream = of(sent, StreamJoints)[-1]
    assert stream.names == tuple(presenter.joints) and np.allclose(stream.start, BENT)
    assert stream.targets == (None, 0.2, None, None, None, None)
    assert np.allclose(stream.speeds, 0.5 * limits.velocity[indices])
    assert np.all(np.array(stream.accelerations) <= limits.acceleration[indices])
    assert presenter.move_slider('joint5', 0.1)  # the same move goes on
    assert of(sent, StreamJoints)[-1].stream_id == stream.stream_id
    assert of(sent, StreamJoints)[-1].targets[4] == 0.1
    presenter.set_joint_speed(10)  # a new speed applies to the move at once
    assert np.allclose(of(sent, StreamJoints)[-1].speeds, 0.1 * limits.velocity[indices])
    presenter.handle(StreamDone(stream.stream_id))
    clock.now += 0.05
    presenter.tick()
    assert presenter.manual is not None, 'the robot is not there yet'
    state(presenter, [BENT[0], 0.2, BENT[2], BENT[3], 0.1, BENT[5]])
    presenter.tick()
    assert presenter.manual is None and 'at the sliders' in presenter.message.text
    assert of(sent, StopStream)[-1].stream_id == stream.stream_id
    assert presenter.move_slider('joint2', 0.0)
    assert of(sent, StreamJoints)[-1].stream_id != stream.stream_id  # a new move


def test_a_robot_that_does_not_follow_ends_the_slider_move_with_a_warning(
        presenter, sent, clock):
    presenter.move_slider('joint3', 1.0)
    presenter.handle(StreamDone(of(sent, StreamJoints)[-1].stream_id))
    clock.now += SETTLE + 0.1
    presenter.tick()
    assert presenter.manual is None and presenter.message.level == 'warning'


def test_the_stream_speeds_up_runs_at_its_speed_and_brakes_onto_the_target():
    stream = JointStream([0.0, 1.0], [0.5, 1.0], [2.0, 5.0])
    stream.set_targets([1.0, None])
    positions = [stream.advance(0.01).copy() for _ in range(400)]
    positions = np.array(positions)
    velocity = np.diff(positions[:, 0]) / 0.01
    assert velocity.max() == pytest.approx(0.5)
    assert np.abs(np.diff(velocity)).max() / 0.01 <= 2.0 + 1e-9
    assert positions[-1, 0] == 1.0 and stream.arrived
    assert np.all(positions[:, 1] == 1.0)  # no target: it stays
    # a target moved back while running: the joint brakes first, then comes back
    stream.set_targets([0.0, None])
    for _ in range(20):
        stream.advance(0.01)
    stream.set_targets([1.0, None])
    before = stream.position[0]
    moved = [stream.advance(0.01)[0] for _ in range(5)]
    assert abs(moved[0] - before) < 0.5 * 0.01 + 1e-12  # no jump
    # a thread held up for a moment: the stream slows instead of jumping
    stream = JointStream([0.0], [1.0], [100.0])
    stream.set_targets([5.0])
    assert stream.advance(3.0)[0] <= MAX_STEP * 1.0 + 1e-12
    with pytest.raises(ValueError):
        JointStream([0.0], [0.0], [1.0])


def test_sliders_are_refused_while_a_job_runs_or_outside_the_limits(presenter, sent):
    assert not presenter.move_slider('joint1', 10.0)
    assert 'outside its limits' in presenter.message.text
    assert not presenter.move_slider('joint7', 0.0)
    assert presenter.go_home()
    assert not presenter.move_slider('joint1', 0.1)
    assert 'running' in presenter.message.text
    assert not of(sent, StreamJoints)


def test_stop_stops_the_slider_stream(presenter, sent):
    presenter.move_slider('joint3', 1.0)
    presenter.stop()
    assert of(sent, StopStream)[-1].stream_id == of(sent, StreamJoints)[-1].stream_id
    assert presenter.manual is None and 'stopped' in presenter.message.text


def test_a_lost_motion_process_ends_the_slider_move(presenter, sent, clock):
    presenter.move_slider('joint3', 1.0)
    connect(presenter, up=[])
    assert 'disconnected' in presenter.message.text
    clock.now += 0.05
    presenter.tick()
    assert presenter.manual is None and of(sent, StopStream)
    assert 'went away' in presenter.message.text
    connect(presenter)
    assert presenter.connected and 'connected' in presenter.message.text
    assert presenter.move_slider('joint3', 1.0)  # works again


def test_the_sliders_show_the_chosen_chain(presenter):
    assert presenter.slider_joints == presenter.joints
    assert not presenter.set_slider_chain('leg1')
    assert 'unknown chain' in presenter.message.text


# --- home and gripper ------------------------------------------------------------------------


def test_home_moves_to_the_chains_home_at_the_joint_speed(presenter, sent, model):
    presenter.set_joint_speed(40)
    assert presenter.go_home()
    home = of(sent, MoveHome)[-1]
    assert np.allclose(home.target, model.get_chain_property('arm', 'home'))
    assert np.allclose(home.speed, 0.4 * model.joint_limits().velocity[
        model.get_chain_indices('arm')])
    finish(presenter, STOPPED, 'stopped')
    assert presenter.message.level == 'warning' and 'stopped' in presenter.message.text


def test_the_gripper_command_and_state(presenter, sent):
    assert presenter.gripper('clamp')
    assert of(sent, CommandGripper)[-1].action == 'clamp'
    presenter.handle(GripperState('clamped'))
    finish(presenter, message='gripper clamped')
    assert presenter.gripper_state == 'clamped'
    assert not presenter.gripper('squeeze')
    connect(presenter, up=[p for p in PARTS if p != 'gripper'])
    assert not presenter.gripper('release')
    assert 'gripper of the motion process does not answer' in presenter.message.text


# --- the program -----------------------------------------------------------------------------

PROGRAM = 'HOME\nMOVJ -60 -10 20 0 40 0 V30\nWAIT 0.2\nMOVL Z900 F100\nMOVL X500 R10\n'


def test_a_parse_error_is_shown_on_its_line_and_nothing_runs(presenter, sent):
    presenter.set_text('HOME\nMOVL X10 Y\nWAIT 1\n')
    assert presenter.parse_error is not None and presenter.error_line == 2
    assert not presenter.can('run')
    assert not presenter.run() and not presenter.step() and not presenter.check()
    assert 'line 2:' in presenter.message.text and presenter.message.line == 2
    assert not of(sent, RunSteps) and not of(sent, PlanProgram)
    presenter.set_text('HOME\nMOVL X10 Y20\nWAIT 1\n')
    assert presenter.parse_error is None and presenter.error_line == 0
    assert presenter.can('run')


def test_an_edit_is_planned_offline_a_moment_later(presenter, sent, clock):
    presenter.set_text(PROGRAM)
    presenter.tick()
    assert not of(sent, PlanProgram)
    clock.now += PLAN_DELAY + 0.01
    presenter.tick()
    plan = of(sent, PlanProgram)[-1]
    assert len(plan.steps) == 4 and np.allclose(plan.start, BENT)  # from where the robot is
    presenter.tick()
    assert len(of(sent, PlanProgram)) == 1


def test_run_goes_through_the_steps_and_highlights_the_running_line(presenter, sent):
    presenter.set_text(PROGRAM)
    assert presenter.run()
    run = of(sent, RunSteps)[-1]
    assert (run.first, run.single, len(run.steps)) == (0, False, 4)
    assert of(sent, PlanProgram), 'the path drawn is planned from where the program starts'
    assert presenter.running_line == 1
    presenter.handle(StepStarted(run.job_id, 1, 2, 'line 2: joint move'))
    assert presenter.running_line == 2
    presenter.handle(StepStarted(run.job_id + 7, 3, 4, 'another job'))
    assert presenter.running_line == 2
    assert not presenter.set_text('HOME\n')  # no edits while it runs
    assert presenter.text == PROGRAM
    finish(presenter, next_index=4)
    assert presenter.running_line == 0 and presenter.next_step == 0
    assert 'the program is done' in presenter.message.text


def test_step_runs_one_step_and_goes_on_from_the_next(presenter, sent):
    presenter.set_text(PROGRAM)
    assert presenter.step()
    assert of(sent, RunSteps)[-1].single and of(sent, RunSteps)[-1].first == 0
    finish(presenter, next_index=1, override=0.5)
    assert presenter.next_line == 2 and 'next: line 2' in presenter.message.text
    assert presenter.step()
    run = of(sent, RunSteps)[-1]
    assert (run.first, run.override) == (1, 0.5)
    finish(presenter, next_index=2, override=0.5)
    assert presenter.run()
    assert of(sent, RunSteps)[-1].first == 2 and not of(sent, RunSteps)[-1].single
    finish(presenter, STOPPED, 'stopped', line=4, next_index=3)
    assert presenter.next_step == 0 and 'stopped at line 4' in presenter.message.text
    presenter.step()
    assert of(sent, RunSteps)[-1].first == 0  # a stopped program starts from the top
    finish(presenter, next_index=1)
    presenter.set_text(PROGRAM + 'WAIT 1\n')
    assert presenter.next_step == 0  # an edited program starts from the top


def test_the_running_line_follows_the_path_from_movl_to_movl(presenter, sent):
    presenter.set_text(PROGRAM)
    presenter.run()
    run = of(sent, RunSteps)[-1]
    presenter.handle(StepStarted(run.job_id, 3, 4, 'line 4: 2 linear move(s)'))
    assert presenter.running_line == 4
    presenter.handle(LineReached(run.job_id, 5))      # the tool heads for line 5's waypoint
    assert presenter.running_line == 5
    presenter.handle(LineReached(run.job_id + 1, 4))  # another job's
    assert presenter.running_line == 5


def test_step_runs_a_path_one_movl_at_a_time(presenter, sent):
    presenter.set_text(PROGRAM)   # step 3 is the path of lines 4 and 5
    presenter.step()
    finish(presenter, next_index=3)
    presenter.step()
    assert (of(sent, RunSteps)[-1].first, of(sent, RunSteps)[-1].first_move) == (3, 0)
    finish(presenter, next_index=3, next_move=1)   # line 4's MOVL done, line 5's next
    assert presenter.next_line == 5 and 'next: line 5' in presenter.message.text
    presenter.step()
    run = of(sent, RunSteps)[-1]
    assert (run.first, run.first_move, run.single) == (3, 1, True)
    assert presenter.running_line == 5
    finish(presenter, next_index=4)
    assert presenter.next_step == 0 and 'the program is done' in presenter.message.text


def test_a_failed_step_is_shown_on_its_line(presenter, sent):
    presenter.set_text(PROGRAM)
    presenter.run()
    finish(presenter, FAILED, 'line 4: linear move failed (-21): the path enters the zone '
           'floor', line=4, next_index=3)
    assert presenter.error_line == 4 and presenter.message.level == 'error'
    assert 'zone floor' in presenter.message.text and presenter.message.line == 4


def test_a_joint_move_the_chain_cannot_make_is_refused_before_anything_moves(presenter, sent):
    presenter.set_text('HOME\nWAIT 1\nMOVJ 10 20 30\n')
    assert not presenter.run()
    assert presenter.error_line == 3 and 'MOVJ gives 3 values for the 6 joints' in \
        presenter.message.text
    assert not of(sent, RunSteps)


def test_run_needs_the_parts_the_program_uses(presenter, sent):
    presenter.set_text('MOVL Z900\n')
    connect(presenter, up=[p for p in PARTS if p != 'cartesian'])
    assert not presenter.run()
    assert 'Cartesian motion' in presenter.message.text
    presenter.set_text('WAIT 1\nGRIP CLAMP\n')
    assert presenter.run()  # neither the controller nor the Cartesian node needed
    finish(presenter, next_index=2)
    connect(presenter, up=[p for p in PARTS if p != 'gripper'])
    assert not presenter.run() and 'gripper' in presenter.message.text
    presenter.set_text('')
    assert not presenter.run() and 'empty' in presenter.message.text


def test_stop_stops_the_job(presenter, sent):
    presenter.set_text(PROGRAM)
    presenter.run()
    presenter.stop()
    assert of(sent, StopJob)[-1].job_id == presenter.job.job_id and presenter.job.stopping
    presenter.stop()
    finish(presenter, STOPPED, 'the program was stopped', line=2, next_index=1)
    assert not presenter.busy
    presenter.stop()
    assert presenter.message.text == 'nothing moves'


def test_a_typed_command_runs_at_once_and_a_bad_one_names_the_column(presenter, sent):
    assert not presenter.run_line('MOVL X10 Q5')
    assert 'column 10' in presenter.message.text
    assert not presenter.run_line('; just a comment')
    assert not presenter.run_line('MOVJ joint9=30')
    assert "unknown joint 'joint9'" in presenter.message.text and not presenter.busy
    assert presenter.run_line('MOVJ joint5=30')
    run = of(sent, RunSteps)[-1]
    assert len(run.steps) == 1 and run.steps[0].kind == 'joint' and run.single
    # stumble 13: a typed command is no program line ("line 0")
    assert run.steps[0].describe() == 'command: joint move'
    presenter.handle(StepFinished(run.job_id, 0, 0, 'moved', 1.5))
    assert presenter.message.text == 'command: done in 1.50 s: moved'


def test_the_offline_plan_draws_the_newest_request_only(presenter, sent):
    presenter.set_text(PROGRAM)
    assert presenter.check()
    first = of(sent, PlanProgram)[-1]
    presenter.check()
    newest = of(sent, PlanProgram)[-1]
    empty = np.zeros((0, 3))
    presenter.handle(ProgramPlanned(first.plan_id, empty, empty, np.zeros((0, 6)), 1.0))
    assert presenter.plan is None
    tool = np.array([[0.1, 0.2, 0.3], [0.2, 0.2, 0.3]])
    presenter.handle(ProgramPlanned(newest.plan_id, tool, tool, np.zeros((2, 6)), 3.5))
    assert presenter.plan is not None and 'within the limits' in presenter.message.text
    presenter.check()
    presenter.handle(ProgramPlanned(of(sent, PlanProgram)[-1].plan_id, empty, empty,
                                    np.zeros((0, 6)), 0.0, (), 'line 4: the floor', 4))
    assert presenter.error_line == 4 and presenter.message.level == 'error'
    # stumble 13: an edit that does not parse shows its error, not the old plan's beside it
    presenter.set_text(PROGRAM + 'MOVL Z7x35\n')
    assert presenter.parse_error is not None and presenter.message.text == ''
    assert 'offline plan: line 4: the floor' in [m.text for m in presenter.log]


def test_a_file_that_cannot_be_read_is_named(presenter, tmp_path):
    assert not presenter.load_file(str(tmp_path / 'missing.txt'))
    assert 'missing.txt' in presenter.message.text
    assert presenter.load_file(PAPER)
    assert presenter.source == PAPER and len(presenter.steps) == 2
    assert presenter.save_file(str(tmp_path / 'copy.txt'))
    assert (tmp_path / 'copy.txt').read_text() == presenter.text


def test_the_tool_pose_is_read_in_mm_and_zyz_degrees(presenter, model):
    home = chain_home(model, 'arm')
    state(presenter, home)
    # the paper's first waypoint is the tool's pose at home
    assert presenter.tool_text().startswith('X 0.0  Y -384.8  Z 850.2 mm')
    assert presenter.joint_rows()[0] == ('joint1', '-90.00 deg')


# --- the offline planner ---------------------------------------------------------------------


def test_the_papers_program_plans_offline_to_its_last_waypoint(model):
    home = chain_home(model, 'arm')
    planner = OfflinePlanner(model, 'arm', home)
    try:
        steps = tuple(program_steps(load_program(PAPER)))
        plan = planner.plan(PlanProgram(1, steps, tuple(np.zeros(6))))
        assert not plan.error, plan.error
        assert '12 segments' in plan.reports[-1]
        assert np.allclose(plan.tool[-1], [-0.410, 1.000, 1.000], atol=1e-4)
        # HOME takes the tool to the first waypoint: the path starts there, through all 8
        assert len(plan.waypoints) == 8 and plan.positions.shape == (len(plan.tool), 6)
        assert np.allclose(plan.waypoints[0], [0.0, -0.3848, 0.8502], atol=1e-4)
        # through the thread: the newest request wins, the answer comes by poll
        planner.submit(PlanProgram(2, steps[:1], tuple(np.zeros(6))))
        planner.submit(PlanProgram(3, steps[:1], tuple(np.zeros(6))))
        plans = []
        wait_for(lambda: plans.extend(planner.poll()) or any(p.plan_id == 3 for p in plans), 30,
                 message='plan 3')
    finally:
        planner.close()


def test_an_offline_plan_into_a_forbidden_zone_names_its_line(model):
    planner = OfflinePlanner(model, 'arm', chain_home(model, 'arm'))
    try:
        steps = tuple(program_steps(parse_program('HOME\nWAIT 0.1\nMOVL Z20\n')))
        plan = planner.plan(PlanProgram(1, steps, tuple(np.zeros(6))))
        assert plan.line == 3 and 'floor' in plan.error, plan.error
        assert len(plan.tool) > 1  # what was planned before it is drawn
    finally:
        planner.close()


def test_check_plans_the_papers_path_from_the_reference_a_home_move_leaves(model):
    # joint_states_ref after HOME from a jogged pose on the arm's bringup (printed there)
    start = [-1.5707953405229875, -9.8627190914341014e-07, 9.8627190910688946e-07,
             1.6437865146714162e-06, 1.6437865148196842e-06, -1.9725438176406324e-06]
    planner = OfflinePlanner(model, 'arm', chain_home(model, 'arm'))
    try:
        steps = tuple(program_steps(load_program(PAPER)))[1:]  # the path, after HOME
        plan = planner.plan(PlanProgram(1, steps, tuple(start)))
        assert not plan.error, plan.error
    finally:
        planner.close()


def test_a_path_that_fails_at_one_move_names_that_moves_line_and_keeps_its_waypoints(model):
    # stumble 3: a MOVL out of reach added as line 12 of the paper's program was reported on
    # line 4 (where the run of MOVL starts), and the path's waypoints vanished from the view
    planner = OfflinePlanner(model, 'arm', chain_home(model, 'arm'))
    try:
        with open(PAPER) as stream:
            text = stream.read().rstrip('\n') + '\nMOVL Z2000\n'
        assert text.splitlines()[11] == 'MOVL Z2000'
        steps = tuple(program_steps(parse_program(text)))
        plan = planner.plan(PlanProgram(1, steps, tuple(np.zeros(6))))
        assert plan.line == 12 and plan.error.startswith('line 12: '), plan.error
        assert len(plan.waypoints) == 9  # the tool (at waypoint 1) and the 8 moves after it
        assert np.allclose(plan.waypoints[-1], [-0.410, 1.000, 2.000], atol=1e-4)
    finally:
        planner.close()


# --- backups of unsaved programs ---------------------------------------------------------------


def test_an_unsaved_program_is_backed_up_and_offered_after_a_console_that_ended_without_close(
        model, sent, clock, tmp_path):
    from sweetie_motion.gui.backups import BackupFolder, UnsavedBackups

    def console():
        backups = UnsavedBackups(BackupFolder(tmp_path, '.txt', keep=3), 30.0, clock,
                                 'an untitled program')
        return ConsolePresenter(sent.append, model, 'arm', clock=clock, backups=backups)

    first = console()
    program = tmp_path / 'square.txt'
    program.write_text('HOME\n')
    assert first.load_file(str(program))
    first.tick()
    clock.now += 40.0
    first.tick()
    assert first.backups.folder.files() == []   # nothing unsaved: no backup
    first.set_text('HOME\nWAIT 2\n')
    first.tick()
    assert len(first.backups.folder.files()) == 1   # 40 s since the start: backed up
    first.set_text('HOME\nWAIT 1\n')
    clock.now += 10.0
    first.tick()
    assert len(first.backups.folder.files()) == 1   # at most one backup per 30 s
    clock.now += 25.0
    first.tick()
    files = first.backups.folder.files()
    assert len(files) == 2 and files[0].name.endswith('_square.txt')
    assert files[0].read_text() == 'HOME\nWAIT 1\n'
    clock.now += 40.0
    first.tick()
    assert len(first.backups.folder.files()) == 2   # the same text: no further backup
    # the console is killed (no close): the next one offers the backup, unsaved, untitled
    second = console()
    path = second.pending_backup()
    assert path == str(files[0])
    assert second.describe_backup(path).startswith("'square' of ")
    assert second.restore_backup(path)
    assert second.text == 'HOME\nWAIT 1\n' and second.modified and second.source == ''
    # a close that keeps nothing unsaved is clean: nothing offered at the next start
    second.discard_changes()
    second.closing()
    assert console().pending_backup() is None


# --- a jog that swings the wrist asks first ----------------------------------------------------


def test_a_jog_that_turns_a_joint_far_is_refused_until_confirmed(model, sent, clock):
    # stumble 6: 10 mm up from the arm's zero pose swung joint4 and joint6 by 80 deg unasked
    planner = OfflinePlanner(model, 'arm', chain_home(model, 'arm'))
    try:
        console = ConsolePresenter(sent.append, model, 'arm', clock=clock,
                                   joint_travel=planner.joint_travel)
        connect(console)
        state(console, [0.0, 0.0, 0.0, 0.0, 1e-3, 0.0])   # the arm almost straight
        turns = console.jog_turns('y', 1)
        assert {j for j, _ in turns} == {'joint4', 'joint6'}, turns
        assert all(t > math.radians(60) for _, t in turns)
        assert not console.jog('y', 1)
        assert 'joint4 by 88 deg' in console.message.text and 'confirm' in console.message.text
        assert not of(sent, JogTool)
        assert console.jog('y', 1, confirmed=True)
        assert of(sent, JogTool)[-1].axis == 'y'
        # from a bent arm the same step turns nothing far: no question
        state(console, BENT)
        finish(console)
        assert console.jog_turns('y', 1) == []
        assert console.jog('y', 1)
    finally:
        planner.close()


# --- a typed Cartesian target -------------------------------------------------------------------


def typed(pose):
    return ' '.join(f'{v:.3f}' for v in pose.mm_zyz(degrees=True))


def test_a_typed_target_is_solved_and_shown_before_anything_moves(presenter, sent, model):
    goal = np.array(BENT) + [0.3, 0.2, -0.2, 0.4, -0.3, 0.5]
    pose = Pose.from_matrix(model.forward_kinematics('arm', goal))
    assert presenter.preview_target(typed(pose))
    target = presenter.target
    assert target is not None and target.success
    reached = Pose.from_matrix(model.forward_kinematics('arm', target.positions))
    assert np.linalg.norm(reached.position - pose.position) < 1e-4   # typed to 1 um
    assert rotation_angle(reached.rotation, pose.rotation) < 1e-4
    assert 'joint1' in presenter.message.text and 'Move goes there' in presenter.message.text
    assert not of(sent, MoveHome)   # nothing moved
    assert presenter.move_to_target()
    move = of(sent, MoveHome)[-1]
    assert move.target == target.positions and presenter.target is None
    assert presenter.job is not None and presenter.job.description == 'move to the target'


@pytest.mark.parametrize('text, words', [
    ('500 -200 800 0 90', '5 number(s)'),
    ('500 -200 800 0 90 abc', 'not a number'),
    ('5000 0 800 0 90 180', "beyond the arm's reach (about 1361 mm"),
])
def test_a_target_that_does_not_parse_or_solve_is_refused_saying_why(presenter, sent, text,
                                                                     words):
    assert not presenter.preview_target(text)
    assert words in presenter.message.text and presenter.message.level == 'error'
    assert presenter.target is None and not presenter.move_to_target()
    assert not of(sent, MoveHome)


def test_a_picked_point_keeps_the_typed_orientation_or_else_the_tools(model):
    from sweetie_motion.console.target import picked_target, target_text
    tool = Pose.from_matrix(model.forward_kinematics('arm', BENT))
    typed_pose = Pose.from_mm_zyz(400, -100, 700, 10, 80, 170, degrees=True)
    point = np.array([0.45, -0.2, 0.6])
    picked = picked_target(point, target_text(typed_pose), tool)
    assert np.allclose(picked.position, point)
    assert rotation_angle(picked.rotation, typed_pose.rotation) < 1e-9
    # nothing (or nonsense) typed yet: the tool's orientation now
    for text in ('', '1 2 3'):
        picked = picked_target(point, text, tool)
        assert rotation_angle(picked.rotation, tool.rotation) < 1e-12
