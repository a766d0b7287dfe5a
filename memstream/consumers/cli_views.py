"""``memstream`` commands on one namespace's views through the worker's API: pin, entity,
graph, tree, context, MEMORY.md export, metadata."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memstream.consumers.cli_common import (
    _print_table,
    _rows,
    _said_no,
    _settings,
    _worker_client,
)


def cmd_pin(args: argparse.Namespace) -> int:
    """memstream pin|unpin|lock MEMORY_ID --namespace N: an edit event, like the SDK's."""
    client = _worker_client(args, args.command)
    if isinstance(client, int):
        return client
    with client:
        response = client.post(
            f"/v1/memories/{args.memory_id}/{args.command}",
            json={"namespace": args.namespace, "reason": args.reason},
        )
    body = response.json()
    if response.status_code != 200:
        error = body.get("error", {})
        print(f"memstream {args.command}: {error.get('message', response.text)}", file=sys.stderr)
        return 1
    print(f"{args.command} of {args.memory_id} queued (event {body['event_id']})")
    return 0


def cmd_entity(args: argparse.Namespace) -> int:
    """memstream entity [NAME] --namespace N: the entity list, or one entity's timeline."""
    import orjson

    client = _worker_client(args, "entity")
    if isinstance(client, int):
        return client
    path = f"/v1/entities/{args.name}" if args.name else "/v1/entities"
    with client:
        response = client.get(path, params={"namespace": args.namespace})
    body = response.json()
    if response.status_code != 200:
        error = body.get("error", {})
        print(f"memstream entity: {error.get('message', response.text)}", file=sys.stderr)
        return 1
    if args.json:
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
    elif not args.name:
        for e in body["entities"]:
            also = f"  (also {', '.join(e['aliases'])})" if e["aliases"] else ""
            print(f"{e['memories']:5}  {e['name']}{also}")
    else:
        also = f" (also {', '.join(body['aliases'])})" if body["aliases"] else ""
        print(f"{body['name']}{also}: {len(body['timeline'])} memories")
        for m in body["timeline"]:
            status = "" if m["status"] == "active" else f"  [{m['status']}]"
            print(f"  {(m['at'] or '')[:10]}  {m['text']}{status}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    """memstream graph MEMORY_ID --namespace N [--hops 2] [--format text|json|dot]."""
    import orjson

    client = _worker_client(args, "graph")
    if isinstance(client, int):
        return client
    params = {"namespace": args.namespace, "hops": str(args.hops)}
    if args.relation:
        params["relation"] = args.relation
    if args.as_of:
        params["as_of"] = args.as_of
    if args.format == "dot":
        params["format"] = "dot"
    with client:
        response = client.get(f"/v1/graph/{args.memory_id}", params=params)
    if response.status_code != 200:
        error = response.json().get("error", {})
        where = f" ({error['path']})" if error.get("path") else ""
        print(f"memstream graph: {error.get('message', response.text)}{where}", file=sys.stderr)
        return 1
    if args.format == "dot":
        sys.stdout.write(response.text)
        return 0
    body = response.json()
    if args.format == "json":
        print(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode())
        return 0
    texts = {n["memory_id"]: n.get("text") or "(unknown)" for n in body["nodes"]}
    print(
        f"{args.memory_id}: {len(body['nodes']) - 1} memories within {body['hops']} hops, "
        f"{len(body['edges'])} edges"
    )
    for n in body["nodes"]:
        status = "" if n.get("status") in (None, "active") else f"  [{n['status']}]"
        print(f"  [{n['depth']}] {n['memory_id']}  {texts[n['memory_id']]}{status}")
    for e in body["edges"]:
        print(
            f"  {texts.get(e['source_id'], e['source_id'])[:50]!r} -{e['relation']} "
            f"{float(e['confidence']):.2f}-> {texts.get(e['target_id'], e['target_id'])[:50]!r} "
            f"({e['rule']})"
        )
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    """memstream tree show|add|remove|prune --namespace N: the category tree, and the user's
    node events (through the worker's API, with the CLI's key)."""
    import orjson

    client = _worker_client(args, "tree")
    if isinstance(client, int):
        return client
    with client:
        if args.tree_command in ("add", "remove"):
            body: dict[str, Any] = {"namespace": args.namespace, "path": args.path}
            if args.reason:
                body["reason"] = args.reason
            if args.at:
                body["occurred_at"] = args.at
            method = "POST" if args.tree_command == "add" else "DELETE"
            response = client.request(method, "/v1/tree", json=body)
        else:
            params = {"namespace": args.namespace}
            if getattr(args, "at", None):
                params["at"] = args.at
            response = client.get("/v1/tree", params=params)
    answer = response.json()
    if response.status_code != 200:
        return _said_no("tree", answer, response.text)
    if args.tree_command in ("add", "remove"):
        print(f"tree {args.tree_command} {answer['path']} queued (event {answer['event_id']})")
        return 0
    if args.tree_command == "prune":
        if args.format == "json":
            out = {k: answer[k] for k in ("namespace", "now", "pruned")}
            print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
            return 0
        days = answer["bounds"]["idle_days"]
        print(
            f"{len(answer['pruned'])} node(s) idle for over {days} days as of "
            f"{answer['now'] or '(no memories)'}, left out of the tree:"
        )
        for n in answer["pruned"]:
            print(f"  {n['path']}  ({n['count']} memories, last used {(n['last_use'] or '')[:10]})")
        return 0
    if args.format == "json":
        print(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
    else:
        sys.stdout.write(answer["text"])
        left = [f"{len(answer[k])} {k}" for k in ("pruned", "trimmed") if answer[k]]
        print(
            f"({len(answer['nodes'])} nodes, {answer['placed']} memories placed"
            + (f"; left out: {', '.join(left)}" if left else "")
            + ")"
        )
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    import orjson

    client = _worker_client(args, "context")
    if isinstance(client, int):
        return client
    body: dict[str, Any] = {"namespace": args.namespace, "budget": args.budget, "k": args.k}
    if args.query:
        body["query"] = args.query
    if args.session:
        body["session_id"] = args.session
    with client:
        response = client.post("/v1/context", json=body)
    answer = response.json()
    if response.status_code != 200:
        return _said_no("context", answer, response.text)
    if args.json:
        print(orjson.dumps(answer, option=orjson.OPT_INDENT_2).decode())
    else:
        sys.stdout.write(answer["text"])
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """MEMORY.md per namespace: the hot memory block, as the context call shows it."""
    client = _worker_client(args, "export")
    if isinstance(client, int):
        return client
    out = Path(args.out)
    with client:
        namespaces = args.namespace
        if not namespaces:
            response = client.post(
                "/sql", json={"sql": "SELECT DISTINCT namespace FROM memories ORDER BY 1"}
            )
            if response.status_code != 200:
                print(f"memstream export: {response.text[:300]}", file=sys.stderr)
                return 1
            namespaces = [row[0] for row in response.json()["rows"]]
        for ns in namespaces:
            response = client.get("/v1/memory.md", params={"namespace": ns})
            if response.status_code != 200:
                print(f"memstream export: {ns}: {response.text[:300]}", file=sys.stderr)
                return 1
            path = out / ns / "MEMORY.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(response.text)
            print(f"{path}")
    return 0


def cmd_metadata(args: argparse.Namespace) -> int:
    """The URLs, commands, paths, versions and ids kept on active memories."""
    import orjson

    from memstream.projections.reports import metadata_query

    columns, rows = _rows(
        _settings(args), *metadata_query(args.kind, args.namespace, args.contains, args.limit)
    )
    if args.json:
        print(orjson.dumps([dict(zip(columns, r, strict=True)) for r in rows]).decode())
    else:
        _print_table(columns, rows, sys.stdout)
    return 0
