"""
What the checks found, pose by pose: the marks a robot view draws at a play head.

A :class:`CheckReport` says the worst of a motion; a view that scrubs through it wants each
moment: which links are closer than the margin, where the centre of mass is over which support
polygon. :class:`MotionMarks` keeps these series (computed once, after the check) and
:meth:`MotionMarks.at` gives one moment as :class:`PoseMarks`. Pure: no Qt, no rclpy.
"""

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple

import numpy as np

from sweetie_motion.checks.balance import ground_frame, Stance
from sweetie_motion.checks.motion import CheckReport, MotionChecker, PoseSamples


@dataclass(frozen=True)
class PoseMarks:
    """The checks at one moment of a motion, in the robot's base frame [m]."""

    #: links closer than the collision margin to another link
    touching: FrozenSet[str] = frozenset()
    #: the robot's centre of mass (3,), and its foot on the ground plane (3,); None: no legs
    com: Optional[np.ndarray] = None
    com_on_ground: Optional[np.ndarray] = None
    #: the corners of the support polygon (k, 3), in order around it (None: no legs)
    support: Optional[np.ndarray] = None
    #: how far inside the support polygon (grown by the feet) each point is [m]
    com_margin: Optional[float] = None
    zmp_margin: Optional[float] = None
    balance_margin: float = 0.0

    @property
    def balanced(self) -> bool:
        """Return whether the centre of mass and the zero-moment point keep the margin."""
        return all(m is None or m >= self.balance_margin
                   for m in (self.com_margin, self.zmp_margin))

    def describe(self) -> str:
        """Say it in a line ('' : nothing to say)."""
        parts = []
        for which, margin in (('CoM', self.com_margin), ('ZMP', self.zmp_margin)):
            if margin is not None:
                side = 'inside' if margin >= 0 else 'OUTSIDE'
                parts.append(f'{which} {abs(margin) * 1e3:.0f} mm {side}')
        if self.touching:
            parts.append('too close: ' + ', '.join(sorted(self.touching)))
        return '; '.join(parts)


@dataclass
class MotionMarks:
    """
    The checks of a motion pose by pose, to show any moment of it.

    :param times: the samples' times [s] from the motion's start.
    """

    times: np.ndarray
    stance: Optional[Stance] = None
    #: 'centre of mass' / 'zero-moment point' -> margin at each pose [m]
    depths: Dict[str, np.ndarray] = field(default_factory=dict)
    #: (link, link, closer than the margin at each pose) of the pairs that ever are
    touching: List[Tuple[str, str, np.ndarray]] = field(default_factory=list)
    balance_margin: float = 0.0

    @classmethod
    def of(cls, checker: MotionChecker, samples: PoseSamples,
           report: CheckReport) -> 'MotionMarks':
        """Return the marks of a motion ``checker`` checked into ``report``."""
        settings = checker.settings
        marks = cls(samples.times, report.stance, balance_margin=settings.balance_margin)
        if report.standing is not None:
            marks.depths = {'centre of mass': report.standing.com_margin,
                            'zero-moment point': report.standing.zmp_margin}
        collision = checker.collision
        if collision is not None:
            names = collision.pair_names()
            close = {(a.link_a, a.link_b) for a in report.collision or []
                     if a.distance < settings.collision_margin}
            for pair, (a, b) in enumerate(names):
                if (a, b) in close:
                    marks.touching.append((a, b, collision.below(
                        samples.positions, pair, settings.collision_margin)))
        return marks

    def at(self, time: float) -> PoseMarks:
        """Return the marks at ``time`` [s from the motion's start] (the nearest sample)."""
        if not len(self.times):
            return PoseMarks()
        row = int(np.clip(np.searchsorted(self.times, time), 0, len(self.times) - 1))
        if row > 0 and abs(self.times[row - 1] - time) < abs(self.times[row] - time):
            row -= 1
        touching = frozenset(link for a, b, flags in self.touching if flags[row]
                             for link in (a, b))
        stance = self.stance
        if stance is None:
            return PoseMarks(touching)
        com, origin, normal = stance.com[row], stance.origin[row], stance.normal[row]
        on_ground = com - float(np.dot(com - origin, normal)) * normal
        depths = {which: float(values[row]) for which, values in self.depths.items()}
        return PoseMarks(touching, com, on_ground,
                         support_polygon(stance.feet[row][stance.support[row]], normal),
                         depths.get('centre of mass'), depths.get('zero-moment point'),
                         self.balance_margin)


def support_polygon(feet: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """
    Return the convex hull of contact points (k, 3) seen along ``normal``, in order around it.

    One or two feet are returned as they are (a point, a segment).
    """
    feet = np.asarray(feet, dtype=float).reshape(-1, 3)
    if len(feet) < 3:
        return feet
    axes = ground_frame(np.asarray(normal, dtype=float).reshape(1, 3))[0]
    flat = feet @ axes[:2].T
    # Andrew's monotone chain over at most a handful of feet
    order = sorted(range(len(flat)), key=lambda k: (flat[k, 0], flat[k, 1]))

    def turn(o: int, a: int, b: int) -> float:
        return float((flat[a, 0] - flat[o, 0]) * (flat[b, 1] - flat[o, 1])
                     - (flat[a, 1] - flat[o, 1]) * (flat[b, 0] - flat[o, 0]))

    hull: List[int] = []
    for sweep in (order, order[::-1]):
        start = len(hull)
        for k in sweep:
            while len(hull) >= start + 2 and turn(hull[-2], hull[-1], k) <= 0:
                hull.pop()
            hull.append(k)
        hull.pop()
    return feet[hull]
