"""
How a program run ends, and Resume after a Stop: the stopped line and where to go on.

One part of :class:`~sweetie_motion.console.presenter.ConsolePresenter` (no Qt, no ROS). The
line a stopped program names is the one the tool was on (the MOVL whose waypoint it headed
for, from the Cartesian node's feedback), not the first MOVL of its blended path. Resume goes
on at that line, planned from where the arm stands (the path's start is the tool's pose, as
Step's is); Run still starts from the top.
"""

from typing import Any, Callable, List, Optional, Tuple

from sweetie_motion.cartesian.runner import ProgramStep
from sweetie_motion.console.requests import JobFinished, PlanProgram, RunSteps, STOPPED, SUCCEEDED
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.gui.messages import ActionRefused


def resume_point(steps: List[ProgramStep], step: int, move: int, line: int
                 ) -> Tuple[int, int]:
    """
    Return (step, MOVL of it) to go on at after a stop on program line ``line``.

    ``step`` and ``move`` are where the stopped run's step began (the runner's place); in a
    linear step the MOVL of ``line`` is the one the tool headed for when it stopped.
    """
    if 0 <= step < len(steps) and steps[step].kind == 'linear':
        lines = [getattr(command, 'line', 0) for command in steps[step].commands]
        if line in lines[move:]:
            return step, lines.index(line, move)
    return step, move


class ProgramResume:
    """
    The presenter's part for the end of a program run and Resume after a Stop.

    A mixin of :class:`~sweetie_motion.console.presenter.ConsolePresenter`;
    :meth:`_init_resume` sets this part's state.
    """

    steps: List[ProgramStep]
    joints: List[str]
    job: Any
    override: float
    next_step: int
    next_move: int
    error_line: int
    send: Callable[[object], None]
    # the presenter's, used here
    _check: Callable[..., None]
    _refuse: Callable[[SweetieMotionError], bool]
    _notify: Callable[..., None]
    _start: Callable[..., Any]
    _end_manual: Callable[..., None]
    _new_plan_id: Callable[[], int]
    positions: Callable[..., Any]
    say: Callable[..., None]

    @property
    def next_line(self) -> int:
        """Return the line a paused program goes on at (the presenter's own, which wins)."""
        raise NotImplementedError

    def _init_resume(self) -> None:
        """Set this part's state: nothing to resume."""
        #: (step, MOVL of it, speed override) where Resume goes on (None: nothing stopped)
        self.resume_at: Optional[Tuple[int, int, float]] = None

    @property
    def resume_line(self) -> int:
        """Return the program line Resume goes on at (0: nothing to resume)."""
        if self.resume_at is None or self.resume_at[0] >= len(self.steps):
            return 0
        step, move, _ = self.resume_at
        commands = self.steps[step].commands
        return getattr(commands[min(move, len(commands) - 1)], 'line', 0)

    def resume(self) -> bool:
        """Go on with a stopped program at the line it stopped on, from where the arm is."""
        if not self.resume_line:
            return self._refuse(ActionRefused('Resume: no stopped program to go on with (Run '
                                              'starts it from the top)'))
        try:
            self._check('run', self.steps)
        except ActionRefused as error:
            return self._refuse(error)
        assert self.resume_at is not None   # resume_line is 0 without it
        step, move, override = self.resume_at
        line = self.resume_line
        self.resume_at = None
        self._end_manual('')
        self.error_line = 0
        self.override = override
        start = self.positions(self.joints)
        rest = (ProgramStep(self.steps[step].kind, self.steps[step].commands[move:]),
                *self.steps[step + 1:])
        if start is not None:   # the path drawn is the one that runs: from where the arm is
            self.send(PlanProgram(self._new_plan_id(), rest, tuple(float(v) for v in start)))
        job = self._start('program', f'program from line {line}', line)
        self.send(RunSteps(job.job_id, tuple(self.steps), step, False, override, move))
        self._notify('program')
        return True

    def _program_finished(self, event: JobFinished, line: int) -> None:
        """End a program run: ``line`` is the one the tool was on at the end."""
        self.override = event.override
        self.resume_at = None
        if event.outcome == SUCCEEDED:
            self.next_step, self.next_move = event.next_index, event.next_move
            if self.next_step >= len(self.steps):
                self.next_step = self.next_move = 0
                self.override = 1.0
                self.say(f'the program is done: {len(self.steps)} steps')
            else:
                self.say(f'step done; next: line {self.next_line} (Step or Run goes on from '
                         'there)')
            return
        self.next_step = self.next_move = 0
        override, self.override = self.override, 1.0
        if event.outcome == STOPPED:
            if event.next_index < len(self.steps):
                step, move = resume_point(self.steps, event.next_index, event.next_move, line)
                self.resume_at = (step, move, override)
            # the line the tool was on when it is of the stopped step (the feedback's), else
            # the runner's
            line = self.resume_line or event.line
            where = f' at line {line}' if line else ''
            again = (f'Resume goes on from line {self.resume_line} (from where the arm is), '
                     if self.resume_line else '')
            self.say(f'the program was stopped{where}: the motion decelerated and holds; '
                     f'{again}Run starts it from the top', 'warning', line)
        else:
            self.error_line = event.line
            self.say(f'the program failed: {event.message}', 'error', event.line)
