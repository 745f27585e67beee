#!/usr/bin/env python3
"""
Fit to limits and keyframes from a demonstration, against simple baselines of the same run.

    .venv/bin/python bench/retime.py [--quick]

1. Retiming (trajectory/retime.py) of every stored animation (config/trajectories) and of the
   original robot's (/work/shared/sweetie_movements, else test/data): duration before, what the
   controller's own retiming makes of it (one factor, slowing down only), the uniform fit (one
   factor for the whole motion, both ways: the baseline), ours, ours keeping the pauses, and
   toppra's time-optimal traversal of the keyframes' path at their old timing; time per
   trajectory against the uniform fit's. Every result is checked by sampling the package's
   spline every 0.5 ms. A local optimality check: scipy's SLSQP started from our timing
   (minimise the duration under the exact per-segment limits) must not find a shorter one.
2. Keyframes from recordings: each original animation played back (modified Akima) and looped
   to 60 s at about 100 Hz with 1 s pauses, jitter and 0.005 rad of servo noise: keyframes kept
   against the samples and against the baseline (every N-th sample, the largest N that keeps
   the tolerance), max deviation, time.

Prints every target with ok/MISSED.
"""

import argparse
from pathlib import Path
import sys
import time

import numpy as np
from scipy.optimize import minimize

from sweetie_motion.model import load_robot_description
from sweetie_motion.storage.migration import load_ros1_json
from sweetie_motion.trajectory import retime as retiming
from sweetie_motion.trajectory.codec import load_goal_file
from sweetie_motion.trajectory.keyframes import (
    DEFAULT_TOLERANCE, fit_keyframes, smooth_recording,
)
from sweetie_motion.trajectory.spline import build_spline
from sweetie_motion.trajectory.timing import (
    limit_excess, planning_limits, PLANNING_MARGIN, scale_times,
)
from targets import Targets

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = Path('/work/shared/sweetie_movements')
if not ORIGINAL.is_dir():
    ORIGINAL = ROOT / 'test' / 'data' / 'sweetie_movements'
NOISE = 0.005


def best(function, repeat):
    """Return the best wall time of ``function`` over ``repeat`` runs [s] and its result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def animations():
    """Yield (name, joints, times, positions) of every stored and original animation."""
    paths = sorted((ROOT / 'config' / 'trajectories').glob('*.yaml')) + \
        sorted(ORIGINAL.glob('*.json'))
    for path in paths:
        goal = load_goal_file(path) if path.suffix == '.yaml' else load_ros1_json(path)
        if not goal.points:
            continue
        joints = goal.joints()
        columns = [goal.joint_names.index(j) for j in joints]
        times = np.array([p.time for p in goal.points])
        positions = np.array([[p.positions[c] for c in columns] for p in goal.points])
        label = ('' if path.suffix == '.yaml' else 'original/') + path.stem
        yield label, joints, times, positions


def dense_need(times, positions, limits, interpolation='akima'):
    """Return the largest share of the planning limits needed, sampled every 0.5 ms."""
    spline = build_spline(times, positions, interpolation=interpolation)
    _, v, a = spline.sample_many(np.arange(times[0], times[-1], 0.0005))
    return float(max(np.max(np.abs(v) / (limits.velocity * PLANNING_MARGIN)),
                     np.max(np.sqrt(np.abs(a) / (limits.acceleration * PLANNING_MARGIN)))))


def uniform_fit(times, positions, joints, limits):
    """Return the baseline: one factor for the whole motion, found with the package's check."""
    planning = planning_limits(limits)
    origin = float(times[0])
    # limit_excess reports factors above 1 only: speed the motion up until it exceeds the
    # limits (by halves, so that its 5 ms sampling stays about as fine), then take its factor
    shrink = 1.0
    while True:
        fast = scale_times(times, shrink, origin)
        factor, excess = limit_excess(build_spline(fast, positions), joints, planning,
                                      start=origin)
        if excess is not None or shrink < 1e-3:
            return scale_times(fast, factor, origin)
        shrink /= 2


def slsqp_gap(result, positions, limits):
    """Return how much shorter [share] SLSQP from our timing gets, within the exact limits."""
    planning = planning_limits(limits)
    inverse_v = retiming._inverse(planning.velocity)
    inverse_a = retiming._inverse(planning.acceleration)

    def need(h):
        spline = build_spline(retiming._times(0.0, h), positions)
        return retiming._usage(spline, inverse_v, inverse_a).ratio

    h0 = np.diff(result.times)
    moving = need(h0) > 0
    found = minimize(lambda h: h.sum(), h0, jac=lambda h: np.ones_like(h), method='SLSQP',
                     constraints=[{'type': 'ineq', 'fun': lambda h: (1 - need(h))[moving]}],
                     bounds=[(retiming.MIN_SEGMENT, None)] * len(h0),
                     options={'maxiter': 200})
    if np.max(need(found.x)) > 1 + 1e-4:
        return 0.0
    return float(1.0 - found.x.sum() / h0.sum())


def bench_retiming(model, repeat, targets):
    print('--- fit to limits: duration [s] (first to last keyframe), modified Akima ---')
    print(f'  {"animation":24s} {"k":>3s} {"before":>7s} {"ctrl":>7s} {"uniform":>7s} '
          f'{"ours":>7s} {"ours/u":>7s} {"+pauses":>7s} {"toppra":>7s} {"ms ours":>8s} '
          f'{"ms unif":>8s}')
    worst_need, slower, gaps, ratios, speed = 0.0, [], [], [], []
    for label, joints, times, positions in animations():
        limits = model.joint_limits().take(model.get_joint_indices(joints))
        ours_time, result = best(lambda: retiming.fit_to_limits(times, positions, joints,
                                                                limits), repeat)
        uniform_time, uniform = best(lambda: uniform_fit(times, positions, joints, limits),
                                     repeat)
        kept = retiming.fit_to_limits(times, positions, joints, limits, keep_pauses=True)
        before = times[-1] - times[0]
        controller = max(before, uniform[-1] - uniform[0])
        uniform_duration = uniform[-1] - uniform[0]
        worst_need = max(worst_need, dense_need(result.times, positions, limits),
                         dense_need(kept.times, positions, limits))
        if result.duration_after > uniform_duration * (1 + 2e-3):
            slower.append(label)
        gaps.append(slsqp_gap(result, positions, limits))
        ratios.append(result.duration_after / uniform_duration)
        speed.append(ours_time / uniform_time)
        print(f'  {label:24s} {len(times):3d} {before:7.2f} {controller:7.2f} '
              f'{uniform_duration:7.2f} {result.duration_after:7.2f} {ratios[-1]:7.2f} '
              f'{kept.duration_after:7.2f} {result.toppra_duration:7.2f} '
              f'{ours_time * 1e3:8.2f} {uniform_time * 1e3:8.2f}')
    print(f'  ours / uniform duration: median {np.median(ratios):.2f}, best {min(ratios):.2f}, '
          f'worst {max(ratios):.2f}; time ours / uniform: median {np.median(speed):.1f}x')
    targets.check('retimed animations within the planning limits (0.5 ms sampling)',
                  f'{worst_need:.4f}', '<= 1.001', worst_need <= 1.001)
    targets.check('retimed animations no slower than one factor', f'{len(slower)} slower',
                  '0', not slower, f' {", ".join(slower)}' if slower else '')
    targets.check('SLSQP from our timing finds no shorter one (largest gain)',
                  f'{max(gaps) * 100:.2f} %', '<= 1 %', max(gaps) <= 0.01)

    rng = np.random.default_rng(7)
    times = np.concatenate([[0.0], np.cumsum(rng.uniform(0.1, 0.6, 199))])
    positions = np.cumsum(rng.normal(0.0, 0.15, (200, 32)), axis=0)
    joints = [f'j{k}' for k in range(32)]
    limits = model.joint_limits().take(np.arange(32) % len(model.list_all_joints()))
    ours_time, result = best(lambda: retiming.fit_to_limits(times, positions, joints, limits),
                             max(1, repeat // 2))
    uniform_time, _ = best(lambda: uniform_fit(times, positions, joints, limits), repeat)
    print(f'  synthetic 200 keyframes x 32 joints: {ours_time * 1e3:.0f} ms '
          f'({ours_time / uniform_time:.1f}x the uniform fit), {result.iterations} iterations')
    targets.check('fit to limits of 200 keyframes x 32 joints', f'{ours_time:.3f} s',
                  '<= 0.5 s', ours_time <= 0.5)


def every_nth(times, recording, tolerance):
    """Return the baseline: keyframes every N-th sample, the largest N within tolerance."""
    m = len(times)
    for n in range(max(2, m // 4), 0, -1):
        chosen = np.unique(np.concatenate([np.arange(0, m, n), [m - 1]]))
        spline = build_spline(times[chosen], recording[chosen])
        if np.max(np.abs(spline.sample_many(times)[0] - recording)) <= tolerance:
            return chosen
    return np.arange(m)


def demonstration(times, positions, noise, seed):
    """Return a 60 s recording of the animation looped with 1 s pauses, about 100 Hz."""
    rng = np.random.default_rng(seed)
    spline = build_spline(times - times[0], positions)
    period = spline.duration + 1.0
    stamps = np.arange(0.0, 60.0, 0.01) + rng.uniform(-0.003, 0.003, 6000)
    stamps[0] = 0.0
    recording = spline.sample_many(np.minimum(stamps % period, spline.duration))[0]
    truth = int(np.ceil(60.0 / period)) * len(times)
    return stamps, recording + rng.normal(0.0, noise, recording.shape), truth


def bench_keyframes(repeat, targets):
    print(f'--- keyframes from 60 s recordings at 100 Hz, noise {NOISE} rad, tolerance '
          f'{DEFAULT_TOLERANCE} rad ---')
    print(f'  {"recording":30s} {"n":>3s} {"samples":>7s} {"played":>6s} {"ours":>5s} '
          f'{"every N":>7s} {"ours/N":>6s} {"max dev":>8s} {"ms":>7s}')
    ratios, worst_time, worst_dev = [], 0.0, 0.0
    cases = []
    for label, joints, times, positions in animations():
        if label.startswith('original/'):
            cases.append((label, positions, times, NOISE, 0.0, DEFAULT_TOLERANCE))
    greeting = next(c for c in cases if c[0] == 'original/greeting')
    cases += [(greeting[0] + ' no noise', greeting[1], greeting[2], 0.0, 0.0, 0.01),
              (greeting[0] + ' tol 0.02', greeting[1], greeting[2], NOISE, 0.0, 0.02),
              (greeting[0] + ' tol 0.02 smooth', greeting[1], greeting[2], NOISE, 0.03,
               0.02)]
    for k, (label, positions, times, noise, smoothing, tolerance) in enumerate(cases):
        stamps, recording, played = demonstration(times, positions, noise, k)
        seconds, fit = best(lambda: fit_keyframes(stamps, recording, tolerance,
                                                  smoothing=smoothing), repeat)
        # the baseline keeps the same signal (smoothed when ours is)
        baseline = every_nth(stamps, smooth_recording(stamps, recording, smoothing), tolerance)
        ratios.append(len(fit.indices) / len(baseline))
        worst_time = max(worst_time, seconds)
        worst_dev = max(worst_dev, float(np.max(fit.max_deviation / tolerance)))
        print(f'  {label:30s} {recording.shape[1]:3d} {len(stamps):7d} {played:6d} '
              f'{len(fit.indices):5d} {len(baseline):7d} {ratios[-1]:6.2f} '
              f'{np.max(fit.max_deviation):8.4f} {seconds * 1e3:7.1f}')
    print(f'  ours / every N-th: median {np.median(ratios):.2f}, worst {max(ratios):.2f}')
    targets.check('keyframes within the tolerance (max deviation / tolerance)',
                  f'{worst_dev:.3f}', '<= 1', worst_dev <= 1.0 + 1e-9)
    targets.check('keyframes fewer than every N-th sample (worst ratio)', f'{max(ratios):.2f}',
                  '< 1', max(ratios) < 1.0)
    targets.check('keyframing a 60 s recording at 100 Hz (slowest)', f'{worst_time:.3f} s',
                  '<= 0.5 s', worst_time <= 0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--quick', action='store_true', help='fewer repetitions')
    args = parser.parse_args()
    repeat = 2 if args.quick else 5
    model = load_robot_description('sweetie_bot.yaml')
    model.configure()
    targets = Targets('fit to limits and keyframes, issue #12')
    # the first call imports toppra (and matplotlib, which toppra imports): once per process
    start = time.perf_counter()
    retiming.fit_to_limits([0.0, 1.0], [[0.0], [1.0]], ['j'],
                           model.joint_limits().take([0]))
    print(f'first fit in a process (imports toppra): {time.perf_counter() - start:.2f} s')
    bench_retiming(model, repeat, targets)
    bench_keyframes(max(1, repeat // 2), targets)
    return targets.report()


if __name__ == '__main__':
    sys.exit(main())
