"""The learned value of the luck-adjusted estimator (`experiments.tournament.luck.NetValue`, fitted
by `experiments.tournament.value_fit`): the same luck on the batched and the readable engine,
refused when its file is bad, used only for the agents it knows."""

import numpy as np
import pytest

import envs
from agents.actor_kernels import layer_table
from experiments.tournament import luck, run_tournament, value_fit

AGENTS = ["heuristic", "random"]


def _arrays(game, n, hidden=8, seed=0, agents=AGENTS):
    size = envs.info(game, n).state_size + n * len(agents)
    rng = np.random.default_rng(seed)
    mean, std = rng.normal(size=size).astype(np.float32), rng.uniform(0.5, 2, size).astype(np.float32)
    shapes = [(size, hidden), (hidden,), (hidden, hidden), (hidden,), (hidden, n), (n,)]
    return [mean, std] + [rng.normal(scale=0.3, size=s).astype(np.float32) for s in shapes]


def _net(game, n, agents=AGENTS):
    a = _arrays(game, n, agents=agents)
    table, dims = layer_table(a[0], a[1], a[2::2], a[3::2])
    return luck.NetValue(table, dims, agents, n)


def _records(game, n, deals):
    return value_fit.play(game, n, AGENTS, range(deals), seed=0)


@pytest.mark.parametrize("game, deals", [("neu", 2), ("not_your_mas_jong", 1), ("deadfall", 2)])
def test_a_learned_value_gives_the_same_luck_on_the_batched_and_the_readable_engine(game, deals):
    recs = _records(game, 4, deals)
    net = _net(game, 4)
    want = [luck.sampled_corrections(game, 4, None, r["deal_seed"], r["moves"], net.seated(r["agents"]), seed=3) for r in recs]
    got = luck.batched_corrections(game, 4, None, recs, net, seed=3)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    linear = luck.batched_corrections(game, 4, None, recs, luck.LinearValue(), seed=3)
    assert np.abs(np.subtract(got, linear)).max() > 1e-3  # the network changed the luck, so the comparison can fail
    assert luck.batched_corrections(game, 4, None, recs[1:2], net, seed=3) == got[1:2]  # not its batch's


def test_the_lineup_reaches_the_value():
    net = _net("neu", 4)
    engine = envs.engine_class("neu")(4)
    engine.reset(np.random.default_rng(5))
    a = net.seated(["heuristic", "random", "random", "random"])(engine)
    b = net.seated(["random", "heuristic", "random", "random"])(engine)
    assert not np.allclose(a, b)
    with pytest.raises(ValueError):
        net.seated(["heuristic", "ppo", "random", "random"])


def _write(path, arrays, game="neu", n=4, agents=AGENTS, **extra):
    names = ("mean", "std", "w1", "b1", "w2", "b2", "w3", "b3")
    fields = {**dict(zip(names, arrays)), "agents": np.array(agents), "game": np.array(game), "players": np.array(n),
              "command": np.array("test"), "held_out_r2": np.array(0.5), **extra}
    np.savez(path, **fields)


def _nan(a):
    a[4][0, 0] = np.nan
    return a


@pytest.mark.parametrize("make, message", [
    (lambda p: p.write_bytes(b"PK\x03\x04 truncated"), "not an .npz file"),
    (lambda p: _write(p, _arrays("neu", 4), agents=np.array(AGENTS, dtype=object)), "pickle"),
    (lambda p: _write(p, _arrays("deadfall", 4), game="deadfall"), "it is for deadfall at 4 players, not neu at 4"),
    (lambda p: _write(p, _arrays("neu", 4, agents=["a", "b", "c"])), "reads 145 inputs and gives 4 values, expected 141"),
    (lambda p: _write(p, _nan(_arrays("neu", 4))), "must be finite"),
])
def test_a_bad_learned_value_file_is_refused_before_any_game(tmp_path, monkeypatch, make, message):
    monkeypatch.setattr(luck, "VALUES", tmp_path)
    luck.NetValue.load.cache_clear()
    make(tmp_path / "neu-4p-net.npz")
    played = []
    monkeypatch.setattr(luck, "batched_corrections", lambda *a, **k: played.append(1))
    try:
        with pytest.raises(ValueError, match=message):
            run_tournament("neu", AGENTS, num_players=4, deals=1, progress=False, estimator="adjusted")
    finally:
        luck.NetValue.load.cache_clear()
        luck.LinearValue.load.cache_clear()
    assert played == []


def test_the_learned_value_is_used_only_for_agents_it_knows_and_the_default_rules(tmp_path, monkeypatch):
    monkeypatch.setattr(luck, "VALUES", tmp_path)
    luck.NetValue.load.cache_clear()
    try:
        assert isinstance(luck.value_for("neu", 4, AGENTS), luck.LinearValue)  # no file: the linear V
        _write(tmp_path / "neu-4p-net.npz", _arrays("neu", 4))
        luck.NetValue.load.cache_clear()
        assert isinstance(luck.value_for("neu", 4, AGENTS), luck.NetValue)
        assert isinstance(luck.value_for("neu", 4, ["heuristic"]), luck.NetValue)
        assert isinstance(luck.value_for("neu", 4, ["heuristic", "ppo"]), luck.LinearValue)
        assert isinstance(luck.value_for("neu", 4, AGENTS, {"rules": "small"}), luck.LinearValue)
    finally:
        luck.NetValue.load.cache_clear()
        luck.LinearValue.load.cache_clear()  # it read the empty folder


def test_the_fit_command_writes_a_value_file_that_loads_with_its_command(tmp_path, capsys):
    out = tmp_path / "v.npz"
    value_fit.main(["--game", "neu", "--agents", "heuristic,random", "--deals", "3", "--epochs", "2", "--hidden", "8",
                    "--out", str(out)])
    assert "held-out R²" in capsys.readouterr().out
    table, dims, agents, n = luck.check_net_file(out, "neu", 4)
    assert list(dims) == [envs.info("neu", 4).state_size + 8, 8, 8, 4] and agents == AGENTS
    assert "--deals 3" in str(np.load(out)["command"])


def test_an_interrupted_fit_leaves_the_old_value_file_whole(tmp_path, monkeypatch):
    old = tmp_path / "v.npz"
    old.write_bytes(b"the old file")
    monkeypatch.setattr(value_fit, "play", lambda *a: [])
    monkeypatch.setattr(value_fit, "samples", lambda *a, **k: (np.zeros((2, 3)), np.zeros((2, 4)), np.arange(2)))
    monkeypatch.setattr(value_fit, "fit", lambda *a, **k: (_arrays("neu", 4), 0.0))

    def dies(f, **arrays):
        f.write(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(value_fit.np, "savez", dies)
    with pytest.raises(KeyboardInterrupt):
        value_fit.main(["--game", "neu", "--deals", "1", "--out", str(old)])
    assert old.read_bytes() == b"the old file" and [p.name for p in tmp_path.iterdir()] == ["v.npz"]


def test_the_fit_command_refuses_bad_arguments_in_one_line(capsys):
    with pytest.raises(SystemExit):
        value_fit.main(["--game", "neu", "--keep", "0"])
    assert "--keep in (0, 1]" in capsys.readouterr().err


def test_a_fit_that_would_not_fit_in_memory_is_refused_after_its_first_chunk(monkeypatch, capsys):
    monkeypatch.setattr(value_fit, "MAX_STATE_BYTES", 1000)
    with pytest.raises(SystemExit):
        value_fit.main(["--game", "neu", "--agents", "heuristic,random", "--deals", "2"])
    assert "2 deals at --keep 0.25 would keep about" in capsys.readouterr().err


@pytest.mark.parametrize("game", ["neu", "deadfall"])
def test_the_shipped_learned_values_load_and_serve_ppo_against_the_heuristic(game):
    value = luck.value_for(game, 4, ["ppo", "heuristic"])
    assert isinstance(value, luck.NetValue) and set(value.agents) == {"ppo", "heuristic"}
    command = str(np.load(luck.VALUES / f"{game}-4p-net.npz")["command"])
    assert command.startswith(f"python -m experiments.tournament.value_fit --game {game} ")
