"""The Ray backend on a simulated two-node cluster (ray.cluster_utils.Cluster) on this machine.

Skipped where Ray is not installed (``pip install -e ".[ray]"``), except the
tests of what happens without it and of addresses that do not answer.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

# Under pytest-xdist every test here runs in one worker, which starts the simulated cluster once.
pytestmark = pytest.mark.xdist_group("ray")

ROOT = Path(__file__).resolve().parents[1]
TOURNAMENT = ["--game", "neu", "--players", "4", "--agents", "heuristic,random", "--deals", "40", "--seed", "3"]


def run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- without a cluster
def test_without_ray_one_line_says_how_to_install():
    code = (
        "import sys; sys.modules['ray'] = None\n"  # import ray now fails, as where it is not installed
        "from experiments.tournament import main\n"
        "main(['--deals', '2', '--backend', 'ray'])\n"
    )
    r = run(code)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and 'pip install -e ".[ray]"' in r.stderr


def test_ray_address_needs_the_ray_backend():
    r = run("from experiments.tournament import main; main(['--deals', '2', '--ray-address', 'auto'])")
    assert r.returncode == 2 and "--ray-address needs --backend ray" in r.stderr


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_address_fails_fast_in_one_line():
    pytest.importorskip("ray")
    t0 = time.perf_counter()
    r = run(
        "from experiments.tournament import main\n"
        f"main(['--deals', '2', '--backend', 'ray', '--ray-address', '127.0.0.1:{_closed_port()}'])\n",
        timeout=60,
    )
    assert time.perf_counter() - t0 < 30
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no Ray cluster at 127.0.0.1" in r.stderr, r.stderr


def test_silent_port_is_given_up_within_the_timeout():
    """A port that accepts connections but is not a Ray head: ray.init alone would wait for minutes."""
    pytest.importorskip("ray")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    try:
        t0 = time.perf_counter()
        r = run(
            "from train.distributed import connect\n"
            "try:\n"
            f"    connect('127.0.0.1:{port}', timeout=3)\n"
            "except ConnectionError as e:\n"
            "    print('ConnectionError:', e)\n",
            timeout=60,
        )
        assert time.perf_counter() - t0 < 30
        assert f"ConnectionError: no Ray cluster answered at 127.0.0.1:{port} within 3 s" in r.stdout, r.stdout + r.stderr
    finally:
        server.close()


def test_malformed_address():
    pytest.importorskip("ray")
    from train.distributed import connect

    with pytest.raises(ConnectionError, match="is not HOST:PORT"):
        connect("localhost")


# ---------------------------------------------------------------- on a two-node cluster
@pytest.fixture(scope="module")
def cluster():
    """A head node and a second node, one CPU each, started once for this module."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    # A lost node is declared dead after about 1.5 s of missed health checks (default: 15 s or more).
    fast = {"health_check_period_ms": 500, "health_check_failure_threshold": 3, "health_check_timeout_ms": 500}
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False, "_system_config": fast})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def wait_for(condition, seconds: float = 60) -> bool:
    deadline = time.time() + seconds
    while not condition():
        if time.time() > deadline:
            return False
        time.sleep(0.2)
    return True


def alive_nodes() -> int:
    import ray

    return sum(n["Alive"] for n in ray.nodes())


def statistics(res: dict) -> dict:
    return {k: res[k] for k in ("overall", "pairwise", "ratings", "forfeits", "tables", "records", "games_played")}


@pytest.fixture(scope="module")
def local_result():
    from experiments.tournament import run_tournament

    return run_tournament("neu", ["heuristic", "random"], 4, deals=40, seed=3, workers=2, progress=False)


def test_cli_ray_backend_gives_the_statistics_of_two_workers(cluster, tmp_path):
    from experiments.tournament import main

    common = TOURNAMENT + ["--no-plots", "--quiet"]
    assert main(common + ["--workers", "2", "--out", str(tmp_path / "local")]) == 0
    assert main(common + ["--backend", "ray", "--ray-address", cluster.address, "--out", str(tmp_path / "ray")]) == 0
    local = json.loads((tmp_path / "local" / "results.json").read_text())[0]
    on_ray = json.loads((tmp_path / "ray" / "results.json").read_text())[0]
    for key in ("overall", "pairwise", "ratings", "forfeits", "tables", "games_played"):
        assert on_ray[key] == local[key], key
    assert (tmp_path / "ray" / "neu_4p_games.csv").read_text() == (tmp_path / "local" / "neu_4p_games.csv").read_text()


def test_compare_on_ray(cluster, tmp_path):
    from experiments.compare import main

    common = ["--games", "deadfall", "--agents", "heuristic,random", "--deals", "4", "--no-plots"]
    assert main(common + ["--workers", "1", "--out", str(tmp_path / "local")]) == 0
    assert main(common + ["--backend", "ray", "--ray-address", cluster.address, "--out", str(tmp_path / "ray")]) == 0
    games = sorted(p.name for p in (tmp_path / "local").glob("*_games.csv"))
    assert games and games == sorted(p.name for p in (tmp_path / "ray").glob("*_games.csv"))
    for name in games:
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()


def test_node_lost_mid_run_changes_nothing(cluster, local_result):
    """The second node is removed (killed, not drained) while batches of deals run on both
    nodes; Ray runs the lost tasks again on the head, and every statistic is unchanged."""
    import ray

    from experiments import tournament
    from train import distributed

    node = [n for n in cluster.list_all_nodes() if not n.head][-1]
    real_map = distributed.ray_map
    removed_at = []

    def map_then_lose_a_node(fn, jobs, address=None, **kw):
        for i, (job, result) in enumerate(real_map(fn, jobs, address, **{**kw, "in_flight": 4})):
            if i == 1:  # 4 of the 20 batches in flight, on two one-CPU nodes
                cluster.remove_node(node, allow_graceful=False)
                removed_at.append(i)
            yield job, result

    assert alive_nodes() == 2
    distributed.ray_map = map_then_lose_a_node
    try:
        # engine="aec": 20 batches of deals (the batched engine would play them in one), so a node is lost mid-run
        res = tournament.run_tournament("neu", ["heuristic", "random"], 4, deals=40, seed=3, progress=False, backend="ray",
                                        engine="aec")
    finally:
        distributed.ray_map = real_map
    assert removed_at == [1] and not node.any_processes_alive()
    assert statistics(res) == statistics(local_result)
    # The cluster is whole again for the tests after this one.
    assert wait_for(lambda: alive_nodes() == 1)
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    assert wait_for(lambda: alive_nodes() == 2 and ray.cluster_resources().get("CPU", 0) == 2)


def test_agent_class_defined_here_travels_by_value(cluster):
    """A class defined in a function cannot be imported anywhere: it travels pickled, and plays
    on the workers exactly as in this process."""
    import numpy as np

    from experiments.tournament import run_tournament

    class LastLegal:
        def __init__(self, seed=None):
            self.moves = 0  # state kept across moves, rebuilt on every worker

        def act(self, obs):
            self.moves += 1
            return int(np.flatnonzero(obs["action_mask"])[-1])

    here = run_tournament("neu", [LastLegal, "random"], 4, deals=6, seed=5, progress=False)
    on_ray = run_tournament("neu", [LastLegal, "random"], 4, deals=6, seed=5, progress=False, backend="ray")
    assert statistics(on_ray) == statistics(here)


def test_unpicklable_agent_is_named(cluster):
    from experiments.tournament import AgentSpec
    from train.distributed import check_travel

    with pytest.raises(ValueError, match="agent 'locked' cannot travel to the Ray workers: it cannot be pickled"):
        check_travel({"locked": threading.Lock()})
    # A spec that pickles but cannot be built on the workers.
    missing = AgentSpec(name="mine", kind="nosuchkind")
    with pytest.raises(ValueError, match="agent 'mine' cannot be built on a Ray worker"):
        check_travel({"mine": missing}, build=lambda s: s.make("neu", 4, seed=0))


def test_module_missing_on_the_workers_is_named(cluster, tmp_path):
    """A class pickled by reference whose module the workers cannot import."""
    from train.distributed import check_travel

    (tmp_path / "only_here_bot.py").write_text("class Bot:\n    def act(self, obs):\n        return 0\n")
    sys.path.insert(0, str(tmp_path))  # after the workers started, so they do not see it
    try:
        import only_here_bot

        with pytest.raises(ValueError, match=r"agent 'bot' cannot be loaded on a Ray worker: ModuleNotFoundError"):
            check_travel({"bot": only_here_bot.Bot()})
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("only_here_bot", None)


def test_closing_the_map_cancels_the_rest(cluster, tmp_path):
    """What Ctrl-C or a deadline does: the iterator is closed, and the tasks not yet read are
    cancelled, so none of them finishes (each would write a file when it does)."""
    from train.distributed import ray_map

    release = tmp_path / "release"
    out = tmp_path / "out"
    out.mkdir()

    def slow(job):
        # Job 0 finishes at once; the others only once released, which happens after the iterator
        # is closed: a job that was not cancelled then writes its file (however slow the machine).
        name, first = job
        deadline = time.time() + 60
        while not first and not release.exists():
            if time.time() > deadline:
                return
            time.sleep(0.05)
        Path(name).write_text("finished")

    jobs = [(str(out / f"job{i}"), i == 0) for i in range(6)]
    it = ray_map(slow, jobs, in_flight=4)
    assert next(it)[0] == jobs[0]
    it.close()
    time.sleep(5)  # cancelling is asynchronous: let it land before the survivors are released
    release.touch()
    time.sleep(3)
    assert [p.name for p in out.iterdir()] == ["job0"]


# ---------------------------------------------------------------- PPO rollouts on Ray actors
def tiny(tmp_path, run_name, backend="local", **kw):
    from train.ppo import Args, use_backend

    base = dict(game="neu", players=3, steps=600, rollout_steps=300, num_envs=2, workers=2, hidden=16, seed=3,
                engine="aec", out=str(tmp_path / run_name))  # Ray actors play AEC tables; so does the local run compared
    base.update(kw)
    args = Args(**base)
    use_backend(args, backend)
    return args


def weights(net):
    return {k: v.clone() for k, v in net.state_dict().items()}


@pytest.fixture(scope="module")
def local_ppo(tmp_path_factory):
    from train.ppo import main

    tmp = tmp_path_factory.mktemp("ppo")
    return weights(main(tiny(tmp, run_name="local"))), (tmp / "local" / "progress.csv").read_text()


def _columns(csv_text: str, skip=("steps_per_second", "rollout_steps_per_second", "wall_seconds")) -> list:
    lines = csv_text.splitlines()
    head = lines[0].split(",")
    keep = [i for i, h in enumerate(head) if h not in skip]
    return [[row.split(",")[i] for i in keep] for row in lines]


def test_ppo_on_ray_actors_is_the_local_run(cluster, tmp_path, local_ppo):
    import torch

    from train.ppo import main

    net = weights(main(tiny(tmp_path, run_name="ray", backend="ray")))
    local_net, local_csv = local_ppo
    assert all(torch.equal(net[k], local_net[k]) for k in net)
    assert _columns((tmp_path / "ray" / "progress.csv").read_text()) == _columns(local_csv)


def test_ppo_goes_on_when_an_actor_is_killed(cluster, tmp_path, local_ppo):
    """A rollout actor's process is killed as a rollout is sent to it; Ray restarts it,
    sends the rollout again, and the run ends exactly as the undisturbed one."""
    import signal

    import ray
    import torch

    from train import ray_rollout
    from train.ppo import main

    killed = []
    real_collect = ray_rollout.RayRolloutWorkers.collect

    def collect_and_kill(self, policy, pool, seed, num_steps=None):
        if killed:
            return real_collect(self, policy, pool, seed, num_steps)
        victim = self.actors[1]
        pid = ray.get(victim.pid.remote())
        os.kill(pid, signal.SIGKILL)  # the rollout is sent to a process that is gone
        out = real_collect(self, policy, pool, seed, num_steps)
        killed.append((pid, ray.get(victim.pid.remote())))
        return out

    ray_rollout.RayRolloutWorkers.collect = collect_and_kill
    try:
        net = weights(main(tiny(tmp_path, run_name="killed", backend="ray")))
    finally:
        ray_rollout.RayRolloutWorkers.collect = real_collect
    (old_pid, new_pid), = killed
    assert new_pid != old_pid  # the actor is a new process
    assert all(torch.equal(net[k], local_ppo[0][k]) for k in net)


def test_ppo_ray_flags(tmp_path):
    from train.ppo import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--ray-address", "auto"])
    with pytest.raises(SystemExit):
        parse_args(["--backend", "ray", "--workers", "0"])
    args = parse_args(["--backend", "local"])
    assert args.backend == "local" and "backend" not in dataclasses.asdict(args)  # not a recorded argument of the run


def test_a_token_refusal_names_the_way_out():
    from train.distributed import auth_hint

    class InvalidAuthToken(Exception):
        pass

    hint = auth_hint(InvalidAuthToken("token mismatch"))
    assert "RAY_AUTH_MODE" in hint and "--ray-address auto" in hint and "\n" not in hint
    assert auth_hint(ConnectionRefusedError("port closed")) == ""
