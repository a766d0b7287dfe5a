"""What each worker role runs (core/roles.py): agents, timers, projections, routes, groups."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstream.core.roles import (
    API_AGENTS,
    ROLES,
    WRITE_AGENTS,
    WRITE_TIMERS,
    RoleError,
    parse_roles,
    plan,
)

KINDS = ("duckdb", "qdrant", "archive")


def test_parse_roles_repeatable_and_comma_separated() -> None:
    assert parse_roles(None) == frozenset(ROLES)
    assert parse_roles([]) == frozenset(ROLES)
    assert parse_roles("all") == frozenset(ROLES)
    assert parse_roles(["write"]) == {"write"}
    assert parse_roles(["write,api"]) == {"write", "api"}
    assert parse_roles(["write", " API "]) == {"write", "api"}
    assert parse_roles(["project", "all"]) == frozenset(ROLES)
    with pytest.raises(RoleError, match="unknown role 'reader'"):
        parse_roles(["reader"])


def test_all_is_the_embedded_worker_as_before() -> None:
    node = plan(frozenset(ROLES), KINDS, shared_qdrant=False)
    assert node.agents == WRITE_AGENTS + API_AGENTS
    assert node.timers == WRITE_TIMERS
    assert node.group == "worker"
    assert node.projections == KINDS
    assert node.partitioned == () and node.attached == ()
    assert node.http == "full"
    # one node against a Qdrant server reads every partition, as before
    assert plan(frozenset(ROLES), KINDS, shared_qdrant=True).partitioned == ()


def test_write_runs_the_input_agents_only() -> None:
    node = plan(frozenset({"write"}), KINDS, shared_qdrant=False)
    assert node.agents == WRITE_AGENTS
    assert "recall-responder" not in node.agents
    assert node.timers == WRITE_TIMERS
    assert node.group == "worker"
    assert node.projections == () and node.attached == ()
    assert node.http == "ops"


def test_project_embedded_is_a_full_replica() -> None:
    node = plan(frozenset({"project"}), KINDS, shared_qdrant=False)
    assert node.agents == () and node.timers == () and node.group is None
    assert node.projections == KINDS
    assert node.partitioned == ()
    assert node.http == "ops"


def test_project_on_a_qdrant_server_shares_its_partitions() -> None:
    node = plan(frozenset({"project"}), KINDS, shared_qdrant=True)
    assert node.projections == KINDS
    assert node.partitioned == ("qdrant",)  # DuckDB and the archive are the node's files


def test_api_keeps_its_own_recall_stores() -> None:
    embedded = plan(frozenset({"api"}), KINDS, shared_qdrant=False)
    assert embedded.agents == API_AGENTS
    assert embedded.group == "api"  # joining or dying never pauses extraction
    assert embedded.projections == ("duckdb", "qdrant")  # no archive
    assert embedded.attached == ()
    assert embedded.http == "full"
    server = plan(frozenset({"api"}), KINDS, shared_qdrant=True)
    assert server.projections == ("duckdb",)
    assert server.attached == ("qdrant",)  # searches the server, feeds nothing into it


def test_api_with_write_answers_in_the_agents_group() -> None:
    node = plan(frozenset({"write", "api"}), KINDS, shared_qdrant=False)
    assert node.agents == WRITE_AGENTS + API_AGENTS
    assert node.group == "worker"


def test_api_with_project_reads_the_projects_stores() -> None:
    node = plan(frozenset({"project", "api"}), KINDS, shared_qdrant=True)
    assert node.projections == KINDS
    assert node.attached == ()
    assert node.partitioned == ("qdrant",)


def test_projections_none_means_none() -> None:
    node = plan(frozenset({"project", "api"}), ["none"], shared_qdrant=False)
    assert node.projections == ()


role_sets = st.sets(st.sampled_from(ROLES), min_size=1).map(frozenset)
kind_lists = st.lists(st.sampled_from(KINDS), unique=True)


@given(role_sets, kind_lists, st.booleans())
def test_a_plan_runs_what_its_roles_own_and_nothing_else(
    roles: frozenset[str], kinds: list[str], shared: bool
) -> None:
    node = plan(roles, kinds, shared_qdrant=shared)
    assert set(node.roles) == roles
    assert ("write" in roles) == bool(set(node.agents) & set(WRITE_AGENTS))
    assert ("api" in roles) == ("recall-responder" in node.agents)
    assert bool(node.timers) == ("write" in roles)
    assert set(node.projections) <= set(kinds)
    assert set(node.partitioned) <= set(node.projections)
    assert not set(node.attached) & set(node.projections)
    assert bool(node.partitioned) <= shared
    if "project" not in roles and "api" not in roles:
        assert node.projections == () and node.attached == ()
    if "api" in roles and "qdrant" in kinds:
        assert "qdrant" in node.projections + node.attached  # recall always has a store
    assert (node.group is None) == (not node.agents)


@given(kind_lists, st.booleans())
def test_split_nodes_together_run_what_one_all_node_runs(kinds: list[str], shared: bool) -> None:
    one = plan(frozenset(ROLES), kinds, shared_qdrant=shared)
    split = [plan(frozenset({r}), kinds, shared_qdrant=shared) for r in ROLES]
    assert sorted(a for n in split for a in n.agents) == sorted(one.agents)
    assert {t for n in split for t in n.timers} == set(one.timers)
    assert {k for n in split for k in n.projections + n.attached} == set(one.projections)
    assert set(split[1].projections) == set(one.projections)  # project keeps them all
