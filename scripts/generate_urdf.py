#!/usr/bin/env python3
"""
Generate the robot descriptions in config/ (run from the repository root).

config/sweetie_bot.urdf  -- the Sweetie Bot pony (four 5-DOF legs with a virtual 6th joint,
                            a 4-DOF neck/head with a virtual 2-DOF nose, two eye joints)
config/winding_arm.urdf  -- the 6-DOF winding-line arm of seed 004, from its DH table

The URDFs are committed; this script documents where every number comes from and regenerates
them after a change: `python3 scripts/generate_urdf.py`.
"""

import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, '..', 'config')


def fmt(*values):
    return ' '.join(f'{v:.10g}' if abs(v) > 1e-12 else '0' for v in values)


def box_inertia(mass, x, y, z):
    return (mass * (y * y + z * z) / 12, mass * (x * x + z * z) / 12, mass * (x * x + y * y) / 12)


def cylinder_inertia(mass, radius, length):
    side = mass * (3 * radius * radius + length * length) / 12
    return (side, side, mass * radius * radius / 2)


def link(name, mass=None, inertia=None, com=(0, 0, 0), visual=None):
    lines = [f'  <link name="{name}">']
    if mass is not None:
        ixx, iyy, izz = inertia
        lines += [
            '    <inertial>',
            f'      <origin xyz="{fmt(*com)}" rpy="0 0 0"/>',
            f'      <mass value="{mass:.6g}"/>',
            f'      <inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{iyy:.6g}" iyz="0" '
            f'izz="{izz:.6g}"/>',
            '    </inertial>',
        ]
    if visual:
        origin = f'      <origin xyz="{fmt(*visual[0])}" rpy="{fmt(*visual[1])}"/>'
        lines += ['    <visual>', origin, f'      <geometry>{visual[2]}</geometry>',
                  '    </visual>']
    lines.append('  </link>')
    return '\n'.join(lines)


def joint(name, parent, child, xyz, rpy=(0, 0, 0), axis=(0, 1, 0), kind='revolute',
          lower=None, upper=None, velocity=1.57, effort=12.0, comment=None):
    lines = []
    if comment:
        lines.append(f'  <!-- {comment} -->')
    lines += [f'  <joint name="{name}" type="{kind}">',
              f'    <parent link="{parent}"/>', f'    <child link="{child}"/>',
              f'    <origin xyz="{fmt(*xyz)}" rpy="{fmt(*rpy)}"/>']
    if kind != 'fixed':
        lines.append(f'    <axis xyz="{fmt(*axis)}"/>')
    if kind in ('revolute', 'prismatic'):
        lines.append(f'    <limit lower="{lower:.6g}" upper="{upper:.6g}" '
                     f'velocity="{velocity:.6g}" effort="{effort:.6g}"/>')
    lines.append('  </joint>')
    return '\n'.join(lines)


# --- Sweetie Bot -------------------------------------------------------------------------------

# Leg attachment points on the body [m]: leg1 front left, leg2 front right, leg3 rear left,
# leg4 rear right (x forward, y left, z up), as on the Proto2 pony.
LEG_ORIGINS = {1: (0.105, 0.055, -0.02), 2: (0.105, -0.055, -0.02),
               3: (-0.105, 0.055, -0.02), 4: (-0.105, -0.055, -0.02)}
# Per leg joint: (axis, lower, upper) [rad]. jointN3 and jointN4 bend further than the others.
LEG_JOINTS = {1: ((1, 0, 0), -1.57, 1.57),   # shoulder/hip abduction
              2: ((0, 1, 0), -1.57, 1.57),   # shoulder/hip flexion
              3: ((0, 1, 0), -1.9, 1.9),     # elbow/knee
              4: ((0, 1, 0), -1.7, 1.7),     # wrist/ankle
              5: ((1, 0, 0), -1.57, 1.57),   # hoof roll
              6: ((0, 1, 0), -1.57, 1.57)}   # virtual: hoof contact point, no servo
# Segment offsets (from joint N(k) to joint N(k+1)) [m] and masses [kg].
LEG_SEGMENTS = {1: ((0, 0, -0.025), 0.07), 2: ((0, 0, -0.095), 0.12),
                3: ((0, 0, -0.09), 0.09), 4: ((0, 0, -0.045), 0.05),
                5: ((0, 0, -0.02), 0.03)}
SERVO_VELOCITY = 1.57   # rad/s: HerkuleX DRS-0101 at 7.4 V, loaded
SERVO_EFFORT = 1.2      # N*m: DRS-0101 stall torque 1.18 N*m


def sweetie_bot():
    parts = ['<?xml version="1.0"?>',
             '<!-- Sweetie Bot pony, written for sweetie_motion by scripts/generate_urdf.py. -->',
             '<!-- 32 joints: legs jointN1..jointN6 (jointN6 virtual), head joint51..joint54, -->',
             '<!-- virtual nose joint55/joint56, eyes_yaw and eyes_pitch. Units: m, kg, rad. -->',
             '<robot name="sweetie_bot">']
    body = (0.28, 0.14, 0.10)
    parts.append(link('base_link', 1.6, box_inertia(1.6, *body),
                      visual=((0, 0, 0), (0, 0, 0), f'<box size="{fmt(*body)}"/>')))
    for leg, origin in LEG_ORIGINS.items():
        parent = 'base_link'
        xyz = origin
        for k in range(1, 6):
            name = f'joint{leg}{k}'
            child = f'link{leg}{k}' if k < 5 else f'hoof{leg}'
            axis, lower, upper = LEG_JOINTS[k]
            parts.append(joint(name, parent, child, xyz, axis=axis, lower=lower, upper=upper,
                               velocity=SERVO_VELOCITY, effort=SERVO_EFFORT))
            offset, mass = LEG_SEGMENTS[k]
            length = abs(offset[2])
            com = tuple(o / 2 for o in offset)
            parts.append(link(child, mass, cylinder_inertia(mass, 0.015, length), com,
                              visual=(com, (0, 0, 0),
                                      f'<cylinder radius="0.015" length="{length:.6g}"/>')))
            parent, xyz = child, offset
        axis, lower, upper = LEG_JOINTS[6]
        parts.append(joint(f'joint{leg}6', parent, f'hoof{leg}_contact', xyz, axis=axis,
                           lower=lower, upper=upper, velocity=SERVO_VELOCITY, effort=0.0,
                           comment=f'virtual joint of leg {leg}: the hoof contact point'))
        parts.append(link(f'hoof{leg}_contact'))
    # Neck and head. joint51 lifts the neck (it cannot go far back: upper 0.26 rad).
    head = [('joint51', 'base_link', 'link51', (0.12, 0, 0.05), (0, 1, 0), -1.57, 0.26,
             (0, 0, 0.06), 0.10),
            ('joint52', 'link51', 'link52', (0, 0, 0.06), (0, 0, 1), -1.57, 1.57,
             (0, 0, 0.05), 0.08),
            ('joint53', 'link52', 'link53', (0, 0, 0.05), (0, 1, 0), -0.55, 1.0,
             (0, 0, 0.03), 0.06),
            ('joint54', 'link53', 'head', (0, 0, 0.03), (1, 0, 0), -0.4, 0.4,
             (0.03, 0, 0.04), 0.35)]
    for name, parent, child, xyz, axis, lower, upper, extent, mass in head:
        parts.append(joint(name, parent, child, xyz, axis=axis, lower=lower, upper=upper,
                           velocity=SERVO_VELOCITY, effort=SERVO_EFFORT))
        if child == 'head':
            size = (0.12, 0.10, 0.10)
            parts.append(link(child, mass, box_inertia(mass, *size), extent,
                              visual=(extent, (0, 0, 0), f'<box size="{fmt(*size)}"/>')))
        else:
            length = float(np.linalg.norm(extent))
            com = tuple(e / 2 for e in extent)
            parts.append(link(child, mass, cylinder_inertia(mass, 0.02, length), com,
                              visual=(com, (0, 0, 0),
                                      f'<cylinder radius="0.02" length="{length:.6g}"/>')))
    parts.append(joint('joint55', 'head', 'nose_base', (0.09, 0, 0.03), axis=(0, 0, 1),
                       lower=-1.57, upper=1.57, velocity=SERVO_VELOCITY, effort=0.0,
                       comment='virtual nose joints: the head points its nose (no servos)'))
    parts.append(link('nose_base'))
    parts.append(joint('joint56', 'nose_base', 'nose', (0.02, 0, 0), axis=(0, 1, 0),
                       lower=-1.57, upper=1.57, velocity=SERVO_VELOCITY, effort=0.0))
    parts.append(link('nose'))
    parts.append(joint('eyes_yaw', 'head', 'eyes_yaw_link', (0.06, 0, 0.05), axis=(0, 0, 1),
                       lower=-1.0, upper=1.0, velocity=3.0, effort=0.1,
                       comment='eyes (drawn on the head displays): yaw then pitch'))
    parts.append(link('eyes_yaw_link', 0.01, box_inertia(0.01, 0.01, 0.01, 0.01)))
    parts.append(joint('eyes_pitch', 'eyes_yaw_link', 'eyes', (0, 0, 0), axis=(0, 1, 0),
                       lower=-1.0, upper=1.0, velocity=3.0, effort=0.1))
    parts.append(link('eyes', 0.01, box_inertia(0.01, 0.01, 0.01, 0.01)))
    parts.append('</robot>')
    return '\n'.join(parts) + '\n'


# --- winding-line arm (seed 004) ---------------------------------------------------------------

# Modified (Craig) DH rows (a_{i-1} [m], alpha_{i-1} [rad], d_i [m], theta_i offset [rad]) of
# seed 004's table; lengths are metres. With this convention the pose at q = (-90deg, 0, ...)
# is the paper's waypoint 1 (0, -384.8, 850.2) mm, EulerZYZ(pi/2, -pi/2, 0), in a world frame
# 0.210 m below the base.
ARM_DH = [(0.0, 0.0, 0.0, 0.0),
          (0.18, -math.pi / 2, 0.0, -3 * math.pi / 4),
          (0.665, 0.0, 0.0, math.pi / 4),
          (0.17, -math.pi / 2, 0.675, 0.0),
          (0.0, math.pi / 2, 0.0, 0.0),
          (0.0, -math.pi / 2, 0.0, 0.0)]
# Joint limits [rad] and velocities [rad/s] chosen by us (the paper gives none): ranges of a
# typical 20 kg-class 6-axis arm, wide enough for the paper's 8-waypoint path.
ARM_LIMITS = [(-math.pi, math.pi, 2.6), (-2.4, 2.4, 2.6), (-2.6, 2.6, 2.6),
              (-math.pi, math.pi, 3.5), (-2.2, 2.2, 3.5), (-2 * math.pi, 2 * math.pi, 4.5)]
ARM_MASSES = [12.0, 10.0, 7.0, 4.0, 2.0, 0.8]
BASE_HEIGHT = 0.210


def rpy_of(matrix):
    """URDF rpy (fixed-axis X, then Y, then Z) of a rotation matrix."""
    pitch = math.asin(max(-1.0, min(1.0, -matrix[2, 0])))
    if abs(math.cos(pitch)) > 1e-9:
        roll = math.atan2(matrix[2, 1], matrix[2, 2])
        yaw = math.atan2(matrix[1, 0], matrix[0, 0])
    else:
        roll = math.atan2(-matrix[1, 2], matrix[1, 1])
        yaw = 0.0
    return roll, pitch, yaw


def rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def winding_arm():
    parts = ['<?xml version="1.0"?>',
             '<!-- 6-DOF winding-line arm of seed 004 (modified DH), '
             'by scripts/generate_urdf.py. -->',
             '<!-- world is 0.210 m below base_link, as in the paper. Units: m, kg, rad. -->',
             '<robot name="winding_arm">',
             link('world'),
             joint('world_to_base', 'world', 'base_link', (0, 0, BASE_HEIGHT), kind='fixed'),
             link('base_link', 20.0, box_inertia(20.0, 0.3, 0.3, 0.2), (0, 0, -0.1))]
    parent = 'base_link'
    for i, ((a, alpha, d, offset), (lower, upper, velocity), mass) in enumerate(
            zip(ARM_DH, ARM_LIMITS, ARM_MASSES), start=1):
        # T = RotX(alpha) TransX(a) RotZ(offset + q) TransZ(d) = origin * RotZ(q), where the
        # joint origin takes RotX(alpha) TransX(a) TransZ(d) RotZ(offset).
        rotation = rot_x(alpha) @ rot_z(offset)
        translation = np.array([a, 0.0, 0.0]) + rot_x(alpha) @ np.array([0.0, 0.0, d])
        child = f'link{i}'
        parts.append(joint(f'joint{i}', parent, child, translation, rpy_of(rotation),
                           axis=(0, 0, 1), lower=lower, upper=upper, velocity=velocity,
                           effort=200.0 / i))
        parts.append(link(child, mass, cylinder_inertia(mass, 0.06, 0.3)))
        parent = child
    parts.append(joint('flange', parent, 'tool0', (0, 0, 0), kind='fixed'))
    parts.append(link('tool0'))
    parts.append('</robot>')
    return '\n'.join(parts) + '\n'


def main():
    for name, text in (('sweetie_bot.urdf', sweetie_bot()), ('winding_arm.urdf', winding_arm())):
        path = os.path.normpath(os.path.join(CONFIG, name))
        with open(path, 'w', encoding='utf-8') as stream:
            stream.write(text)
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
