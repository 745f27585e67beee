"""
The console's offline planner: programs planned without the robot, in a thread of their own.

The console draws the path a program will take and checks it before it runs ("Check"), with
:class:`~sweetie_motion.cartesian.runner.OfflineBackend`: the planner, zones and limits of the
motion process, so a program that plans here plans the same way on the robot. Planning the
paper's program takes about a second, too long for the GUI thread: requests are planned in a
background thread, the newest request replacing one not started yet, and the plans come back
through :meth:`OfflinePlanner.poll`. No rclpy, no Qt.
"""

import queue
import threading
from typing import List, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.cartesian.frames import Pose
from sweetie_motion.cartesian.limiter import WorkspaceLimiter
from sweetie_motion.cartesian.plan_checks import PathChecks
from sweetie_motion.cartesian.runner import (OfflineBackend, ProgramRunError, ProgramRunner,
                                             ProgramStopped)
from sweetie_motion.console.requests import PlanProgram, ProgramPlanned
from sweetie_motion.errors import SweetieMotionError
from sweetie_motion.model.robot_model import RobotModel


class OfflinePlanner:
    """
    Plans program steps offline as the motion process's Cartesian node would.

    :param model: the configured robot model; :param chain: the chain programs move.
    :param home: the chain's home pose [rad or m] (for HOME).
    :param period: sample period [s] (the motion process's cycle).
    :param max_velocity: path speed of moves without a feed [m/s]; :param max_acceleration:
        path acceleration [m/s^2]; :param lateral_acceleration: centripetal limit on the blends
        [m/s^2] (None: none) -- the Cartesian node's parameters.
    """

    def __init__(self, model: RobotModel, chain: str, home: ArrayLike,
                 period: float = 0.01, max_velocity: float = 0.25,
                 max_acceleration: float = 0.1,
                 lateral_acceleration: Optional[float] = 0.5) -> None:
        self.model = model
        self.chain = chain
        self.home = np.asarray(home, dtype=float)
        self.period = float(period)
        self.max_velocity = float(max_velocity)
        self.max_acceleration = float(max_acceleration)
        self.lateral_acceleration = lateral_acceleration
        self.workspace = WorkspaceLimiter.from_config(
            model.get_chain_property(chain, 'workspace'), f'chains.{chain}.workspace')
        #: the motion checks (links against links and zones), built at the first plan
        self._checks: Optional[PathChecks] = None
        self._wanted: Optional[PlanProgram] = None
        self._condition = threading.Condition()
        # one plan at a time: the worker's and a jog's check share the robot model
        self._planning = threading.Lock()
        self._closed = False
        self._done: 'queue.SimpleQueue[ProgramPlanned]' = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name='console_planner', daemon=True)
        self._thread.start()

    def joint_travel(self, start: Sequence[float], target: Pose,
                     speed: Optional[float] = None) -> np.ndarray:
        """
        Return how far each joint turns on a straight move of the tool (a jog) [rad or m].

        From ``start`` to ``target`` at ``speed`` [m/s] (None: the planner's), as the motion
        process would plan it.

        :raises SweetieMotionError: the move cannot be planned (the jog will say why).
        """
        with self._planning:
            backend = OfflineBackend(self.model, self.chain, start, self.period,
                                     self.max_velocity, self.max_acceleration,
                                     self.lateral_acceleration, self.workspace, self.checks())
            backend.move_linear([backend.tool_pose(), target], [0.0, 0.0], [None, speed], 1.0)
        positions = np.array(backend.record.positions, dtype=float).reshape(
            len(backend.record.positions), -1)
        first = np.asarray(start, dtype=float)
        return np.max(np.abs(positions - first), axis=0) if len(positions) else \
            np.zeros_like(first)

    def check_joint_move(self, start: Sequence[float], target: Sequence[float],
                         speed: Optional[Sequence[float]] = None) -> str:
        """
        Check a joint move from ``start`` to ``target`` [rad or m] as Move's path is checked.

        The checks the motion process's client runs before it sends a joint move
        (:meth:`~sweetie_motion.ros.program_client.ArmClient.move_joints`): the joint limits,
        and every link against the arm and the chain's forbidden zones along the way.

        :param speed: per joint [rad/s or m/s] (None: the limits').
        :return: what the move would be (its duration and the checks' warnings).
        :raises SweetieMotionError: Move would be refused (the same reason).
        """
        with self._planning:
            backend = OfflineBackend(self.model, self.chain, start, self.period,
                                     self.max_velocity, self.max_acceleration,
                                     self.lateral_acceleration, self.workspace, self.checks())
            return backend.move_joints(np.asarray(target, dtype=float),
                                       None if speed is None else np.asarray(speed, float), 1.0)

    def plan(self, request: PlanProgram) -> ProgramPlanned:
        """
        Plan the request's steps from its start (in the calling thread).

        :return: the plan; when a step cannot be planned, what was planned before it, the
            reason and the step's line.
        """
        backend = OfflineBackend(self.model, self.chain, request.start, self.period,
                                 self.max_velocity, self.max_acceleration,
                                 self.lateral_acceleration, self.workspace, self.checks())
        runner = ProgramRunner(request.steps, backend, self.model.list_joints(self.chain),
                               self.home)
        reports: List[str] = []
        error, line = '', 0
        # each sample's program line, for the preview: a step's, a path's MOVL's as it goes
        runner.on_line = backend.note_line

        def before(step) -> bool:
            backend.note_line(runner.next_line)
            return True
        try:
            runner.run(before, after=lambda report: reports.append(
                f'{report.step.describe()}: {report.message}'))
        except ProgramRunError as failure:
            error, line = str(failure), failure.line
        except (ProgramStopped, SweetieMotionError, ValueError) as failure:
            step = runner.steps[runner.next] if not runner.finished else None
            line = step.line if step is not None else 0
            error = f'line {line}: {failure}' if line else str(failure)
        record = backend.record
        if record.lines and request.steps:
            record.lines[0] = request.steps[0].line   # the start: where the program starts
        return ProgramPlanned(
            request.plan_id, np.array(record.tool, dtype=float).reshape(-1, 3),
            np.array(record.waypoints, dtype=float).reshape(-1, 3),
            np.array(record.positions, dtype=float).reshape(len(record.positions), -1),
            float(record.times[-1]) if record.times else 0.0, tuple(reports), error, line,
            np.array(record.times, dtype=float), np.array(record.lines, dtype=int),
            tuple((record.lines[first] if first < len(record.lines) else line,
                   tuple(float(v) for v in turn))
                  for first, turn, _ in record.reconfigurations),
            tuple((first, first + count) for first, _, count in record.reconfigurations))

    def checks(self) -> PathChecks:
        """Return the motion checks of the chain's plans (built once, at the first plan)."""
        if self._checks is None:
            self._checks = PathChecks(self.model, self.chain, self.workspace)
        return self._checks

    def submit(self, request: PlanProgram) -> None:
        """Plan ``request`` in the background (it replaces a request not started yet)."""
        with self._condition:
            self._wanted = request
            self._condition.notify()

    def poll(self) -> List[ProgramPlanned]:
        """Return the plans finished since the last call."""
        plans = []
        while True:
            try:
                plans.append(self._done.get_nowait())
            except queue.Empty:
                return plans

    def close(self) -> None:
        """Stop the planning thread (a plan in progress is finished first)."""
        with self._condition:
            self._closed = True
            self._condition.notify()
        self._thread.join(10.0)

    def _work(self) -> None:
        while True:
            with self._condition:
                while self._wanted is None and not self._closed:
                    self._condition.wait()
                if self._closed:
                    return
                request, self._wanted = self._wanted, None
                assert request is not None   # the wait above ends on a request or on close
            try:
                with self._planning:
                    planned = self.plan(request)
                self._done.put(planned)
            except Exception as error:  # noqa: B902 -- a bad plan must not end the thread
                self._done.put(ProgramPlanned(
                    request.plan_id, np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 0)), 0.0,
                    (), f'the offline planner failed: {type(error).__name__}: {error}'))
