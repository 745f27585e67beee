"""
The motion checks of planned Cartesian and joint moves, before anything moves (R-SYS-9, R-CART-2).

The forbidden zones stop the tool point before inverse kinematics (:mod:`.limiter`); here the
whole arm is checked on the planned joint path: every link against the robot's other links and
against the zones, made collision objects (:func:`~sweetie_motion.checks.collision.
zone_obstacles`), with the robot description's ``checks:`` settings (a link closer than the
collision margin is refused or warned about, as the trajectory controller does). Pure: no rclpy.
"""

from typing import List, Optional

import numpy as np

from sweetie_motion.cartesian.limiter import LimitViolation, WorkspaceLimiter
from sweetie_motion.cartesian.path import Segment
from sweetie_motion.checks.collision import zone_obstacles
from sweetie_motion.checks.motion import checker_for, Finding, PoseSamples
from sweetie_motion.model.robot_model import RobotModel


class CheckViolation(LimitViolation):
    """
    A planned motion the motion checks refuse: a link into another or into a forbidden zone.

    :param finding: what the check found (its time is from the start of the motion).
    """

    def __init__(self, finding: Finding, sample: int,
                 segment: Optional[Segment] = None) -> None:
        self.finding = finding
        super().__init__(f'the motion would hurt the robot: {finding.check}: {finding.message}',
                         finding.time, sample, segment)


class PathChecks:
    """
    The checks of one chain's planned motions: its links, the robot's others and the zones.

    The joints outside the chain hold zero (the pose the robot's description is drawn in).

    :param model: the configured robot model (its ``checks:`` section).
    :param chain: the chain the motions move.
    :param workspace: the chain's forbidden zones, in the frame of its first link.
    """

    def __init__(self, model: RobotModel, chain: str,
                 workspace: Optional[WorkspaceLimiter] = None) -> None:
        first_link = model.get_chain_links(chain)[0]
        zones = workspace.zones if workspace is not None else ()
        self.checker = checker_for(model, obstacles=zone_obstacles(zones, first_link))
        joints = self.checker.robot.joints
        self.columns = [joints.index(j) for j in model.list_joints(chain)]
        self.hold = np.zeros(len(joints))

    def check(self, times: np.ndarray, positions: np.ndarray,
              segments: Optional[List[Optional[Segment]]] = None) -> List[str]:
        """
        Check a planned joint path of the chain; return the warnings in words.

        :param times: [s] (n,), from the motion's start; :param positions: (n, chain joints).
        :param segments: the path segment of each sample, to name in a refusal.
        :raises CheckViolation: a check set to refuse found something (the first in time).
        """
        times = np.asarray(times, dtype=float)
        chain = np.atleast_2d(np.asarray(positions, dtype=float))
        if len(times) < 2:
            return []
        full = np.tile(self.hold, (len(times), 1))
        full[:, self.columns] = chain
        # a joint move's last sample and the next move's first can share their time
        step = np.maximum(np.gradient(times), 1e-6)
        velocities = np.gradient(full, axis=0) / step[:, None]
        accelerations = np.gradient(velocities, axis=0) / step[:, None]
        report = self.checker.check(PoseSamples(times - times[0], full, velocities,
                                                accelerations))
        refused = report.refused
        if refused:
            first = min(refused, key=lambda f: f.time)
            sample = int(np.clip(np.searchsorted(times - times[0], first.time), 0,
                                 len(times) - 1))
            raise CheckViolation(first, sample,
                                 segments[sample] if segments is not None else None)
        return [f'{f.check} warning: {f.message}' for f in report.findings]
