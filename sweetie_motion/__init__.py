"""sweetie_motion: a ROS 2 motion subsystem for performing robots."""

__version__ = '0.1.0'
