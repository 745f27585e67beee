"""ROS 2 adapters: lifecycle nodes around the pure core, and the process main (bringup)."""
