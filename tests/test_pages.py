"""The documentation pages: each shim's docstring is its game's page, shown once by help()."""

from __future__ import annotations

import pydoc

import pytest

import envs


@pytest.mark.parametrize("game", envs.GAMES)
def test_help_shows_the_page_once(game):
    mod = envs.module(game)
    text = pydoc.render_doc(mod, renderer=pydoc.plaintext)
    for line in ("## Action space", "## Rewards", mod.__doc__.splitlines()[0]):
        assert text.count(line) == 1, f"help({mod.__name__}) shows {line!r} {text.count(line)} times"
    for obj in (mod.raw_env, mod.env):
        assert len(obj.__doc__.splitlines()) == 1 and mod.__name__ in obj.__doc__


def test_neu_page_says_what_every_card_does():
    from envs.neu import KIND_NAMES

    page = envs.module("neu").__doc__
    section = page.split("## What each card does")[1].split("\n## ")[0]
    rows = {line.split("|")[1].strip(): line for line in section.splitlines() if line.startswith("| ")}
    named = set(" ".join(rows).lower().replace("−", "-").replace(",", " ").split())
    if {"1", "…", "9"} <= named:
        named |= {str(v) for v in range(1, 10)}
    for kind in KIND_NAMES:
        assert kind in named, f"no row for the {kind} card"
    assert "unchanged" in rows["Pass"] and "reverses" in rows["Turn"] and "two cards" in section
