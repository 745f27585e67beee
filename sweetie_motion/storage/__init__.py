"""Trajectory storage: files, names, migration of the old robot's animations (no rclpy)."""
