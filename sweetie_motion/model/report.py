"""
Text reports of a robot model: its chains, resource groups and joints, as tables.

What ``sweetie-motion describe`` prints and the demo shows; pure (no ROS).
"""

from typing import List

from sweetie_motion.model.robot_model import RobotModel
from sweetie_motion.tables import table


def describe_model(model: RobotModel) -> str:
    """Return the report of a configured model: a summary line, chains, groups and joints."""
    tree = model.urdf_tree()
    parts: List[str] = [
        f'robot {tree.name!r}: {len(model.list_all_joints())} joints, '
        f'{len(model.list_chains())} chains, {len(model.list_groups())} resource groups\n']
    rows = []
    for chain in model.list_chains():
        first, last, virtual = model.get_chain_links(chain)
        joints = model.list_joints(chain)
        rows.append([chain, model.get_chain_group(chain), f'{first} -> {last}',
                     virtual or '', len(joints), ' '.join(joints)])
    parts.append(table(rows, ['chain', 'group', 'links', 'virtual tip', 'n', 'joints']) + '\n')
    rows = [[g, ' '.join(model.get_group_chains(g)) or '-', len(model.get_group_joints(g))]
            for g in model.list_groups()]
    parts.append(table(rows, ['group', 'chains', 'joints']) + '\n')
    rows = []
    for name in model.list_all_joints():
        info = model.get_joint_info(name)
        rows.append([info.index, name, info.chain or '-', info.group,
                     'virtual' if info.virtual else info.joint_type,
                     f'{info.lower:+.3f}', f'{info.upper:+.3f}', f'{info.velocity:.2f}'])
    parts.append(table(rows, ['#', 'joint', 'chain', 'group', 'type', 'lower', 'upper',
                              'vel']))
    return '\n'.join(parts)
