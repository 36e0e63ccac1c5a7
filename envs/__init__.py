"""cardzoo environments: four card games as PettingZoo AEC envs with action masks.

    import envs
    env = envs.make("neu", num_players=4)      # same as envs.neu_v0.env(num_players=4)
    par = envs.neu_v0.parallel_env(num_players=4)   # PettingZoo's parallel API, one decision per step
    single = envs.make_single_agent("neu", seat=0, opponents=my_bot)      # a gymnasium.Env; opponents
                                                # named by spec ("heuristic"): agents.make_single_agent
    facts = envs.info("neu", num_players=4)     # sizes, step bound, notation, obs layout; no env built

`envs.info(name, num_players=4, **rules)` returns an `envs.facts.GameInfo`
(frozen): ``name``, ``num_players``, ``num_actions``, ``obs_size``,
``state_size``, ``max_steps``, ``rules`` (options with defaults),
``card_names`` (card id -> notation), ``action_names`` (for player_0),
``secret_actions`` (action ids whose taker is kept from the other seats),
``hidden_decisions``, ``obs_layout`` / ``seat_layout`` (name -> slice) and
``seat_block``. `envs.engine_class(name)` is the rules engine itself. An
unknown name raises ValueError listing the games, here and in `envs.module`.

Each game is a rules engine (`envs/<game>.py`, no PettingZoo import) plus a
thin shim `envs/<game>_v0.py` whose docstring is its documentation page.
Importing this package registers every env with PettingZoo's registry, so
``pettingzoo.make("aec", "cardzoo/neu-v0")`` and ``pettingzoo.make("parallel",
"cardzoo/neu-v0")`` work too, and one seat of every
game with gymnasium's: ``gymnasium.make("cardzoo/Neu-v0", num_players=4, seat=0,
opponents="heuristic")`` (ids from `envs.gym_id`; the keywords of
`agents.make_single_agent`), and ``gymnasium.make_vec`` over the same ids.
Vectorised, use ``vector_kwargs={"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}``:
every mask a policy then sees belongs to a real decision (under the default
NEXT_STEP mode the terminal step's mask is all ones, and the action sampled for
the reset step is ignored).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from envs import kernel_cache

kernel_cache.use()  # before any kernel is defined: numba's cache keyed by the kernels' sources

# name -> shim module; the order is the order of docs/RULES.md.
GAMES: dict[str, str] = {
    "not_for_me": "envs.not_for_me_v0",
    "deadfall": "envs.deadfall_v0",
    "neu": "envs.neu_v0",
    "not_your_mas_jong": "envs.not_your_mas_jong_v0",
}


def __getattr__(name: str) -> ModuleType:
    # `envs.neu_v0` after a plain `import envs`, as PettingZoo's packages offer their envs: the
    # shim is imported the first time it is asked for.
    for shim in GAMES.values():
        if shim == f"envs.{name}":
            return importlib.import_module(shim)
    raise AttributeError(f"module 'envs' has no attribute {name!r}")


def module(name: str) -> ModuleType:
    """The `<game>_v0` module of a game; ValueError names the valid games."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; valid games: {', '.join(GAMES)}")
    return importlib.import_module(GAMES[name])


def engine_class(name: str) -> type:
    """The rules engine class of a game (`envs.engine.Engine`)."""
    return module(name).raw_env.engine_cls


def info(name: str, num_players: int | None = 4, **rules: Any):
    """The game's facts (`envs.facts.GameInfo`) for these players and rule options, with no env built.
    A player count that only a preset takes (Ma's Jong at two players) gives that preset's facts."""
    from envs.facts import game_info

    cls = engine_class(name)
    return game_info(cls, num_players, **(rules or cls.preset_for(num_players)))


def available_games() -> list[str]:
    """The games' names, in the order of docs/RULES.md."""
    return list(GAMES)


def make(name: str, **kwargs: Any):
    """`envs.make("neu", num_players=4, render_mode=None, **rule_options)` -> wrapped env."""
    return module(name).env(**kwargs)


def make_raw(name: str, **kwargs: Any):
    return module(name).raw_env(**kwargs)


def box_obs(env, mask_form: str = "array"):
    """Float32 Box observations, mask in ``infos[agent]["action_mask"]``: see `envs.wrappers`."""
    from envs.wrappers import box_obs as wrap

    return wrap(env, mask_form)


def make_single_agent(game: str, num_players: int | None = 4, seat: int = 0, *, opponents: Any,
                      render_mode: str | None = None, move_timeout: float | None = None, minimal_infos: bool = False,
                      **rule_options: Any):
    """One seat of `game` as a `gymnasium.Env` against `opponents` (agent objects or callables);
    see `envs.single_agent`. Opponents named by spec ("heuristic"): `agents.make_single_agent`."""
    from envs.single_agent import make_single_agent as make

    return make(game, num_players=num_players, seat=seat, opponents=opponents, render_mode=render_mode,
                move_timeout=move_timeout, minimal_infos=minimal_infos, **rule_options)


def vector_env(game: str, num_envs: int, num_players: int | None = 4, seed: int = 0, **rule_options: Any):
    """`num_envs` tables of one game stepped together in compiled kernels; see `envs.vector`."""
    try:
        from envs.vector import vector_env as make  # numba loads only when a batched engine is asked for
    except ModuleNotFoundError as e:
        if e.name != "numba":
            raise
        raise ImportError("envs.vector_env needs numba: pip install 'numba>=0.60'") from None
    return make(game, num_envs, num_players, seed, **rule_options)


def gym_id(name: str) -> str:
    """The gymnasium id of one seat of a game: ``"cardzoo/NotForMe-v0"`` for ``"not_for_me"``."""
    if name not in GAMES:
        module(name)  # raises, listing the games
    return "cardzoo/" + "".join(part.capitalize() for part in name.split("_")) + "-v0"


def _register_gym() -> None:
    import gymnasium

    for name in GAMES:
        env_id = gym_id(name)
        if env_id not in gymnasium.registry:
            # A string entry point: gymnasium imports agents.opponents only when an env is
            # made, so that envs itself never imports agents (opponents are named by spec).
            # The game is the id's (gym_game), so a game= given to gym.make cannot silently replace it.
            gymnasium.register(env_id, entry_point="agents.opponents:make_gym_env", kwargs={"gym_game": name})


def _register() -> None:
    _register_gym()
    try:
        import pettingzoo
    except ImportError:  # pragma: no cover - pettingzoo is a dependency
        return
    register = getattr(pettingzoo, "register", None)
    if register is None:  # PettingZoo before the registry (< 1.25)
        return
    for kind, make in (("aec", "env"), ("parallel", "parallel_env")):
        registry = getattr(pettingzoo, f"{kind}_registry", {})
        for name, mod in GAMES.items():
            env_id = f"cardzoo/{name}-v0"
            if env_id not in registry:
                register(kind, env_id, entry_point=f"{mod}:{make}")


_register()
