"""``python -m sweetie_motion.cli``: the `sweetie-motion` command."""

import sys

from sweetie_motion.cli.main import main

sys.exit(main())
