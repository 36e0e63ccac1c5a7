"""``python -m experiments.web``: the browser page's server (experiments/web/__init__.py)."""

import sys

from experiments.web import main

sys.exit(main())
