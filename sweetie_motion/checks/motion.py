"""
The three checks of a motion together, and what they found.

:class:`~sweetie_motion.model.check_settings.CheckSettings` (the ``checks:`` section of a robot
description) says what to run; :class:`MotionChecker` runs self-collision, balance and servo
load over a :class:`PoseSamples` and returns a :class:`CheckReport` whose findings say what,
where and when, each as a warning or a refusal.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, TYPE_CHECKING, Union

import numpy as np

from sweetie_motion.checks.balance import BalanceMargin, BalanceModel, Stance, support_columns
from sweetie_motion.checks.collision import CollisionModel, Obstacle, PairApproach
from sweetie_motion.checks.findings import (
    balance_findings, balance_margins, drag_findings, EndPose, Finding, load_findings,
)
from sweetie_motion.checks.load import JointLoad, LoadModel
from sweetie_motion.checks.meshes import folder_meshes, LinkMesh
from sweetie_motion.checks.robot import CheckRobot
from sweetie_motion.checks.stance import Footing, sole_points, Standing
from sweetie_motion.model.check_settings import CheckSettings
from sweetie_motion.model.robot_model import RobotModel

if TYPE_CHECKING:
    from sweetie_motion.trajectory.spline import JointSpline

#: the most poses a motion is checked at: a longer motion is sampled less often (12 000 poses
#: are 2 minutes at 100 Hz, about 0.8 s and 200 MB of arrays; bounded by count, not by time)
MAX_POSES = 12000


@dataclass
class PoseSamples:
    """
    A motion sampled uniformly in time, every joint of the robot in every row.

    :param flags: the motion's support flags: leg -> (keyframe times, values), each holding
        until the next keyframe (legs without flags get the default support set).
    """

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    flags: Dict[str, Tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def from_spline(cls, spline: 'JointSpline', columns: Union[Sequence[int], np.ndarray],
                    hold: np.ndarray, rate: float,
                    flags: Optional[dict] = None) -> 'PoseSamples':
        """
        Sample ``spline`` (a JointSpline of the joints in ``columns``) at ``rate`` [Hz].

        The other joints hold their values in ``hold`` (a full pose). At most
        :data:`MAX_POSES` poses: a longer motion is sampled less often.
        """
        count = min(MAX_POSES, max(2, int(np.ceil(spline.duration * rate)) + 1))
        times = np.linspace(0.0, spline.duration, count)
        p, v, a = spline.sample_many(times)
        positions = np.tile(np.asarray(hold, dtype=float), (count, 1))
        velocities = np.zeros_like(positions)
        accelerations = np.zeros_like(positions)
        positions[:, columns], velocities[:, columns], accelerations[:, columns] = p, v, a
        return cls(times, positions, velocities, accelerations, dict(flags or {}))


@dataclass
class CheckReport:
    """What the checks found in one motion (None: that check was off or does not apply)."""

    collision: Optional[List[PairApproach]] = None
    balance: Optional[List[BalanceMargin]] = None
    load: Optional[List[JointLoad]] = None
    findings: List[Finding] = field(default_factory=list)
    #: which legs supported at each pose (poses, legs), None for a robot without legs
    support: Optional[np.ndarray] = None
    #: where the feet, the masses and the ground were at each pose (None: no legs)
    stance: Optional[Stance] = None
    #: how the poses stand: the faces, the margins, the tip-over (None: no legs)
    standing: Optional[Standing] = None

    @property
    def refused(self) -> List[Finding]:
        """Return the findings that refuse the motion."""
        return [f for f in self.findings if f.severity == 'refuse']

    def summary(self) -> Dict[str, Optional[float]]:
        """Return the worst figures: collision distance [m], balance margins [m], load [%]."""
        balance = {b.which: b.margin for b in self.balance or []}
        return {'distance': self.collision[0].distance if self.collision else None,
                'com_margin': balance.get('centre of mass'),
                'zmp_margin': balance.get('zero-moment point'),
                'load': self.load[0].percent if self.load else None}

    def describe(self) -> str:
        """Return the findings as one line ('' : none)."""
        return '; '.join(f'{f.check}: {f.message}' for f in self.findings)


class MotionChecker:
    """
    Self-collision, balance and servo load of sampled motions of one robot.

    :param robot: the robot's models (its joints in the motion's column order).
    :param settings: what to check and how strictly.
    :param legs: leg (chain) -> its contact link; empty: no balance check (an arm).
    :param ratings: joint -> (rated, stall) torque [N*m] of its servo.
    :param srdf_xml: pairs that may touch (MoveIt's ``disable_collisions``).
    :param obstacles: fixed shapes the links must keep clear of (forbidden zones).
    :param meshes: link -> its collision mesh (in place of its URDF shapes).
    """

    def __init__(self, robot: CheckRobot, settings: CheckSettings,
                 legs: Dict[str, str], ratings: Dict[str, tuple], srdf_xml: str = '',
                 obstacles: Sequence[Obstacle] = (),
                 meshes: Optional[Mapping[str, LinkMesh]] = None) -> None:
        self.settings = settings
        self.robot = robot
        self.legs = list(legs)
        self.collision = CollisionModel(self.robot, srdf_xml, settings.allowed, obstacles,
                                        meshes) if settings.collision != 'off' else None
        self.balance = BalanceModel(self.robot, legs, settings.foot_radius) if legs else None
        self.footing = Footing(self.balance, sole_points(
            robot, legs, dict(meshes or {}), settings.foot_radius),
            settings.tilt, settings.balance_margin) if self.balance is not None else None
        self.load = LoadModel(self.robot, ratings, legs) if settings.load != 'off' else None

    def standing(self, samples: PoseSamples) -> Optional[Standing]:
        """Return how the motion's poses stand on the feet (None: a robot without legs)."""
        if self.footing is None:
            return None
        flags = None
        if samples.flags:
            flags = support_columns(self.legs, samples.flags, samples.times,
                                    np.ones((len(samples.times), len(self.legs)), dtype=bool))
        return self.footing.judge(samples.positions, samples.times, flags)

    def support(self, samples: PoseSamples) -> Optional[np.ndarray]:
        """Return which legs support at each pose (poses, legs); None for a robot without."""
        standing = self.standing(samples)
        if standing is None:
            return None
        return support_columns(self.legs, samples.flags, samples.times,
                               standing.rest.touching)

    def check(self, samples: PoseSamples) -> CheckReport:
        """Run the checks that are on; return what they found."""
        report = CheckReport()
        standing = report.standing = self.standing(samples)
        if standing is not None:
            rest = standing.rest
            report.support = support_columns(self.legs, samples.flags, samples.times,
                                             rest.touching)
            report.stance = Stance(rest.contacts, standing.centres, standing.com, rest.origin,
                                   rest.normal, rest.touching)
        if self.collision is not None:
            self._collision(samples, report)
        if standing is not None and self.settings.balance != 'off':
            report.balance = balance_margins(standing, self.legs)
            report.findings += balance_findings(standing, self.legs, self.settings)
        if self.load is not None:
            self._load(samples, standing, report)
        report.findings.sort(key=lambda f: (f.severity != 'refuse', f.time))
        return report

    def _collision(self, samples: PoseSamples, report: CheckReport) -> None:
        settings = self.settings
        assert self.collision is not None
        report.collision = self.collision.closest(samples.positions, samples.times,
                                                  settings.collision_margin)
        # links that touch collide (the check's mode); closer than the margin, a warning
        touching = [a for a in report.collision if a.distance <= 0.0]
        close = [a for a in report.collision if 0.0 < a.distance < settings.collision_margin]
        # a pair already in contact in the first pose (where the robot is: live control put it
        # there) is no reason to refuse: refusing would leave the robot no way out of it
        at_start = self.collision.touching_pairs(samples.positions[0]) if touching else set()
        trapped = [a for a in touching if (a.link_a, a.link_b) in at_start]
        touching = [a for a in touching if (a.link_a, a.link_b) not in at_start]
        for severity, near in ((settings.collision, touching), ('warn', close)):
            if near:
                first = near[0]   # the deepest (the list is closest first)
                report.findings.append(Finding(
                    'collision', severity, first.time,
                    f'{first.describe()} (margin {settings.collision_margin * 1e3:.1f} mm)'
                    + (f'; {len(near) - 1} more pair(s)' if len(near) > 1 else '')))
        if trapped:
            names = ', '.join(f'{a.link_a} and {a.link_b}' for a in trapped)
            report.findings.append(Finding(
                'collision', 'warn', float(samples.times[0]),
                f'{names} already touch in the start pose: the motion may only move them apart'))

    def _load(self, samples: PoseSamples, standing: Optional[Standing],
              report: CheckReport) -> None:
        """Find the loads of the poses that stand, carried by the feet they stand on."""
        settings = self.settings
        assert self.load is not None
        if standing is None or standing.held:
            # an arm on its base, a pony held on a stand: the base carries
            torques = self.load.torques(samples.positions, samples.times)
            valid = None
        else:
            rest = standing.rest
            # the servos give centimetres under the body's weight: a hoof a little above the
            # floor (one the body can rock onto) carries its share too
            carrying = np.asarray(rest.rock.any(axis=2))
            torques = self.load.torques(samples.positions, samples.times, carrying,
                                        rest.normal, rest.contacts)
            valid = standing.stands
        report.load = self.load.heaviest(torques, samples.times, settings.stall_share, valid)
        report.findings += load_findings(report.load, settings)
        forces, lever = self.load.last_forces, self.load.last_lever
        if standing is not None and not standing.held and forces is not None \
                and lever is not None:
            end = EndPose(lever[-1], forces[-1], torques[-1],
                          self.load.stall, standing.rest.normal[-1], settings.friction,
                          self.load.joints)
            report.findings += drag_findings(standing, self.legs, settings, end)


def servo_ratings(robot: CheckRobot, settings: CheckSettings) -> Dict[str, tuple]:
    """
    Return joint -> (rated, stall) torque [N*m] of the servo that drives it.

    From the servo config the settings name (each servo type's datasheet figures), else from
    the URDF's effort limits taken as stall torques (rated: ``rated_fraction`` of them).
    """
    if settings.servos:
        from sweetie_motion.servo.driver.config import load_bus_config_file
        config = load_bus_config_file(settings.servos)
        return {servo.joint: (servo.kind.rated_torque, servo.kind.stall_torque)
                for bus in config.buses for servo in bus.servos}
    model = robot.model
    ratings = {}
    for name, idx_v in robot.joint_columns().items():
        stall = float(model.effortLimit[idx_v])
        if stall > 0:
            ratings[name] = (stall * settings.rated_fraction, stall)
    return ratings


def checker_for(model: RobotModel, settings: Optional[CheckSettings] = None,
                obstacles: Sequence[Obstacle] = ()) -> MotionChecker:
    """
    Return the checker of a configured :class:`RobotModel` (its description's ``checks:``).

    Legs are the chains with a ``contact`` property (the link a leg stands on).

    :param obstacles: fixed shapes the links must keep clear of (a chain's forbidden zones,
        :func:`~sweetie_motion.checks.collision.zone_obstacles`).
    """
    settings = settings or getattr(model, 'check_settings', None) or CheckSettings()
    legs = {chain: model.get_chain_property(chain, 'contact')
            for chain in model.list_chains() if model.get_chain_property(chain, 'contact')}
    srdf = Path(settings.srdf).read_text(encoding='utf-8') if settings.srdf else ''
    joints = model.list_all_joints()
    robot = CheckRobot(model.urdf_document(), joints)
    meshes = folder_meshes(settings.meshes, [f.name for f in robot.model.frames]) \
        if settings.meshes else {}
    return MotionChecker(robot, settings, legs, servo_ratings(robot, settings), srdf, obstacles,
                         meshes)
