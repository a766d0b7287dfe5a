"""The ``memstream`` command line: the parser and the entry point; each command lives in a
module by role (cli_intake, cli_admin, cli_recall, cli_views, and cli_common for what they
share)."""

from __future__ import annotations

import argparse
import sys

from memstream.consumers.cli_admin import (
    cmd_audit,
    cmd_dashboard,
    cmd_health,
    cmd_mcp,
    cmd_recover,
    cmd_replay,
    cmd_sql,
    cmd_status,
    cmd_verify,
)
from memstream.consumers.cli_common import iso_time
from memstream.consumers.cli_intake import (
    cmd_broker,
    cmd_dlq,
    cmd_ingest,
    cmd_schemas,
    cmd_tail,
    cmd_topics,
    cmd_worker,
)
from memstream.consumers.cli_recall import (
    cmd_consolidate,
    cmd_evidence,
    cmd_evolve,
    cmd_gaps,
    cmd_recall,
    cmd_workflow,
)
from memstream.consumers.cli_views import (
    cmd_context,
    cmd_entity,
    cmd_export,
    cmd_graph,
    cmd_metadata,
    cmd_pin,
    cmd_tree,
)
from memstream.infra.settings import ConfigError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memstream", description=__doc__)
    parser.add_argument(
        "--config", help="TOML config file (default: $MEMSTREAM_CONFIG or ./memstream.toml)"
    )
    key_help = (
        "API key sent to the worker (default: $MEMSTREAM_API_KEY); needed when the worker "
        "has MEMSTREAM_API_KEYS"
    )
    parser.add_argument("--api-key", help=key_help)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "broker", help="run the embedded Kafka-protocol broker on a free loopback port"
    )
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--create-topics", action="store_true", help="also create memstream's topics")
    p.add_argument(
        "--stop", action="store_true", help="stop the broker recorded in the data directory"
    )
    p.set_defaults(fn=cmd_broker)

    p = sub.add_parser("topics", help="create (idempotent) or list the topics")
    p.add_argument("action", choices=["create", "list"])
    p.set_defaults(fn=cmd_topics)

    p = sub.add_parser("schemas", help="export JSON Schema for every event type")
    p.add_argument("action", choices=["export"])
    p.add_argument("--out", default="schemas/json")
    p.set_defaults(fn=cmd_schemas)

    p = sub.add_parser("ingest", help="publish conversation turns from a JSONL file")
    p.add_argument(
        "--wait",
        action="store_true",
        help="return once every published turn is extracted and every projection applied "
        "the result (needs a running worker); exit 3 on timeout",
    )
    p.add_argument("--wait-timeout", type=float, default=600.0, help="seconds (default 600)")
    p.add_argument("file", help="JSONL turns, or markdown notes (.md: --namespace needed)")
    p.add_argument("--window", type=int, default=5000, help="publishes in flight at most")
    p.add_argument("--namespace", help="markdown notes: whose notes they are")
    p.add_argument("--speaker", default="User", help="markdown notes: who wrote them")
    p.add_argument("--date", help="markdown notes: their day, if the file name has none")
    p.add_argument(
        "--broker-timeout",
        type=float,
        default=15.0,
        help="seconds the broker may take to acknowledge (default 15); 20 turns in a row "
        "without an acknowledgement stop the ingest with one message (exit 4)",
    )
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--rejects", help="also write rejected line numbers and reasons to this file")
    p.set_defaults(fn=cmd_ingest)

    p = sub.add_parser("worker", help="run a stream worker (creates topics first)")
    p.add_argument("--web-port", type=int, default=None)
    p.add_argument(
        "--datadir",
        default=None,
        help="faust's directory (default: <MEMSTREAM_DATA_DIR>/worker); only to run a second "
        "worker on the same data directory",
    )
    p.add_argument("--loglevel", default="warning")
    p.add_argument(
        "--role",
        action="append",
        metavar="ROLE",
        help="what this node runs: write (the input agents), project (the projections), api "
        "(HTTP/MCP recall and context, the bus recall responder) or all (default: "
        "$MEMSTREAM_ROLES, else all); repeat it or comma-separate (--role write,api); "
        "README: Topology",
    )
    p.add_argument(
        "--restarts",
        type=int,
        default=0,
        metavar="N",
        help="run the worker as a child process and start it again after a crash, up to N "
        "times in a row, waiting 1-30 s (default 0: a crash stops it, for a process "
        "supervisor to restart)",
    )
    p.set_defaults(fn=cmd_worker)

    p = sub.add_parser(
        "mcp",
        help="serve the memory to MCP clients (stdio for desktop and coding agents, "
        "streamable HTTP for remote ones) through the running worker",
    )
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--namespace", help="serve this namespace only ($MEMSTREAM_MCP_NAMESPACE)")
    p.add_argument("--api-key", help="the key presented over stdio ($MEMSTREAM_MCP_API_KEY)")
    p.add_argument("--api-url", help="the worker's API (default: the running worker)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="HTTP: the port (0: a free one)")
    p.add_argument("--path", default="/mcp", help="HTTP: the endpoint's path")
    p.set_defaults(fn=cmd_mcp)

    p = sub.add_parser("dlq", help="show dead letters with their reasons")
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(fn=cmd_dlq)

    p = sub.add_parser(
        "sql", help="read-only SQL on the analytics projection (works while a worker runs)"
    )
    p.add_argument("query")
    p.add_argument("--format", choices=["table", "csv", "json", "parquet"], default="table")
    p.add_argument("--out", help="output file (required for parquet; default stdout)")
    p.add_argument(
        "--limit",
        type=int,
        default=10_000,
        help="at most this many rows (a notice on stderr says when the limit cut the result)",
    )
    p.set_defaults(fn=cmd_sql)

    p = sub.add_parser(
        "replay", help="rebuild projections from the log (or the archive) and switch over"
    )
    p.add_argument("--projection", choices=["duckdb", "qdrant", "all"], default="all")
    p.add_argument(
        "--from-archive", action="store_true", help="read the Parquet archive instead of Kafka"
    )
    p.add_argument(
        "--until",
        type=iso_time,
        help="only events up to this time (a point-in-time build; no switch-over)",
    )
    p.add_argument(
        "--no-switch", action="store_true", help="build the new version but keep CURRENT"
    )
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto")
    p.set_defaults(fn=cmd_replay)

    p = sub.add_parser("recall", help="recall memories for a question (or --batch queries.jsonl)")
    p.add_argument("query", nargs="?")
    p.add_argument("--namespace")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--as-of", dest="as_of", type=iso_time)
    p.add_argument("--json", action="store_true")
    p.add_argument("--batch", help="JSONL in: query, namespace, optional k, as_of, id; JSONL out")
    p.add_argument(
        "--include-low-confidence",
        dest="include_low_confidence",
        action="store_true",
        help="return the results even when nothing relevant was found (withheld by default)",
    )
    p.set_defaults(fn=cmd_recall)

    p = sub.add_parser(
        "consolidate", help="the dream cycle: decay, rehearsal, expiry, forgetting, merges"
    )
    p.add_argument(
        "--apply", action="store_true", help="write the actions as events (default: dry run)"
    )
    p.add_argument("--namespace", action="append", help="limit to these namespaces (repeatable)")
    p.add_argument(
        "--at",
        type=iso_time,
        help="event time of the cycle (default: each partition's newest event)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_consolidate)

    for command, what in (
        ("pin", "pin a memory: never forgotten, ranked a little higher"),
        ("unpin", "undo pin or lock"),
        ("lock", "pin and make immutable: no rule and no extraction changes it"),
    ):
        p = sub.add_parser(command, help=what)
        p.add_argument("memory_id")
        p.add_argument("--namespace", required=True)
        p.add_argument("--reason")
        p.set_defaults(fn=cmd_pin)

    p = sub.add_parser("entity", help="the namespace's entities, or everything about one")
    p.add_argument("name", nargs="?", help="an entity (any of its names); none: list them")
    p.add_argument("--namespace", required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_entity)

    p = sub.add_parser("graph", help="a memory's typed edges and neighbours within k hops")
    p.add_argument("memory_id")
    p.add_argument("--namespace", required=True)
    p.add_argument("--hops", type=int, default=2, help="how far to walk (1..4, default 2)")
    p.add_argument("--relation", help="only this relation (causes, same_entity, ...)")
    p.add_argument(
        "--as-of",
        dest="as_of",
        type=iso_time,
        help="the edges as they were at this time (ISO 8601)",
    )
    p.add_argument("--format", choices=("text", "json", "dot"), default="text")
    p.set_defaults(fn=cmd_graph)

    p = sub.add_parser("tree", help="the category tree: show, add or remove a node, prune report")
    tree = p.add_subparsers(dest="tree_command", required=True)
    t = tree.add_parser("show", help="the namespace's tree, with the count of memories per node")
    t.add_argument("--namespace", required=True)
    t.add_argument("--format", choices=("text", "json"), default="text")
    t.add_argument(
        "--at", type=iso_time, help="judge the 60-day idle rule at this event time (ISO 8601)"
    )
    for command, what in (
        ("add", "add a node (an event): memories about the entity it names go under it"),
        ("remove", "remove a node and what is below it (an event); add brings it back"),
    ):
        t = tree.add_parser(command, help=what)
        t.add_argument("path", help="e.g. work/projects/budget-tracker (1-4 segments)")
        t.add_argument("--namespace", required=True)
        t.add_argument("--reason")
        t.add_argument(
            "--at", type=iso_time, help="the event time of the edit (ISO 8601; default now)"
        )
    t = tree.add_parser(
        "prune",
        help="report the nodes the 60-day idle rule leaves out: the rule applies by itself "
        "on every read (from event time, so a rebuild gives the same tree); this command "
        "only shows what it removes and writes nothing",
    )
    t.add_argument("--namespace", required=True)
    t.add_argument(
        "--at", type=iso_time, help="as of this event time (ISO 8601; default the namespace's now)"
    )
    t.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(fn=cmd_tree)

    p = sub.add_parser(
        "context", help="what to put into a prompt: hot memory, the session, the recall"
    )
    p.add_argument("--namespace", required=True)
    p.add_argument("--session", help="add the session's working set (at most 9 memories)")
    p.add_argument("--query", help="add what recall finds for this question")
    p.add_argument("--budget", type=int, default=1000, help="tokens (about 4 characters each)")
    p.add_argument("-k", type=int, default=10, help="recall results to consider")
    p.add_argument("--json", action="store_true", help="the block with its memory ids")
    p.set_defaults(fn=cmd_context)

    p = sub.add_parser("export", help="write MEMORY.md (the hot memory) per namespace")
    p.add_argument("--format", choices=["markdown"], default="markdown")
    p.add_argument("--namespace", action="append", help="only these (repeatable)")
    p.add_argument("--out", default="memory-export", help="directory (default memory-export)")
    p.set_defaults(fn=cmd_export)

    p = sub.add_parser(
        "health",
        help="7- and 30-day health per workflow: healthy, degraded, or insufficient (< 3 in 7 days)",
    )
    p.add_argument("--namespace")
    p.add_argument("--strict", action="store_true", help="exit 1 when a workflow is degraded")
    p.set_defaults(fn=cmd_health)

    p = sub.add_parser(
        "metadata", help="URLs, commands, paths, versions and ids kept on the memories"
    )
    p.add_argument("--kind", choices=["url", "command", "path", "version", "id"])
    p.add_argument("--namespace")
    p.add_argument("--contains", help="values holding this fragment (any case)")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_metadata)

    p = sub.add_parser(
        "dashboard", help="the running worker's web dashboard address (read-only, same keys)"
    )
    p.add_argument("--namespace", help="open on this namespace")
    p.add_argument("--open", action="store_true", help="open it in the desktop's browser")
    p.set_defaults(fn=cmd_dashboard)

    p = sub.add_parser(
        "status",
        help="is the system well: broker, projections, agents, read positions (exit 1 if not)",
    )
    p.add_argument("--json", action="store_true", help="the checks as JSON")
    p.set_defaults(fn=cmd_status)

    p = sub.add_parser(
        "evidence", help="recent failures and corrections of a workflow, with suggestions"
    )
    p.add_argument("workflow")
    p.add_argument("--limit", type=int, default=10)
    p.set_defaults(fn=cmd_evidence)

    p = sub.add_parser("gaps", help="topics searched often but answered poorly")
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--namespace")
    p.set_defaults(fn=cmd_gaps)

    p = sub.add_parser("workflow", help="record a workflow observation")
    p.add_argument("action", choices=["observe"])
    p.add_argument("workflow")
    p.add_argument("outcome", choices=["success", "failure", "corrected", "missed"])
    p.add_argument("--namespace", required=True)
    p.add_argument("--detail")
    p.set_defaults(fn=cmd_workflow)

    p = sub.add_parser(
        "evolve", help="evolution candidates (deprecate, refine, archive, merge, induce)"
    )
    p.add_argument(
        "--apply", action="store_true", help="write the actions as events (default: evidence only)"
    )
    p.add_argument("--namespace", action="append")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_evolve)

    p = sub.add_parser(
        "recover",
        help="after the broker lost the log: restore it from the archive and rebuild the "
        "read models (worker stopped; README: Recovery)",
    )
    p.set_defaults(fn=cmd_recover)

    p = sub.add_parser("verify", help="rebuild side by side and diff against the live projections")
    p.set_defaults(fn=cmd_verify)

    p = sub.add_parser("audit", help="the causal chain of a memory, or a namespace as of a time")
    p.add_argument("memory_id", nargs="?")
    p.add_argument("--namespace")
    p.add_argument("--as-of", dest="as_of", type=iso_time)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_audit)

    p = sub.add_parser("tail", help="print the events on a topic")
    p.add_argument(
        "role",
        choices=[
            "turns",
            "access",
            "feedback",
            "workflows",
            "memory_log",
            "recall_requests",
            "recall_replies",
        ],
    )
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(fn=cmd_tail)
    # after the command too: `memstream sql ... --api-key K` (aliases share one parser)
    for each in {id(p): p for p in sub.choices.values()}.values():
        if "--api-key" not in each._option_string_actions:  # mcp has its own
            each.add_argument("--api-key", default=argparse.SUPPRESS, help=key_help)
    return parser


def main(argv: list[str] | None = None) -> int:
    import httpx

    from memstream.consumers.worker_api import WorkerApiError
    from memstream.projections.user_sql import UserSQLError

    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # `worker --restarts` runs them again
    try:
        return int(args.fn(args))
    except ConfigError as e:
        print(f"memstream: {e}", file=sys.stderr)
        return 2
    except (WorkerApiError, UserSQLError) as e:  # one line, never a traceback
        print(f"memstream {args.command}: {e}", file=sys.stderr)
        return 1
    except httpx.HTTPError as e:
        print(f"memstream {args.command}: the worker's API failed: {e}", file=sys.stderr)
        return 1
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as e:
        # a path the caller gave, or a projection not built yet: say which, no traceback
        print(f"memstream {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
