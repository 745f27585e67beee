"""The motion process core: ports, sync cycle, arbiter, aggregator, smoothing (no rclpy)."""
