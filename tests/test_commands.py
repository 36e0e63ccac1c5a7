"""Command-line help: each default said once, and `--help` fast."""

from __future__ import annotations

import subprocess
import sys

from experiments.cli import ArgumentParser


def test_help_says_each_default_once():
    p = ArgumentParser(prog="x")
    p.add_argument("--players", default=None, help="player count (default: the game's default)")
    p.add_argument("--game", required=True, default=None, help="which game")
    p.add_argument("--mode", choices=["fill", "rr"], help="tables (default: fill, or rr for many agents)")
    p.add_argument("--deals", type=int, default=500, help="deals per table")
    p.add_argument("--name", default="", help="a label")
    p.add_argument("--quiet", action="store_true", help="less output")
    text = " ".join(p.format_help().split())
    assert "(default: None)" not in text and "(default: False)" not in text and "(default: )" not in text
    assert text.count("(default") == 3  # --players and --mode say their own, --deals gets one
    assert "deals per table (default: 500)" in text


def test_tournament_help_has_no_doubled_or_empty_defaults():
    r = subprocess.run([sys.executable, "-m", "experiments.tournament", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    options = " ".join(r.stdout.split()).split(" --")
    assert "(default: None)" not in r.stdout
    assert [o for o in options if o.count("(default") > 1] == []
    assert "(default: the game's default)" in " ".join(r.stdout.split())
