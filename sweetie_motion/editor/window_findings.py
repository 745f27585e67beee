"""
The editor window's motion checks: asked for after each change, their findings shown.

A part of :class:`~sweetie_motion.editor.window.EditorWindow` (a mixin: the window's widgets
and presenter are its attributes); layout only, what it decides is the presenter's.
"""

from typing import Any, Callable, Dict, List, Optional, TYPE_CHECKING

from sweetie_motion.editor.play_head import table_key
from sweetie_motion.editor.table_checks import RowFinding, TableChecker

if TYPE_CHECKING:
    from sweetie_motion.editor.physics_line import PhysicsLine
    from sweetie_motion.editor.play_head import PlayHead
    from sweetie_motion.editor.presenter import EditorPresenter


class CheckFindings:
    """
    The editor window's motion checks and their findings.

    The table's motion checks and Simulate's physics: run them after a change, mark the rows
    they find, and go to the next finding.

    A mixin of :class:`~sweetie_motion.editor.window.EditorWindow`.
    """

    # what it uses of the window (annotations only: the window's parts define them)
    presenter: 'EditorPresenter'
    table_checker: Optional[TableChecker]
    physics_line: Optional['PhysicsLine']
    check_line: Any     # Qt widgets
    table_model: Any
    trajectory_plot: Any
    _play_head: 'PlayHead'
    play_head_time: Optional[float]
    _show_robot: Callable[..., None]
    show_time: Callable[[float], None]

    def _request_checks(self) -> None:
        p = self.presenter
        if self.table_checker is not None and self.table_checker.request(
                p.waypoints, p.interpolation):
            self.check_line.checking()
        if self.physics_line is not None and self.physics_line.on:
            self.physics_line.request(p.waypoints, p.interpolation, p.document.name)

    def _simulate_toggled(self, on: bool) -> None:
        if on:
            self._request_checks()

    def _take_checks(self) -> None:
        result = self.table_checker.poll() if self.table_checker is not None else None
        if result is None:
            return
        self.check_line.show_result(result)
        self._show_findings()

    def _findings(self) -> List[RowFinding]:
        """Return the findings of the checks and of the simulation of the table shown."""
        checked = self.table_checker.result if self.table_checker is not None else None
        key = table_key(self.presenter.waypoints, self.presenter.interpolation)
        found = list(checked.findings) if checked is not None and checked.key == key else []
        if self.physics_line is not None:
            found += self.physics_line.findings(key)
        return found

    def _show_findings(self) -> None:
        """Flag the rows of the findings and mark their times on the plot."""
        flagged = {}
        rows: Dict[int, List[RowFinding]] = {}
        for finding in self._findings():
            rows.setdefault(finding.row, []).append(finding)
        for row, findings in rows.items():
            severity = 'refuse' if any(f.finding.severity == 'refuse' for f in findings) \
                else 'warn'
            flagged[row] = (severity, '\n'.join(f.describe() for f in findings))
        self.table_model.set_flagged(flagged)
        self.trajectory_plot.set_findings([(f.time, f.finding.severity)
                                           for f in self._findings()])
        refused = [f for f in self._findings() if f.finding.severity == 'refuse']
        physics = bool(refused) and refused[0].finding.check == 'physics'
        self.presenter.set_refusal(
            f'{"the physics refuses" if physics else "the checks refuse"} it: '
            f'{refused[0].describe()}' if refused else '')
        self._show_robot(force=True)

    def show_next_finding(self, check: Optional[str] = None) -> None:
        """
        Move the play head to the next finding after it (of the checks, or only of ``check``).

        :param check: 'physics' for the simulation's findings; None: the motion checks'.
        """
        found = [f for f in self._findings()
                 if (f.finding.check == 'physics') == (check == 'physics')]
        span = self._play_head.span(self.presenter.waypoints)
        if not found or span is None:
            return
        times = sorted({f.time for f in found})
        now = self.play_head_time
        later = [t for t in times if now is None or t > now + 1e-3]
        self.show_time(later[0] if later else times[0])

    def show_next_physics_finding(self) -> None:
        """Move the play head to the next finding of the simulation (the fall, a stall)."""
        self.show_next_finding('physics')
