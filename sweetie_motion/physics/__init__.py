"""
The robot on a floor in a physics engine (MuJoCo), built from its robot description (R-SYS-11).

:mod:`sweetie_motion.model.physics_settings` (the description's ``physics:``, read with the
model), :mod:`.meshes` (collision meshes), :mod:`.urdf_bodies` and :mod:`.servos` (what the
model is made of), :mod:`.builder` (the MuJoCo model), :mod:`.simulation` (one simulated robot),
:mod:`.motion` (a stored motion played as the controller plays it, and what happened),
:mod:`.figures` (its plot). Pure: no rclpy, no Qt; MuJoCo is imported where a model is built.
"""
