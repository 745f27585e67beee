"""
The console's items of issue #37 without Qt or ROS: the presenter and the offline planner.

Reach, Solve's checks, the running and stopped line of a blended path, Resume, the preview's
time and line, and the question about a large reconfiguration.
"""

import numpy as np
import pytest
from sweetie_motion.cartesian.program import parse_program
from sweetie_motion.cartesian.runner import chain_home, program_steps
from sweetie_motion.console.planning import OfflinePlanner
from sweetie_motion.console.presenter import ConsolePresenter, PARTS
from sweetie_motion.console.requests import MoveHome, PlanProgram
from sweetie_motion.gui.events import LinksChanged, PoseReceived
from sweetie_motion.model import load_robot_description


@pytest.fixture(scope='module')
def model():
    model = load_robot_description('winding_arm.yaml')
    model.configure()
    return model


@pytest.fixture(scope='module')
def planner(model):
    planner = OfflinePlanner(model, 'arm', chain_home(model, 'arm'))
    yield planner
    planner.close()


@pytest.fixture
def presenter(model, planner, sent, clock):
    p = ConsolePresenter(sent.append, model, 'arm', clock=clock,
                         move_check=planner.check_joint_move)
    p.handle(LinksChanged(tuple((part, True) for part in PARTS)))
    p.handle(PoseReceived(tuple(p.joints), tuple(float(v) for v in p.home)))
    return p


def plan(planner, model, text):
    steps = tuple(program_steps(parse_program(text)))
    return planner.plan(PlanProgram(1, steps, tuple(chain_home(model, 'arm'))))


# --- reach -----------------------------------------------------------------------------------


def test_a_waypoint_beyond_the_reach_is_named_so_and_a_near_miss_is_not(planner, model):
    from sweetie_motion.model.ik import ChainIK
    ik = ChainIK(model, 'arm')
    far = plan(planner, model, 'HOME\nMOVL X2500 Y60 Z740\n')
    assert far.line == 2 and "beyond the arm's reach (about 1361 mm" in far.error, far.error
    # the reach comes from the chain: the shoulder's circle and the links after it
    assert ik.beyond_reach([2.5, 0.06, 0.74]) is not None
    assert ik.beyond_reach([1.0, 0.0, 0.7]) is None
    distance, reach = ik.beyond_reach([0.0, 0.0, 0.21 + 1.6])
    assert abs(reach - 1.361) < 1e-3 and distance > reach
    # inside the reach, a target IK cannot get to keeps IK's own words (the closest found)
    near = plan(planner, model, 'HOME\nMOVL X0 Y-1250 Z400 A0 B0 C0\n')
    assert 'no inverse kinematics solution' in near.error, near.error
    assert "beyond the arm's reach" not in near.error


def test_solve_refuses_a_target_beyond_the_reach_saying_how_far_it_reaches(presenter, sent):
    assert not presenter.preview_target('2500 60 740 0 90 180')
    text = presenter.message.text
    assert "beyond the arm's reach (about 1361 mm from its shoulder; the target is 2380 mm" \
        in text and presenter.message.level == 'error', text


# --- Solve runs Move's checks ------------------------------------------------------------------


def test_solve_refuses_a_target_move_would_refuse_with_moves_reason(presenter, planner, sent):
    start = np.array(presenter.home)
    assert not presenter.preview_target('1100 0 640 0 90 180')
    text = presenter.message.text
    assert 'Move would be refused' in text and 'turntable overlap' in text, text
    assert presenter.target is None and not presenter.move_to_target()
    assert not [r for r in sent if isinstance(r, MoveHome)]
    # the reason is the one Move's check gives for that very move
    from sweetie_motion.console.target import parse_target, TargetSolver
    solution = TargetSolver(presenter.model, 'arm').solve(parse_target('1100 0 640 0 90 180'),
                                                          start)
    with pytest.raises(Exception) as refused:
        planner.check_joint_move(start, solution.positions, presenter._joint_speeds())
    assert str(refused.value) in text
    # a target Move would take is solved as before
    assert presenter.preview_target('1037 0 735 0 90 180'), presenter.message.text
    assert 'Move goes there' in presenter.message.text


# --- the stopped line and Resume -------------------------------------------------------------

BLENDED = ('HOME\nSPEED 50\nMOVL X0 Y-550 Z850.2 F100\nMOVL X200 Y-550 R20\n'
           'MOVL X200 Y-400 R20\nMOVL Z900\nWAIT 0.1\n')


def test_stop_names_the_line_the_tool_is_on_and_resume_goes_on_there(presenter, sent):
    from sweetie_motion.console.requests import (JobFinished, LineReached, RunSteps,
                                                 StepStarted, STOPPED, SUCCEEDED)
    presenter.set_text(BLENDED)
    assert not presenter.can('resume') and not presenter.resume()
    assert 'no stopped program' in presenter.message.text
    assert presenter.run()
    run = [r for r in sent if isinstance(r, RunSteps)][-1]
    presenter.handle(StepStarted(run.job_id, 2, 3, 'line 3: 4 linear move(s)'))
    for line in (4, 5):   # the Cartesian node's feedback: the tool heads for line 5's waypoint
        presenter.handle(LineReached(run.job_id, line))
    assert presenter.running_line == 5
    presenter.stop()
    # the runner's place is the path's first MOVL; the tool was on line 5
    presenter.handle(JobFinished(run.job_id, STOPPED, 'stopped', 3, 2, 0.5, 0))
    text = presenter.message.text
    assert 'stopped at line 5' in text and 'Resume goes on from line 5' in text, text
    assert presenter.resume_line == 5 and presenter.can('resume') and presenter.next_line == 0
    assert presenter.resume()
    plan, resumed = sent[-2], sent[-1]
    # from the stopped MOVL, planned from where the arm is, at the SPEED in force
    assert (resumed.first, resumed.first_move, resumed.override, resumed.single) == \
        (2, 2, 0.5, False)
    assert isinstance(plan, PlanProgram) and plan.steps[0].line == 5
    assert np.allclose(plan.start, presenter.home)
    assert presenter.running_line == 5 and presenter.resume_line == 0
    presenter.handle(JobFinished(resumed.job_id, SUCCEEDED, '', 0, 4, 0.5, 0))
    assert 'the program is done' in presenter.message.text


def test_run_after_a_stop_starts_from_the_top_and_an_edit_forgets_the_stop(presenter, sent):
    from sweetie_motion.console.requests import JobFinished, RunSteps, STOPPED
    presenter.set_text(BLENDED)
    presenter.run()
    run = [r for r in sent if isinstance(r, RunSteps)][-1]
    presenter.handle(JobFinished(run.job_id, STOPPED, 'stopped', 7, 3, 1.0, 0))   # the WAIT
    assert presenter.resume_line == 7 and 'stopped at line 7' in presenter.message.text
    presenter.run()
    again = [r for r in sent if isinstance(r, RunSteps)][-1]
    assert (again.first, again.first_move) == (0, 0) and presenter.resume_line == 0
    presenter.handle(JobFinished(again.job_id, STOPPED, 'stopped', 1, 0, 1.0, 0))
    assert presenter.resume_line == 1
    presenter.set_text(BLENDED + 'WAIT 1\n')
    assert presenter.resume_line == 0 and not presenter.can('resume')


# --- the preview's time and line -------------------------------------------------------------


def test_the_plan_knows_each_samples_time_and_line_and_the_preview_says_them(planner, model):
    from sweetie_motion.console.program_text import preview_text
    planned = plan(planner, model, BLENDED)
    assert not planned.error, planned.error
    lines = planned.lines
    assert len(lines) == len(planned.times) == len(planned.positions)
    # HOME, then each MOVL as the tool heads for its waypoint, then the WAIT (SPEED takes no
    # time); in order
    assert sorted(set(lines.tolist())) == [1, 3, 4, 5, 6, 7] and (np.diff(lines) >= 0).all()
    # the tool on the leg to line 4's waypoint (X200 Y-550) is on line 4
    leg = np.flatnonzero((planned.tool[:, 0] > 0.05) & (planned.tool[:, 0] < 0.15) &
                         (np.abs(planned.tool[:, 1] + 0.55) < 1e-4))
    assert len(leg) and (lines[leg] == 4).all()
    k = int(leg[0])
    assert preview_text(planned, k) == \
        f'{planned.times[k]:.1f} s / {planned.duration:.1f} s \N{EM DASH} line 4'
    assert abs(planned.times[-1] - planned.duration) < 1e-9


# --- a large reconfiguration asks first ------------------------------------------------------

FLIP = 'HOME\nMOVL X800 Y-200 Z850 A0 B90 C180 F150\nMOVL Y-400 R20 F100\n'


def planned_presenter(presenter, planner, sent, clock, text):
    """Give the presenter ``text`` and its offline plan (as the bridge hands plans over)."""
    presenter.set_text(text)
    clock.now += 1.0
    presenter.tick()
    request = [r for r in sent if isinstance(r, PlanProgram)][-1]
    presenter.handle(planner.plan(request))


def test_a_reconfiguration_above_the_setting_is_asked_before_run_and_step(
        presenter, planner, sent, clock):
    import math
    from sweetie_motion.console.requests import RunSteps
    planned_presenter(presenter, planner, sent, clock, FLIP)
    ahead = presenter.reconfiguration_ahead()
    # from HOME the wrist flips by 113 deg with the tool still, before the path
    assert ahead.startswith('line 2 starts with a reconfiguration') and 'joint4 by 113' in \
        ahead and '(more than 90 deg)' in ahead, ahead
    status, level = presenter.program_status()
    assert 'line 2 starts with a reconfiguration of more than 90 deg: Run and Step ask' in \
        status and level == 'info', status
    # the preview marks the reconfiguration's samples
    from sweetie_motion.console.program_text import preview_text
    (first, end), = presenter.plan.reconfiguring
    assert end - first > 10
    assert preview_text(presenter.plan, first).endswith('line 2, reconfiguring')
    assert not preview_text(presenter.plan, end).endswith('reconfiguring')
    assert not presenter.run() and 'confirm it' in presenter.message.text
    assert not [r for r in sent if isinstance(r, RunSteps)]
    # Step: HOME first (no reconfiguration in it), then the path's step asks
    assert presenter.reconfiguration_ahead(single=True) == ''
    assert presenter.step()
    from sweetie_motion.console.requests import JobFinished, SUCCEEDED
    presenter.handle(JobFinished(presenter.job.job_id, SUCCEEDED, '', 0, 1))
    assert presenter.reconfiguration_ahead(single=True) == ahead
    assert not presenter.step() and presenter.step(confirmed=True)
    presenter.handle(JobFinished(presenter.job.job_id, SUCCEEDED, '', 0, 2))
    # a setting above the turn asks nothing
    presenter.reconfiguration_limit = math.radians(120.0)
    assert presenter.reconfiguration_ahead() == '' and presenter.run()


def test_the_solved_joints_fit_one_line_and_the_turns_stay_in_the_long_form(presenter):
    from sweetie_motion.console.target import compact_joints
    assert presenter.preview_target('1037 0 735 0 90 180'), presenter.message.text
    short = compact_joints(presenter.target, presenter.model)
    assert short == 'joint1..joint6: +0.0 +59.9 -36.0 -0.0 -23.9 +0.0 deg', short
    assert '(+90.0)' in presenter.target.describe(presenter.model)
