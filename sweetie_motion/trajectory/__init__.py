"""Joint trajectories: splines, validation, tolerances, waypoint lists (no rclpy)."""
