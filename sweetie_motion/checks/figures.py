"""
A checked motion drawn over time: the closest links, the balance margins, the heaviest load.

matplotlib with the Agg backend (lazily, through :mod:`sweetie_motion.plots`).
"""

from pathlib import Path
from typing import Union

import numpy as np

from sweetie_motion.checks.library import CheckedMotion
from sweetie_motion.checks.motion import MotionChecker


def plot_checked(checker: MotionChecker, motion: CheckedMotion,
                 path: Union[str, Path]) -> Path:
    """Draw what the checks found in ``motion`` over its time; return the PNG's path."""
    from sweetie_motion.plots import _pyplot
    pyplot = _pyplot()
    samples, report, settings = motion.samples, motion.report, checker.settings
    if samples is None:
        raise ValueError(f'{motion.name}: not checked (refused by the controller)')
    times = samples.times
    figure, axes = pyplot.subplots(3, 1, figsize=(9, 8), sharex=True)
    figure.suptitle(f'{motion.name}: {motion.verdict}')
    collision = checker.collision
    if collision is not None and report.collision:
        names = collision.pair_names()
        configurations = checker.robot.configurations(samples.positions)
        for approach in report.collision[:3]:
            pair = names.index((approach.link_a, approach.link_b))
            distance = [collision.exact_configuration(q, pair) for q in configurations]
            axes[0].plot(times, np.array(distance) * 1e3,
                         label=f'{approach.link_a} - {approach.link_b}')
        axes[0].axhline(settings.collision_margin * 1e3, color='tab:red', linestyle='--',
                        label='margin')
        axes[0].legend(fontsize='small')
    axes[0].set_ylabel('closest links [mm]')
    standing = report.standing
    if standing is not None:
        for which, margin in (('centre of mass', standing.com_margin),
                              ('zero-moment point', standing.zmp_margin),
                              ('zero-moment point, rocking', standing.rocking)):
            axes[1].plot(times, margin * 1e3, label=which)
        axes[1].axhline(settings.balance_margin * 1e3, color='tab:red', linestyle='--',
                        label='margin')
        axes[1].legend(fontsize='small')
    axes[1].set_ylabel('inside support [mm]')
    if checker.load is not None and report.load:
        load = checker.load
        rest = None if standing is None else standing.rest
        torques = load.torques(samples.positions, times,
                               None if rest is None else np.asarray(rest.rock.any(axis=2)),
                               None if rest is None else rest.normal,
                               None if rest is None else rest.contacts)
        share = 100.0 * np.abs(torques) / np.maximum(load.stall, 1e-9)
        for joint in [entry.joint for entry in report.load[:3]]:
            axes[2].plot(times, share[:, load.joints.index(joint)], label=joint)
        axes[2].axhline(100.0 * settings.stall_share, color='tab:red', linestyle='--',
                        label='stall')
        axes[2].legend(fontsize='small')
    axes[2].set_ylabel('load [% stall]')
    axes[2].set_xlabel('time [s]')
    for finding in report.findings:
        for axis in axes:
            axis.axvline(finding.time, color='grey', linewidth=0.8)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path
