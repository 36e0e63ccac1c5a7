"""Fit the learned value V of the luck-adjusted estimator (`experiments.tournament.luck.NetValue`).

    python -m experiments.tournament.value_fit --game neu --players 4

plays ``--deals`` duplicate deals of ``--agents`` on the batched engine (the lineups a
tournament of those agents seats), replays them keeping a share of the states, and fits a
small network (two tanh layers) of each seat's final score minus its current one on the full
state (`VectorEnv.state`: every hand) and the lineup. The deals come from seeds no tournament
uses (`luck.FIT_SEED`); a tenth of the games is held out, the epoch with the best held-out fit
is kept, and that fit (R², explained variance of the held-out targets) is stored with the
command in ``values/<game>-<n>p-net.npz``. The file is written aside and renamed: an
interrupted fit leaves the old file whole.

The network is for scoring only: no agent reads it. It knows only the agents it was fitted
on; a tournament of other agents corrects with the linear V (`luck.value_for`).
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

import envs
from experiments.cli import ArgumentParser
from experiments.tournament import luck, runner, vector


CHUNK = 5_000  # deals played and replayed at a time: a game's moves are Python lists, ~1 kB a move
MAX_STATE_BYTES = 4 << 30  # the states kept; the fit holds a normalised copy beside them


def play(game: str, n: int, agents: Sequence[str], deals: range, seed: int) -> list[dict]:
    """Duplicate deals ``deals`` (their indices) of `agents`, every rotation, with their moves."""
    tables = runner.make_tables_checked(list(agents), game, n, None)
    job = runner.Job(game, n, (), seed, True, tuple((0, d) for d in deals), record_moves=True,
                     vector_tables=vector.choose_tables(game, tables, n, "auto"))
    return runner.play_job(job, tables)


def samples(game: str, n: int, records: Sequence[dict], names: Sequence[str], keep: float, seed: int = 0):
    """The games replayed side by side: a `keep` share of their states as (inputs [S, state + n·k],
    targets [S, n]: each seat's final score minus its current one, the game of each [S])."""
    rng = np.random.default_rng(seed)
    G = len(records)
    lineups = np.stack([luck.lineup_input(names, r["agents"]) for r in records])
    final = np.array([r["scores"] for r in records], np.float64)
    venv = envs.vector_env(game, G, n, seed=0)
    venv.reset(np.array([r["deal_seed"] for r in records], np.int64))
    xs, ys, gs = [], [], []
    for t in range(max(len(r["moves"]) for r in records)):
        on = np.array([g for g in range(G) if t < len(records[g]["moves"])], np.int64)
        kept = on[rng.random(on.size) < keep]
        if kept.size:
            xs.append(np.concatenate([venv.state(kept), lineups[kept]], axis=1))
            ys.append(final[kept] - venv.scores()[kept])
            gs.append(kept)
        venv.step(np.array([int(records[g]["moves"][t][1]) for g in on], np.int64), rows=on)
    return np.concatenate(xs), np.concatenate(ys).astype(np.float32), np.concatenate(gs)


def fit(x: np.ndarray, y: np.ndarray, games: np.ndarray, hidden: int, epochs: int, seed: int = 0,
        log=print) -> tuple[list[np.ndarray], float]:
    """The network's arrays (mean, std, w1, b1, w2, b2, w3, b3; weights one row per input) at the
    epoch of best held-out R², and that R² (a tenth of the games held out, whole)."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    ids = np.unique(games)
    held = np.isin(games, rng.choice(ids, max(1, len(ids) // 10), replace=False))
    mean = x[~held].mean(0)
    std = x[~held].std(0)
    std = np.where(std > 1e-6, std, 1.0).astype(np.float32)  # a constant input: left as it is
    X = torch.as_tensor((x - mean) / std, dtype=torch.float32)
    Y = torch.as_tensor(y)
    Xt, Yt, Xh, Yh = X[~held], Y[~held], X[held], Y[held]
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, hidden),
                              torch.nn.Tanh(), torch.nn.Linear(hidden, y.shape[1]))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    spread = float(((Yh - Yh.mean(0)) ** 2).sum())
    best, arrays = -np.inf, None
    for epoch in range(epochs):
        for batch in torch.randperm(len(Xt)).split(2048):
            loss = ((net(Xt[batch]) - Yt[batch]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        schedule.step()
        with torch.no_grad():
            r2 = 1.0 - float(((net(Xh) - Yh) ** 2).sum()) / spread if spread > 0 else 0.0
        log(f"epoch {epoch + 1}/{epochs}: held-out R² {r2:.4f}")
        if r2 > best:
            layers = [m for m in net if isinstance(m, torch.nn.Linear)]
            best = r2
            arrays = [mean.astype(np.float32), std] + [a for m in layers for a in
                                                       (m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())]
    return arrays, float(best)


def write(path, arrays: list[np.ndarray], agents: Sequence[str], game: str, n: int, command: str, r2: float) -> None:
    """The value file, written aside and renamed (never half a file)."""
    names = ("mean", "std", "w1", "b1", "w2", "b2", "w3", "b3")
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(aside, "wb") as f:
            np.savez(f, **dict(zip(names, arrays)), agents=np.array(agents), game=np.array(game), players=np.array(n),
                     command=np.array(command), held_out_r2=np.array(r2))
        os.replace(aside, path)
    finally:
        aside.unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None) -> None:
    p = ArgumentParser(prog="python -m experiments.tournament.value_fit", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", required=True, choices=envs.available_games())
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--agents", default="ppo,heuristic", help="the agents whose games it is fitted on (default: ppo,heuristic)")
    p.add_argument("--deals", type=int, default=40_000, help="duplicate deals to fit on (default: 40000)")
    p.add_argument("--keep", type=float, default=0.25, help="share of the states kept (default: 0.25)")
    p.add_argument("--hidden", type=int, default=128, help="width of each hidden layer (default: 128)")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--out", default=None, help="value file (default: the one tournaments read, values/<game>-<n>p-net.npz)")
    a = p.parse_args(argv)
    if a.deals < 1 or a.epochs < 1 or a.hidden < 1 or not 0 < a.keep <= 1:
        p.error("--deals, --epochs and --hidden must be at least 1, --keep in (0, 1]")
    agents = a.agents.split(",")
    if len(set(agents)) != len(agents):
        p.error("--agents must name each agent once")
    try:
        envs.info(a.game, a.players)
    except ValueError as e:
        p.error(str(e))
    path = luck.VALUES / f"{a.game}-{a.players}p-net.npz" if a.out is None else Path(a.out)
    t0 = time.perf_counter()
    parts, played = [], 0
    for start in range(0, a.deals, CHUNK):
        records = play(a.game, a.players, agents, range(start, min(a.deals, start + CHUNK)), luck.FIT_SEED)
        x, y, games = samples(a.game, a.players, records, agents, a.keep, seed=start)
        projected = x.nbytes * -(-a.deals // CHUNK)
        if not parts and projected > MAX_STATE_BYTES:
            p.error(f"{a.deals} deals at --keep {a.keep} would keep about {projected / 2**30:.1f} GiB of states "
                    f"(at most {MAX_STATE_BYTES / 2**30:.0f}); lower --keep or --deals")
        parts.append((x, y, games + played))  # game numbers unique over the chunks
        played += len(records)
        print(f"deals {start + 1}-{min(a.deals, start + CHUNK)}: {len(records)} games, {len(x)} states "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    x, y, games = (np.concatenate(part) for part in zip(*parts))
    del parts
    arrays, r2 = fit(x, y, games, a.hidden, a.epochs, log=lambda m: print(m, flush=True))
    command = "python -m experiments.tournament.value_fit " + shlex.join(sys.argv[1:] if argv is None else list(argv))
    path.parent.mkdir(parents=True, exist_ok=True)
    write(path, arrays, agents, a.game, a.players, command, r2)
    print(f"wrote {path} (held-out R² {r2:.4f}, {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
