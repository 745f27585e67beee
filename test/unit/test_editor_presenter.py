"""
The editor's presenter without Qt or ROS: its rules, its requests and how it takes events.

The presenter's requests are collected as the bridge would receive them; its events are those
the bridge produces. Limits come from the real robot model.
"""

import math
from pathlib import Path
import re

import numpy as np
import pytest
from sweetie_motion.editor.document import EditorDocument
from sweetie_motion.editor.presenter import EditorPresenter, PARTS, rows_named
from sweetie_motion.editor.requests import (
    ExecuteGoal, GoalAccepted, GoalFeedback, GoalFinished, HoldPose, ListTrajectories, LOST,
    MoveByHand, PoseHeld, PublishMarker, RecordingFinished, SaveTrajectory, ServoState, SetPose,
    SetTorqueOff, StartRecording, STOPPED, StopRecording, TrajectoriesListed, TrajectoryLoaded,
    TrajectorySaved,
)
from sweetie_motion.editor.teaching import clean_recording
from sweetie_motion.editor.workspace import Workspace
from sweetie_motion.gui.events import LinksChanged, PoseReceived

JOINTS = ['joint12', 'joint13', 'joint51', 'joint53']


@pytest.fixture
def presenter(model, tmp_path, sent, clock):
    p = EditorPresenter(sent.append, model, Workspace(tmp_path / 'ws', keep=3),
                        legs=['leg1', 'leg2'], backup_period=30.0, clock=clock)
    p.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=True))
    p.handle(PoseReceived(tuple(model.list_all_joints()),
                          tuple(0.0 for _ in model.list_all_joints())))
    return p


def pose(presenter, **values):
    current = dict(presenter.current_pose)
    current.update(values)
    presenter.handle(PoseReceived(tuple(current), tuple(current.values())))


def with_rows(presenter, count=3):
    presenter.table.set_joints(JOINTS)
    for k in range(count):
        pose(presenter, joint12=-0.2 * k, joint13=0.3 * k, joint51=-0.1 * k, joint53=0.1 * k)
        assert presenter.table.add_pose()
    return presenter.waypoints


def of(sent, kind):
    return [r for r in sent if isinstance(r, kind)]


# --- the document ---------------------------------------------------------------------------


def test_listeners_see_redo_available_when_told_of_an_undo():
    document = EditorDocument()
    seen = []
    document.subscribe(lambda: seen.append((document.can_undo, document.can_redo)))
    document.edit('joints', lambda w: w.set_joints(['a']))
    document.edit('row', lambda w: w.add_from_state(['a'], [1.0]))
    document.undo()
    assert seen[-1] == (True, True)
    document.redo()
    assert seen[-1] == (True, False)
    assert document.modified
    document.mark_saved('x')
    assert not document.modified
    document.undo()
    assert document.modified
    document.redo()
    assert not document.modified   # back at the saved state


def test_an_edit_that_breaks_a_rule_changes_nothing():
    document = EditorDocument()
    document.edit('joints', lambda w: w.set_joints(['a']))
    document.edit('row', lambda w: w.add_from_state(['a'], [1.0]))
    before = document.waypoints
    with pytest.raises(Exception, match='times must increase'):
        document.edit('two', lambda w: (w.add_from_state(['a'], [2.0], time=3.0),
                                        w.add_from_state(['a'], [3.0], time=2.0)))
    assert document.waypoints is before and len(before) == 1
    assert document.undo_label == 'row'


# --- rows -----------------------------------------------------------------------------------


def test_add_pose_takes_only_the_trajectory_joints_and_needs_them(presenter):
    assert not presenter.table.add_pose()
    assert presenter.message.text == "choose the trajectory's joints in Setup first"
    assert presenter.message.level == 'error'
    waypoints = with_rows(presenter, 2)
    assert waypoints.joints == JOINTS
    assert [len(w.positions) for w in waypoints.waypoints] == [4, 4]
    assert waypoints.pose(1) == pytest.approx({'joint12': -0.2, 'joint13': 0.3,
                                               'joint51': -0.1, 'joint53': 0.1})
    assert presenter.table.selection == [1]


def test_a_value_beyond_the_limits_is_refused_with_the_limit_and_the_cell(presenter):
    with_rows(presenter, 2)
    assert not presenter.table.set_position(1, 'joint51', '0.6')
    message = presenter.message
    assert message.text == ('joint51 = 0.6 is outside its position limits [-1.571, 0.26] rad: '
                            'row 2 not changed')
    assert (message.row, message.column, message.level) == (1, 'joint51', 'error')
    assert presenter.table.set_position(1, 'joint51', '0,2')   # a decimal comma is fine
    assert presenter.waypoints.pose(1)['joint51'] == 0.2
    assert presenter.message.level == 'info'


def test_times_refused_with_rows_counted_from_one(presenter):
    with_rows(presenter, 3)
    assert not presenter.table.set_time(1, '7')
    assert 'row 2 (7.000 s) is not after' in presenter.message.text or \
        'row 3' in presenter.message.text
    assert not presenter.table.set_time(0, 'soon')
    assert presenter.message.text == "'soon' is not a number (row 1, time)"
    assert [w.time for w in presenter.waypoints.waypoints] == [0.0, 1.0, 2.0]


def test_multi_row_delete_shift_copy_and_paste(presenter):
    with_rows(presenter, 4)
    presenter.table.select([1, 2])
    assert presenter.table.shift_times(0.5)
    assert [w.time for w in presenter.waypoints.waypoints] == [0.0, 1.5, 2.5, 3.5]
    assert not presenter.table.shift_times(-1.5)   # row 2 at the time of row 1
    assert 'times must increase' in presenter.message.text
    assert presenter.table.copy_rows()
    presenter.table.select([3])
    assert presenter.table.paste_rows()
    times = [w.time for w in presenter.waypoints.waypoints]
    assert times == pytest.approx([0.0, 1.5, 2.5, 3.5, 4.5, 5.5])
    assert presenter.waypoints.pose(4) == presenter.waypoints.pose(1)
    assert presenter.table.selection == [4, 5]
    assert presenter.table.delete_rows()
    assert len(presenter.waypoints) == 4
    presenter.table.undo()
    assert len(presenter.waypoints) == 6


def test_selecting_one_row_publishes_it_as_the_marker(presenter, sent):
    with_rows(presenter, 3)
    sent.clear()
    presenter.table.select([1])
    marker = of(sent, PublishMarker)[-1]
    assert dict(zip(marker.names, marker.positions)) == presenter.waypoints.pose(1)
    presenter.table.select([0, 1])
    assert len(of(sent, PublishMarker)) == 1   # a multi-row selection is not a pose


# --- robot ----------------------------------------------------------------------------------


def test_sliders_move_through_follow_joint_state_or_by_hand(presenter, sent):
    assert presenter.move_joint('joint12', -0.5)
    assert of(sent, SetPose)[-1] == SetPose(('joint12',), (-0.5,))
    presenter.handle(ServoState(True, 'torque off'))
    assert presenter.move_joint('joint12', -0.6)
    assert of(sent, MoveByHand)[-1] == MoveByHand(('joint12',), (-0.6,))
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=False))
    assert not presenter.move_joint('joint12', -0.7)
    assert presenter.message.text == 'the servos are off: move the robot by hand'
    assert not presenter.move_joint('joint51', 0.5)
    assert 'limits [-1.571, 0.26]' in presenter.message.text


def test_execute_sends_the_range_and_reports_how_it_ended(presenter, sent):
    with_rows(presenter, 3)
    pose(presenter, **presenter.waypoints.pose(2))
    presenter.set_backward(True)   # from the last row, where the robot is: no approach
    assert presenter.execute()
    request = of(sent, ExecuteGoal)[-1]
    assert [p.time for p in request.goal.points] == [0.0, 1.0, 2.0]
    assert request.goal.points[0].positions == presenter.waypoints.waypoints[2].positions
    assert not presenter.can_execute and presenter.running
    assert not presenter.execute()   # one at a time
    presenter.handle(GoalAccepted(request.goal_id))
    presenter.handle(GoalFeedback(request.goal_id, 1.2, 2.0))
    presenter.stop()
    presenter.handle(GoalFinished(request.goal_id, STOPPED, -5, 'canceled'))
    assert presenter.message.text == 'stopped at 1.2 of 2.0 s'
    assert presenter.message.level == 'info' and presenter.can_execute
    presenter.table.set_active(1, False)   # backward, without row 2: points are rows 3, 1
    presenter.execute()
    request = of(sent, ExecuteGoal)[-1]
    presenter.handle(GoalFinished(request.goal_id, 'failed', -4,
                                  'joint12 point 1 deviates by 0.4 rad'))
    assert presenter.message.text == 'FAILED (-4): joint12 row 1 deviates by 0.4 rad'


def test_a_running_goal_ends_when_the_controller_goes_away(presenter, sent):
    with_rows(presenter, 2)
    presenter.handle(ServoState(False, 'on'))
    presenter.execute()
    presenter.handle(LinksChanged(tuple((part, part == 'storage') for part in PARTS)))
    assert not presenter.running
    assert presenter.message.text == 'lost: the trajectory controller went away'
    assert presenter.servos_off is None   # not "ON" while nobody answers for them
    assert not presenter.can_execute
    assert not presenter.execute()
    assert presenter.message.text == 'the trajectory controller is not connected'
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS)))
    assert presenter.can_execute


def test_the_motion_process_gone_and_back_is_said_and_the_lost_result_cleared(presenter, sent):
    # stumble 9: the lights went red with no word, and 'lost' stayed red after a restart
    with_rows(presenter, 2)
    presenter.execute()
    presenter.handle(LinksChanged(tuple((part, False) for part in PARTS)))
    assert presenter.message.level == 'error' and 'motion process is gone' in \
        presenter.message.text and 'Save' in presenter.message.text
    assert presenter.last_outcome.startswith('lost')
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS)))
    assert presenter.message.text == 'the motion process is connected again'
    assert presenter.last_outcome == ''


def test_an_editor_without_a_motion_process_says_how_to_start_one(model, sent, clock):
    # stumble 14: no hint, and a "current pose" of zeros
    lonely = EditorPresenter(sent.append, model, clock=clock)
    lonely.tick()
    assert lonely.message.text == ''   # discovery takes a moment
    clock.now += 5.0
    lonely.tick()
    assert 'sweetie-motion bringup' in lonely.message.text
    lonely.say('something else')
    clock.now += 5.0
    lonely.tick()
    assert lonely.message.text == 'something else'   # once
    lonely.handle(LinksChanged(tuple((part, True) for part in PARTS)))
    assert lonely.message.text == 'the motion process is connected'
    found = EditorPresenter(sent.append, model, clock=clock)
    found.handle(LinksChanged(tuple((part, True) for part in PARTS)))
    clock.now += 5.0
    found.tick()
    assert found.message.text == ''   # found in time: the lights say it


def test_goal_points_are_named_as_table_rows():
    assert rows_named('joint51 point 2 = 0.6 > upper limit 0.26', [1, 2, 3]) == \
        'joint51 row 4 = 0.6 > upper limit 0.26'
    assert rows_named('point 0: time 1.0 is not after point 1', [5, 4]) == \
        'row 6: time 1.0 is not after row 5'
    assert rows_named('point 7 of nothing; waypoint 1', [0]) == 'point 7 of nothing; waypoint 1'


# --- storage ----------------------------------------------------------------------------------


def test_save_sends_tidy_numbers_and_marks_saved_what_was_sent(presenter, sent):
    with_rows(presenter, 2)
    pose(presenter, joint12=-0.20000000000000012)
    presenter.table.select([0])
    presenter.table.update_pose()
    presenter.table.set_speed(30)
    presenter.table.apply_scale()
    assert presenter.files.save('wave')
    goal = of(sent, SaveTrajectory)[-1].goal
    assert goal.points[1].time == 3.333333
    assert goal.points[0].positions[0] == -0.2
    presenter.table.set_time(1, '4')   # edited while the save is on its way
    presenter.handle(TrajectorySaved('wave'))
    assert presenter.document.modified and presenter.document.name == 'wave'
    presenter.table.undo()
    assert not presenter.document.modified


def test_load_brings_back_labels_and_disabled_rows_of_a_save(presenter, sent):
    with_rows(presenter, 3)
    presenter.table.select([2])
    presenter.table.add_named_pose('look_up', {'joint51': 0.2, 'joint53': -0.5})
    presenter.table.set_active(1, False)
    presenter.files.save('labelled')
    goal = of(sent, SaveTrajectory)[-1].goal
    presenter.handle(TrajectorySaved('labelled'))
    presenter.table.new_trajectory()
    presenter.handle(TrajectoryLoaded('labelled', goal))
    assert [w.label for w in presenter.waypoints.waypoints] == ['', '', '', 'look_up']
    assert [w.active for w in presenter.waypoints.waypoints] == [True, False, True, True]
    assert not presenter.document.modified
    changed = goal.shifted(0.5)   # changed elsewhere: the stored goal wins
    presenter.handle(TrajectoryLoaded('labelled', changed))
    assert len(presenter.waypoints) == 3
    assert [w.label for w in presenter.waypoints.waypoints] == ['', '', '']


def test_save_refused_names_the_reason(presenter, sent):
    with_rows(presenter, 2)
    assert not presenter.files.save('../escape')
    assert 'invalid trajectory name' in presenter.message.text
    presenter.files.save('ok')
    presenter.handle(TrajectorySaved('ok', 'saving refused: joint51 beyond its limits'))
    assert presenter.document.modified
    assert presenter.message.level == 'error'


# --- backups ---------------------------------------------------------------------------------


def test_backups_while_unsaved_on_a_timer_kept_and_offered(presenter, clock):
    workspace = presenter.workspace
    presenter.tick()
    assert workspace.backups() == []   # nothing changed: no backup
    with_rows(presenter, 1)
    presenter.tick()
    assert len(workspace.backups()) == 1
    for k in range(5):
        presenter.table.set_time(0, str(0.1 * (k + 1)))
        clock.now += 10.0
        presenter.tick()   # within the period: no backup
        clock.now += 25.0
        presenter.tick()
    assert len(workspace.backups()) == 3   # keep=3
    first = workspace.backups()[0]
    clock.now += 100.0
    presenter.tick()   # no change since: no backup
    assert workspace.backups()[0] == first
    assert presenter.files.pending_backup() == str(first)
    presenter.files.closing(discard=True)
    assert presenter.files.pending_backup() is None


def test_a_restored_backup_is_the_table_and_unsaved(presenter, model, tmp_path, sent):
    with_rows(presenter, 2)
    path = presenter.files.backup_now()
    other = EditorPresenter(sent.append, model, Workspace(tmp_path / 'ws'))
    assert other.files.pending_backup() == path
    assert other.files.restore_backup(path)
    assert other.waypoints.to_document() == presenter.waypoints.to_document()
    assert other.document.modified


def test_a_backup_folder_that_cannot_be_written_is_said_once_and_again_after_it_recovered(
        presenter, clock):
    # a file where the backups folder should be: every write fails (an OSError, not a crash)
    blocker = presenter.workspace.backup_dir
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text('not a folder')
    with_rows(presenter, 1)
    presenter.tick()
    assert presenter.message.level == 'warning'
    assert presenter.message.text.startswith('backup failed: ')
    presenter.table.set_time(0, '0.5')
    clock.now += 31.0
    presenter.tick()   # fails again: the message of the edit stays, the failure is not repeated
    assert not presenter.message.text.startswith('backup failed')
    blocker.unlink()
    presenter.table.set_time(0, '0.6')
    clock.now += 31.0
    presenter.tick()
    assert len(presenter.workspace.backups()) == 1 and presenter.files.backups.error == ''
    for path in presenter.workspace.backups():
        path.unlink()
    blocker.rmdir()
    blocker.write_text('not a folder')
    presenter.table.set_time(0, '0.7')
    clock.now += 31.0
    presenter.tick()   # broken again after it worked: said again
    assert presenter.message.text.startswith('backup failed: ')


# --- fit to limits and recording ------------------------------------------------------------


def test_fit_to_limits_is_one_undoable_edit_with_the_durations(presenter):
    with_rows(presenter, 3)
    presenter.table.set_time(2, '6')
    presenter.table.set_time(1, '5')
    before = [w.time for w in presenter.waypoints.waypoints]
    assert presenter.table.fit_to_limits()
    after = [w.time for w in presenter.waypoints.waypoints]
    assert after[-1] < before[-1] / 2
    assert presenter.message.text.startswith(f'fit to limits: {before[-1]:.2f} s -> ')
    presenter.table.undo()
    assert [w.time for w in presenter.waypoints.waypoints] == before


def recording(seconds=3.0, rate=100.0):
    t = np.arange(0.0, seconds, 1.0 / rate) + 1000.0
    y = np.column_stack([-0.5 * np.sin(np.pi * (t - t[0]) / seconds) ** 2,
                         0.6 * np.sin(np.pi * (t - t[0]) / seconds) ** 2])
    return t, y


def test_recording_cleans_the_stamps_and_becomes_keyframes_on_accept(presenter, sent):
    with_rows(presenter, 1)
    presenter.handle(ServoState(False, 'on'))
    assert presenter.teaching.start(['joint12', 'joint13'], 0.01)
    # only the recorded chain goes limp: the rest of the robot keeps standing
    assert of(sent, SetTorqueOff)[-1] == SetTorqueOff(True, ('leg1',))
    assert of(sent, StartRecording)[-1] == StartRecording(('joint12', 'joint13'))
    presenter.handle(ServoState(True, 'off'))
    presenter.teaching.stop()
    assert of(sent, StopRecording)
    t, y = recording()
    times = list(t[:10]) + [t[9]] + list(t[10:])   # a stamp twice
    rows = [tuple(r) for r in y[:10]] + [tuple(y[9])] + [tuple(r) for r in y[10:]]
    presenter.handle(RecordingFinished(tuple(times), ('joint12', 'joint13'), tuple(rows)))
    assert of(sent, SetTorqueOff)[-1] == SetTorqueOff(False, ('leg1',))   # held again
    fit = presenter.teaching.recording.fit
    assert fit.samples == len(t)
    assert 2 < len(fit.indices) < 20
    assert np.all(fit.max_deviation <= 0.01 + 1e-12)
    assert presenter.message.text.startswith(f'recorded: {len(fit.indices)} keyframes of 300')
    # the table's row stays unless the replacement is confirmed (stumble 7)
    assert presenter.teaching.replaces() == 1
    assert not presenter.teaching.accept()
    assert 'replaces the 1 row of' in presenter.message.text and len(presenter.waypoints) == 1
    assert presenter.teaching.accept(replace=True)
    waypoints = presenter.waypoints
    assert waypoints.joints == ['joint12', 'joint13']
    assert waypoints.waypoints[0].time == 0.0
    assert len(waypoints) == len(fit.indices)
    presenter.table.undo()
    assert presenter.waypoints.joints == JOINTS


def test_a_recording_faster_than_the_limits_says_how_much_with_units(presenter, sent):
    # stumble 7: "needs 601.22 where its acceleration limit is 20.00" had no units
    presenter.handle(ServoState(False, 'on'))
    assert presenter.teaching.start(['joint12', 'joint13'], 0.01)
    presenter.handle(ServoState(True, 'off'))
    presenter.teaching.stop()
    t, y = recording(seconds=0.3)
    presenter.handle(RecordingFinished(tuple(t), ('joint12', 'joint13'),
                                       tuple(tuple(r) for r in y)))
    text = presenter.message.text
    assert presenter.message.level == 'warning' and 'times slower' in text, text
    assert re.search(r'joint1[23] needs [0-9.]+ rad/s(\^2)? at t = [0-9.]+ s \((velocity|'
                     r'acceleration) limit [0-9.]+ rad/s', text), text


def test_a_recording_frees_only_its_chains_and_the_sliders_of_the_others_still_drive(
        presenter, sent):
    presenter.handle(ServoState(False, 'on'))
    assert presenter.teaching.start(['joint51', 'joint52'], 0.01)
    assert of(sent, SetTorqueOff)[-1] == SetTorqueOff(True, ('head',))
    presenter.handle(ServoState(True, 'torque off: 6 servos of head are free'))
    assert presenter.joint_is_free('joint51') and not presenter.joint_is_free('joint12')
    presenter.move_joint('joint51', -0.2)     # the freed head: as a hand moves it
    presenter.move_joint('joint12', 0.3)      # a held leg: through FollowJointState
    assert of(sent, MoveByHand)[-1] == MoveByHand(('joint51',), (-0.2,))
    assert of(sent, SetPose)[-1] == SetPose(('joint12',), (0.3,))
    # Servos on (the button) holds everything again
    presenter.set_servos_off(False)
    assert of(sent, SetTorqueOff)[-1] == SetTorqueOff(False, ())
    presenter.handle(ServoState(False, 'torque on'))
    assert not presenter.joint_is_free('joint51')


def test_clean_recording_keeps_strictly_increasing_stamps():
    t, y = clean_recording([0.0, 0.01, 0.01, 0.02, 0.015, 0.03], np.arange(6.0))
    assert list(t) == [0.0, 0.01, 0.02, 0.03]
    assert list(y[:, 0]) == [0.0, 1.0, 3.0, 5.0]


def test_events_the_presenter_does_not_know_are_an_error(presenter):
    with pytest.raises(TypeError, match='does not handle'):
        presenter.handle(object())
    assert math.isfinite(presenter.files.backups.period)


def test_lost_goal_from_the_adapter_is_reported(presenter, sent):
    with_rows(presenter, 2)
    presenter.execute()
    goal_id = of(sent, ExecuteGoal)[-1].goal_id
    presenter.handle(GoalFinished(goal_id, LOST, 0, 'no answer within 5 s'))
    assert presenter.message.text == 'lost: no answer within 5 s'
    assert presenter.message.level == 'error'


def test_a_list_of_the_stored_names_that_failed_is_asked_again_at_the_next_link_report(
        presenter, sent):
    asked = len(of(sent, ListTrajectories))
    presenter.handle(TrajectoriesListed((), 'the trajectory storage did not answer within 5 s'))
    assert 'cannot list the stored trajectories' in presenter.message.text
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=True))
    assert len(of(sent, ListTrajectories)) == asked + 1
    presenter.handle(TrajectoriesListed(('nod', 'wave')))
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=True))
    assert len(of(sent, ListTrajectories)) == asked + 1     # listed: not asked again
    assert presenter.files.names == ['nod', 'wave']


def test_saving_onto_another_stored_name_asks_first_and_a_motion_needs_time(presenter, sent):
    presenter.handle(TrajectoriesListed(('nod', 'wave')))
    with_rows(presenter, 1)
    assert not presenter.files.save('single')        # one row at 0 s: nothing would move
    assert 'a motion needs time' in presenter.message.text
    pose(presenter, joint12=-0.5)
    assert presenter.table.add_pose()
    assert presenter.files.overwrites('nod') and not presenter.files.overwrites('new_name')
    assert not presenter.files.save('nod')           # the built-in nod is not replaced silently
    assert "'nod' is stored already" in presenter.message.text
    assert not of(sent, SaveTrajectory) and presenter.document.modified
    assert presenter.files.save('nod', overwrite=True)
    presenter.handle(TrajectorySaved('nod'))
    assert not presenter.files.overwrites('nod')      # its own name now: saving again asks nothing
    presenter.table.new_trajectory()
    assert presenter.files.overwrites('nod')


def test_an_event_nobody_handles_is_an_error_naming_it(presenter):
    from sweetie_motion.gui.dispatch import EventHandlers

    class Unknown:
        pass

    with pytest.raises(TypeError, match='the editor does not handle Unknown'):
        presenter.handle(Unknown())
    handlers = EventHandlers('a test')
    handlers.register(Unknown, lambda event: None)
    with pytest.raises(ValueError, match='a handler of Unknown already'):
        handlers.register(Unknown, lambda event: None)


def test_load_file_reads_an_old_robots_animation_as_rows(presenter):
    # the old robot's JSON goal (its 49 animations): one row per point, named after the file
    old = Path(__file__).resolve().parent.parent / 'data' / 'sweetie_movements' / 'greeting.json'
    assert presenter.files.load_file(str(old))
    waypoints = presenter.waypoints
    assert presenter.document.name == 'greeting' and len(waypoints) == 10
    assert 'joint11' in waypoints.joints and 'support/leg1' in waypoints.joints
    assert presenter.document.modified   # not in the storage yet


# --- stop first (issue #33) -----------------------------------------------------------------


def test_stop_motion_ends_a_recording_once_and_keeps_its_keyframes(presenter, sent):
    # STOP, Esc, F12 and a close all stop a recording; pressed twice, the samples still come
    presenter.handle(ServoState(False, 'on'))
    assert presenter.teaching.start(['joint12', 'joint13'], 0.01)
    assert presenter.moving
    assert presenter.stop_motion() and presenter.stop_motion()
    assert len(of(sent, StopRecording)) == 1
    assert presenter.moving                   # until the samples came: not confirmed yet
    t, y = recording()
    presenter.handle(RecordingFinished(tuple(t), ('joint12', 'joint13'),
                                       tuple(tuple(r) for r in y)))
    assert not presenter.moving
    assert presenter.teaching.recording.fit is not None          # kept for Accept
    assert of(sent, SetTorqueOff)[-1] == SetTorqueOff(False, ('leg1',))   # the servos hold


def test_stop_motion_holds_a_pose_on_its_way_and_says_when_it_holds(presenter, sent, clock):
    assert presenter.move_joint('joint12', 0.8)              # a slider: FollowJointState
    assert presenter.moving
    pose(presenter, joint12=0.3)                             # under way
    assert presenter.moving
    assert presenter.stop_motion()
    assert of(sent, HoldPose) == [HoldPose()]
    assert presenter.moving                                  # the answer is awaited
    presenter.handle(PoseHeld())
    assert not presenter.moving and 'holds where a brake' in presenter.message.text
    assert not presenter.stop_motion() and presenter.message.text == 'nothing moves'
    assert len(of(sent, HoldPose)) == 1


def test_a_pose_reached_or_long_asked_for_is_not_moving_any_more(presenter, clock):
    assert presenter.move_joint('joint12', 0.8)
    pose(presenter, joint12=0.795)                           # within 0.01 rad: there
    assert not presenter.moving
    assert presenter.move_joint('joint13', 0.5)
    clock.now += 11.0                                        # never reached (a jammed joint)
    assert not presenter.moving


def test_stop_motion_cancels_execute_and_is_moving_until_its_end_is_confirmed(
        presenter, sent):
    with_rows(presenter)
    assert presenter.execute()
    goal_id = of(sent, ExecuteGoal)[-1].goal_id
    assert presenter.moving and presenter.stop_motion()
    assert presenter.moving
    presenter.handle(GoalFinished(goal_id, STOPPED, 0, 'canceled'))
    assert not presenter.moving


def test_a_refused_table_is_not_executed_unless_anyway_on_a_virtual_robot(presenter, sent):
    # #35 item 7: what the checks or the physics refuse is not played; an experiment on the
    # virtual robot may play it anyway (the controller's own checks still apply)
    with_rows(presenter)
    presenter.set_refusal('the physics refuses it: physics (refuse) near row 2: falls at 1.8 s')
    assert not presenter.execute()
    assert presenter.message.text.startswith('not executed: the physics refuses it')
    assert 'anyway' in presenter.message.text and not of(sent, ExecuteGoal)
    assert presenter.execute(anyway=True)                    # the fixture's robot is virtual
    presenter.handle(GoalFinished(of(sent, ExecuteGoal)[-1].goal_id, STOPPED, 0, 'canceled'))
    presenter.handle(LinksChanged(tuple((part, True) for part in PARTS), virtual_robot=False))
    assert not presenter.execute(anyway=True)                # the real robot: never
    assert 'change the table' in presenter.message.text
    presenter.set_refusal('')
    assert presenter.execute()
