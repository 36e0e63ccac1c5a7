"""What RL libraries rely on: storable infos, Box observations, the parallel converter, SB3 masking.

Library tests skip when the library is not installed (pytest.importorskip).
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from gymnasium.spaces import Box

import envs
from tests.conftest import GAMES

COMMON_KEYS = {"eliminated", "illegal_move", "scored", "scores", "score_changes", "final_ranks", "final_scores"}


def _random_game(env, seed: int, check=lambda env: None) -> int:
    """Play random legal moves (masks from the observation), calling check after reset and every step."""
    rnd = random.Random(seed)
    env.reset(seed=seed)
    check(env)
    steps = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
        check(env)
        steps += 1
    return steps


# -- infos a replay buffer can store ----------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("which", ["min", "default"])
def test_infos_have_fixed_numeric_keys_at_every_step(game, which):
    cls = envs.module(game).raw_env.engine_cls
    n = cls.min_players if which == "min" else cls.default_players
    env = envs.make(game, num_players=n)
    game_keys = set(env.unwrapped.game.info_defaults())
    schema: dict[str, int | None] = {}  # key -> tuple length (None for a plain int)
    seen_scored = seen_final = 0

    def check(env):
        nonlocal seen_scored, seen_final
        raw = env.unwrapped
        for agent, info in env.infos.items():
            assert set(info) == COMMON_KEYS | game_keys, f"{agent}: keys {sorted(info)}"
            for k, v in info.items():
                if isinstance(v, tuple):
                    assert all(type(x) is int for x in v), f"{k}={v!r}"
                    shape = len(v)
                else:
                    assert type(v) is int, f"{k}={v!r} is a {type(v).__name__}"
                    shape = None
                assert schema.setdefault(k, shape) == shape, f"{k} changed shape"
            assert info["eliminated"] == int(raw.game.out[raw.possible_agents.index(agent)])
            assert info["illegal_move"] == -1
            assert list(info["scores"]) == list(raw.game.scores)
            seen_scored += info["scored"]
            seen_final += any(info["final_ranks"])
        # A replay buffer stacks them into arrays without object dtypes.
        for info in env.infos.values():
            for v in info.values():
                assert np.asarray(v).dtype.kind == "i"

    _random_game(env, 5, check)
    assert schema["scores"] == schema["final_ranks"] == n
    assert seen_scored and seen_final, "the game never reported an event or its end in infos"


@pytest.mark.parametrize("game", GAMES)
def test_readable_event_matches_the_numeric_infos(game):
    env = envs.make(game)
    raw = env.unwrapped
    events = 0

    def check(env):
        nonlocal events
        event = raw.last_event
        if not env.agents:
            return
        info = env.infos[env.agents[0]]
        if event is None:
            assert info["scored"] == 0 and not any(info["score_changes"])
            return
        events += 1
        assert info["scored"] == 1
        assert event["score_changes"] == dict(zip(raw.possible_agents, info["score_changes"]))
        for k in raw.game.INFO_SEATS:
            want = None if info[k] < 0 else raw.possible_agents[info[k]]
            assert event.get(k, want) == want
        for k, names in raw.game.INFO_CODES.items():
            if k in event:
                assert event[k] == names[info[k]]

    _random_game(env, 8, check)
    assert events > 0


# -- Neu: eliminated players stay until everyone ends together --------------------------------


def test_neu_eliminated_players_stay_in_agents_with_zero_masks_and_rewards():
    env = envs.make("neu", num_players=4)
    raw = env.unwrapped
    out_since: dict[str, int] = {}
    step = 0

    def check(env):
        nonlocal step
        step += 1
        game_over = raw.game.game_over
        if not game_over:
            assert env.agents == env.possible_agents and not any(env.terminations.values())
        for s, agent in enumerate(raw.possible_agents):
            if raw.game.out[s] and agent in env.agents:
                if agent in out_since:  # from the step after its elimination on
                    assert env.rewards[agent] == 0
                out_since.setdefault(agent, step)
                assert env.infos[agent]["eliminated"] == 1
                if not game_over:
                    assert env.agent_selection != agent
                    assert not env.observe(agent)["action_mask"].any()
        if game_over and env.agents:
            assert all(env.terminations.values())

    _random_game(env, 3, check)
    assert len(out_since) == 3, "a 4-player Neu game ends after three eliminations"


# -- Box observations and SuperSuit ---------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_box_obs_passes_api_test_and_keeps_the_mask_in_infos(game):
    from pettingzoo.test import api_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(envs.box_obs(envs.make(game)), num_cycles=60)
    env = envs.box_obs(envs.make(game))
    raw = env.unwrapped
    env.reset(seed=2)
    rnd = random.Random(2)
    space = env.observation_space(env.possible_agents[0])
    assert space.dtype == np.float32 and space.shape == (raw.game.obs_size,)
    assert np.array_equal(space.low, raw.game.obs_low) and np.array_equal(space.high, raw.game.obs_high)
    for agent in env.agent_iter(max_iter=300):
        obs, _, term, trunc, info = env.last()
        assert space.contains(obs)
        assert np.array_equal(info["action_mask"], raw.observe(agent)["action_mask"])
        assert "action_mask" not in raw.infos[agent]  # the env's own infos stay numeric and mask-free
        action = None if term or trunc else env.action_space(agent).sample(info["action_mask"])
        env.step(action)
    with pytest.raises(ValueError, match="already"):
        envs.box_obs(env)


SUPERSUIT_WRAPPERS = {
    "flatten_v0": lambda ss, e: ss.flatten_v0(e),
    "frame_stack_v1": lambda ss, e: ss.frame_stack_v1(e, 3),
    "normalize_obs_v0": lambda ss, e: ss.normalize_obs_v0(e, env_min=-1.0, env_max=1.0),
    "dtype_v0": lambda ss, e: ss.dtype_v0(e, np.float64),
}


@pytest.mark.parametrize("wrapper", sorted(SUPERSUIT_WRAPPERS))
@pytest.mark.parametrize("game", GAMES)
def test_supersuit_observation_wrappers_work_on_box_obs(game, wrapper):
    ss = pytest.importorskip("supersuit")
    env = SUPERSUIT_WRAPPERS[wrapper](ss, envs.box_obs(envs.make(game)))
    env.reset(seed=4)
    rnd = random.Random(4)
    steps = 0
    for agent in env.agent_iter(max_iter=400):
        obs, _, term, trunc, info = env.last()
        space = env.observation_space(agent)
        assert space.contains(obs), f"{wrapper}: observation outside {space}"
        mask = info["action_mask"]
        if not (term or trunc):
            assert mask.any()
        env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(mask))))
        steps += 1
    assert steps > 20
    if wrapper == "normalize_obs_v0":
        assert space.low.min() == -1.0 and space.high.max() == 1.0


# -- the parallel API through PettingZoo's turn-based converter ------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_parallel_api_test_passes_through_turn_based_converter(game):
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(turn_based_aec_to_parallel(envs.make(game)), num_cycles=200)


@pytest.mark.parametrize("game", GAMES)
def test_parallel_acting_agent_always_has_moves(game):
    """Exactly the agent to act has a non-empty mask at every parallel step, Neu's eliminations included."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    par = turn_based_aec_to_parallel(envs.make(game, num_players=4))
    aec = par.aec_env
    for seed in range(3):
        rng = np.random.default_rng(seed)
        obs, _ = par.reset(seed=seed)
        steps = 0
        while par.agents:
            acting = aec.agent_selection
            with_moves = [a for a, o in obs.items() if o["action_mask"].any()]
            assert with_moves == [acting], f"step {steps}: masks with moves {with_moves}, acting {acting}"
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) if a == acting else 0 for a, o in obs.items()}
            obs, _, terms, _, _ = par.step(actions)
            obs = {a: o for a, o in obs.items() if not terms[a]}
            steps += 1
        assert steps > 10
    if game == "neu":
        assert sum(aec.unwrapped.game.out) == 3  # the last game went through every elimination


# -- PettingZoo's "SB3: action-masked PPO" tutorial pattern ---------------------------------


def _sb3_tutorial_wrapper():
    import gymnasium
    import pettingzoo.utils

    class SelfPlayMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
        """One policy plays every seat: observation vector out, mask through action_mask()."""

        games_finished = 0

        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            agent = self.agent_selection
            super().step(action)
            done = self.terminations[agent] or self.truncations[agent]
            self.games_finished += done
            return (self.observe(self.agent_selection), self._cumulative_rewards[agent], self.terminations[agent],
                    self.truncations[agent], self.infos[agent])

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    return SelfPlayMaskWrapper


@pytest.mark.parametrize("game", GAMES)
def test_sb3_maskable_ppo_tutorial_pattern_trains(game):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    wrapped = _sb3_tutorial_wrapper()(envs.make(game, num_players=4))
    wrapped.reset(seed=0)
    env = ActionMasker(wrapped, lambda e: e.action_mask())
    budget = 512 if game == "neu" else 128  # Neu: at least one whole game, so three eliminations
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=budget // 2, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(total_timesteps=budget)
    assert model.num_timesteps >= budget
    if game == "neu":
        assert wrapped.games_finished >= 1


# -- the parallel form with Box observations (envs.box_obs on parallel_env()) -----------------


def _parallel_game(par, seed, until_over):
    """One game with a seeded masked random policy that reads the masks from infos (or from the
    Dict observation when there is none); the per-step rewards and masks."""
    rng = random.Random(seed)
    obs, infos = par.reset(seed=seed)
    record = []
    for _ in range(2000):
        masks = {a: (infos[a]["action_mask"] if "action_mask" in infos[a] else obs[a]["action_mask"]) for a in obs}
        assert all(m.any() for m in masks.values())
        actions = {a: int(rng.choice(np.flatnonzero(m))) for a, m in sorted(masks.items())}
        obs, rewards, _, _, infos = par.step(actions)
        record.append((sorted(rewards.items()), {a: m.tolist() for a, m in masks.items()}))
        if until_over(par, infos):
            return record
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("game", GAMES)
def test_box_obs_on_the_parallel_env_under_supersuit_black_death_and_frame_stack(game):
    ss = pytest.importorskip("supersuit")
    mod = envs.module(game)
    par = ss.frame_stack_v1(ss.black_death_v3(envs.box_obs(mod.parallel_env(num_players=4))), 3)
    obs, infos = par.reset(seed=5)
    space = par.observation_space("player_0")
    assert isinstance(space, Box) and space.shape[0] == 3 * mod.parallel_env().observation_space("player_0")["observation"].shape[0]
    assert all(space.contains(o) for o in obs.values())
    # SuperSuit 3.11's black_death_v3 reports an agent done only when it is terminated *and*
    # truncated, so the loop ends on the game's own signal: acting_seat -1.
    wrapped = _parallel_game(par, 5, lambda p, infos: infos["player_0"]["acting_seat"] == -1)
    plain = _parallel_game(mod.parallel_env(num_players=4), 5, lambda p, infos: not p.agents)
    assert wrapped == plain  # the same game, move by move: the masks in infos are the Dict's masks


def _supersuit_sb3_vec_env(game: str, tables: int):
    """PettingZoo's SB3 tutorial chain: black_death_v3, pettingzoo_env_to_vec_env_v1, concat_vec_envs_v1."""
    ss = pytest.importorskip("supersuit")
    pytest.importorskip("stable_baselines3")
    env = envs.box_obs(envs.module(game).parallel_env(num_players=4))
    env = ss.black_death_v3(env)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(env, tables, num_cpus=1, base_class="stable_baselines3")


def test_supersuit_sb3_tutorial_chain_plays_on_past_the_end_of_a_game():
    """black_death_v3 reports the game over one step after it ends (it needs every agent terminated
    *and* truncated, or none left): that step is a step({}) on the finished parallel env, which
    answers with empty dicts as PettingZoo's aec_to_parallel does, and SuperSuit deals a new game."""
    vec = _supersuit_sb3_vec_env("deadfall", 2)
    obs = vec.reset()
    infos, rng = vec.reset_infos, np.random.default_rng(0)
    assert obs.shape == (8, vec.observation_space.shape[0])  # 2 tables x 4 seats
    returns, finished = np.zeros(8), []
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*illegal move")
        for _ in range(400):
            actions = np.array([rng.choice(np.flatnonzero(info["action_mask"])) for info in infos])
            obs, rewards, dones, infos = vec.step(actions)
            returns += rewards
            for table in range(2):
                rows = slice(4 * table, 4 * table + 4)
                assert dones[rows].all() or not dones[rows].any()  # a table's seats end together
                if dones[rows].all():
                    finished.append(returns[rows].sum())
                    returns[rows] = 0
    assert len(finished) >= 2 and np.allclose(finished, 0)  # whole games, zero-sum


def test_maskable_ppo_on_the_supersuit_chain_reads_the_masks_through_vec_action_masks():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from envs.sb3 import VecActionMasks

    vec = _supersuit_sb3_vec_env("deadfall", 2)
    with pytest.raises(AttributeError, match="has_attr"):  # SuperSuit's vector env alone
        vec.has_attr("action_masks")
    env = VecActionMasks(vec)
    env.seed(3)  # kept for the next reset(): table i deals the game of seed 3 + i
    obs = env.reset()
    for table in range(2):
        first, _ = envs.box_obs(envs.module("deadfall").parallel_env(num_players=4)).reset(seed=3 + table)
        assert np.array_equal(obs[4 * table:4 * table + 4], np.stack(list(first.values())))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*illegal move")  # the masks reached the policy
        model = MaskablePPO("MlpPolicy", env, n_steps=48, batch_size=64, n_epochs=1, seed=0,
                            policy_kwargs={"net_arch": [32]}, device="cpu")
        model.learn(total_timesteps=384)  # 48 steps of 8 seats, twice: past the end of a Deadfall game
    assert model.num_timesteps >= 384
    masks = np.stack(env.env_method("action_masks"))
    assert masks.shape == (8, env.action_space.n) and masks.any(axis=1).all()
    assert (masks.sum(axis=1) == 1).sum() >= 3  # the seats not to act: action 0 only


def test_vec_action_masks_names_box_obs_when_the_masks_are_missing():
    ss = pytest.importorskip("supersuit")
    pytest.importorskip("stable_baselines3")
    from envs.sb3 import VecActionMasks

    env = ss.pettingzoo_env_to_vec_env_v1(envs.module("neu").parallel_env())  # Dict observations, no box_obs
    with pytest.raises(ValueError, match=r"wrap the parallel env in envs.box_obs\(\)"):
        VecActionMasks(ss.concat_vec_envs_v1(env, 1, base_class="stable_baselines3")).reset()


def test_box_obs_on_the_parallel_env_passes_parallel_api_test():
    from pettingzoo.test import parallel_api_test

    par = envs.box_obs(envs.module("deadfall").parallel_env(num_players=4))
    parallel_api_test(par, num_cycles=300)
    obs, infos = par.reset(seed=1)
    assert isinstance(par.observation_space("player_0"), Box)
    assert all(o.dtype == np.float32 and o.ndim == 1 for o in obs.values())
    assert all(infos[a]["action_mask"].dtype == np.int8 for a in par.agents)
    with pytest.raises(ValueError, match="already has Box observations"):
        envs.box_obs(par)


@pytest.mark.parametrize("game", GAMES)
def test_box_obs_gives_masks_as_lists_of_ints_when_asked(game):
    # AgileRL's form: the same masks, as lists, in both the parallel and the AEC form.
    arrays = envs.box_obs(envs.module(game).parallel_env(num_players=4))
    lists = envs.box_obs(envs.module(game).parallel_env(num_players=4), mask_form="list")
    (_, a_info), (_, l_info) = arrays.reset(seed=5), lists.reset(seed=5)
    for _ in range(30):
        assert all(type(l_info[a]["action_mask"]) is list and l_info[a]["action_mask"] == a_info[a]["action_mask"].tolist()
                   for a in arrays.agents)
        acts = {a: int(np.flatnonzero(a_info[a]["action_mask"])[0]) for a in arrays.agents}
        (*_, a_info), (*_, l_info) = arrays.step(acts), lists.step(acts)
        if not arrays.agents:
            break
    aec = envs.box_obs(envs.make(game), mask_form="list")
    aec.reset(seed=5)
    mask = aec.last()[-1]["action_mask"]
    assert type(mask) is list and mask == aec.unwrapped.action_mask(aec.agent_selection).tolist()
    with pytest.raises(ValueError, match="mask_form must be one of"):
        envs.box_obs(envs.make(game), mask_form="tuple")


@pytest.mark.parametrize("game", GAMES)
def test_pufferlib_takes_the_parallel_form_and_names_it_when_given_the_aec_form(game):
    pytest.importorskip("pufferlib.emulation")
    import pufferlib.vector
    from pufferlib.emulation import PettingZooPufferEnv

    mod = envs.module(game)
    expected = f"PettingZooPufferEnv takes the parallel env: pass envs.{game}_v0.parallel_env(), not {game}_v0.env()"
    for aec in (lambda: envs.make(game), mod.env, mod.raw_env):
        with pytest.raises(TypeError, match=expected.replace("(", r"\(").replace(")", r"\)")):
            PettingZooPufferEnv(env=aec()).reset(seed=0)
    with pytest.raises(TypeError, match="parallel_env"):  # the same line through PufferLib's vectorisation
        pufferlib.vector.make(lambda buf=None, seed=0: PettingZooPufferEnv(env=mod.env(), buf=buf, seed=seed),
                              num_envs=1, backend=pufferlib.vector.Serial).reset(seed=0)
    obs, infos = PettingZooPufferEnv(env=mod.parallel_env()).reset(seed=0)
    assert len(obs) == 4
    aec = mod.env()  # called by anything else, reset() is the AEC API's
    assert aec.reset(seed=0) is None


def test_torchrl_batched_random_rollout_without_a_policy_plays_illegal_moves():
    """TorchRL's SerialEnv over the wrapper: its default random rollout samples the whole action
    space, so nearly every step is an illegal move that ends the game at -1 (docs/interop.md)."""
    pytest.importorskip("torchrl")
    import functools

    import torch
    from torchrl.envs import SerialEnv

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = SerialEnv(2, functools.partial(torchrl_table, "deadfall", minimal_infos=False)).rollout(
            100, break_when_any_done=False)
    assert int((plain["next", "agents", "info", "illegal_move"][..., 0] >= 0).sum()) > 50


def torchrl_table(game: str, minimal_infos: bool = True):
    """One table for TorchRL's batched envs; at module level so that ParallelEnv's workers import it."""
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType

    return PettingZooWrapper(envs.make(game, num_players=4, minimal_infos=minimal_infos), use_mask=True,
                             group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, categorical_actions=True)


@pytest.mark.parametrize("batch", ["SerialEnv", "ParallelEnv"])
def test_torchrl_masked_actor_plays_only_legal_moves_in_batched_envs(batch):
    """docs/interop.md, "TorchRL, batched": TorchRL's ProbabilisticActor with MaskedCategorical reads
    each seat's mask from the tensordict it acts on, so no table ever gets a masked-out move, also
    across one table restarting while the other plays on. TorchRL 0.14.1's ActionMask transform
    over ParallelEnv fails at that partial reset instead."""
    pytest.importorskip("torchrl")
    import functools

    import torch
    import torchrl.envs
    from tensordict.nn import TensorDictModule
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import MaskedCategorical, MultiAgentMLP, ProbabilisticActor

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's note on the PettingZoo version it was tested with
        batched = getattr(torchrl.envs, batch)(2, functools.partial(torchrl_table, "deadfall"))
        batched.set_seed(0)
        obs_key = ("agents", "observation", "observation")
        net = MultiAgentMLP(n_agent_inputs=batched.observation_spec[obs_key].shape[-1],
                            n_agent_outputs=batched.full_action_spec["agents", "action"].space.n, n_agents=4,
                            centralised=False, share_params=True, depth=1, num_cells=32)
        policy = ProbabilisticActor(
            module=TensorDictModule(net, in_keys=[obs_key], out_keys=[("agents", "logits")]),
            in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
            out_keys=[("agents", "action")], distribution_class=MaskedCategorical)
        try:
            with torch.no_grad(), set_exploration_type(ExplorationType.RANDOM):
                rollout = batched.rollout(120, policy, break_when_any_done=False)
            acting = rollout["agents", "mask"]  # the seat to act at each step of each table
            chosen = rollout["agents", "action"][acting]
            assert rollout["agents", "action_mask"][acting].gather(1, chosen[:, None]).all()
            done = rollout["next", "done"].squeeze(-1)
            assert done[0].any() and done[1].any() and not (done[0] & done[1]).all()  # each table restarted
            if batch == "ParallelEnv":
                masked = torchrl.envs.TransformedEnv(batched, torchrl.envs.ActionMask(
                    action_key=("agents", "action"), mask_key=("agents", "action_mask")))
                with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.Tensor.copy_'"):
                    masked.rollout(200, break_when_any_done=False)
        finally:
            batched.close()


def test_torchrl_action_mask_transform_is_out_of_date_after_one_table_restarts():
    """docs/interop.md: TorchRL 0.14.1's ActionMask keeps one mask in the action spec; when one table
    of a SerialEnv restarts, the other table's row comes from the reset tensordict, out of date, and
    a random rollout then samples from it. Before any partial reset the spec's mask is the tensordict's."""
    pytest.importorskip("torchrl")
    import functools

    import torch
    from torchrl.envs import ActionMask, SerialEnv, TransformedEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = TransformedEnv(SerialEnv(2, functools.partial(torchrl_table, "deadfall")),
                             ActionMask(action_key=("agents", "action"), mask_key=("agents", "action_mask")))
        env.set_seed(0)
        torch.manual_seed(0)
        td, restarted, stale = env.reset(), False, []
        for _ in range(200):
            spec_mask = env.full_action_spec["agents", "action"].mask
            rows = [b for b in range(2) if not torch.equal(spec_mask[b], td["agents", "action_mask"][b])]
            assert restarted or not rows  # in step until a table restarts
            stale += rows
            out, td = env.step_and_maybe_reset(env.rand_action(td))
            restarted = restarted or bool(out["next", "done"].any())
        env.close()
    assert stale
