"""
The checks over a library of stored motions: what each check found, as a table.

:class:`CheckedMotion` is one stored motion checked as the trajectory controller plays it (the
planning is the controller's: :mod:`sweetie_motion.controllers.played_checks`). Pure: no rclpy.
"""

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from sweetie_motion.checks.motion import CheckReport, PoseSamples
from sweetie_motion.model.report import table


@dataclass
class CheckedMotion:
    """
    A stored motion, the samples the checks ran on, and what they found.

    :param refused: why the controller refuses to play it ('' : it plays; then the samples
        and report are the checks' of what it plays).
    :param notes: what the controller's planning changed (a retiming, a longer approach).
    """

    name: str
    samples: Optional[PoseSamples]
    report: CheckReport
    refused: str = ''
    notes: Tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        """Return 'REFUSED' (by the controller), 'REFUSE' (by the checks), 'warn' or 'ok'."""
        if self.refused:
            return 'REFUSED'
        if self.report.refused:
            return 'REFUSE'
        return 'warn' if self.report.findings else 'ok'


def library_table(checked: Sequence[CheckedMotion]) -> str:
    """Return the table of a library: the worst figure of each check per motion."""
    def mm(value: Optional[float]) -> str:
        return '-' if value is None else f'{value * 1e3:.1f}'
    rows: List[List[str]] = []
    for motion in checked:
        if motion.samples is None:
            rows.append([motion.name, '-', '-', '-', '-', '-', '-', motion.verdict])
            continue
        summary = motion.report.summary()
        heaviest = motion.report.load[0] if motion.report.load else None
        held = '-' if heaviest is None else (
            'to the end' if heaviest.to_end else f'{heaviest.held:.2f}')
        rows.append([motion.name, f'{motion.samples.times[-1]:.2f}', mm(summary['distance']),
                     mm(summary['com_margin']), mm(summary['zmp_margin']),
                     '-' if heaviest is None else
                     f'{100 * heaviest.of_stall:.0f} ({heaviest.joint})', held, motion.verdict])
    return table(rows, ['motion', 'seconds played', 'closest links [mm]', 'CoM margin [mm]',
                        'ZMP margin [mm]', 'peak load [% stall]', 'held at stall [s]',
                        'verdict'])
