"""
The console's program text: what is typed, its parse, its file and its backups.

One part of :class:`~sweetie_motion.console.presenter.ConsolePresenter` (no Qt, no ROS): an
edit is parsed at once and planned offline a moment later (:data:`PLAN_DELAY`); a file is read
or written whole; unsaved edits are backed up
(:class:`~sweetie_motion.gui.backups.UnsavedBackups`).
"""

import math
import os
from typing import Any, Callable, List, Optional, Protocol, Tuple

from sweetie_motion.cartesian.program import parse_program, ProgramError
from sweetie_motion.cartesian.runner import program_steps, ProgramStep
from sweetie_motion.console.requests import ProgramPlanned
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.backups import UnsavedBackups
from sweetie_motion.gui.messages import ActionRefused, MessageBoard

#: how a message about the offline plan starts
PLAN_PREFIX = 'offline plan: '
#: the offline plan is made this long after the last edit [s]
PLAN_DELAY = 0.8


class RunningJob(Protocol):
    """The presenter's job as this part reads it (the presenter imports this module)."""

    kind: str


#: what the preview adds during a reconfiguration (the joints turn, the tool stays)
RECONFIGURING = ', reconfiguring'


def preview_text(plan: ProgramPlanned, index: int) -> str:
    """
    Return what the preview says at sample ``index``: '2.4 s / 9.8 s — line 5'.

    During a reconfiguration before a path ', reconfiguring' follows the line.
    """
    time, line = plan.at(index)
    text = f'{time:.1f} s / {plan.duration:.1f} s'
    if line:
        text += f' \N{EM DASH} line {line}'
    if any(first <= index < end for first, end in plan.reconfiguring):
        text += RECONFIGURING
    return text


class ProgramText:
    """
    The presenter's part for the program's text, file and backups.

    A mixin of :class:`~sweetie_motion.console.presenter.ConsolePresenter`, which owns the job
    and the messages; :meth:`_init_program_text` sets this part's state.
    """

    clock: Callable[[], float]
    backups: Optional[UnsavedBackups]
    board: MessageBoard
    job: Optional['RunningJob']
    plan: Optional[ProgramPlanned]
    resume_at: Any
    _plan_id: int
    reconfiguration_limit: float
    large_reconfigurations: Callable[[], List[Any]]
    # the presenter's, used here
    _refuse: Callable[[SweetieMotionError], bool]
    _notify: Callable[..., None]
    say: Callable[..., None]

    def _init_program_text(self) -> None:
        """Set the program's state: no text, no file."""
        self.text = ''
        self.source = ''
        #: the text as last read from or written to ``source``: what Save would not change
        self.saved_text = ''
        self.steps: List[ProgramStep] = []
        self.parse_error: Optional[ProgramError] = None
        self.next_step = 0
        #: the MOVL of step next_step to go on at (Step runs a path one MOVL at a time)
        self.next_move = 0
        self.override = 1.0
        self.error_line = 0
        self._plan_due: Optional[float] = None
        #: the plans of the text as it is have this id or a higher one
        self._text_plans_from = 0

    def set_text(self, text: str) -> bool:
        """
        Take the program's text as edited: parse it, and plan it offline a moment later.

        :return: False when refused (a program runs: its text stays as it is).
        """
        if text == self.text:
            return True
        if self.job is not None and self.job.kind == 'program':
            return self._refuse(ActionRefused('the program runs: stop it before editing'))
        self.text = text
        self.next_step = self.next_move = 0
        self.resume_at = None   # the stopped line is of the text before this edit
        self._text_plans_from = self._plan_id + 1
        self.override = 1.0
        self.error_line = 0
        try:
            self.steps = program_steps(parse_program(text))
            self.parse_error = None
            self._plan_due = self.clock() + PLAN_DELAY
        except ProgramError as error:
            self.steps = []
            self.parse_error = error
            self.error_line = error.line
            self._plan_due = None
        if self.board.message.text.startswith(PLAN_PREFIX):
            # the plan it reports is of the text before this edit: it would stand beside the
            # new parse error or the new plan; the log keeps it
            self.board.clear()
        self._notify('program')
        return True

    def load_file(self, path: str) -> bool:
        """Read a program file into the editor (it is parsed and planned as if typed)."""
        text = self._read_text(path, 'read')
        if text is None or not self.set_text(text):
            return False
        self.source = str(path)
        self.saved_text = text
        self.say(f'{path}: {len(self.steps)} steps' if self.parse_error is None else
                 f'{path}: {self.parse_error}', 'info' if self.parse_error is None else 'error',
                 self.error_line)
        self._notify('program')
        return True

    def _read_text(self, path: str, verb: str) -> Optional[str]:
        """Return a file's text, or None when it cannot be read (said: 'cannot <verb> ...')."""
        try:
            with open(path, encoding='utf-8') as stream:
                return stream.read()
        except (OSError, UnicodeDecodeError) as error:
            self._refuse(ActionRefused(f'cannot {verb} {path}: {error}'))
            return None

    @property
    def modified(self) -> bool:
        """Return whether the program has edits that are in no file."""
        return self.text != self.saved_text

    @property
    def program_name(self) -> str:
        """Return the program's name: its file's, without the folder and the suffix."""
        return os.path.splitext(os.path.basename(self.source))[0] if self.source else ''

    def pending_backup(self) -> Optional[str]:
        """Return the backup a console left with unsaved edits (None: nothing lost)."""
        path = self.backups.pending() if self.backups is not None else None
        return str(path) if path is not None else None

    def describe_backup(self, path: str) -> str:
        """Return what a backup holds, for the question whether to restore it."""
        from pathlib import Path
        return self.backups.describe(Path(path)) if self.backups is not None else path

    def restore_backup(self, path: str) -> bool:
        """Take a backup's text as the program (unsaved: no file holds it)."""
        text = self._read_text(path, 'restore')
        if text is None or not self.set_text(text):
            return False
        self.source = ''
        self.saved_text = ''
        self.say(f'restored the backup {path}: Save as... to keep it')
        self._notify('program')
        return True

    def ignore_backup(self) -> None:
        """Do not offer the pending backup again (it stays in the backup folder)."""
        if self.backups is not None:
            self.backups.ignore()

    def closing(self) -> None:
        """Record that the window closes (a clean exit, or a last backup of kept edits)."""
        if self.backups is not None:
            text = self.text
            self.backups.closing(self.modified, text, lambda: text, self.program_name)

    def discard_changes(self) -> None:
        """Give the edits up: closing asks nothing (the text stays until it is replaced)."""
        self.saved_text = self.text
        self._notify('program')

    def save_file(self, path: str) -> bool:
        """Write the program's text to ``path`` (whole or not at all)."""
        from sweetie_motion.storage.files import write_atomically
        try:
            write_atomically(str(path), self.text)
        except OSError as error:
            return self._refuse(ActionRefused(f'cannot write {path}: {error}'))
        self.source = str(path)
        self.saved_text = self.text
        self.say(f'saved {path}')
        self._notify('program')
        return True

    def program_status(self) -> Tuple[str, str]:
        """
        Return what the program's status line says, and its level ('info' or 'error').

        The parse error (with its line, column and a caret under the token) while there is
        one, else the offline plan's outcome.
        """
        if self.parse_error is not None:
            return str(self.parse_error), 'error'
        plan = self.plan
        if plan is None:
            return ('', 'info') if self.steps or not self.text.strip() else \
                ('no commands: only comments and blank lines', 'info')
        if plan.error:
            return f'{PLAN_PREFIX}{plan.error}', 'error'
        ahead = self.large_reconfigurations()
        asks = ''
        if ahead:
            asks = (f'; line {ahead[0][0]} starts with a reconfiguration of more than '
                    f'{math.degrees(self.reconfiguration_limit):.0f} deg: Run and Step ask '
                    'first')
        return (f'offline plan: {len(self.steps)} steps, {plan.duration:.2f} s, '
                f'{len(plan.tool)} samples{asks}; ' + '; '.join(plan.reports[-2:]), 'info')
