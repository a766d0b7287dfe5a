"""What a worker node runs for its roles (``memstream worker --role``): pure, so the split of
agents, projections and routes between nodes is decided in one place and tested alone.

* ``write``: the input agents in the agents' consumer group (write path, access tracker,
  Q-learner, workflow observer) with their timers (buffer flushes, maintenance, snapshots,
  parked feedback); no projections; HTTP for operations only (health).
* ``project``: the projections over the memory log (and the other topics for DuckDB and
  the archive). With a Qdrant server the Qdrant projection joins a consumer group of its
  own, so project nodes split the memory log's partitions between them (the checkpoint of
  each partition lives in the shared store, so a new owner resumes where the last one
  stopped); DuckDB and the archive are files of the node, so each project node keeps a
  full copy of them. With the embedded Qdrant every project node is a full read replica.
* ``api``: HTTP/MCP recall and context, and the recall responder of the bus (in a
  consumer group of its own, so an API node joining or dying never pauses extraction).
  Recall scores with DuckDB's usage counts and trees, a local file, so an API node folds
  its own DuckDB replica; against a Qdrant server it searches the server (no Qdrant
  projection of its own), with the embedded store it keeps its own Qdrant replica too.
* ``all`` (default): every role in one process, the embedded setup as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ROLES = ("write", "project", "api")

#: the agents of the write role, by name (streams/agents.py)
WRITE_AGENTS = ("write-path", "access-tracker", "q-learner", "workflow-observer")
#: timers that belong with the write agents: they act on the partition state they hold
WRITE_TIMERS = ("write-path-flush-due", "maintenance", "snapshots", "feedback-expiry")
API_AGENTS = ("recall-responder",)
#: the projections recall reads (usage, co-activation, trees; vectors)
RECALL_STORES = ("duckdb", "qdrant")


class RoleError(ValueError):
    pass


def parse_roles(values: Iterable[str] | str | None) -> frozenset[str]:
    """``--role`` values (repeatable, each may be comma-separated) -> the node's role set.
    Nothing, or ``all`` anywhere, is every role."""
    if values is None:
        return frozenset(ROLES)
    items = [values] if isinstance(values, str) else list(values)
    out: set[str] = set()
    for item in items:
        for part in item.split(","):
            name = part.strip().lower()
            if not name:
                continue
            if name == "all":
                return frozenset(ROLES)
            if name not in ROLES:
                raise RoleError(f"unknown role {name!r}; choose from {', '.join((*ROLES, 'all'))}")
            out.add(name)
    return frozenset(out) if out else frozenset(ROLES)


@dataclass(frozen=True)
class NodePlan:
    roles: tuple[str, ...]  # in ROLES order
    #: faust agents this node runs (empty: no faust app, no agents' consumer group)
    agents: tuple[str, ...]
    timers: tuple[str, ...]
    #: consumer group of the agents, a suffix of the topic prefix ("worker", "api"); None: none
    group: str | None
    #: projections this node keeps (runs a reader for)
    projections: tuple[str, ...]
    #: of those, the ones whose readers share the memory log's partitions in a consumer group
    partitioned: tuple[str, ...]
    #: projections read from a shared store without running them here ("qdrant" on an API
    #: node against a Qdrant server)
    attached: tuple[str, ...]
    #: "full": every HTTP route; "ops": health, the OpenAPI document, digest and SQL
    http: str

    @property
    def everything(self) -> bool:
        return self.roles == ROLES

    def describe(self) -> str:
        return ",".join(self.roles) if not self.everything else "all (" + ",".join(ROLES) + ")"


def plan(roles: frozenset[str], kinds: Iterable[str], *, shared_qdrant: bool) -> NodePlan:
    """What a node with ``roles`` runs, given the configured projections (``kinds``, settings
    ``projections``) and whether Qdrant is a server shared by the nodes (``qdrant_url``)."""
    unknown = roles - set(ROLES)
    if unknown:
        raise RoleError(f"unknown role(s) {', '.join(sorted(unknown))}")
    if not roles:
        roles = frozenset(ROLES)
    ordered = tuple(r for r in ROLES if r in roles)
    configured = tuple(dict.fromkeys(k for k in kinds if k and k != "none"))
    write, project, api = "write" in roles, "project" in roles, "api" in roles

    agents = (WRITE_AGENTS if write else ()) + (API_AGENTS if api else ())
    timers = WRITE_TIMERS if write else ()
    # the API's responder joins the agents' group where a write role runs (one group, as
    # the single embedded worker always had); alone it has a group of its own
    group = "worker" if write else ("api" if api else None)

    projections: tuple[str, ...] = ()
    attached: tuple[str, ...] = ()
    partitioned: tuple[str, ...] = ()
    if project:
        projections = configured
        # a single all-in-one node reads every partition as before; split project nodes
        # share a Qdrant server's partitions (its checkpoints are in the shared store)
        if shared_qdrant and "qdrant" in configured and ordered != ROLES:
            partitioned = ("qdrant",)
    elif api:
        replicas = tuple(k for k in configured if k in RECALL_STORES)
        if shared_qdrant and "qdrant" in replicas:
            projections = tuple(k for k in replicas if k != "qdrant")
            attached = ("qdrant",)
        else:
            projections = replicas
    return NodePlan(
        roles=ordered,
        agents=agents,
        timers=timers,
        group=group,
        projections=projections,
        partitioned=partitioned,
        attached=attached,
        http="full" if api else "ops",
    )
