"""``python -m experiments.tournament``: see `experiments.tournament.command`."""

import sys

from experiments.tournament.command import as_command, main

sys.exit(as_command(main))
