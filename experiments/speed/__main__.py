"""``python -m experiments.speed``: the speed commands (experiments/speed/__init__.py)."""

import sys

from experiments.speed import main

sys.exit(main())
