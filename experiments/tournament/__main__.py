"""``python -m experiments.tournament``: see `experiments.tournament.command`."""

import sys

from experiments.tournament.command import main

sys.exit(main())
