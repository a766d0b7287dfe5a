"""The MCP server's pure parts: which namespace a call acts on, whose key it carries, the
one-line explanation of a recall score, and the top-memories summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.consumers.mcp_link import LinkError, WorkerLink, bearer, choose_namespace
from memstream.consumers.mcp_resources import top_memories_markdown
from memstream.consumers.mcp_tools import why
from memstream.infra.settings import Settings


def test_a_configured_namespace_is_the_only_one() -> None:
    assert choose_namespace(None, "acme", ["*"]) == "acme"
    assert choose_namespace("acme", "acme", []) == "acme"
    with pytest.raises(LinkError, match="serves namespace 'acme' only"):
        choose_namespace("globex", "acme", ["*"])


def test_else_the_argument_else_the_keys_single_namespace() -> None:
    assert choose_namespace("globex", None, ["acme"]) == "globex"  # the worker then says 403
    assert choose_namespace(None, None, ["acme"]) == "acme"
    with pytest.raises(LinkError, match="every namespace"):
        choose_namespace(None, None, ["*"])
    with pytest.raises(LinkError, match="'acme', 'globex'"):
        choose_namespace(None, None, ["globex", "acme"])


@given(st.lists(st.sampled_from(["a", "b", "c", "*"]), max_size=4), st.sampled_from(["a", "z"]))
def test_a_pinned_server_never_acts_elsewhere(reach: list[str], asked: str) -> None:
    try:
        assert choose_namespace(asked, "a", reach) == "a"
    except LinkError:
        assert asked != "a"


def test_the_servers_own_key_is_never_lent_to_http_callers(tmp_path: Path) -> None:
    s = Settings(data_dir=str(tmp_path), mcp_api_key="root")
    assert WorkerLink(s, "stdio").key_for(None) == "root"
    assert WorkerLink(s, "http").key_for({}) is None
    assert WorkerLink(s, "http").key_for({"Authorization": "Bearer ka"}) == "ka"
    # over stdio without an MCP key: the first API key, as the CLI does
    cli_like = Settings(data_dir=str(tmp_path), api_keys="k1=acme,k2=*")
    assert WorkerLink(cli_like, "stdio").key_for(None) == "k1"


def test_bearer() -> None:
    assert bearer({"authorization": "bearer k"}) == "k"
    assert bearer({"X-API-Key": "k2"}) == "k2"
    assert bearer({"authorization": "Basic xyz"}) is None
    assert bearer(None) is None


def test_why_names_the_heaviest_components_first() -> None:
    explain = {
        "relevance": 0.9,
        "relevance.w": 0.5,
        "q_value": 0.5,
        "q_value.w": 0.1,
        "importance": 0.8,
        "importance.w": 0.2,
        "relevance.raw": 0.7,
        "store.dense": 0.3,
    }
    line = why(explain, top=2)
    assert line == "relevance 0.90 x 0.50, importance 0.80 x 0.20"


def row(
    mid: str, tier: str, q: float, category: str = "fact", status: str = "active"
) -> dict[str, object]:
    return {
        "memory_id": mid,
        "text": f"text {mid}",
        "tier": tier,
        "q_value": q,
        "importance": 0.5,
        "access_count": 0,
        "category": category,
        "status": status,
    }


def test_top_memories_rank_by_tier_then_q_and_skip_inactive() -> None:
    rows = [
        row("low", "peripheral", 0.9),
        row("core", "core", 0.1, "preference"),
        row("work-hi", "working", 0.8),
        row("work-lo", "working", 0.2),
        row("gone", "core", 1.0, status="superseded"),
    ]
    md = top_memories_markdown("acme", rows, top=3)
    assert md.startswith("# Memory: acme")
    assert "gone" not in md and "text low" not in md
    assert md.index("text work-hi") < md.index("text work-lo")
    assert "## preference" in md and "## fact" in md
    assert "No memories yet." in top_memories_markdown("acme", [])
