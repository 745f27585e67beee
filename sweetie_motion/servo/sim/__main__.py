"""``python -m sweetie_motion.servo.sim``: the program ``sweetie-motion servo-sim``."""

import sys

from sweetie_motion.servo.sim.process import main

if __name__ == '__main__':
    sys.exit(main())
