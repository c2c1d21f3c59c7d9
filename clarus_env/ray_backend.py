"""``clarus eval --backend ray``: the same episodes on a Ray cluster (the engine RL trainers
already run on), for runs larger than one machine.

An actor pool rather than one task per episode: each actor opens the reference bundle and the
frozen split files once and keeps its envs (and their warm SQLite statement caches) for every
episode it is given. Nothing large is shipped: the bundle and the splits are files inside the
installed package, a path every node with ``clarus[ray]`` installed can read. Chunks are
gathered in plan order, so the results equal a serial run's.
"""

from __future__ import annotations

from typing import Any

from .evaluation import Plan, chunks, load_chunk, run_chunk


class _Runner:
    """One actor: a process with its own envs, reused for every chunk sent to it."""

    def run(self, agent: str, split: str, chunk: Plan) -> bytes:
        return run_chunk(agent, split, chunk)


def run_plan_ray(agent: str, split: str, plan: Plan, *, workers: int, address: str | None,
                 bar: Any = None) -> list[dict[str, Any]]:
    """Run the plan on ``workers`` actors (0: one per cluster CPU; never more actors than the
    cluster has CPUs or the plan has episodes). Joins the cluster at ``address`` (or
    ``RAY_ADDRESS``), or starts a local one, unless this process is already connected."""
    try:
        import ray
        from ray.util import ActorPool
    except ImportError as exc:
        raise ValueError("--backend ray needs Ray: pip install 'clarus[ray]'") from exc
    if not ray.is_initialized():
        # a local cluster when no address is given and RAY_ADDRESS is unset
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    n = max(1, min(workers or cpus, cpus, len(plan)))
    actor = ray.remote(num_cpus=1)(_Runner)
    actors = [actor.remote() for _ in range(n)]
    pool = ActorPool(actors)
    pieces = chunks(plan, n)
    episodes: list[dict[str, Any]] = []
    try:
        # ActorPool.map yields in submission order: the results file is the serial run's
        for piece, part in zip(pieces, pool.map(lambda a, c: a.run.remote(agent, split, c),
                                                pieces), strict=True):
            episodes.extend(load_chunk(part))
            if bar is not None:
                bar.update(len(piece))
    finally:
        for a in actors:  # their CPUs go back to the cluster for the next run
            ray.kill(a)
    return episodes
