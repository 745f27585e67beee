"""
Large joint reconfigurations of a program, asked about before Run and Step (issue #37).

A path that starts on another joint branch than the arm's (a wrist flip from HOME, say) begins
with a reconfiguration: the joints turn with the tool still, often by more than 100 degrees.
The offline plan knows each one (:attr:`~sweetie_motion.console.requests.ProgramPlanned.
reconfigurations`); one that turns a joint further than a setting (90 degrees by default) is
said in the program's status and asked about before Run or Step moves. No Qt, no ROS.
"""

import math
from typing import Any, Callable, List, Optional, Sequence, Tuple

from sweetie_motion.cartesian.runner import ProgramStep
from sweetie_motion.console.manual_moves import describe_turns
from sweetie_motion.console.requests import ProgramPlanned
from sweetie_motion.gui.messages import ActionRefused

#: a reconfiguration that turns a joint further than this asks first [deg] (the default)
RECONFIGURATION_LIMIT_DEG = 90.0


def large_reconfigurations(plan: ProgramPlanned, joints: Sequence[str], limit: float
                           ) -> List[Tuple[int, List[Tuple[str, float]]]]:
    """
    Return the plan's reconfigurations that turn a joint further than ``limit`` [rad].

    :return: (the program line of the path, [(joint, turn [rad or m])] of the joints that
        turn at all), in the plan's order.
    """
    found = []
    for line, turns in plan.reconfigurations:
        if max((abs(t) for t in turns), default=0.0) > limit:
            found.append((line, [(j, t) for j, t in zip(joints, turns) if abs(t) > 1e-3]))
    return found


class ReconfigurationCheck:
    """
    The presenter's part that finds a large reconfiguration ahead of Run or Step.

    A mixin of :class:`~sweetie_motion.console.presenter.ConsolePresenter`.
    """

    model: Any
    joints: List[str]
    steps: List[ProgramStep]
    plan: Optional[ProgramPlanned]
    next_step: int
    next_move: int
    reconfiguration_limit: float
    _text_plans_from: int
    _plan_due: Optional[float]
    _refuse: Callable[..., bool]

    def large_reconfigurations(self) -> List[Tuple[int, List[Tuple[str, float]]]]:
        """Return the large reconfigurations of the offline plan of the program as it is."""
        plan = self.plan
        if plan is None or plan.plan_id < self._text_plans_from or self._plan_due is not None:
            return []   # no plan of this text yet (an edit plans 0.8 s later)
        return large_reconfigurations(plan, self.joints, self.reconfiguration_limit)

    def reconfiguration_ahead(self, single: bool = False) -> str:
        """
        Say the large reconfiguration Run (``single``: Step) would make, '' when none.

        Run goes on from the paused step (or from the top); Step runs that step only.
        """
        first = self.next_step if self.next_step < len(self.steps) else 0
        if not self.steps:
            return ''
        step = self.steps[first]
        moves = step.commands[self.next_move:] if step.kind == 'linear' else step.commands
        lines = {getattr(command, 'line', 0) for command in moves}
        if not single:
            lines |= {getattr(c, 'line', 0) for s in self.steps[first + 1:] for c in s.commands}
        for line, turns in self.large_reconfigurations():
            if line in lines:
                return (f'line {line} starts with a reconfiguration, the tool still: it turns '
                        f'{describe_turns(self.model, turns)} (more than '
                        f'{math.degrees(self.reconfiguration_limit):.0f} deg)')
        return ''

    def _confirm_reconfiguration(self, single: bool, confirmed: bool) -> bool:
        """Refuse Run or Step when a large reconfiguration is ahead and not confirmed."""
        ahead = '' if confirmed else self.reconfiguration_ahead(single)
        if ahead:
            self._refuse(ActionRefused(f'{"Step" if single else "Run"}: {ahead}: confirm it '
                                       'first (the console asks)'))
            return False
        return True
