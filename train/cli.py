"""Command-line plumbing for the trainers: a dataclass of arguments becomes a parser with one-line errors.

Each field of the dataclass is a flag (`--rollout-steps` for `rollout_steps`),
its metadata["help"] the help text, its default shown in --help. Counts take
`2_000_000` and `2e6`. Errors are one line and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import signal

def interrupted(signum, frame):
    """A SIGTERM handler: the command stops as on Ctrl-C (its own clean-up, message and exit 130)."""
    raise KeyboardInterrupt


def as_command(main, *args) -> int:
    """Run `main` as this process's own command (``python -m ...``): SIGTERM, a scheduler's or
    ``kill``'s stop, ends it as Ctrl-C does, so locks and claims are released and the run can
    be continued. Only for a process's own command, never for main() called from Python."""
    previous = signal.signal(signal.SIGTERM, interrupted)
    try:
        return main(*args)
    finally:
        signal.signal(signal.SIGTERM, previous)


WORKERS_PER_CPU = 4  # worker processes a command starts on this machine, at most, for each of its CPUs


def max_workers() -> int:
    """The most worker processes a command starts here: `WORKERS_PER_CPU` a CPU, and at least 8."""
    return max(8, WORKERS_PER_CPU * (os.cpu_count() or 1))


def check_workers(workers: int, flag: str = "--workers") -> None:
    """ValueError for a count of local worker processes far above this machine's CPUs (each one
    is forked or spawned at once, and a count in the thousands would not end)."""
    if workers > max_workers():
        raise ValueError(f"{flag} {workers} is far above this machine's {os.cpu_count()} CPUs: at most {max_workers()} "
                         "local worker processes (a Ray cluster takes more with --backend ray)")


def shown(word: str) -> str:
    """A command's word as records keep it: an absolute path inside the current folder made
    relative to it (``--out=/…/runs/a`` too), so that no record names the machine it ran on."""
    head, eq, tail = word.partition("=") if word.startswith("--") else ("", "", word)
    path = tail if eq or not head else word
    if not os.path.isabs(path):
        return word
    here = os.getcwd()
    try:
        inside = os.path.commonpath([here, os.path.abspath(path)]) == here
    except ValueError:  # another drive
        inside = False
    if not inside:
        return word
    rel = os.path.relpath(path, here)
    return f"{head}={rel}" if eq else rel


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def command_line(args, module: str, resume: bool = False) -> str:
    """The command that gives the dataclass `args`: `module` and the flags that differ from their
    defaults (game and players always), so a checkpoint or run folder can say how it was made."""
    words = [f"python -m {module}"]
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if f.name in ("resume", "overwrite") or (value == f.default and f.name not in ("game", "players")):
            continue
        words += [flag(f.name)] if value is True else [flag(f.name), shown(str(value))]
    return " ".join(words + (["--resume"] if resume else []))


def parse_rules(text: str) -> dict:
    """Rule options from "name=value,name=value" (values: true/false, numbers, or words); "" is none.
    ValueError for a malformed pair; the game itself refuses an unknown name or value."""
    rules = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name or not value:
            raise ValueError(f"--rules takes name=value pairs separated by commas, got {pair!r}")
        if name in rules:
            raise ValueError(f"--rules gives {name!r} twice")
        lowered = value.lower()
        if lowered in ("true", "false"):
            rules[name] = lowered == "true"
            continue
        try:
            rules[name] = int(value)
        except ValueError:
            try:
                number = float(value)
                rules[name] = number if math.isfinite(number) else value
            except ValueError:
                rules[name] = value
    return rules


def check_numbers(args, ints: dict, floats: dict) -> None:
    """ValueError, naming the flag, for a count or number that is not finite or out of its range."""
    for name, (low, high) in ints.items():
        value = getattr(args, name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{flag(name)} must be a whole number from {low:,} to {high:,}, got {value}")
    for name, (low, high, closed) in floats.items():
        value = getattr(args, name)
        if not (math.isfinite(value) and (low <= value if closed else low < value) and value <= high):
            raise ValueError(f"{flag(name)} must be a finite number in {'[' if closed else '('}{low}, {high}], got {value}")


def integer(text: str) -> int:
    """A count: 2_000_000 and 2e6 both work; 2.5e6 is a float, not a count."""
    text = text.replace("_", "")
    try:
        return int(text)
    except ValueError:
        value = float(text)  # ValueError here: argparse says "invalid integer value"
        if not value.is_integer():
            raise
        return int(value)


class DefaultsShown(argparse.ArgumentDefaultsHelpFormatter):
    def _get_help_string(self, action):  # an empty default ("" or False) says nothing worth a "(default: )"
        empty = action.default is None or action.default is False or action.default == ""
        return action.help if empty else super()._get_help_string(action)


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line, not the whole usage block
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(args_class, prog: str, description: str, epilog: str = "", choices: dict | None = None) -> OneLineParser:
    """A parser with one flag per field of `args_class`; `choices` maps field names to their valid values."""
    parser = OneLineParser(prog=prog, description=description, formatter_class=DefaultsShown, epilog=epilog)
    for f in dataclasses.fields(args_class):
        if f.type in ("bool", bool):
            parser.add_argument(flag(f.name), action="store_true", help=f.metadata["help"])
            continue
        kind = {"int": integer, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
        valid = (choices or {}).get(f.name, f.metadata.get("choices"))
        parser.add_argument(flag(f.name), type=kind, default=f.default, choices=valid, help=f.metadata["help"])
    return parser
