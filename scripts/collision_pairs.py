#!/usr/bin/env python3
"""
Compute which link pairs of a robot can never meet, and write them as its SRDF.

    .venv/bin/python scripts/collision_pairs.py [--robot sweetie_bot.yaml] [--samples 3000]
                                                [--budget 20000] [--out config/sweetie_bot.srdf]

The collision shapes are the robot description's (``checks: collision: meshes``: Proto2's own
meshes for the pony). A pair is left out of the collision check (an SRDF
``disable_collisions``) only when computed to be unable to meet:

- **Adjacent** (a link and its parent, MoveIt's reason): the checks leave them out (the
  servo's bracket turns against its neighbour: their meshes touch at the joint). The tool
  says, from a grid over the joint's range 0.005 rad apart, whether they stay within the
  margin at every pose or how far apart they come.
- **Never**: they cannot come within the check's margin over the joint ranges. First
  ``--samples`` random poses of the joints between them (uniform in their limits) look for a
  pose where they do (then they are checked); if none, a branch and bound over the box of
  those joints proves it: at a box's centre coal gives the distance d; anywhere in the box
  the two links are at least d - sum(reach_i * halfwidth_i) apart, reach_i being the farthest
  any point of the moved link can be from joint i (the chain's offsets beyond it plus the
  mesh's extent); a box where that stays above the margin is done, others are halved along
  their widest term. A pair whose proof takes more than ``--budget`` distances stays checked.

Everything else is checked. What was sampled and proved is printed and written into the SRDF
as comments. Deterministic (seeded).
"""

import argparse
import heapq
from pathlib import Path
import sys
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sweetie_motion.checks.collision import CollisionModel  # noqa: E402
from sweetie_motion.checks.meshes import folder_meshes  # noqa: E402
from sweetie_motion.checks.robot import CheckRobot  # noqa: E402
from sweetie_motion.model.description import load_robot_description  # noqa: E402

#: the grid step of an adjacent pair's joint [rad]
ADJACENT_STEP = 0.005


class Pairs:
    """The robot's shapes, its pairs and what each pair's distance depends on."""

    def __init__(self, robot_file: str) -> None:
        model = load_robot_description(robot_file)
        model.configure()
        self.settings = model.check_settings
        joints = list(model.list_all_joints())
        self.robot = CheckRobot(model.urdf_document(), joints)
        pin = self.robot.model
        meshes = folder_meshes(self.settings.meshes, [f.name for f in pin.frames]) \
            if self.settings.meshes else {}
        self.meshes = meshes
        self.collision = CollisionModel(self.robot, meshes=meshes, adjacent=True)
        self.model = pin
        self.lower = np.array(pin.lowerPositionLimit)
        self.upper = np.array(pin.upperPositionLimit)
        self.neutral = np.zeros(pin.nq)

    def ancestors(self, joint: int) -> list:
        out = []
        while joint > 0:
            out.append(joint)
            joint = int(self.model.parents[joint])
        return out

    def path(self, pair: int) -> list:
        """Return the pinocchio joints that move one link of a pair against the other."""
        a, b = (int(k) for k in self.collision.pairs[pair])
        ja = int(self.collision.geometry.geometryObjects[a].parentJoint)
        jb = int(self.collision.geometry.geometryObjects[b].parentJoint)
        up_a, up_b = self.ancestors(ja), self.ancestors(jb)
        return sorted(set(up_a) ^ set(up_b))

    def reach(self, joint: int, shape: int) -> float:
        """Return the farthest a point of ``shape`` can be from ``joint``'s origin [m]."""
        obj = self.collision.geometry.geometryObjects[shape]
        chain = self.ancestors(int(obj.parentJoint))
        beyond = chain[:chain.index(joint)] if joint in chain else chain
        offsets = sum(float(np.linalg.norm(self.model.jointPlacements[k].translation))
                      for k in beyond)
        link = self.collision.links[shape]
        if link in self.meshes:
            points = self.meshes[link].vertices
            placed = points @ np.asarray(obj.placement.rotation).T + \
                np.asarray(obj.placement.translation)
            extent = float(np.linalg.norm(placed, axis=1).max())
        else:
            shape_geometry = obj.geometry
            shape_geometry.computeLocalAABB()
            extent = float(np.linalg.norm(obj.placement.act(np.asarray(
                shape_geometry.aabb_center)))) + float(shape_geometry.aabb_radius)
        return offsets + extent

    def lipschitz(self, pair: int, path: list) -> np.ndarray:
        """Return per path joint how fast the pair's distance can change with it [m/rad]."""
        a, b = (int(k) for k in self.collision.pairs[pair])
        ja = int(self.collision.geometry.geometryObjects[a].parentJoint)
        side_a = set(self.ancestors(ja))
        return np.array([self.reach(j, a if j in side_a else b) for j in path])

    def distance(self, pair: int, path: list, values: np.ndarray) -> float:
        q = self.neutral.copy()
        for joint, value in zip(path, values):
            q[self.model.joints[joint].idx_q] = value
        return self.collision.exact_configuration(q, pair)

    def ranges(self, path: list) -> np.ndarray:
        idx = [self.model.joints[j].idx_q for j in path]
        return np.stack((self.lower[idx], self.upper[idx]), axis=1)


def adjacent_apart(pairs: Pairs, pair: int, path: list) -> float:
    """Return how far apart a link and its parent come over their joint's range [m]."""
    (low, high), = pairs.ranges(path)
    grid = np.arange(low, high + ADJACENT_STEP / 2, ADJACENT_STEP)
    return max(pairs.distance(pair, path, np.array([value])) for value in grid)


def never_meet(pairs: Pairs, pair: int, path: list, margin: float, samples: int,
               budget: int, rng: np.random.Generator) -> tuple:
    """Return ('checked', witness distance) or ('never', least bound) or ('undecided', evals)."""
    box = pairs.ranges(path)
    for _ in range(samples):
        values = rng.uniform(box[:, 0], box[:, 1])
        distance = pairs.distance(pair, path, values)
        if distance < margin:
            return 'checked', distance
    lipschitz = pairs.lipschitz(pair, path)
    centre = box.mean(axis=1)
    half = (box[:, 1] - box[:, 0]) / 2
    distance = pairs.distance(pair, path, centre)
    queue = [(distance - float(lipschitz @ half), 0, centre, half, distance)]
    counter, evaluations, least = 1, 1, np.inf
    while queue:
        bound, _, centre, half, distance = heapq.heappop(queue)
        if bound >= margin:
            least = min(least, bound)
            continue
        if distance < margin:
            return 'checked', distance
        if evaluations >= budget:
            return 'undecided', evaluations
        widest = int(np.argmax(lipschitz * half))
        for sign in (-1.0, 1.0):
            child_half = half.copy()
            child_half[widest] /= 2
            child_centre = centre.copy()
            child_centre[widest] += sign * child_half[widest]
            child = pairs.distance(pair, path, child_centre)
            evaluations += 1
            heapq.heappush(queue, (child - float(lipschitz @ child_half), counter,
                                   child_centre, child_half, child))
            counter += 1
    return 'never', least


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--robot', default='sweetie_bot.yaml')
    parser.add_argument('--samples', type=int, default=3000)
    parser.add_argument('--budget', type=int, default=20000)
    parser.add_argument('--out', default=None, help='the SRDF to write (default: print)')
    args = parser.parse_args()
    start = time.process_time()
    pairs = Pairs(args.robot)
    margin = pairs.settings.collision_margin
    rng = np.random.default_rng(35)
    names = pairs.collision.pair_names()
    parents = pairs.model.parents
    disabled, lines = [], []
    counts = {'adjacent': 0, 'never': 0, 'checked': 0, 'undecided': 0}
    for pair, (a, b) in enumerate(names):
        path = pairs.path(pair)
        ja, jb = (int(pairs.collision.geometry.geometryObjects[int(k)].parentJoint)
                  for k in pairs.collision.pairs[pair])
        if parents[ja] == jb or parents[jb] == ja:
            # the checks leave a link and its parent out (MoveIt's Adjacent): say whether
            # they stay within the margin (touch at the joint) over the joint's whole range
            figure = adjacent_apart(pairs, pair, path)
            verdict = 'adjacent'
            note = (f'joined by {pairs.model.names[max(ja, jb)]}: '
                    + (f'within {margin * 1e3:.1f} mm at every pose of its range'
                       if figure < margin else
                       f'up to {figure * 1e3:.1f} mm apart over its range'))
        else:
            verdict, figure = never_meet(pairs, pair, path, margin, args.samples, args.budget,
                                         rng)
            joints = ', '.join(pairs.model.names[j] for j in path)
            note = {'checked': f'within the margin at a pose found ({figure * 1e3:.1f} mm)',
                    'never': f'at least {figure * 1e3:.1f} mm apart over the ranges of {joints}',
                    'undecided': f'not proved apart within {figure} distances'}[verdict]
        counts[verdict] += 1
        print(f'{a:10s} {b:14s} {verdict:9s} {note}', flush=True)
        if verdict in ('adjacent', 'never'):
            reason = 'Adjacent' if verdict == 'adjacent' else 'Never'
            disabled.append(f'  <disable_collisions link1="{a}" link2="{b}" reason="{reason}"/>'
                            f'  <!-- {note} -->')
        lines.append((a, b, verdict))
    spent = time.process_time() - start
    summary = (f'{len(names)} pairs: {counts["adjacent"]} adjacent, '
               f'{counts["never"]} that never come within {margin * 1e3:.1f} mm, '
               f'{counts["checked"]} checked, {counts["undecided"]} undecided (checked); '
               f'{args.samples} random poses a pair, branch and bound up to {args.budget} '
               f'distances, {spent:.0f} s of CPU')
    print(summary)
    robot = pairs.robot.model.name
    text = '\n'.join([
        '<?xml version="1.0"?>',
        f"<!-- {robot}: the link pairs that cannot meet, left out of sweetie_motion's",
        "     collision check (and MoveIt's, given the same collision meshes). Computed by",
        '     scripts/collision_pairs.py from the collision meshes of the robot description:',
        f'     {summary}. -->',
        f'<robot name="{robot}">'] + disabled + ['</robot>']) + '\n'
    if args.out:
        Path(args.out).write_text(text, encoding='utf-8')
        print(f'wrote {args.out}')
    else:
        print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
