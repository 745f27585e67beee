"""
The motion checks of the editor's table: which rows and times they flag, and each moment's marks.

The table is checked as ``sweetie-motion check`` checks a stored motion: as the controller
plays it from the standing pose (the approach to its first active row, the retiming to the
joint limits; the joints it does not move at zero; its support flags), in a worker thread so
that editing never waits for it: a newer table replaces a waiting one, and only the newest
answer is shown. A finding's time as played is placed back on the table's times (between the
keyframes it falls between; during the approach: the first row). Pure: no Qt, no rclpy.
"""

from dataclasses import dataclass, field
from functools import partial
import threading
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from sweetie_motion.checks.marks import MotionMarks, PoseMarks
from sweetie_motion.checks.motion import (
    checker_for, CheckReport, Finding, MotionChecker, PoseSamples,
)
from sweetie_motion.controllers.goals import GoalPlanner
from sweetie_motion.controllers.played_checks import motion_planner, played_samples
from sweetie_motion.editor.newest_table import NewestTableWorker
from sweetie_motion.editor.play_head import table_key, TableKey
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import TrajectoryGoal
from sweetie_motion.trajectory.waypoints import WaypointsList


@dataclass(frozen=True)
class RowFinding:
    """A finding placed on the table: its table time and the active row nearest to it."""

    finding: Finding
    time: float     #: [s] table time
    row: int        #: index in the table

    def describe(self) -> str:
        """Say it in words, with the row."""
        return (f'{self.finding.check} ({self.finding.severity}) near row {self.row + 1}: '
                f'{self.finding.message}')


@dataclass
class TableCheck:
    """What the checks found in one version of the table."""

    #: the table version it answers (see :func:`table_key`)
    key: TableKey
    findings: List[RowFinding] = field(default_factory=list)
    report: Optional[CheckReport] = None
    marks: Optional[MotionMarks] = None
    #: table time of the samples' zero (the first active row) [s]
    origin: float = 0.0
    #: why the table was not checked ('' : it was)
    error: str = ''

    def rows(self) -> Dict[int, List[RowFinding]]:
        """Return row -> the findings placed on it."""
        rows: Dict[int, List[RowFinding]] = {}
        for finding in self.findings:
            rows.setdefault(finding.row, []).append(finding)
        return rows

    def marks_at(self, time: float) -> Optional[PoseMarks]:
        """Return the marks at table time ``time`` [s] (None: nothing checked)."""
        if self.marks is None:
            return None
        return self.marks.at(time - self.origin)

    def summary(self) -> str:
        """Return one line for the editor: the verdict and the first findings."""
        if self.error:
            return f'checks: not run ({self.error})'
        if self.report is None:
            return 'checks: off'
        if not self.findings:
            summary = self.report.summary()
            parts = [f'closest links {summary["distance"] * 1e3:.0f} mm'
                     if summary['distance'] is not None else '',
                     f'CoM {summary["com_margin"] * 1e3:.0f} mm inside'
                     if summary['com_margin'] is not None else '',
                     f'load {summary["load"]:.0f} % of rated'
                     if summary['load'] is not None else '']
            return 'checks: ok (' + ', '.join(p for p in parts if p) + ')'
        refused = sum(f.finding.severity == 'refuse' for f in self.findings)
        verdict = (f'{refused} would be REFUSED' if refused else
                   f'{len(self.findings)} warning(s)')
        first = self.findings[0]
        return (f'checks: {verdict}: {first.finding.check} at t = {first.time:.2f} s '
                f'(row {first.row + 1})')


def check_table(checker: MotionChecker, goal: TrajectoryGoal, key: TableKey, origin: float,
                row_times: List[Tuple[int, float]], planner: GoalPlanner) -> TableCheck:
    """
    Check a table's goal (its whole active rows) as played and place the findings on its rows.

    :param origin: table time of the goal's zero [s]; :param row_times: (row, table time) of
        the active rows; :param planner: the controller's planner (:func:`motion_planner`).
    :raises GoalError: the controller refuses the table's motion.
    """
    samples, plan = played_samples(checker, planner, goal)
    report = checker.check(samples)
    table_times = origin + np.array([float(p.time) for p in goal.points])
    played = np.asarray(plan.keyframes, dtype=float)
    findings = []
    for finding in report.findings:
        time = float(np.interp(finding.time, played, table_times))
        row = min(row_times, key=lambda rt: abs(rt[1] - time))[0]
        findings.append(RowFinding(finding, time, row))
    # the marks are drawn at table times: the samples' times mapped back the same way
    shown = PoseSamples(np.interp(samples.times, played, table_times) - origin,
                        samples.positions, samples.velocities, samples.accelerations,
                        samples.flags)
    return TableCheck(key, findings, report, MotionMarks.of(checker, shown, report), origin)


class TableChecker:
    """
    Checks the editor's table in a worker thread; :meth:`poll` gives each newest answer once.

    :param model: the configured RobotModel (its description's ``checks:`` section).
    """

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self._checker: Optional[MotionChecker] = None
        self._checker_error = ''
        #: the controller's planner per interpolation (what is played is what is checked)
        self._planners: Dict[str, GoalPlanner] = {}
        self._lock = threading.Lock()
        self._worker: NewestTableWorker[TableCheck] = NewestTableWorker(
            'table_checks', lambda answer: answer.key)

    @property
    def result(self) -> Optional[TableCheck]:
        """Return the newest answer given by :meth:`poll`."""
        return self._worker.result

    def request(self, waypoints: WaypointsList, interpolation: str) -> bool:
        """Ask for a check of the table as it is now; return False if it is already asked."""
        key = table_key(waypoints, interpolation)
        if not self._worker.want(key):
            return False
        active = waypoints.active_indices()
        job: Callable[[], TableCheck]
        try:
            goal = waypoints.build_goal(whole=True)
        except SweetieMotionError as error:
            job = partial(TableCheck, key, error=str(error))
        else:
            rows = waypoints.waypoints
            job = partial(self._run, goal, key, rows[active[0]].time,
                          [(k, rows[k].time) for k in active], interpolation)
        self._worker.submit(job)
        return True

    def poll(self) -> Optional[TableCheck]:
        """Return a new answer for the newest table asked for, once (None: none yet)."""
        return self._worker.poll()

    def close(self) -> None:
        """Stop taking work; a running check finishes in its thread, unread."""
        self._worker.close()

    def _run(self, goal: TrajectoryGoal, key: TableKey, origin: float,
             row_times: List[Tuple[int, float]], interpolation: str) -> TableCheck:
        with self._lock:
            try:
                if self._checker is None and not self._checker_error:
                    self._checker = checker_for(self.model)
            except (SweetieMotionError, OSError, ValueError) as error:
                self._checker_error = f'the checks cannot be built: {error}'
            if self._checker is None:
                return TableCheck(key, error=self._checker_error)
            try:
                planner = self._planners.get(interpolation)
                if planner is None:
                    planner = self._planners[interpolation] = motion_planner(self.model,
                                                                             interpolation)
                return check_table(self._checker, goal, key, origin, row_times, planner)
            except (SweetieMotionError, ValueError) as error:
                return TableCheck(key, error=str(error))
            except Exception as error:  # noqa: B902 -- a failed check must not end the editor
                return TableCheck(key, error=f'the checks failed: {type(error).__name__}: '
                                  f'{error}')
