"""
Did the robot stop? The reference recorded from another process, judged against its limits.

After a stop action at time ``acted`` every joint must come to rest within its braking distance
(from the speed and the acceleration it had, within its acceleration and jerk limits, plus a
tenth) plus what it travels while the stop makes its way (``reaction``), and stay at rest.
"""

from dataclasses import dataclass
import time
from typing import List, Sequence

import numpy as np
from waiting import wait_for

#: a joint slower than this is at rest [rad/s]
AT_REST = 1e-3
#: how many reference messages in a row must be at rest (0.2 s at 100 Hz)
REST_RUN = 20


def braking_distance(speed: float, acceleration: float, limit: float, jerk: float):
    """
    Return (distance [rad], time [s]) to rest from ``speed`` (and ``acceleration`` along it).

    The fastest stop within the acceleration ``limit`` and the ``jerk`` limit: the deceleration
    ramps up at the jerk limit (taking back an acceleration first), and eases off so as to
    reach rest without reversing.
    """
    if not np.isfinite(jerk) or jerk <= 0:
        return (speed * speed / (2 * limit) + max(0.0, acceleration) * speed / limit,
                speed / limit)
    dt, distance, v, a, t = 1e-4, 0.0, speed, acceleration, 0.0
    while v > 0:
        if a < 0 and v <= a * a / (2 * jerk):
            a = min(0.0, a + jerk * dt)                # ease off: rest with no reversal
        else:
            a = max(a - jerk * dt, -limit)
        v += a * dt
        t += dt
        distance += max(v, 0.0) * dt
    return distance, t


def stamp(msg) -> float:
    """Return a message's header stamp [s] (the tick's time, as time.time())."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def speed_of(msg, joints: Sequence[str]) -> float:
    """Return the largest reference speed of ``joints`` in a JointState [rad/s]."""
    names = list(msg.name)
    return max(abs(msg.velocity[names.index(j)]) for j in joints)


@dataclass
class StopFigures:
    """
    How a stop went.

    :param speed: the fastest joint's speed when the stop was asked for [rad/s].
    :param rest_after: from the stop action to the first message of the rest [s].
    :param braking_time: what the fastest stop within the limits takes [s].
    :param margin: the worst joint's travel beyond its allowance [rad] (<= 0: within it).
    """

    speed: float
    rest_after: float
    braking_time: float
    margin: float
    lines: List[str]

    def within(self, reaction: float) -> bool:
        """Return whether the robot stopped within braking + ``reaction``, in time and travel."""
        return self.margin <= 0.0 and \
            self.rest_after <= reaction + 1.2 * self.braking_time + 0.1


def wait_until_moving(peer, joints: Sequence[str], speed: float = 0.2,
                      timeout: float = 60.0) -> None:
    """Wait until one of ``joints`` moves faster than ``speed`` in the reference [rad/s]."""
    def moving() -> bool:
        with peer.lock:
            msg = peer.reference
        return msg is not None and speed_of(msg, joints) > speed
    wait_for(moving, timeout, period=0.02, message='the robot under way')


def wait_at_rest(peer, joints: Sequence[str], timeout: float = 10.0) -> None:
    """Wait until the last :data:`REST_RUN` references of ``joints`` are at rest."""
    def resting() -> bool:
        with peer.lock:
            recent = peer.history[-REST_RUN:]
        return len(recent) == REST_RUN and all(speed_of(m, joints) < AT_REST for m in recent)
    wait_for(resting, timeout, period=0.05, message='the robot at rest')


def judge_stop(peer, model, joints: Sequence[str], acted: float, reaction: float,
               hold: float = 1.0) -> StopFigures:
    """
    Wait for the rest after a stop action at ``acted`` (time.time()); return how it went.

    :param peer: records ``joint_states_ref`` (``history``, ``lock``), from another process.
    :param model: the configured robot model (its limits).
    :param reaction: what the stop may take to reach the cycle [s].
    :param hold: how long the rest must then last [s].
    """
    wait_at_rest(peer, joints)
    rested = time.time()
    time.sleep(hold)
    with peer.lock:
        history = [m for m in peer.history if stamp(m) >= acted - 0.5]
    assert history, 'no reference was recorded around the stop'
    index = {j: k for k, j in enumerate(model.list_all_joints())}
    acceleration, jerk = model.acceleration_limits(), model.jerk_limits()
    velocity = model.joint_limits().velocity
    names = list(history[0].name)
    k_act = min(range(len(history)), key=lambda k: abs(stamp(history[k]) - acted))
    at_act, before = history[k_act], history[max(0, k_act - 2)]
    after_rest = [m for m in history if stamp(m) >= rested]
    moved_again = [m for m in after_rest if speed_of(m, joints) >= AT_REST]
    assert not moved_again, f'the robot moved again after it had come to rest ' \
        f'({speed_of(moved_again[0], joints):.3f} rad/s)'
    # the first message from which every later one is at rest
    k_rest = len(history)
    while k_rest > 0 and speed_of(history[k_rest - 1], joints) < AT_REST:
        k_rest -= 1
    rest_at = stamp(history[min(k_rest, len(history) - 1)])
    final = history[-1]
    worst, longest, lines = -np.inf, 0.0, []
    for joint in joints:
        k, j = names.index(joint), index[joint]
        speed = abs(at_act.velocity[k])
        span = max(stamp(at_act) - stamp(before), 1e-3)
        along = (at_act.velocity[k] - before.velocity[k]) / span * np.sign(at_act.velocity[k])
        # a joint that speeds up goes on doing so while the stop makes its way; one caught at a
        # keyframe's momentary rest may start off in that time at up to its acceleration limit
        # (a window killed there: the plan went on 0.3 s, until its pendant's lease ran out),
        # and so may one slowing down into a keyframe it reaches within that time (a fresh
        # clone run: a head joint at 0.004 rad/s, 0.023 rad further on after a stop button
        # 0.2 s later, the plan's next segment begun)
        into_keyframe = along < 0.0 and speed < -along * reaction
        speeding_up = acceleration[j] if speed < AT_REST or into_keyframe else \
            min(max(0.0, along), acceleration[j])
        reached = min(speed + speeding_up * reaction, velocity[j])
        reacting = (speed + reached) / 2 * reaction
        distance, seconds = braking_distance(reached, along, acceleration[j], jerk[j])
        braking = 1.1 * distance
        travelled = abs(final.position[k] - at_act.position[k])
        worst = max(worst, travelled - (braking + reacting + 0.01))
        longest = max(longest, seconds)
        lines.append(f'{joint}: {speed:.3f} rad/s, braking {braking:.3f} rad, travelled '
                     f'{travelled:.3f} rad')
    return StopFigures(speed_of(at_act, joints), rest_at - acted, longest, worst, lines)
