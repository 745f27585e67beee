"""The package's ROS-facing clients and message conversions (the nodes are in nodes/)."""
