"""
The two windows of the stop matrix: how each gets its robot moving and opens its questions.

The console moves the winding arm with joint moves typed on its command line (MOVJ, slow
enough to be caught under way); the editor moves the pony's head with Execute of a stored
animation (look_around) and with a slider's pose through FollowJointState.
"""

import os

from stop_cases import wait_question, wait_still, WindowStates
from stopping import wait_until_moving
from waiting import wait_for

#: the joints each window's motions move
ARM = [f'joint{k}' for k in range(1, 7)]
HEAD = ['joint51', 'joint52', 'joint53']


class ConsoleStates(WindowStates):
    """The console's states: a joint move under way, its questions, a paused program."""

    #: the states the robot moves in (beside the questions)
    MOVING = ('moving',)

    def start_motion(self, window) -> None:
        wait_still(window)
        with self.bench.peer.lock:
            msg = self.bench.peer.reference
        joint1 = msg.position[list(msg.name).index('joint1')]
        # far from where the arm is, at 20 deg/s: seconds under way
        target = -60 if joint1 > 0 else 60
        window.command(f'text command_line MOVJ joint1={target} V20')
        window.command('click command_button')
        wait_until_moving(self.bench.peer, self.bench.joints, speed=0.2)

    def make_unsaved(self, window) -> None:
        window.command('append ; an edit not saved yet')
        wait_for(lambda: window.state()['modified'], 10, message='the edit unsaved')

    def rest(self, window) -> str:
        window.command('click step_button')        # a program paused after its first step
        wait_still(window, 60)
        return 'paused at a Step'

    def questions(self):
        def unsaved(window) -> None:
            self.make_unsaved(window)
            window.command('click open_button')
            wait_question(window, 'close_question')

        def file_dialog(window) -> None:
            window.command('click save_as_button')
            wait_question(window, 'file_dialog')

        def replace(window) -> None:
            existing = os.path.join(window.workspace, 'program.txt')
            with open(existing, 'w', encoding='utf-8') as stream:
                stream.write('HOME\n')
            file_dialog(window)
            window.command(f'choose {existing}')
            wait_question(window, 'replace_file_question')
        return {'unsaved changes': unsaved, 'replace': replace, 'file dialog': file_dialog}


class EditorStates(WindowStates):
    """The editor's states: Execute under way, a slider's pose on its way, its questions."""

    MOVING = ('moving', 'pose')

    def load(self, window, name: str = 'look_around') -> None:
        """Load a stored animation into the table."""
        window.command(f'text trajectory_name {name}')
        window.command('click load_button')
        wait_for(lambda: window.state()['rows'] > 0 and name in window.state()['title'], 30,
                 period=0.1, message=f'{name} loaded')

    def start_motion(self, window) -> None:
        wait_still(window)
        if not window.state()['rows']:
            self.load(window)
        window.command('click execute_button')
        wait_until_moving(self.bench.peer, self.bench.joints, speed=0.2)

    def start_pose(self, window) -> None:
        """Turn the head from one side to the other with its slider (FollowJointState)."""
        wait_still(window)
        with self.bench.peer.lock:
            msg = self.bench.peer.reference
        yaw = msg.position[list(msg.name).index('joint52')]
        window.command(f'slider joint52 {-1.2 if yaw > 0 else 1.2}')
        wait_until_moving(self.bench.peer, self.bench.joints, speed=0.2)

    def make_unsaved(self, window) -> None:
        if not window.state()['rows']:
            self.load(window)
        window.command('click reverse_button')
        wait_for(lambda: window.state()['modified'] or '*' in window.state()['title'], 10,
                 message='the edit unsaved')

    def rest(self, window) -> str:
        wait_still(window)
        return 'idle'

    def questions(self):
        def unsaved(window) -> None:
            self.make_unsaved(window)
            window.command('click new_button')
            wait_question(window, 'discard_question')

        def replace(window) -> None:
            window.command('text trajectory_name nod')
            window.command('click save_button')
            wait_question(window, 'replace_question')

        def file_dialog(window) -> None:
            window.command('click dump_button')
            wait_question(window, 'file_dialog')
        return {'unsaved changes': unsaved, 'replace': replace, 'file dialog': file_dialog}

    def enter(self, window, state: str) -> None:
        if state == 'pose':
            self.start_pose(window)
        else:
            super().enter(window, state)
