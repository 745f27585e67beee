"""Servo buses: the interface, the virtual robot, the HerkuleX protocol (no rclpy)."""
