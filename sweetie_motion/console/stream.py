"""
The pose the console streams to FollowJointState while a person moves joint sliders (pure).

Each joint moves towards its slider's target with a trapezoidal velocity: it speeds up within
``acceleration``, runs at ``speed`` and brakes so as to stop on the target; a target moved
while the joint runs is taken from the current position and velocity (no jump, and a reversal
brakes first). FollowJointState's jerk-limited smoothing follows such a stream within a few
percent of its speed; a stream that jumps to full speed at once is followed with a catch-up
faster than the speed a person set.
"""

from typing import Optional, Sequence

import numpy as np

#: the stream never advances by more than this at once [s]: a thread held up for a moment
#: (the GUI's 3D drawing holds Python's lock for tens of ms) slows the stream down instead of
#: making it jump, which FollowJointState would follow with a catch-up faster than the speed
MAX_STEP = 0.04


class JointStream:
    """
    Positions that move towards targets within speeds and accelerations, joint by joint.

    :param start: where the joints are [rad or m], shape (n,).
    :param speeds: speed of each joint [rad/s or m/s], > 0, shape (n,).
    :param accelerations: acceleration of each joint [rad/s^2 or m/s^2], > 0, shape (n,).
    :raises ValueError: shapes that differ, speeds or accelerations that are not > 0.
    """

    def __init__(self, start: Sequence[float], speeds: Sequence[float],
                 accelerations: Sequence[float]) -> None:
        self.position = np.array(start, dtype=float)
        self.velocity = np.zeros(len(self.position))
        self.targets = self.position.copy()
        self.set_limits(speeds, accelerations)

    def set_limits(self, speeds: Sequence[float], accelerations: Sequence[float]) -> None:
        """
        Change the speeds [rad/s or m/s] and accelerations [rad/s^2 or m/s^2] of the joints.

        :raises ValueError: see the class.
        """
        speed = np.array(speeds, dtype=float)
        acceleration = np.array(accelerations, dtype=float)
        n = len(self.position)
        if speed.shape != (n,) or acceleration.shape != (n,):
            raise ValueError(f'expected {n} speeds and accelerations, got {speed.shape} and '
                             f'{acceleration.shape}')
        if not (np.all(speed > 0) and np.all(acceleration > 0)):
            raise ValueError('speeds and accelerations must be > 0')
        self.speeds, self.accelerations = speed, acceleration

    def set_targets(self, targets: Sequence[Optional[float]]) -> None:
        """Set the joints' targets [rad or m]; None keeps a joint's target."""
        if len(targets) != len(self.position):
            raise ValueError(f'expected {len(self.position)} targets, got {len(targets)}')
        for k, target in enumerate(targets):
            if target is not None:
                self.targets[k] = float(target)

    @property
    def arrived(self) -> bool:
        """Return whether every joint stands on its target."""
        return bool(np.all(self.position == self.targets) and np.all(self.velocity == 0.0))

    def advance(self, dt: float) -> np.ndarray:
        """
        Move on by ``dt`` [s] (at most :data:`MAX_STEP`); return the positions [rad or m].

        The returned array is the stream's own: copy it to keep it.
        """
        dt = min(max(float(dt), 0.0), MAX_STEP)
        if dt == 0.0:
            return self.position
        a, vmax = self.accelerations, self.speeds
        distance = self.targets - self.position
        # the speed that still stops on the target braking by a * dt a step (from
        # v^2 / 2a + v dt / 2 = distance, the distance such a braking covers)
        braking = a * (np.sqrt(dt * dt / 4.0 + 2.0 * np.abs(distance) / a) - dt / 2.0)
        wanted = np.sign(distance) * np.minimum(vmax, braking)
        self.velocity += np.clip(wanted - self.velocity, -a * dt, a * dt)
        step = self.velocity * dt
        there = (np.abs(step) >= np.abs(distance)) & (np.sign(step) == np.sign(distance))
        there |= (distance == 0.0) & (np.abs(self.velocity) <= a * dt)
        self.position = np.where(there, self.targets, self.position + step)
        self.velocity = np.where(there, 0.0, self.velocity)
        return self.position
