"""
PNG figures for people: the kinematic tree of a robot, joint trajectories.

matplotlib with the Agg backend, imported lazily: nothing here is needed by the motion process.
"""

from pathlib import Path
from types import ModuleType
from typing import Mapping, Optional, Sequence, Tuple, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike

from sweetie_motion.model.robot_model import RobotModel

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_COLORS = ['tab:blue', 'tab:orange', 'tab:green', 'tab:red', 'tab:purple', 'tab:brown',
           'tab:pink', 'tab:olive', 'tab:cyan']


def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


def equal_axes(axes, points: np.ndarray) -> None:
    """Scale 3D axes alike around ``points`` [m] (n, 3), so that angles look right; label them."""
    centre = (points.max(axis=0) + points.min(axis=0)) / 2
    radius = max(float((points.max(axis=0) - points.min(axis=0)).max()) / 2, 0.05)
    axes.set_xlim(centre[0] - radius, centre[0] + radius)
    axes.set_ylim(centre[1] - radius, centre[1] + radius)
    axes.set_zlim(centre[2] - radius, centre[2] + radius)
    axes.set_xlabel('x [m]')
    axes.set_ylabel('y [m]')
    axes.set_zlabel('z [m]')


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
    corners = _draw_boxes(axes, model, tree, pose, chain_color, info_of)
    equal_axes(axes, np.array(list(positions.values()) + corners))
    axes.legend(loc='upper left', fontsize=7)
    axes.set_title(title or f'{tree.name}: kinematic tree (dotted: virtual joints)')


#: the faces of a box by the indices of UrdfBox.corners
_BOX_FACES = ((0, 1, 3, 2), (4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5))


def _draw_boxes(axes, model: RobotModel, tree, pose, chain_color, info_of) -> list:
    """Draw each link's collision boxes, light, in its chain's colour; return the corners."""
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    if not tree.boxes:
        return []
    placements = model.link_placements(pose)
    drawn = []
    for link, boxes in tree.boxes.items():
        joint = tree.parent_joint.get(link)
        info = info_of.get(joint.name) if joint is not None else None
        color = chain_color.get(info.chain, 'grey') if info else 'grey'
        for box in boxes:
            corners = box.corners(placements[link])
            axes.add_collection3d(Poly3DCollection(
                [[corners[i] for i in face] for face in _BOX_FACES], facecolor=color,
                edgecolor=color, linewidths=0.3, alpha=0.12))
            drawn.extend(corners)
    return drawn


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


def plot_joint_series(path: Union[str, Path], time: ArrayLike,
                      series: Mapping[str, Mapping[str, ArrayLike]], title: str,
                      ylabel: str = 'position [rad]',
                      keyframes: Optional[Mapping[str, Tuple[ArrayLike, ArrayLike]]] = None
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
    from sweetie_motion.trajectory.analysis import goal_motion
    motion = goal_motion(goal, interpolation)
    sampled = motion.sample(samples)
    series = {j: {'interpolated': sampled.position[:, k]} for k, j in enumerate(motion.joints)}
    keyframes = {j: (motion.times, motion.positions[:, k]) for k, j in enumerate(motion.joints)}
    grid = sampled.times
    return plot_joint_series(path, grid, series, title, keyframes=keyframes)


def _tool_path_figure(pyplot: ModuleType, p: np.ndarray, first: np.ndarray, joints: Sequence[str],
                      waypoints: Optional[np.ndarray], model: Optional[RobotModel],
                      title: str) -> 'Figure':
    """Return the figure of the tool's path in space: waypoints marked, the robot at the start."""
    figure = pyplot.figure(figsize=(8, 7))
    axes = figure.add_subplot(projection='3d')
    if model is not None:
        draw_kinematic_tree(axes, model, dict(zip(joints, first)), labels=False)
    axes.plot(p[:, 0], p[:, 1], p[:, 2], color='tab:red', linewidth=2, label='tool path')
    if waypoints is not None and len(waypoints):
        w = np.asarray(waypoints, dtype=float)
        axes.scatter(w[:, 0], w[:, 1], w[:, 2], color='black', s=20, label='waypoints')
        for k, point in enumerate(w, start=1):
            axes.text(*point, f' {k}', fontsize=8)
    equal_axes(axes, np.vstack([p] + ([np.asarray(waypoints)] if waypoints is not None
                                      else [])))
    axes.legend(loc='upper left', fontsize=8)
    axes.view_init(elev=25, azim=-60)
    axes.set_title(f'{title}: the tool path')
    return figure


def plot_cartesian_motion(directory: Union[str, Path], times: Sequence[float],
                          positions: np.ndarray, tool: np.ndarray, joints: Sequence[str],
                          waypoints: Optional[np.ndarray] = None,
                          model: Optional[RobotModel] = None,
                          title: str = 'Cartesian motion') -> list:
    """
    Write the four figures of a Cartesian motion, as the winding-line paper draws them.

    ``path_3d.png`` (the tool's path in space, waypoints marked, the robot at the start),
    ``tool.png`` (x, y, z and the path speed over time), ``joints.png`` (joint angles) and
    ``joint_velocities.png`` (joint velocities).

    :param times: [s], shape (n,); :param positions: joint positions [rad], (n, joints);
    :param tool: tool positions [m], (n, 3); :param waypoints: [m], (k, 3) or None.
    :param model: draw the robot at the first sample (optional).
    :return: the paths written.
    """
    pyplot = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    t = np.asarray(times, dtype=float)
    q = np.asarray(positions, dtype=float)
    p = np.asarray(tool, dtype=float)
    written = []

    written.append(_save(_tool_path_figure(pyplot, p, q[0], joints, waypoints, model, title),
                         directory / 'path_3d.png', pyplot))

    speed = np.linalg.norm(np.gradient(p, t, axis=0), axis=1) if len(t) > 1 else np.zeros(1)
    figure, (top, bottom) = pyplot.subplots(2, 1, figsize=(9, 6), sharex=True)
    for k, axis in enumerate('xyz'):
        top.plot(t, p[:, k] * 1e3, label=axis, color=_COLORS[k])
    top.set_ylabel('tool position [mm]')
    top.legend(fontsize=8)
    bottom.plot(t, speed * 1e3, color='black')
    bottom.set_ylabel('path speed [mm/s]')
    bottom.set_xlabel('time [s]')
    top.set_title(f'{title}: the tool over time')
    written.append(_save(figure, directory / 'tool.png', pyplot))

    velocity = np.gradient(q, t, axis=0) if len(t) > 1 else np.zeros_like(q)
    for name, values, unit, what in (
            ('joints.png', np.degrees(q), 'joint angle [deg]', 'joint angles'),
            ('joint_velocities.png', np.degrees(velocity), 'joint velocity [deg/s]',
             'joint velocities')):
        figure, axes = pyplot.subplots(figsize=(9, 5))
        for j, joint in enumerate(joints):
            axes.plot(t, values[:, j], label=joint, color=_COLORS[j % len(_COLORS)])
        axes.set_xlabel('time [s]')
        axes.set_ylabel(unit)
        axes.legend(fontsize=8, ncol=3)
        axes.grid(alpha=0.3)
        axes.set_title(f'{title}: {what}')
        written.append(_save(figure, directory / name, pyplot))
    return written


def _save(figure, path: Path, pyplot) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


def plot_identification(path: Union[str, Path], history: Sequence[tuple],
                        threshold: float, servos: int = 6) -> Path:
    """
    Draw the convergence of a servo identification: alpha over time and the prediction error.

    :param history: (time [s], servo names, alpha of each servo flattened (4 each),
        RMS position prediction error of each servo [rad]) in time order.
    :param threshold: the largest accepted error [rad] (a dashed line).
    :param servos: how many servos to draw (the first in name order).
    """
    pyplot = _pyplot()
    names = list(history[-1][1])[:servos]
    t = np.array([h[0] for h in history])
    figure, (top, bottom) = pyplot.subplots(2, 1, figsize=(10, 7), sharex=True)
    for k, name in enumerate(names):
        color = _COLORS[k % len(_COLORS)]
        rows = []
        errors = []
        for _, present, alpha, error in history:
            present = list(present)
            if name in present:
                i = present.index(name)
                rows.append(alpha[4 * i:4 * i + 4])
                errors.append(error[i])
            else:
                rows.append([np.nan] * 4)
                errors.append(np.nan)
        table = np.array(rows, dtype=float)
        final = table[-1]
        for a in range(4):
            scale = final[a] if abs(final[a]) > 1e-12 else 1.0
            top.plot(t, table[:, a] / scale, color=color, alpha=0.4 + 0.15 * a,
                     label=name if a == 0 else None)
        bottom.plot(t, errors, color=color, label=name)
    top.set_ylabel('alpha / final alpha')
    top.set_ylim(0.0, 2.0)
    top.legend(fontsize=8, ncol=3)
    top.set_title('servo identification: the four alpha of each servo converging')
    bottom.axhline(threshold, color='black', linestyle='--', label='threshold')
    bottom.set_ylabel('prediction error [rad]')
    bottom.set_xlabel('time [s]')
    bottom.set_yscale('log')
    bottom.legend(fontsize=8, ncol=3)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(figure, path, pyplot)
