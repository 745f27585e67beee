"""
What the checks found, in words: a finding names what, where and when, and how bad it is.

A clear harm (a fall, a servo held at its stall torque past its overload time) takes its
check's mode (``refuse`` for the pony); a lesser one (a rock onto a hoof the motion lifts, a
servo that touches its stall torque for a moment) always only warns. Pure: numpy.
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from sweetie_motion.checks.balance import BalanceMargin
from sweetie_motion.checks.load import JointLoad
from sweetie_motion.checks.stance import Standing
from sweetie_motion.model.check_settings import CheckSettings

#: a rotation about a support's edge this large, short of a fall, is said as a rock [rad]
ROCK = 0.05
#: a rest on a foot the flags lift this long (or a planned stance left this far, as long) is
#: said [s]
LASTING = 0.1
#: a hoof pulled along the floor this far while it stands on it slips [m] (the legs' servos
#: give a few millimetres under the floor's friction)
DRAG = 0.02
#: a drag this far is more than the leg's servos give at their stall torque: the foot stays and a
#: servo holds stall [m]. Shorter, they give (stall / stiffness, about 0.12 rad a servo, 12-18 mm
#: at the hoof each) or the foot slides: a one-leg goal of MoveIt's dragging 26 mm slides 24 mm
#: in the physics with no servo at stall; the greeting's 74 mm held joint12 at stall
HELD_DRAG = 0.04


@dataclass(frozen=True)
class Finding:
    """One thing a check found: 'warn' or 'refuse', what and when, in words."""

    check: str       #: 'collision', 'balance' or 'load'
    severity: str    #: 'warn' or 'refuse'
    time: float      #: [s]
    message: str


def _legs(legs: Sequence[str], row: np.ndarray) -> str:
    return ', '.join(leg for leg, on in zip(legs, row) if on) or 'none'


def balance_margins(standing: Standing, legs: Sequence[str]) -> List[BalanceMargin]:
    """Return the least margin of the centre of mass and of the zero-moment point."""
    out = []
    for which, margin in (('centre of mass', standing.com_margin),
                          ('zero-moment point', standing.zmp_margin)):
        row = int(np.argmin(margin))
        support = tuple(leg for leg, on in zip(legs, standing.rest.touching[row]) if on)
        out.append(BalanceMargin(which, float(margin[row]), float(standing.times[row]),
                                 support))
    return out


def balance_findings(standing: Standing, legs: Sequence[str],
                     settings: CheckSettings) -> List[Finding]:
    """Return the balance findings: a fall (the mode's severity), a rock, a lifted leg (warn)."""
    if standing.held:
        return []   # no leg supports: the body is held (on a stand), nothing to balance on
    times, found = standing.times, []
    step = float(times[1] - times[0]) if len(times) > 1 else 0.0
    need = max(1, int(round(LASTING / step))) if step > 0 else 1
    if standing.fall is not None:
        began, down = standing.fall
        # the figures of the tip: the least margins from its start on (the spare included)
        zmp = float(standing.rocking[began:].min()) - settings.balance_margin
        com = float(standing.com_margin[began:].min())
        after = ' (after the motion, in its last pose)' if down > times[-1] else ''
        found.append(Finding('balance', settings.balance, float(times[began]), (
            f'tips over from t = {times[began]:.2f} s: the zero-moment point comes within '
            f'{settings.balance_margin * 1e3:.0f} mm of the edge of the hooves it stands or '
            f'can rock on ({_legs(legs, standing.rest.touching[began])}) or beyond, by '
            f'{-zmp * 1e3:.1f} mm (the centre of mass {com * 1e3:.1f} mm inside); the body has '
            f'turned {np.degrees(settings.tilt):.0f} deg about that edge by t = {down:.2f} s'
            f'{after}')))
    off_plan = _first_run(standing.planned > settings.tilt, need)
    if off_plan is not None:
        found.append(Finding('balance', settings.balance, float(times[off_plan]), (
            f'falls off its planned stance at t = {times[off_plan]:.2f} s: it rests on '
            f'{_legs(legs, standing.rest.touching[off_plan])}, tilted '
            f'{np.degrees(standing.planned[off_plan]):.0f} deg from the stance of the legs it '
            'flags supporting')))
    lifted = _first_run(np.asarray(standing.lifted.any(axis=1)), need)
    if lifted is not None and off_plan is None:
        found.append(Finding('balance', 'warn', float(times[lifted]), (
            f'rocks onto {_legs(legs, standing.lifted[lifted])} (flagged lifted) at t = '
            f'{times[lifted]:.2f} s, tilting {np.degrees(standing.planned[lifted]):.1f} deg '
            'from its planned stance')))
    if standing.fall is None and standing.theta.max() > ROCK:
        row = int(np.argmax(standing.theta > 0))
        found.append(Finding('balance', 'warn', float(times[row]), (
            f'rocks at t = {times[row]:.2f} s: the zero-moment point leaves the support of '
            f'{_legs(legs, standing.rest.touching[row])}, the body turns up to '
            f'{np.degrees(standing.theta.max()):.1f} deg about its edge and settles')))
    return found


def _first_run(flags: np.ndarray, length: int) -> Optional[int]:
    """Return the first row of the first run of at least ``length`` true values, or None."""
    padded = np.concatenate(([False], np.asarray(flags, dtype=bool), [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    for start, end in zip(edges[::2], edges[1::2]):
        if end - start >= length:
            return int(start)
    return None


def load_findings(loads: Sequence[JointLoad], settings: CheckSettings) -> List[Finding]:
    """Return the load findings: a held stall (the mode's severity), a peak at stall (warn)."""
    held = [load for load in loads if load.to_end or load.held > settings.overload_time]
    if held:
        first = held[0]
        more = f'; {len(held) - 1} more servo(s)' if len(held) > 1 else ''
        return [Finding('load', settings.load, first.held_from,
                        f'{first.describe()}: past its overload time '
                        f'({settings.overload_time:.2f} s){more}')]
    peaks = [load for load in loads if load.held > 0]
    if peaks:
        first = max(peaks, key=lambda load: load.held)
        return [Finding('load', 'warn', first.held_from, f'{first.describe()}, under its '
                        f'overload time ({settings.overload_time:.2f} s)')]
    return []


@dataclass(frozen=True)
class EndPose:
    """
    The robot in a motion's last pose, which it holds after the motion.

    :param lever: (joints, legs, 3) how a foot's force turns each loaded joint [m].
    :param forces: (legs, 3) the feet's forces [N]; :param torques: (joints,) [N*m].
    :param stall: (joints,) the servos' stall torques [N*m]; :param up: (3,) the vertical.
    :param friction: the floor's friction against a hoof [-].
    :param joints: the loaded joints' names.
    """

    lever: np.ndarray
    forces: np.ndarray
    torques: np.ndarray
    stall: np.ndarray
    up: np.ndarray
    friction: float
    joints: Sequence[str] = ()

    def strained(self, leg: int, direction: np.ndarray) -> 'tuple[float, float, str]':
        """
        Return (the friction that holds the foot, the most its servos can pull it, the joint).

        The most: along ``direction``, the force at which the first of the leg's servos
        reaches its stall torque on top of what it already holds [N].
        """
        normal = max(float(self.forces[leg] @ self.up), 0.0)
        turns = np.abs(self.lever[:, leg] @ direction)
        room = np.maximum(self.stall - np.abs(self.torques), 0.0)
        moved = turns > 1e-6
        if not moved.any():
            return self.friction * normal, np.inf, ''
        limits = np.where(moved, room / np.maximum(turns, 1e-12), np.inf)
        joint = int(np.argmin(limits))
        return self.friction * normal, float(limits[joint]), str(self.joints[joint])


def drag_findings(standing: Standing, legs: Sequence[str], settings: CheckSettings,
                  end: EndPose) -> List[Finding]:
    """
    Return the hooves the motion drags along the floor while they stand on it.

    A foot on the floor stays where it is unless pulled past the floor's friction: while two
    feet stand, the distance between them may not change. A motion that ends with it changed
    by more than :data:`DRAG` since both came down drags the foot that came down last. Where its
    leg's servos can pull harder than the floor holds it, it slips (a warning); where the
    floor holds it harder than they can pull and the drag is longer than the servos give
    (:data:`HELD_DRAG`), the foot stays and the servo that gives first is left at its stall
    torque in the last pose, after the motion: a held load (the load check's mode; the physics:
    the greeting's joint12 at stall on a hoof that came down early). Shorter, a warning.
    """
    times, touching, anchors = standing.times, standing.rest.touching, standing.anchors
    if len(times) < 2:
        return []
    starts = {leg: _stretch_start(touching[:, leg]) for leg in range(len(legs))
              if touching[-1, leg]}
    found = []
    for leg, start in starts.items():
        worst, other = 0.0, -1
        for k, begun in starts.items():
            # a pair's drag belongs to the foot that came down last
            if k == leg or begun > start or (begun == start and k > leg):
                continue
            apart = np.linalg.norm(anchors[start:, leg] - anchors[start:, k], axis=1)
            change = abs(float(apart[-1] - apart[0]))   # what is left at the end
            if change > worst:
                worst, other = change, k
        if worst <= DRAG:
            continue
        direction = anchors[-1, leg] - anchors[-1, other]
        direction -= (direction @ end.up) * end.up
        direction /= max(float(np.linalg.norm(direction)), 1e-12)
        held, pull, joint = end.strained(leg, direction)
        what = (f'the hoof of {legs[leg]} comes down at t = {times[start]:.2f} s and is '
                f"dragged {worst * 1e3:.0f} mm along the floor (against {legs[other]}'s) to "
                'the end')
        if held > pull and worst > HELD_DRAG:
            found.append(Finding('load', settings.load, float(times[start]), (
                f'{what}: the floor holds it ({held:.1f} N) harder than its servos can pull '
                f'({pull:.1f} N), so it stays and {joint} holds its '
                'stall torque in the last pose, after the motion')))
        elif held > pull:
            found.append(Finding('load', 'warn', float(times[start]), (
                f'{what}: its servos give or it slips (the floor holds it with {held:.1f} N, '
                f'they pull up to {pull:.1f} N)')))
        else:
            found.append(Finding('load', 'warn', float(times[start]), (
                f'{what}: it slips (its servos pull up to {pull:.1f} N, the floor holds '
                f'{held:.1f} N)')))
    return found


def _stretch_start(flags: np.ndarray) -> int:
    """Return the first row of the run of true values that ends the array."""
    off = np.flatnonzero(~np.asarray(flags, dtype=bool))
    return int(off[-1]) + 1 if len(off) else 0
