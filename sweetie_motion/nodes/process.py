"""
What the nodes of the motion process share: the robot model and the cycle host.

The cycle, the arbiter, the aggregator, the servo bus and the controller cores live on the
cycle side (:mod:`sweetie_motion.host`), by default in a child process; nodes reach them only
through :attr:`MotionProcess.host`. The bringup creates this object; nodes never do.
"""

import threading
from typing import Callable, List, Optional, Tuple

from sweetie_motion.checks.motion import checker_for, MotionChecker
from sweetie_motion.host.client import HostClient
from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.physics.judge import (ChildProcessJudgement, InProcessJudgement, Judgement,
                                          physics_key, PhysicsJudge)


class MotionProcess:
    """
    What the component nodes share.

    :param model: the configured robot model (names, limits, kinematics for planning).
    :param host: the cycle host.
    :param description: where the model came from (its description file, the URDF used instead
        of the file's): the physics' judge then runs in a process of its own.
    """

    def __init__(self, model: RobotModel, host: HostClient,
                 description: Optional[Tuple[str, str]] = None) -> None:
        self.model = model
        self.description = description
        self.view = model.view()
        self.host = host
        self._checker: Optional[MotionChecker] = None
        self._checker_lock = threading.Lock()
        self._judge: Optional[PhysicsJudge] = None
        #: where the physics' verdicts are told (the motion node's logger, once it is there)
        self.physics_log: Callable[[str], None] = lambda line: None

    @property
    def period(self) -> float:
        """Return the cycle period [s] (the host's)."""
        return self.host.period

    def checker(self) -> MotionChecker:
        """Return the motion checks of the robot (built at the first call, then shared)."""
        with self._checker_lock:
            if self._checker is None:
                self._checker = checker_for(self.model)
            return self._checker

    def judge(self) -> Optional[PhysicsJudge]:
        """Return the physics' judge of stored motions (shared); None: ``physics: judge: off``."""
        if self.model.physics_settings.judge == 'off':
            return None
        with self._checker_lock:
            if self._judge is None:
                model = self.model
                judgement: Judgement
                if self.description is not None:
                    judgement = ChildProcessJudgement(*self.description)
                else:
                    from sweetie_motion.physics.motion import MotionSimulator
                    judgement = InProcessJudgement(lambda: MotionSimulator(model))
                self._judge = PhysicsJudge(judgement, physics_key(model),
                                           lambda line: self.physics_log(line))
            return self._judge

    def close(self) -> None:
        """End the physics' judge (its worker and its process), if it was started."""
        with self._checker_lock:
            judge, self._judge = self._judge, None
        if judge is not None:
            judge.close()

    def servo_joints(self) -> List[str]:
        """Return the joints driven by servos: every joint but the virtual ones."""
        return [j for j in self.model.list_all_joints() if not self.model.is_virtual(j)]
