"""The edge's answer for an id a caller names: its namespace's, another's, or nobody's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstream.consumers.known_ids import MEMORY, QUERY, verdict

_ns = st.text("abcxyz", min_size=1, max_size=3)


@given(st.sampled_from([MEMORY, QUERY]), _ns, st.sets(_ns, max_size=4))
def test_ok_forbidden_or_unknown(kind: object, namespace: str, owners: set[str]) -> None:
    error = verdict(kind, "id-1", namespace, owners, "memory_id")  # type: ignore[arg-type]
    if namespace in owners:
        assert error is None
    elif owners:
        assert error is not None and error.status == 403 and error.code == "forbidden"
        assert not any(o in error.message for o in owners - {namespace} if len(o) > 2)
    else:
        assert error is not None and error.status == 404 and error.path == "memory_id"
        assert error.code == ("unknown_memory" if kind is MEMORY else "unknown_query")
        assert "'id-1'" in error.message and repr(namespace) in error.message
