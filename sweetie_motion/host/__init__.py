"""
The cycle side of the motion process: the sync cycle and the controller cores, driven by calls.

The ROS nodes (sweetie_motion.nodes) configure and command these components through a
:class:`~sweetie_motion.host.client.HostClient`; by default the cycle side runs in a child
process of its own, so that nothing the ROS side does (converting a large goal message, a storm
of requests) can hold the GIL the cycle needs. Pure: no rclpy.
"""
