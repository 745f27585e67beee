"""
The editor's Simulate: the table played on the robot in the physics engine, in a worker thread.

What ``sweetie-motion simulate`` does for a stored motion (:mod:`sweetie_motion.physics.motion`:
the controller's own plan from the standing pose, the pony settled on the floor), done for the
table's active rows; its findings — the fall, a servo held at its stall torque, a supporting
hoof that slips — are placed on the table's rows and times as the checks' are
(:class:`~sweetie_motion.editor.table_checks.RowFinding`), and the simulated body is kept so
that the 3D view can draw the pony where the physics has it at the play head's time. A newer
table replaces one waiting; only the newest answer is shown. Pure: no Qt, no rclpy.
"""

from dataclasses import dataclass, field
from functools import partial
import threading
from typing import Any, List, Optional, Tuple, TYPE_CHECKING, Union

import numpy as np

from sweetie_motion.checks.motion import Finding
from sweetie_motion.editor.newest_table import NewestTableWorker
from sweetie_motion.editor.play_head import table_key, TableKey
from sweetie_motion.editor.table_checks import RowFinding
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.trajectory.goal import TrajectoryGoal
from sweetie_motion.trajectory.waypoints import WaypointsList

if TYPE_CHECKING:
    from sweetie_motion.physics.motion import MotionSimulator, SimulatedMotion

#: a supporting hoof that slides further than this is reported [m]
SLIP_REPORTED = 0.02
#: a servo at its stall torque for at least this long (and less than its overload time) is
#: reported as a warning [s]
STALL_REPORTED = 0.2

#: a table to simulate: its goal, (row, table time) of its active rows, interpolation, name
_Job = Tuple[TrajectoryGoal, List[Tuple[int, float]], str, str]


@dataclass
class TableSimulation:
    """What the physics made of one version of the table."""

    key: TableKey
    findings: List[RowFinding] = field(default_factory=list)
    #: the simulated motion (None: not simulated: ``error`` says why)
    motion: Any = None
    #: table time of each simulated time: (simulated times [s], table times [s])
    clock: Optional[Tuple[np.ndarray, np.ndarray]] = None
    error: str = ''

    def summary(self) -> str:
        """Return one line for the editor: the verdict and the worst figures."""
        if self.error:
            return f'physics: not simulated ({self.error})'
        figures = self.motion.summary()
        if self.motion.fall is not None:
            first = next(f for f in self.findings if 'falls' in f.finding.message)
            return (f'physics: FALLS at t = {first.time:.2f} s (row {first.row + 1}); tilt '
                    f'{np.degrees(figures["tilt"]):.0f} deg')
        refused = [f for f in self.findings if f.finding.severity == 'refuse']
        verdict = ('would overload: ' + refused[0].finding.message) if refused else \
            'stays up'
        return (f'physics: {verdict}; tilt {np.degrees(figures["tilt"]):.1f} deg, longest at '
                f'stall {figures["stall"]:.2f} s ({figures["stall_servo"]}), slip '
                f'{figures["slip"] * 1e3:.0f} mm')

    def base_at(self, table_time: float) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Return the simulated base (rotation, position [m]) at a table time (None: none)."""
        if self.motion is None or self.clock is None:
            return None
        simulated, table = self.clock
        return self.motion.base_at(float(np.interp(table_time, table, simulated)))


def motion_findings(motion: 'SimulatedMotion') -> List[Finding]:
    """Return a simulated motion's findings with their times [s, simulated]: fall, stall, slip."""
    found = []
    if motion.fall is not None:
        found.append(Finding('physics', 'refuse', motion.fall,
                             f'falls at t = {motion.fall:.2f} s (tilts '
                             f'{np.degrees(motion.max_tilt()):.0f} deg)'))
    for servo, stall, (held, start) in zip(motion.servos, motion.stall, motion.stall_runs()):
        if held > motion.overload_time:
            found.append(Finding('physics', 'refuse', start,
                                 f'{servo} holds its stall torque ({stall:.2f} N*m) for '
                                 f'{held:.2f} s (overload after {motion.overload_time:.2f} s)'))
        elif held >= STALL_REPORTED:
            found.append(Finding('physics', 'warn', start,
                                 f'{servo} at its stall torque for {held:.2f} s'))
    for leg, slid in zip(motion.legs, motion.slip()):
        if slid > SLIP_REPORTED:
            found.append(Finding('physics', 'warn', _slip_time(motion, motion.legs.index(leg)),
                                 f'the hoof of {leg} slips {slid * 1e3:.0f} mm'))
    return sorted(found, key=lambda f: f.time)


def _slip_time(motion: 'SimulatedMotion', leg: int) -> float:
    """Return when a supporting foot of ``leg`` had slid farthest [s, simulated]."""
    holding = motion.support[:, leg] & motion.on_floor[:, leg]
    best, when, start = 0.0, 0.0, None
    for k, held in enumerate(holding):
        if not held:
            start = None
            continue
        start = k if start is None else start
        way = float(np.linalg.norm(motion.feet[k, leg, :2] - motion.feet[start, leg, :2]))
        if way > best:
            best, when = way, float(motion.times[k])
    return when


def simulate_table(simulator: 'MotionSimulator', goal: TrajectoryGoal, key: TableKey,
                   row_times: List[Tuple[int, float]], name: str) -> TableSimulation:
    """
    Simulate a table's goal (its active rows) and place the findings on its rows.

    The plan's keyframes are the rows' (after the approach, scaled when the controller slows
    it down): a simulated time maps to a table time between them.

    :param simulator: a :class:`~sweetie_motion.physics.motion.MotionSimulator`.
    :param row_times: (row, table time) of the active rows.
    """
    motion = simulator.simulate(name, goal)
    plan = simulator.plan(goal)
    knots = np.asarray(plan.spline.times, dtype=float)[-len(row_times):]
    table = np.array([t for _, t in row_times], dtype=float)
    if len(knots) != len(table):        # an unexpected plan: a shift is the best guess
        knots = table - table[0] + knots[-1] - (table[-1] - table[0])
    findings = []
    for finding in motion_findings(motion):
        time = float(np.interp(finding.time, knots, table))
        row = min(row_times, key=lambda rt: abs(rt[1] - time))[0]
        findings.append(RowFinding(finding, time, row))
    return TableSimulation(key, findings, motion, (knots, table))


class TableSimulator:
    """
    Simulates the editor's table in a worker thread; :meth:`poll` gives each newest answer once.

    :param model: the configured RobotModel (its description's ``physics:`` section).
    """

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        self._simulator: Optional['MotionSimulator'] = None
        self._lock = threading.Lock()
        self._worker: NewestTableWorker[TableSimulation] = NewestTableWorker(
            'simulate', lambda answer: answer.key)

    @property
    def result(self) -> Optional[TableSimulation]:
        """Return the newest answer given by :meth:`poll`."""
        return self._worker.result

    @property
    def busy(self) -> bool:
        """Return whether a simulation runs or waits."""
        return self._worker.busy

    def request(self, waypoints: WaypointsList, interpolation: str, name: str) -> bool:
        """Ask for a simulation of the table as it is now; return False if it is asked."""
        key = table_key(waypoints, interpolation)
        if not self._worker.want(key):
            return False
        active = waypoints.active_indices()
        job: Tuple[TableKey, Union[TableSimulation, _Job]]
        try:
            goal = waypoints.build_goal(whole=True)
        except SweetieMotionError as error:
            job = (key, TableSimulation(key, error=str(error)))
        else:
            rows = waypoints.waypoints
            job = (key, (goal, [(k, rows[k].time) for k in active], interpolation, name))
        self._worker.submit(partial(self._run, *job))
        return True

    def poll(self) -> Optional[TableSimulation]:
        """Return a new answer for the newest table asked for, once (None: none yet)."""
        return self._worker.poll()

    def close(self) -> None:
        """Stop taking work; a running simulation finishes in its thread, unread."""
        self._worker.close()

    def _run(self, key: TableKey, job: Union[TableSimulation, _Job]) -> TableSimulation:
        if isinstance(job, TableSimulation):
            return job
        goal, row_times, interpolation, name = job
        with self._lock:
            try:
                if self._simulator is None or self._simulator.planner.interpolation != \
                        interpolation:
                    from sweetie_motion.physics.motion import MotionSimulator
                    self._simulator = MotionSimulator(self.model, interpolation=interpolation)
                return simulate_table(self._simulator, goal, key, row_times, name)
            except (SweetieMotionError, ValueError, OSError) as error:
                return TableSimulation(key, error=str(error))
            except Exception as error:  # noqa: B902 -- a failed simulation must not end the editor
                return TableSimulation(key, error=f'the simulation failed: '
                                       f'{type(error).__name__}: {error}')
