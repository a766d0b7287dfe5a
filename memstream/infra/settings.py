"""Settings: environment variables override a TOML config file, which overrides defaults.

Every component reads the broker address from here (``MEMSTREAM_KAFKA_BOOTSTRAP``), so
Apache Kafka, Redpanda or a managed cluster is one setting away. When it is unset, the
address recorded by ``memstream broker`` in ``<data_dir>/broker.json`` is used.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass, field, fields
from datetime import timedelta
from pathlib import Path
from typing import Any

from memstream.core.retention import RETENTION_MODELS
from memstream.schemas.envelope import Limits

ENV_PREFIX = "MEMSTREAM_"


class ConfigError(RuntimeError):
    """A setting is missing or malformed; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class Settings:
    kafka_bootstrap: str | None = None
    # authenticated clients (infra/kafka_auth.py; ACLs per tenant prefix: infra/KAFKA_SECURITY.md)
    kafka_security_protocol: str = "PLAINTEXT"
    kafka_sasl_mechanism: str | None = None
    kafka_sasl_username: str | None = None
    kafka_sasl_password: str | None = field(default=None, repr=False)
    kafka_ssl_cafile: str | None = None
    topic_prefix: str = "memstream"
    partitions: int = 4
    data_dir: str = ".memstream"
    producer_name: str = "memstream-sdk"
    # The embedded broker holds a group join for half the session timeout: keep it short there.
    broker_session_timeout: float = 6.0
    broker_heartbeat_interval: float = 1.0
    max_event_bytes: int = 1_048_576
    max_text_chars: int = 32_000
    # event time: an event dated later than this past the clock at intake (or its namespace's
    # newest event time) is rejected at the edge and dead-lettered by the agents (core/event_time.py)
    max_future_skew_hours: float = 24.0
    # write path
    buffer_max_turns: int = 12
    buffer_max_age_minutes: float = 30.0
    # event time: another session of the tenant speaks this long after a buffer's last turn
    buffer_gap_minutes: float = 10.0
    buffer_idle_seconds: float = 5.0  # wall-clock liveness: a quiet tenant's buffers after this
    # prediction-error gate (core/gate.py): similarity to the closest memory decides
    gate_create_below: float = 0.70  # under this: a new memory
    gate_update_min: float = 0.75  # from this up: an update of the closest memory
    gate_reinforce_above: float = 0.92  # over this: the same memory again (reinforce)
    openai_api_key: str | None = None
    openai_base_url: str | None = None
    openai_model: str = "gpt-4.1-mini"
    openai_timeout_s: float = 30.0
    openai_max_retries: int = 3
    openai_backoff_s: float = 0.5
    openai_max_concurrency: int = 4
    # lifecycle: the dream cycle and tier rules run at each boundary of this period of event
    # time (daily at midnight UTC by default); 0 runs tiers on a timer and the cycle on demand only
    dream_every_hours: float = 24.0
    # evolution (core/evolution_apply.py) runs on its own per namespace after this many hours
    # of event time since its last run, or after this many Q updates learned from use,
    # whichever first; 0 turns a trigger off (both 0: on demand only, `memstream evolve`)
    evolution_every_hours: float = 6.0
    evolution_q_updates: int = 100
    # forgetting (core/lifecycle/): the retention curve of the dream cycle and of recall's
    # score, weibull or fsrs (core/retention.py), and how many live memories a namespace keeps before the least
    # useful go dormant (capacity trim; 0: no limit)
    retention_model: str = "weibull"
    memory_capacity: int = 10_000
    # retrieval
    qdrant_url: str | None = None
    # dense embedder of retrieval (the Qdrant projection and recall; each model has its own
    # collection): hashing | wordllama | sentence-transformers | openai, or several joined by
    # "+" with weights (core/combined_embedder.py). Chosen on the
    # development data: wordllama beat hashing there at no ingest cost (README, Configuration)
    embedder: str = "wordllama"
    embed_model: str | None = None
    embed_dim: int | None = None
    # the write path's near-duplicate gate and the dream cycle's merges compare texts with
    # this one; their thresholds (gate_*) were set for its lexical similarity
    gate_embedder: str = "hashing"
    # recalls run on their own threads; past this many queued, HTTP answers 429 (Retry-After)
    recall_threads: int = 2
    recall_max_pending: int = 8
    # numpy's OpenBLAS threads in a worker (0: OpenBLAS's default, one per core): its
    # products are small and run from many threads, and waiting for BLAS threads on busy
    # cores cost recall more than they saved (infra/blas.py)
    blas_threads: int = 1
    # worker: a partition's state is loaded from its latest snapshot plus the log's tail
    # (<data_dir>/snapshots; streams/snapshots.py), refreshed after this many new events
    snapshots: bool = True
    snapshot_every_events: int = 20_000
    projections: str = (
        "duckdb,qdrant,archive"  # which read models this worker keeps ("none" for none)
    )
    # while the memory log streams, a projection's batches start at least this long apart
    # (a batch costs much per batch, little per record); after a quiet spell it applies at
    # once (projections/runner.py). Off by default: the two projections linger apart, so a
    # recalled id could be missing from DuckDB (GET /v1/memories/{id}) for up to this long,
    # and Qdrant ends seconds behind under bulk ingest; for bulk backfills, 0.5 bought ~10%
    projection_linger_seconds: float = 0.0
    # a batch of recall telemetry alone (access events, workflow records) waits this long
    # for more before a projection applies it (projections/runner.py): recalls over HTTP
    # were slowed by one small DuckDB transaction each; access counts lag this much
    projection_telemetry_wait_seconds: float = 0.25
    # what a worker node runs: "all", or write / project / api comma-separated
    # (core/roles.py; `memstream worker --role` overrides it)
    roles: str = "all"
    # health (/health, memstream status): the broker is probed this often (the answer is
    # cached that long); a reader (projection, agent) with records waiting that has not moved
    # for health_stall_seconds is stalled (above the longest a session buffer may hold a turn,
    # buffer_max_turns x buffer_idle_seconds)
    # admin SQL (/sql, memstream sql): a statement is stopped after this long; DuckDB's
    # memory limit holds for its whole database (the projection and user SQL together)
    sql_timeout_seconds: float = 5.0
    duckdb_memory_limit: str = "1GB"
    # DuckDB's threads for the whole database (0: one per core). The projection's batches
    # are small and gain nothing from more; on a worker, DuckDB's threads took the cores
    # the recalls beside them needed (recall over HTTP p99 ~55 -> ~43 ms, python -m bench
    # recall_http). Analysts' large SQL on a dedicated node may want 0.
    duckdb_threads: int = 1
    health_probe_seconds: float = 2.0
    health_stall_seconds: float = 120.0
    api_host: str = "127.0.0.1"
    api_port: int = 0  # 0: a free port, recorded in <data_dir>/worker.json
    hot_max_bytes: int = 5 * 1024  # the hot memory block's hard cap (core/hot_memory.py)
    api_keys: str | None = None  # "key=ns1|ns2,admin=*" (see consumers/auth.py); unset: open API
    # the key this client (CLI) sends to the worker's API; --api-key overrides it
    api_key: str | None = None
    # MCP server (`memstream mcp`): the namespace it serves (unset: the one the caller's key
    # reaches, or a tool's namespace argument), the key it presents over stdio, and the
    # worker's API (unset: the running worker of data_dir)
    mcp_namespace: str | None = None
    mcp_api_key: str | None = None
    mcp_api_url: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def limits(self) -> Limits:
        return Limits(max_event_bytes=self.max_event_bytes, max_text_chars=self.max_text_chars)

    @property
    def max_future_skew(self) -> timedelta:
        return timedelta(hours=self.max_future_skew_hours)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    def bootstrap(self) -> str:
        """The broker address, or a ConfigError that says how to get one."""
        if self.kafka_bootstrap:
            return self.kafka_bootstrap
        recorded = broker_state_path(self.data_path)
        if recorded.exists():
            import orjson

            state = orjson.loads(recorded.read_bytes())
            return str(state["bootstrap"])
        raise ConfigError(
            "no Kafka broker configured: set MEMSTREAM_KAFKA_BOOTSTRAP=host:port, "
            "or start the embedded one with `memstream broker`"
        )

    def with_(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def broker_state_path(data_dir: Path) -> Path:
    return data_dir / "broker.json"


def _coerce(raw: Any, hint: Any, name: str) -> Any:
    """A file or environment value -> the setting's declared type."""
    if raw is None:
        return None
    kinds = typing.get_args(hint) or (hint,)
    try:
        if int in kinds and not isinstance(raw, bool):
            return int(raw)
        if float in kinds and not isinstance(raw, bool):
            return float(raw)
    except ValueError:
        raise ConfigError(f"setting {name} must be a number, got {raw!r}") from None
    if bool in kinds:
        return (
            raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
        )
    return str(raw)


def load(config_file: str | Path | None = None, env: dict[str, str] | None = None) -> Settings:
    env = dict(os.environ) if env is None else env
    values: dict[str, Any] = {}
    path = Path(config_file or env.get(f"{ENV_PREFIX}CONFIG", "memstream.toml"))
    if path.exists():
        try:
            values.update(tomllib.loads(path.read_text()).get("memstream", {}))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: {e}") from None
    hints = typing.get_type_hints(Settings)
    known = {f.name for f in fields(Settings) if f.name != "extra"}
    unknown = set(values) - known
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s) {', '.join(sorted(unknown))}")
    for name in known:
        key = f"{ENV_PREFIX}{name.upper()}"
        if env.get(key):
            values[name] = env[key]
    settings = Settings(**{name: _coerce(raw, hints[name], name) for name, raw in values.items()})
    if settings.retention_model not in RETENTION_MODELS:
        raise ConfigError(
            f"setting retention_model must be one of {', '.join(RETENTION_MODELS)}, "
            f"got {settings.retention_model!r}"
        )
    if settings.memory_capacity < 0:
        raise ConfigError(
            f"setting memory_capacity must be 0 (no limit) or more, got {settings.memory_capacity}"
        )
    return settings
