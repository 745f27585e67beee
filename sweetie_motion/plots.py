"""
PNG figures for people: the kinematic tree of a robot, joint trajectories.

matplotlib with the Agg backend, imported lazily: nothing here is needed by the motion process.
"""

from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from sweetie_motion.model.robot_model import RobotModel

_COLORS = ['tab:blue', 'tab:orange', 'tab:green', 'tab:red', 'tab:purple', 'tab:brown',
           'tab:pink', 'tab:olive', 'tab:cyan']


def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


def draw_kinematic_tree(axes, model: RobotModel, pose: Optional[Mapping[str, float]] = None,
                        title: Optional[str] = None, labels: bool = True) -> None:
    """
    Draw the robot's link tree into 3D matplotlib axes: chains in colour, virtual joints dotted.

    :param pose: joint name -> position [rad]; joints not given are at zero.
    """
    tree = model.urdf_tree()
    positions = model.link_positions(pose)
    chain_color = {chain: _COLORS[i % len(_COLORS)]
                   for i, chain in enumerate(model.list_chains())}
    info_of = {name: model.get_joint_info(name) for name in model.list_all_joints()}
    drawn = set()
    for joint in tree.joints.values():
        if joint.parent not in positions or joint.child not in positions:
            continue
        info = info_of.get(joint.name)
        chain = info.chain if info else ''
        color = chain_color.get(chain, 'grey') if info else 'lightgrey'
        a, b = positions[joint.parent], positions[joint.child]
        label = chain if chain and chain not in drawn else None
        drawn.add(chain)
        axes.plot(*zip(a, b), color=color, linewidth=3 if info else 1,
                  linestyle=':' if info and info.virtual else '-', label=label)
        if info:
            axes.scatter(*b, color=color, s=12)
            if labels:
                axes.text(*b, f' {joint.name}', fontsize=6)
    points = np.array(list(positions.values()))
    centre = (points.max(axis=0) + points.min(axis=0)) / 2
    radius = max(float((points.max(axis=0) - points.min(axis=0)).max()) / 2, 0.05)
    axes.set_xlim(centre[0] - radius, centre[0] + radius)
    axes.set_ylim(centre[1] - radius, centre[1] + radius)
    axes.set_zlim(centre[2] - radius, centre[2] + radius)
    axes.set_xlabel('x [m]')
    axes.set_ylabel('y [m]')
    axes.set_zlabel('z [m]')
    axes.legend(loc='upper left', fontsize=7)
    axes.set_title(title or f'{tree.name}: kinematic tree (dotted: virtual joints)')


def plot_kinematic_tree(model: RobotModel, path: Union[str, Path],
                        pose: Optional[Mapping[str, float]] = None,
                        title: Optional[str] = None) -> Path:
    """
    Draw the robot's link tree in 3D into a PNG file.

    :param pose: joint name -> position [rad]; default the zero pose.
    :return: the path written.
    """
    pyplot = _pyplot()
    figure = pyplot.figure(figsize=(9, 7))
    draw_kinematic_tree(figure.add_subplot(projection='3d'), model, pose, title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


def plot_joint_series(path: Union[str, Path], time: Sequence[float],
                      series: Mapping[str, Mapping[str, Sequence[float]]], title: str,
                      ylabel: str = 'position [rad]',
                      keyframes: Optional[Mapping[str, Sequence[Sequence[float]]]] = None
                      ) -> Path:
    """
    Plot several curves per joint (e.g. reference and measured) in one PNG.

    :param time: sample times [s].
    :param series: joint -> {curve label -> values}.
    :param keyframes: joint -> (times, values) of keyframes to mark.
    """
    pyplot = _pyplot()
    joints = list(series)
    rows = max(1, len(joints))
    figure, axes_list = pyplot.subplots(rows, 1, figsize=(9, 1.8 * rows + 1), sharex=True,
                                        squeeze=False)
    for axes, joint in zip(axes_list[:, 0], joints):
        for i, (label, values) in enumerate(series[joint].items()):
            axes.plot(time, values, label=label, color=_COLORS[i % len(_COLORS)],
                      linestyle='-' if i == 0 else '--')
        if keyframes and joint in keyframes:
            kt, kv = keyframes[joint]
            axes.plot(kt, kv, 'o', color='black', markersize=4, label='keyframes')
        axes.set_ylabel(f'{joint}\n{ylabel}', fontsize=8)
        axes.grid(True, alpha=0.3)
    axes_list[0, 0].legend(loc='upper right', fontsize=8)
    axes_list[-1, 0].set_xlabel('time [s]')
    figure.suptitle(title)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return path


def plot_trajectory(goal, path: Union[str, Path], title: str = 'trajectory',
                    interpolation: str = 'akima', samples: int = 400) -> Path:
    """
    Plot each joint of a trajectory as the controller interpolates it: positions, keyframes.

    :param goal: a :class:`sweetie_motion.trajectory.goal.TrajectoryGoal`.
    """
    from sweetie_motion.trajectory.spline import build_spline
    joints = goal.joints()
    columns = [goal.joint_names.index(j) for j in joints]
    times = np.array([p.time for p in goal.points])
    positions = np.array([[p.positions[c] for c in columns] for p in goal.points])
    velocities = accelerations = None
    if goal.points and goal.points[0].velocities:
        velocities = np.array([[p.velocities[c] for c in columns] for p in goal.points])
        if goal.points[0].accelerations:
            accelerations = np.array([[p.accelerations[c] for c in columns]
                                      for p in goal.points])
    spline = build_spline(times, positions, velocities, accelerations, interpolation)
    grid = np.linspace(0.0, max(spline.duration, 1e-3), samples)
    sampled = np.array([spline.sample(t)[0] for t in grid])
    series = {j: {'interpolated': sampled[:, k]} for k, j in enumerate(joints)}
    keyframes = {j: (times, positions[:, k]) for k, j in enumerate(joints)}
    return plot_joint_series(path, grid, series, title, keyframes=keyframes)
