"""
A simulated motion drawn over time: the body's tilt, the heaviest servos, the feet.

matplotlib with the Agg backend (lazily, through :mod:`sweetie_motion.plots`); the fall, when
there is one, is a red line on every panel.
"""

from pathlib import Path
from typing import Union

import numpy as np

from sweetie_motion.physics.motion import SimulatedMotion


def verdict(motion: SimulatedMotion) -> str:
    """Return 'FALLS at t = …', 'OVERLOAD …' or 'stays up'."""
    fall = motion.fall
    if fall is not None:
        return f'FALLS at t = {fall:.2f} s'
    held = [(servo, run) for servo, run in zip(motion.servos, motion.stall_runs())
            if run[0] > motion.overload_time]
    if held:
        servo, (seconds, _) = max(held, key=lambda item: item[1][0])
        return f'OVERLOAD {servo} {seconds:.2f} s at stall'
    return 'stays up'


def plot_simulated(motion: SimulatedMotion, path: Union[str, Path]) -> Path:
    """Draw what happened in ``motion`` over its time; return the PNG's path."""
    from sweetie_motion.plots import _pyplot
    pyplot = _pyplot()
    times = motion.times
    figure, axes = pyplot.subplots(4, 1, figsize=(9, 10), sharex=True)
    figure.suptitle(f'{motion.name} on the floor (physics): {verdict(motion)}')
    axes[0].plot(times, np.degrees(motion.tilt), label='tilt from the vertical')
    axes[0].plot(times, np.degrees(motion.deviation), label='beyond the planned stance')
    axes[0].axhline(np.degrees(motion.settings.fall_tilt), color='tab:red', linestyle='--',
                    label='fall')
    axes[0].set_ylabel('body [deg]')
    axes[0].legend(fontsize='small')
    axes[1].plot(times, motion.height * 1e3, label='base height')
    axes[1].plot(times, motion.planned_height * 1e3, linestyle=':', label='as planned')
    axes[1].set_ylabel('height [mm]')
    axes[1].legend(fontsize='small')
    share = np.abs(motion.torque) / motion.stall[None, :]
    for column in np.argsort(-share.max(axis=0))[:3]:
        axes[2].plot(times, share[:, column] * 100.0, label=motion.servos[column])
    axes[2].axhline(motion.settings.stall_share * 100.0, color='tab:red', linestyle='--',
                    label='stall')
    axes[2].set_ylabel('torque [% stall]')
    axes[2].legend(fontsize='small')
    for leg, name in enumerate(motion.legs):
        way = np.linalg.norm(motion.feet[:, leg, :2] - motion.feet[0, leg, :2], axis=1)
        line = axes[3].plot(times, way * 1e3, label=name)[0]
        free = motion.support[:, leg] & ~motion.on_floor[:, leg]
        if free.any():
            axes[3].plot(times[free], way[free] * 1e3, 'x', color=line.get_color(),
                         markersize=3)
    axes[3].set_ylabel('foot moved [mm]\n(x: off the floor\nwhile supporting)')
    axes[3].set_xlabel('time from the start of the motion [s]')
    if motion.legs:
        axes[3].legend(fontsize='small')
    for axis in axes:
        axis.axvline(motion.duration, color='grey', linewidth=0.8)
        if motion.fall is not None:
            axis.axvline(motion.fall, color='tab:red', linewidth=1.5)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return path
