"""Ray as a backend: joining a cluster, and jobs mapped to Ray tasks.

Ray is optional (``pip install -e ".[ray]"``); nothing here imports it
before it is needed, and without it `require_ray` raises one ImportError
line that says how to install it.

* `connect(address)` starts a Ray instance on this machine (``None``),
  joins the cluster this machine is part of (``"auto"``, after
  ``ray start``), or joins the head node at ``host:port`` (or a Ray Client
  address ``ray://host:port``). An address that does not answer as a Ray
  cluster fails within ``timeout`` seconds with one ConnectionError line:
  on its own, ``ray.init`` waits for an unreachable head for minutes.
* `ray_map(fn, jobs)` runs ``fn(job)`` as one Ray task per job and yields
  ``(job, result)`` in job order, a bounded number in flight, like the
  local worker pool, so whatever is computed from the results is the same.
  A task lost with its worker or node is run again (Ray's ``max_retries``);
  an exception raised by ``fn`` is raised here as itself; closing the
  iterator (Ctrl-C, a deadline) cancels the tasks still running.
* `check_travel(items)` sends each item (an agent, say) to a Ray worker and
  back, so that an item that can be neither pickled here nor imported there
  fails up front with one line naming it.

Everything a job needs travels with it (pickled): code is *not* shipped.
Every node needs the same cardzoo and Python packages installed, and any
module a job refers to by name must be importable there.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator

INSTALL = 'pip install -e ".[ray]"'
CONNECT_TIMEOUT_S = 30.0
BACKENDS = ("local", "ray")


def require_ray():
    """The ray module, or ImportError in one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"the Ray backend needs Ray, which is not installed here: {INSTALL}") from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConnectionError(f"Ray address {address!r} is not HOST:PORT (e.g. 10.0.0.1:6379, the address `ray start --head` prints), 'auto' or empty")
    return host.strip("[]"), int(port)


def connect(address: str | None = None, num_cpus: int | None = None, timeout: float = CONNECT_TIMEOUT_S):
    """Start or join Ray (see the module docstring) and return the ray module.

    A connection this process already has is kept whatever `address` says.
    `num_cpus` caps a Ray instance started here (default: every core).
    """
    ray = require_ray()
    if ray.is_initialized():
        return ray
    options = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    if not address:
        ray.init(num_cpus=num_cpus, **options)
        return ray
    if address != "auto":
        host, port = _host_port(address)
        try:
            socket.create_connection((host, port), timeout=min(5.0, timeout)).close()
        except OSError as e:
            raise ConnectionError(
                f"no Ray cluster at {address}: cannot reach {host}:{port} ({e.strerror or e}); "
                "start one with `ray start --head` there, or leave the address out to start Ray on this machine"
            ) from None
    if address.startswith("ray://"):
        options = {}  # a Ray Client connection takes none of a driver's options
    # The port answers, but a head node that never replies (or a port that is not Ray's) makes
    # ray.init wait for minutes, so it runs in a thread that is given up after `timeout`.
    outcome: list = []

    def join() -> None:
        try:
            ray.init(address=address, **options)
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            outcome.append(e)

    thread = threading.Thread(target=join, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise ConnectionError(f"no Ray cluster answered at {address} within {timeout:.0f} s; check the address `ray start --head` printed")
    if outcome[0] is not None:
        e = outcome[0]
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ConnectionError(f"could not join the Ray cluster at {address}: {first}{auth_hint(e)}") from None
    return ray


def auth_hint(e: BaseException) -> str:
    """The way out when Ray refuses a driver over token authentication (Ray 2.60's InvalidAuthToken)."""
    if "auth" not in f"{type(e).__name__} {e}".lower():
        return ""
    return ("; the cluster and this process disagree on Ray's token authentication: use the head node's "
            "RAY_AUTH_MODE and token (ray get-auth-token there), or run on a node of the cluster with "
            "--ray-address auto (docs/distributed.md)")


def cluster_cpus(ray) -> int:
    """CPUs of the whole cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _unwrap(ray, e: Exception, what: str) -> Exception:
    """The exception to raise in the driver for a failed task: the job's own exception as itself,
    or one line for what Ray itself could not do (load the job, keep a worker alive)."""
    exc = ray.exceptions
    if isinstance(e, exc.RayTaskError):
        cause = e.cause
        if isinstance(cause, exc.RaySystemError):  # the task's arguments could not be loaded there
            inner = cause.args[0] if cause.args and isinstance(cause.args[0], BaseException) else cause
            return RuntimeError(
                f"{what} cannot be loaded on a Ray worker: {_first_line(inner)}; every node needs cardzoo and the "
                "modules the agents are defined in installed (classes defined in the script you run travel pickled)"
            )
        if isinstance(cause, BaseException):
            return cause
    if isinstance(e, (exc.WorkerCrashedError, exc.NodeDiedError, exc.RayActorError, exc.ObjectLostError)):
        return RuntimeError(f"{what} failed on Ray after all retries (its worker or node was lost): {_first_line(e)}")
    return e


def ray_map(fn: Callable, jobs: Iterable, address: str | None = None, *, args: tuple = (), max_retries: int = 3,
            in_flight: int | None = None, what: str = "a job") -> Iterator[tuple[Any, Any]]:
    """Yield ``(job, fn(job, *args))`` in job order, each job a Ray task (see the module docstring).

    `jobs` is read lazily, at most `in_flight` (default: twice the cluster's
    CPUs) running or waiting at a time. A task whose worker or node dies is
    retried up to `max_retries` times; an exception raised by `fn` is not.
    """
    ray = connect(address)
    remote = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(fn)
    limit = in_flight or 2 * cluster_cpus(ray)
    pending: deque = deque()
    it = iter(jobs)

    def submit(job) -> None:
        try:
            ref = remote.remote(job, *args)
        except TypeError as e:  # Ray could not pickle the job
            raise ValueError(f"{what} cannot be sent to the Ray workers: {_first_line(e)}") from None
        pending.append((job, ref))

    try:
        for job in it:
            submit(job)
            if len(pending) >= limit:
                break
        while pending:
            job, ref = pending[0]
            try:
                result = ray.get(ref)
            except ray.exceptions.RayError as e:
                raise _unwrap(ray, e, what) from None
            pending.popleft()
            nxt = next(it, _END)
            if nxt is not _END:
                submit(nxt)
            yield job, result
    finally:
        # Ctrl-C, an error, or a caller that stopped reading (a deadline): nothing keeps running.
        # A cancel can be lost while a task is being handed to a worker (a race in Ray), so the
        # tasks are cancelled again until each has stopped, for at most 10 s.
        refs = [ref for _, ref in pending]
        deadline = time.monotonic() + 10
        while refs:
            for ref in refs:
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - already finished or lost: nothing to cancel
                    pass
            if time.monotonic() > deadline:
                break
            try:
                _, refs = ray.wait(refs, num_returns=len(refs), timeout=0.5)
            except Exception:  # noqa: BLE001 - Ray shut down: nothing is left running
                break


_END = object()


def _roundtrip(item: Any, build: Callable | None) -> None:
    if build is not None:
        build(item)


def check_travel(items: dict[str, Any], build: Callable | None = None, address: str | None = None, kind: str = "agent") -> None:
    """ValueError in one line naming the first item that cannot reach a Ray worker: one that
    cannot be pickled here, or whose code cannot be imported (or, with `build`, built) there."""
    ray = connect(address)
    from ray import cloudpickle

    for label, item in items.items():
        try:
            cloudpickle.dumps(item)
        except Exception as e:  # noqa: BLE001 - any pickling failure means the same thing
            raise ValueError(
                f"{kind} {label!r} cannot travel to the Ray workers: it cannot be pickled ({_first_line(e)}) and is not "
                "named by an importable module; define it at the top level of a module installed on every node, or make it picklable"
            ) from None
        try:
            ray.get(ray.remote(num_cpus=0, max_retries=1)(_roundtrip).remote(item, build))
        except ray.exceptions.RayError as e:
            err = _unwrap(ray, e, f"{kind} {label!r}")
            if isinstance(err, RuntimeError) and "cannot be loaded" in str(err):
                raise ValueError(str(err)) from None
            raise ValueError(f"{kind} {label!r} cannot be built on a Ray worker: {_first_line(err)}") from None
