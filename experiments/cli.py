"""Shared command-line plumbing: bad arguments get one clear line and exit code 2."""

from __future__ import annotations

import argparse
import sys


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but an error is one line naming what is wrong (no usage dump, no traceback)."""

    def error(self, message: str):  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)
