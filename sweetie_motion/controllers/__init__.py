"""Controllers of the motion process: their logic, independent of ROS (no rclpy)."""
