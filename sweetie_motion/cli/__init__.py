"""
The `sweetie-motion` command line: :mod:`.main` parses it and runs each subcommand.

Each module holds a subcommand (:mod:`.check`, :mod:`.program`, :mod:`.servo`, :mod:`.simulate`,
:mod:`.status`). Subcommands that need ROS import rclpy lazily, so `sweetie-motion describe`
works anywhere the pure core does. ``sweetie_motion.cli:main`` is the console script's entry
point, and ``python -m sweetie_motion.cli`` runs it too.
"""

from sweetie_motion.cli.main import main

__all__ = ['main']
