"""
Checks beyond the joint limits (R-SYS-9): self-collision, balance and servo load of a motion.

Pure: pinocchio and coal, no rclpy. :class:`~sweetie_motion.checks.motion.MotionChecker` runs
the three checks over a sampled motion; the trajectory controller, ``sweetie-motion check`` and
the editor use it.
"""
