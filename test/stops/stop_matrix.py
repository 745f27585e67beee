"""
Every way a person stops the robot, in every state of a window (issue #33): the tests.

test_console_stops.py runs them for the operator console (beside the winding arm's bringup),
test_editor_stops.py for the trajectory editor (beside the pony's), each naming its window in
``WINDOW`` (two modules: they run side by side). See conftest.py for the windows, the screen
and how the stops are judged, windows.py for each window's motions and questions.
"""

import os
import signal

import pytest
from stop_cases import close_questions, KEEP_WINDOW, StopBench, wait_question, wait_still
from stopping import wait_at_rest
from waiting import stays
from windows import ARM, ConsoleStates, EditorStates, HEAD

#: per window: its states, the robot's process config and description, what it moves
WINDOWS = {
    'console': (ConsoleStates, 'winding_arm_motion.yaml', 'winding_arm.yaml', ARM,
                ['--robot', 'winding_arm.yaml', '--program', 'config/programs/paper_path.txt']),
    'editor': (EditorStates, 'sweetie_bot_motion.yaml', 'sweetie_bot.yaml', HEAD, []),
}
QUESTIONS = ('dialog: unsaved changes', 'dialog: replace', 'dialog: file dialog')


@pytest.fixture(scope='module')
def states(request, laptop, tmp_path_factory):
    """Run the robot of the module's WINDOW apart from it; yield the window's states."""
    from domains import own_domain
    from motion_process import motion_process, MotionClient
    from sweetie_motion.model import load_robot_description
    kind = request.module.WINDOW
    cls, config, robot, joints, args = WINDOWS[kind]
    model = load_robot_description(robot)
    model.configure()
    namespace = f'stops_{kind}'
    store = tmp_path_factory.mktemp(f'stops_{kind}_store')
    with own_domain() as domain, motion_process(config, namespace, '--storage-dir', str(store)):
        with MotionClient(namespace, domain) as peer:
            peer.wait_ready(['motion', 'joint_trajectory', 'follow_joint_state'], timeout=60)
            yield cls(StopBench(kind, peer, model, joints, laptop,
                                ['--namespace', namespace, *args]))


def test_the_stop_button_and_the_stop_keys_stop_the_robot_whatever_the_window_shows(states):
    bench = states.bench
    window = bench.open_window()
    try:
        for state in states.MOVING + QUESTIONS:
            for way in KEEP_WINDOW:
                states.enter(window, state)
                acted = bench.act(window, way)
                bench.judge(window, acted, state, way, 'stays')
                assert window.alive(), window.output()
                wait_still(window)
                close_questions(window)
        # at rest: a stop changes nothing and says so
        state = states.rest(window)
        wait_at_rest(bench.peer, bench.joints)
        for way in KEEP_WINDOW:
            bench.act(window, way)
            assert stays(bench.at_rest_now, 0.5), f'{state}, {way}: the robot moved'
            assert window.alive()
        assert 'nothing moves' in window.state()['message']
    finally:
        window.close()


def test_ctrl_c_and_the_close_button_beside_a_question_stop_the_robot_and_keep_the_question(
        states):
    bench = states.bench
    window = bench.open_window()
    try:
        for state in QUESTIONS:
            for way in ('SIGINT', 'close'):
                states.enter(window, state)
                question = window.state()['questions'][-1]
                acted = bench.act(window, way)
                bench.judge(window, acted, state, way, 'stays, the question still open')
                assert window.alive(), window.output()
                assert question in window.state()['questions']
                close_questions(window)
        assert 'a question is open in the window: answer it' in window.output()
    finally:
        window.close()


@pytest.mark.parametrize('unsaved', [False, True], ids=['saved', 'unsaved'])
def test_ctrl_c_and_the_close_button_stop_the_robot_first_then_close_or_ask(states, unsaved):
    bench = states.bench
    for way in ('SIGINT', 'close'):
        window = bench.open_window()
        try:
            if unsaved:
                states.make_unsaved(window)
            states.enter(window, 'moving')
            acted = bench.act(window, way)
            if unsaved:
                bench.judge(window, acted, 'moving, unsaved', way, 'asks after the stop')
                state = wait_question(window, 'close_question')
                assert 'stopped' in state['message'], state
                window.command('answer Discard')
            else:
                bench.judge(window, acted, 'moving', way, 'closes after the stop')
            assert window.wait_exit(20) == 0, window.output()
            assert 'stopped first: ' in window.output() and 'Traceback' not in window.output()
        finally:
            window.close()


@pytest.mark.parametrize('state', ['moving', 'dialog: unsaved changes'])
def test_sigterm_stops_the_robot_then_leaves_with_unsaved_work_backed_up(states, state):
    bench = states.bench
    window = bench.open_window()
    try:
        states.make_unsaved(window)
        states.enter(window, state)
        acted = bench.act(window, 'SIGTERM')
        bench.judge(window, acted, state, 'SIGTERM', 'leaves, unsaved work backed up')
        assert window.wait_exit(20) == 0, window.output()
    finally:
        window.close()
    again = bench.open_window(window.workspace)      # the next start offers the work back
    try:
        wait_question(again, 'restore_question')
    finally:
        again.close()


def test_a_killed_window_stops_its_motion_within_half_a_second(states):
    bench = states.bench
    for state in states.MOVING + ('dialog: file dialog',):
        window = bench.open_window()
        try:
            states.enter(window, state)
            acted = bench.act(window, 'kill')
            bench.judge(window, acted, state, 'kill', 'killed')
            assert window.wait_exit(10) == -signal.SIGKILL
        finally:
            window.close()


def test_at_rest_ctrl_c_and_close_ask_about_unsaved_work_and_sigterm_keeps_it(states):
    bench = states.bench
    window = bench.open_window()
    try:
        states.make_unsaved(window)
        states.rest(window)
        wait_at_rest(bench.peer, bench.joints)
        for way in ('SIGINT', 'close'):
            bench.act(window, way)
            wait_question(window, 'close_question')
            assert stays(bench.at_rest_now, 0.5)
            close_questions(window)
            assert window.alive()
        bench.act(window, 'SIGTERM')
        assert window.wait_exit(20) == 0, window.output()
        assert stays(bench.at_rest_now, 0.5)
        assert os.listdir(os.path.join(window.workspace, 'backups'))
    finally:
        window.close()
