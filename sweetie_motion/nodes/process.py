"""
What the nodes of the motion process share: the robot model and the cycle host.

The cycle, the arbiter, the aggregator, the servo bus and the controller cores live on the
cycle side (:mod:`sweetie_motion.host`), by default in a child process; nodes reach them only
through :attr:`MotionProcess.host`. The bringup creates this object; nodes never do.
"""

from typing import List

from sweetie_motion.host.client import HostClient
from sweetie_motion.model.robot_model import RobotModel


class MotionProcess:
    """
    What the component nodes share.

    :param model: the configured robot model (names, limits, kinematics for planning).
    :param host: the cycle host.
    """

    def __init__(self, model: RobotModel, host: HostClient) -> None:
        self.model = model
        self.view = model.view()
        self.host = host

    @property
    def period(self) -> float:
        """Return the cycle period [s] (the host's)."""
        return self.host.period

    def servo_joints(self) -> List[str]:
        """Return the joints driven by servos: every joint but the virtual ones."""
        return [j for j in self.model.list_all_joints() if not self.model.is_virtual(j)]
