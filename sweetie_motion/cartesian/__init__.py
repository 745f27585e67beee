"""
Cartesian motion, the pure core (R-CART-1..3; no rclpy).

Poses and ZYZ angles, rounded paths, velocity profiles and the per-cycle sampler, workspace
and joint limiters, motion programs.
"""

from sweetie_motion.cartesian.frames import euler_zyz, euler_zyz_angles, MM, Pose
from sweetie_motion.cartesian.limiter import (
    BranchFlipViolation, JointLimiter, JointLimitViolation, LimitViolation, WorkspaceLimiter,
    ZoneConfigError, ZoneViolation,
)
from sweetie_motion.cartesian.path import CartesianPath, PathError, Segment
from sweetie_motion.cartesian.profile import (
    CartesianSamples, MotionProfile, path_profile, ProfileError, sample_path,
)
from sweetie_motion.cartesian.program import (
    format_program, from_path, parse_line, parse_program, ProgramError,
)

__all__ = ['BranchFlipViolation', 'CartesianPath', 'CartesianSamples', 'JointLimitViolation',
           'JointLimiter', 'LimitViolation', 'MM', 'MotionProfile', 'PathError', 'Pose',
           'ProfileError', 'ProgramError', 'Segment', 'WorkspaceLimiter', 'ZoneConfigError',
           'ZoneViolation', 'euler_zyz', 'euler_zyz_angles', 'format_program', 'from_path',
           'parse_line', 'parse_program', 'path_profile', 'sample_path']
