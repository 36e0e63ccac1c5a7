"""Agent specs: one way to name any agent, built-in or your own.

A *spec* is any of

* ``"random"``, ``"heuristic"``, ``"ppo"`` — the baselines;
* ``"ppo:PATH"`` — a PPO checkpoint file;
* ``"cfr:PATH"`` — a solved small preset's average policy (`experiments.solve`'s ``policy.npz``);
* ``"pimc"``, ``"pimc:worlds=64,horizon=game"`` — the search agent (`agents.search`);
  ``"pimc_cheat"`` its upper bound that sees every hand (never a default anywhere; its name
  in results always ends in " (upper bound)", `is_upper_bound`);
  ``"ismcts"``, ``"ismcts:iterations=256"`` — information-set MCTS (`agents.search`);
* ``"file.py:Name"`` — ``Name`` defined in a Python file (loaded once per process);
* ``"package.module:Name"`` — ``Name`` in an importable module;
* ``"label=SPEC"`` — any of the above under the name ``label`` in results;
* a class or any callable (a factory) — called with the keywords ``game``,
  ``num_players`` and ``seed`` that it accepts, it must return an object with
  ``act(observation) -> int`` (``reset()`` and ``seed(seed)`` are optional);
* an agent object — each seat gets its own deep copy.

``make_agent(spec, game, num_players, seed)`` builds one agent from a spec,
``spec_label(spec)`` is the name it goes by in tables and plots.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

BUILTIN_KINDS = ("random", "heuristic", "ppo")
# Every form of spec, in words, for --help texts and errors (the module docstring says what each is).
SPEC_FORMS = ("random", "heuristic", "ppo", "ppo:PATH", "cfr:PATH", "pimc", "pimc:worlds=N",
              "pimc_cheat (an upper bound)", "ismcts", "ismcts:iterations=N", "FILE.py:Name", "package.module:Name", "label=SPEC")
SPEC_LIST = ", ".join(SPEC_FORMS)
# Search agents (agents.search), with options after a colon: "pimc:worlds=64,horizon=game", "ismcts:iterations=256".
SEARCH_KINDS = ("pimc", "pimc_cheat", "ismcts")
# Kinds cardzoo builds as upper bounds, not fair players: only they are handed the real game
# (`envs.belief.informed` with ``upper_bound=True``), and their names in every result carry
# UPPER_BOUND_MARK, whatever label they were given.
UPPER_BOUND_KINDS = ("pimc_cheat",)
UPPER_BOUND_MARK = " (upper bound)"


def is_upper_bound(x: Any) -> bool:
    """Whether `x` (a spec string, a class or an agent object) is an upper bound that cardzoo itself
    builds. An object counts only when its class is exactly one of cardzoo's upper-bound
    classes: a method named ``cheat_inform`` on any other agent, a subclass's included, is
    never called."""
    if isinstance(x, str):
        return split_label(x)[1].partition(":")[0] in UPPER_BOUND_KINDS
    cls = x if isinstance(x, type) else type(x)  # a class spec, or an agent object
    if cls.__module__ != "agents.search.pimc":
        return False
    from agents.search import PIMCCheat

    return cls is PIMCCheat


def split_label(spec: str) -> tuple[str | None, str]:
    """``"mine=bots.py:Greedy"`` -> ``("mine", "bots.py:Greedy")``; no label -> ``(None, spec)``."""
    head, sep, rest = spec.partition("=")
    # A path may contain "=", a label may not contain ":" or "/".
    if sep and head and not any(c in head for c in ":/\\") and rest:
        return head.strip(), rest.strip()
    return None, spec.strip()


def _load_file(path: str):
    """Import a Python file as a module, once per process per resolved path."""
    p = Path(path).expanduser().resolve()
    if not p.is_file():
        raise ValueError(f"agent file {path!r} does not exist")
    name = "cardzoo_user_agent_" + hashlib.sha1(str(p).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, p)
    if spec is None or spec.loader is None:
        raise ValueError(f"agent file {path!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise ValueError(f"agent file {path!r} failed to load: {type(e).__name__}: {e}") from None
    return module


def resolve(text: str) -> Any:
    """The object a ``where:Name`` string points at (a class or a factory)."""
    where, _, name = text.rpartition(":")
    if not where or not name.isidentifier():
        raise ValueError(f"agent {text!r}: expected FILE.py:Name or package.module:Name")
    if where.endswith(".py") or os.sep in where or "/" in where:
        module = _load_file(where)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise ValueError(f"agent {text!r}: cannot import {where!r} ({e})") from None
    try:
        return getattr(module, name)
    except AttributeError:
        raise ValueError(f"agent {text!r}: {where!r} has no {name!r}") from None


def spec_label(spec: Any) -> str:
    """The name an agent goes by in results: its label, its kind, or its class or function name;
    an upper bound's name ends in `UPPER_BOUND_MARK`."""
    if is_upper_bound(spec):
        label = _plain_label(spec)
        return label if label.endswith(UPPER_BOUND_MARK) else label + UPPER_BOUND_MARK
    return _plain_label(spec)


def _plain_label(spec: Any) -> str:
    if isinstance(spec, str):
        label, rest = split_label(spec)
        if label:
            return label
        if rest in BUILTIN_KINDS or rest.partition(":")[0] in SEARCH_KINDS or rest.startswith(("ppo:", "cfr:")):
            return rest
        return rest.rpartition(":")[2] or rest
    if isinstance(spec, type):
        return spec.__name__
    if callable(spec) and not hasattr(spec, "act"):
        return getattr(spec, "__name__", type(spec).__name__)
    return getattr(type(spec), "__name__", "agent")


def _call_with_accepted(factory, game: str, num_players: int, seed: int | None, kwargs: dict):
    """Call a class or factory with the keywords among game/num_players/seed (and kwargs) it accepts."""
    offered = {"game": game, "num_players": num_players, "seed": seed, **kwargs}
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: offer nothing
        return factory()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return factory(**offered)
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return factory(**{k: v for k, v in offered.items() if k in names})


def check_agent(agent: Any, label: str) -> Any:
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent {label!r} built {type(agent).__name__}, which has no act(observation) method")
    return agent


def make_from_spec(spec: Any, game: str, num_players: int, seed: int | None = None, **kwargs) -> Any:
    """Build one agent for one seat from any spec (see the module docstring)."""
    if isinstance(spec, str):
        _, text = split_label(spec)
        if text == "random":
            from agents.base import RandomAgent

            return RandomAgent(game, num_players, seed)
        if text == "heuristic":
            from agents.heuristic import heuristic_class

            return heuristic_class(game)(game, num_players, seed)
        if text == "ppo" or text.startswith("ppo:"):
            from agents.ppo import PPOAgent

            if text.startswith("ppo:"):
                path = text[len("ppo:"):]
                if not os.path.isfile(path):
                    raise FileNotFoundError(f"agent {spec!r}: no checkpoint file at {path!r}")
                kwargs = {**kwargs, "checkpoint": path}
            return PPOAgent.for_game(game, num_players, seed=seed, **kwargs)
        if text.startswith("cfr:"):
            from agents.cfr import CFRAgent

            return CFRAgent(game, num_players, seed, path=text[len("cfr:"):])
        if text.partition(":")[0] in SEARCH_KINDS:
            from agents.search import make_search_agent

            return make_search_agent(text, game, num_players, seed)
        if ":" not in text:
            raise ValueError(
                f"unknown agent kind {text!r}; valid kinds: {', '.join(BUILTIN_KINDS)}, ppo:PATH, cfr:PATH, FILE.py:Name, package.module:Name"
            )
        target = resolve(text)
        if not callable(target):
            raise ValueError(f"agent {spec!r}: {text.rpartition(':')[2]!r} is a {type(target).__name__}, not a class or factory")
        return check_agent(_call_with_accepted(target, game, num_players, seed, kwargs), spec_label(spec))
    if isinstance(spec, type) or (callable(spec) and not hasattr(spec, "act")):
        return check_agent(_call_with_accepted(spec, game, num_players, seed, kwargs), spec_label(spec))
    if hasattr(spec, "act"):
        agent = copy.deepcopy(spec)
        if seed is not None and callable(getattr(agent, "seed", None)):
            agent.seed(seed)
        return check_agent(agent, spec_label(spec))
    raise ValueError(f"cannot make an agent from {spec!r}: expected a name, FILE.py:Name, a class, a factory or an agent")
