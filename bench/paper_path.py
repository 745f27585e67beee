#!/usr/bin/env python3
"""
The winding-line paper's test path (seed 004, R-CART-4), planned as the paper and as we run it.

    .venv/bin/python bench/paper_path.py [--out artifacts/paper]

Plans the 8 waypoints of config/paths/paper_path.yaml (world frame, mm and ZYZ degrees) on the
winding arm:
- as the paper does (one trapezoidal profile along the path, no limit on the blends: KDL's
  Path_RoundedComposite with VelocityProfile_Trap), the Cartesian samples only, to compare
  segments and 10 ms samples with its figure 8;
- the same profile kept within the joint limits by the package's planner (it must slow down:
  the 5 mm hook corners at full speed need more than the wrist can);
- as the arm's bringup executes it (a centripetal limit of 0.5 m/s^2 on the blends: the hook
  corners are taken slower, the rest at full speed), the motion `sweetie-motion program run`
  plays;
- at KDL's parameters (0.25 m/s, 0.1 m/s^2, no limit on the blends) and every blend radius KDL
  accepts for these waypoints (below 5 mm: from 5 mm on, the 10 mm hook leg between waypoints 3
  and 4 cannot hold two blends and Path_RoundedComposite refuses the path);
writes the paper's figures 8-11 for the executed one (3D path, x/y/z and path speed, joint
angles, joint velocities) and prints the comparison with the paper and the targets.
The paper gives neither its blend radius nor its speed and acceleration. KDL builds 13
segments (7 lines, 6 blends) at every radius it accepts; at 3-4 mm, 0.25 m/s and 0.1 m/s^2 it
samples exactly the paper's 1559 points. The paper's "12 segments" is not a count KDL gives
(12 is the index of its last segment). The arm's program blends at 20 mm, where our planner
shares the short hook leg between its two blends: 12 segments.
"""

import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from sweetie_motion.cartesian.frames import Pose  # noqa: E402
from sweetie_motion.cartesian.limiter import WorkspaceLimiter  # noqa: E402
from sweetie_motion.cartesian.path import CartesianPath  # noqa: E402
from sweetie_motion.cartesian.planner import CartesianPlanner, CartesianRequest  # noqa: E402
from sweetie_motion.cartesian.profile import path_profile, sample_path  # noqa: E402
from sweetie_motion.model import load_robot_description  # noqa: E402
from sweetie_motion.plots import plot_cartesian_motion  # noqa: E402
from targets import Targets  # noqa: E402
import yaml  # noqa: E402, I100

PAPER_SAMPLES = 1559
#: what KDL's Path_RoundedComposite builds from the 8 waypoints: 7 lines and 6 blends
KDL_SEGMENTS = 13
#: the radius [m] of the comparison with the paper's samples (one KDL accepts)
KDL_RADIUS = 0.004
#: blend radii [m] KDL accepts for these waypoints, all planned at KDL's parameters
KDL_RADII = (0.0005, 0.001, 0.002, 0.003, 0.004, 0.0049)
PERIOD = 0.01
V_MAX, A_MAX, LATERAL = 0.25, 0.1, 0.5  # [m/s], [m/s^2], [m/s^2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default=os.path.join(ROOT, 'artifacts', 'paper'),
                        help='folder of the figures')
    args = parser.parse_args()
    with open(os.path.join(ROOT, 'config', 'paths', 'paper_path.yaml')) as stream:
        document = yaml.safe_load(stream)
    waypoints = [Pose.from_mm_zyz(*w, degrees=True) for w in document['waypoints']]
    radius = document['radius'] * 1e-3
    arm = load_robot_description('winding_arm.yaml')
    arm.configure()
    home = np.array(arm.get_chain_property('arm', 'home'))
    workspace = WorkspaceLimiter.from_config(arm.get_chain_property('arm', 'workspace'))
    planner = CartesianPlanner(arm, 'arm', PERIOD, workspace)
    path = CartesianPath(waypoints, KDL_RADIUS)
    started = time.perf_counter()
    paper_like = sample_path(path, path_profile(path, V_MAX, A_MAX), PERIOD)
    paper_seconds = time.perf_counter() - started
    ours = CartesianPath(waypoints, radius)
    ours_like = sample_path(ours, path_profile(ours, V_MAX, A_MAX), PERIOD)
    plans = {}
    for label, lateral in (('its profile within the joint limits', None),
                           ('as executed (0.5 m/s^2 on the blends)', LATERAL)):
        started = time.perf_counter()
        plans[label] = (planner.plan(CartesianRequest(waypoints, radius, V_MAX, A_MAX,
                                                      lateral_acceleration=lateral), home),
                        time.perf_counter() - started)
    print(f"the paper's path: 8 waypoints, v_max {V_MAX} m/s, a_max {A_MAX} m/s^2, 10 ms "
          f'samples; blend radius {KDL_RADIUS * 1e3:g} mm as KDL, {radius * 1e3:g} mm as the '
          "arm's program\n")
    print(f'{"":42s}{"segments":>10s}{"samples":>10s}{"duration":>10s}{"length":>11s}'
          f'{"planning":>10s}')
    print(f'{"paper (KDL, its figure 8; it says 12)":42s}{KDL_SEGMENTS:>10d}'
          f'{PAPER_SAMPLES:>10d}{(PAPER_SAMPLES - 1) * PERIOD:>9.2f}s{"-":>11s}{"-":>10s}')
    print(f'{"ours, as the paper, r = 4 mm (Cartesian)":42s}{len(path.segments):>10d}'
          f'{len(paper_like):>10d}{paper_like.time[-1]:>9.2f}s{path.length * 1e3:>9.1f}mm'
          f'{paper_seconds * 1e3:>8.0f}ms')
    print(f'{"ours, as the paper, r = 20 mm (Cartesian)":42s}{len(ours.segments):>10d}'
          f'{len(ours_like):>10d}{ours_like.time[-1]:>9.2f}s{ours.length * 1e3:>9.1f}mm'
          f'{"-":>10s}')
    for label, (plan, seconds) in plans.items():
        print(f'{"ours, " + label:42s}{len(plan.path.segments):>10d}{len(plan.samples):>10d}'
              f'{plan.samples.time[-1]:>9.2f}s{plan.path.length * 1e3:>9.1f}mm'
              f'{seconds * 1e3:>8.0f}ms')
    executed, _ = plans['as executed (0.5 m/s^2 on the blends)']
    print(f'\nexecuted: {executed.describe()}')
    joints = arm.list_joints('arm')
    limits = arm.joint_limits().take(arm.get_chain_indices('arm'))
    speed = np.abs(np.gradient(executed.positions, executed.times, axis=0)).max(axis=0)
    path_part = executed.positions[executed.prelude:]
    path_speed = np.abs(np.gradient(path_part, executed.samples.time, axis=0)).max(axis=0)
    print('largest joint speeds [deg/s] (figure 11): ' + ', '.join(
        f'{j} {math.degrees(v):.1f}' for j, v in zip(joints, path_speed)))
    print('  with the wrist turn before the path:     ' + ', '.join(
        f'{j} {math.degrees(v):.1f}' for j, v in zip(joints, speed)))
    print('  limits:                                  ' + ', '.join(
        f'{j} {math.degrees(v):.1f}' for j, v in zip(joints, limits.velocity)))
    tool = np.array([planner.tip_pose(q).position for q in executed.positions])
    written = plot_cartesian_motion(args.out, executed.times, executed.positions, tool, joints,
                                    np.array([w.position for w in waypoints]), arm,
                                    title="the paper's path")
    print('figures 8-11: ' + ', '.join(str(p) for p in written))
    targets = Targets("the paper's path, R-CART-4")
    targets.check("path segments at a radius KDL accepts, against KDL's",
                  str(len(path.segments)), str(KDL_SEGMENTS), len(path.segments) == KDL_SEGMENTS)
    off = abs(len(paper_like) - PAPER_SAMPLES) / PAPER_SAMPLES
    targets.check('10 ms samples, as the paper plans it, against its 1559',
                  f'{len(paper_like)} ({off * 100:.1f} %)', 'within 1 %', off <= 0.01)
    within = bool(np.all(speed <= limits.velocity * 1.0001))
    targets.check('joint speeds of the executed motion within the limits',
                  f'{np.max(speed / limits.velocity) * 100:.0f} % of a limit', '<= 100 %',
                  within)
    planned, refused = [], []
    for kdl_radius in KDL_RADII:
        try:
            planner.plan(CartesianRequest(waypoints, kdl_radius, V_MAX, A_MAX), home)
            planned.append(kdl_radius)
        except Exception as error:  # noqa: B902 -- reported, the next radius is tried
            refused.append(f'{kdl_radius * 1e3:g} mm: {error}')
    for line in refused:
        print(f'refused: {line}')
    targets.check("plans at KDL's parameters, every radius KDL accepts (0.5-4.9 mm)",
                  f'{len(planned)} of {len(KDL_RADII)}', 'all', not refused)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
