#!/usr/bin/env python3
"""
Generate the robot descriptions in config/ (run from the repository root).

config/sweetie_bot.urdf  -- Sweetie Bot Proto2 from its published figures (four 5-DOF legs
                            with a virtual 6th joint, a 4-DOF neck/head with a virtual 2-DOF
                            nose, two eye joints drawn on the head's displays)
config/winding_arm.urdf  -- the 6-DOF winding-line arm of seed 004, from its DH table
config/*.srdf            -- the link pairs whose collision shapes overlap at the zero pose
                            (MoveIt's "Default" pairs): left out of the collision check

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


def link(name, mass=None, inertia=None, com=(0, 0, 0), visual=None, collision=None):
    """Return a link; ``visual``/``collision``: (xyz, rpy, geometry) each, or None."""
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
    for tag, shape in (('visual', visual), ('collision', collision)):
        if shape:
            origin = f'      <origin xyz="{fmt(*shape[0])}" rpy="{fmt(*shape[1])}"/>'
            lines += [f'    <{tag}>', origin, f'      <geometry>{shape[2]}</geometry>',
                      f'    </{tag}>']
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


# --- Sweetie Bot Proto2 ------------------------------------------------------------------------

#: the published figures of the pony (transcribed once; the model test reads the same file)
PROTO2_FIGURES = os.path.join(HERE, '..', 'test', 'data', 'proto2_figures.yaml')
#: links whose mesh is a display aid of rviz, not a body (the eyes' gaze arrow)
NO_SHAPE = {'eyes_link_pitch'}


def proto2_link(figures):
    """Return a link of the figures: its inertial, and one box fitted to its mesh's bounds."""
    lines = [f'  <link name="{figures["name"]}">']
    if 'mass' in figures:
        inertia = figures['inertia']
        lines += ['    <inertial>',
                  f'      <origin xyz="{fmt(*figures["com"])}" rpy="0 0 0"/>',
                  f'      <mass value="{figures["mass"]:.10g}"/>',
                  '      <inertia ' + ' '.join(f'{k}="{inertia[k]:.10g}"' for k in (
                      'ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')) + '/>',
                  '    </inertial>']
    if 'bbox' in figures and figures['name'] not in NO_SHAPE:
        low, high = (np.array(corner) for corner in figures['bbox'])
        centre, size = (low + high) / 2, high - low
        box = f'<box size="{fmt(*size)}"/>'
        for tag in ('visual', 'collision'):
            lines += [f'    <{tag}>', f'      <origin xyz="{fmt(*centre)}" rpy="0 0 0"/>',
                      f'      <geometry>{box}</geometry>', f'    </{tag}>']
    lines.append('  </link>')
    return '\n'.join(lines)


def servo_efforts():
    """
    Return joint -> the stall torque of the servo that drives it [N*m] (the one source).

    Proto2's URDF gives 2.4 N*m for every joint; its servos are DRS-0101 (the robot's own servo
    configuration), which stall at 1.18 N*m at 7.4 V: the servo config and the servo types
    decide, and a joint without a servo (virtual) has no effort.
    """
    sys.path.insert(0, os.path.join(HERE, '..'))
    from sweetie_motion.servo.driver import load_bus_config_file
    config = load_bus_config_file(os.path.join(CONFIG, 'sweetie_bot_servos.yaml'))
    return {servo.joint: servo.kind.stall_torque for bus in config.buses for servo in bus.servos}


def proto2_joint(figures, efforts):
    """Return a joint of the figures as published; its effort that of its servo."""
    kind = figures['type']
    lines = [f'  <joint name="{figures["name"]}" type="{kind}">',
             f'    <parent link="{figures["parent"]}"/>',
             f'    <child link="{figures["child"]}"/>',
             f'    <origin xyz="{fmt(*figures["xyz"])}" rpy="{fmt(*figures["rpy"])}"/>']
    if kind != 'fixed':
        lines.append(f'    <axis xyz="{fmt(*figures["axis"])}"/>')
        effort = efforts.get(figures['name'], 0.0)
        lines.append(f'    <limit lower="{figures["lower"]:.10g}" upper="{figures["upper"]:.10g}" '
                     f'effort="{effort:.10g}" velocity="{figures["velocity"]:.10g}"/>')
    lines.append('  </joint>')
    return '\n'.join(lines)


PROTO2_HEADER = (
    'Sweetie Bot Proto2, written for sweetie_motion by scripts/generate_urdf.py from',
    'the published figures (test/data/proto2_figures.yaml): joint origins, axes, limits,',
    'masses, centres of mass and inertias as published; each mesh replaced by one box',
    'fitted to its bounding box (visual and collision); efforts: the stall torque of',
    "each joint's servo (config/sweetie_bot_servos.yaml), 0 without one. Units: m, kg,",
    'rad, N*m.')


def sweetie_bot():
    """Return the URDF of Sweetie Bot Proto2 from its published figures."""
    import yaml
    with open(PROTO2_FIGURES, encoding='utf-8') as stream:
        figures = yaml.safe_load(stream)
    parts = ['<?xml version="1.0"?>'] + [f'<!-- {line} -->' for line in PROTO2_HEADER] + [
        '<robot name="sweetie_bot">']
    parts += [proto2_link(link) for link in figures['links']]
    efforts = servo_efforts()
    parts += [proto2_joint(joint, efforts) for joint in figures['joints']]
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
# Collision shapes (ours, as the masses: the paper draws no bodies). The base: the pedestal of
# 0.3 x 0.3 m its inertia assumes, from the floor to BASE_TOP below the shoulder's axis, so that
# the shoulder (link 2, a cylinder of ARM_RADIUS about it) turns clear of it. Links 1-3: a
# cylinder of ARM_RADIUS (the radius their inertia assumes) from the link's joint to the next
# joint. The spherical wrist (joints 4-6 meet in one point): one sphere of ARM_RADIUS on link 5.
# The tool: the winding head, a cylinder of TOOL_RADIUS and TOOL_LENGTH along the flange's z,
# beyond the wrist's sphere.
ARM_RADIUS = 0.06
TOOL_RADIUS = 0.03
TOOL_LENGTH = 0.15
BASE_TOP = -0.07


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


def segment_cylinder(end, radius):
    """Return (xyz, rpy, geometry) of a cylinder from the origin to ``end``."""
    end = np.asarray(end, dtype=float)
    length = float(np.linalg.norm(end))
    axis = end / length
    # a rotation taking z to the segment's direction
    z = np.array([0.0, 0.0, 1.0])
    turn = np.cross(z, axis)
    if np.linalg.norm(turn) < 1e-12:
        rotation = np.eye(3) if axis[2] > 0 else rot_x(math.pi)
    else:
        angle = math.atan2(np.linalg.norm(turn), float(z @ axis))
        k = turn / np.linalg.norm(turn)
        skew = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        rotation = np.eye(3) + math.sin(angle) * skew + (1 - math.cos(angle)) * skew @ skew
    return (end / 2, rpy_of(rotation),
            f'<cylinder radius="{radius:.6g}" length="{length:.6g}"/>')


def winding_arm():
    parts = ['<?xml version="1.0"?>',
             '<!-- 6-DOF winding-line arm of seed 004 (modified DH), '
             'by scripts/generate_urdf.py. -->',
             '<!-- world is 0.210 m below base_link, as in the paper. Units: m, kg, rad. -->',
             '<robot name="winding_arm">',
             link('world'),
             joint('world_to_base', 'world', 'base_link', (0, 0, BASE_HEIGHT), kind='fixed'),
             link('base_link', 20.0, box_inertia(20.0, 0.3, 0.3, 0.2), (0, 0, -0.1),
                  collision=((0, 0, (BASE_TOP - BASE_HEIGHT) / 2), (0, 0, 0),
                             f'<box size="0.3 0.3 {BASE_TOP + BASE_HEIGHT:.6g}"/>'))]
    parent = 'base_link'
    origins = []
    for alpha, a, d, offset in ((r[1], r[0], r[2], r[3]) for r in ARM_DH):
        # T = RotX(alpha) TransX(a) RotZ(offset + q) TransZ(d) = origin * RotZ(q), where the
        # joint origin takes RotX(alpha) TransX(a) TransZ(d) RotZ(offset).
        origins.append((rot_x(alpha) @ rot_z(offset),
                        np.array([a, 0.0, 0.0]) + rot_x(alpha) @ np.array([0.0, 0.0, d])))
    for i, ((rotation, translation), (lower, upper, velocity), mass) in enumerate(
            zip(origins, ARM_LIMITS, ARM_MASSES), start=1):
        child = f'link{i}'
        parts.append(joint(f'joint{i}', parent, child, translation, rpy_of(rotation),
                           axis=(0, 0, 1), lower=lower, upper=upper, velocity=velocity,
                           effort=200.0 / i))
        collision = None
        if i <= 3:
            collision = segment_cylinder(origins[i][1], ARM_RADIUS)
        elif i == 5:
            collision = ((0, 0, 0), (0, 0, 0), f'<sphere radius="{ARM_RADIUS:.6g}"/>')
        parts.append(link(child, mass, cylinder_inertia(mass, 0.06, 0.3), collision=collision))
        parent = child
    parts.append(joint('flange', parent, 'tool0', (0, 0, 0), kind='fixed'))
    parts.append(link('tool0', collision=((0, 0, ARM_RADIUS + TOOL_LENGTH / 2), (0, 0, 0),
                                          f'<cylinder radius="{TOOL_RADIUS:.6g}" '
                                          f'length="{TOOL_LENGTH:.6g}"/>')))
    parts.append('</robot>')
    return '\n'.join(parts) + '\n'


def default_collisions(robot, urdf_xml):
    """
    Return the SRDF of ``urdf_xml``: the link pairs whose shapes overlap at the zero pose.

    MoveIt's setup assistant disables the same pairs ("Default": in collision in the default
    pose); here they are shapes fitted to bounding boxes that interlock at a joint, never two
    parts of the robot that can meet. Adjacent links need no entry: the checks skip them.
    """
    sys.path.insert(0, os.path.join(HERE, '..'))
    from sweetie_motion.checks.collision import CollisionModel
    from sweetie_motion.checks.robot import CheckRobot
    import pinocchio
    model = pinocchio.buildModelFromXML(urdf_xml)
    joints = list(model.names[1:])
    collision = CollisionModel(CheckRobot(urdf_xml, joints))
    distances = collision.all_exact(np.zeros((1, len(joints))))[0]
    lines = ['<?xml version="1.0"?>',
             f"<!-- {robot}: the link pairs that may touch, for sweetie_motion's collision check",
             '     and MoveIt (written by scripts/generate_urdf.py: the pairs whose collision',
             '     shapes overlap at the zero pose; adjacent links are skipped anyway). -->',
             f'<robot name="{robot}">']
    for (a, b), distance in zip(collision.pair_names(), distances):
        if distance < 0:
            lines.append(f'  <disable_collisions link1="{a}" link2="{b}" reason="Default"/>'
                         f'  <!-- {distance * 1e3:.1f} mm -->')
    lines.append('</robot>')
    return '\n'.join(lines) + '\n'


def main():
    for robot, text in (('sweetie_bot', sweetie_bot()), ('winding_arm', winding_arm())):
        for name, content in ((f'{robot}.urdf', text),
                              (f'{robot}.srdf', default_collisions(robot, text))):
            path = os.path.normpath(os.path.join(CONFIG, name))
            with open(path, 'w', encoding='utf-8') as stream:
                stream.write(content)
            print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
