"""Hypothesis strategies derived from the payload dataclasses' own type hints and specs,
so a new event type is covered by the property tests without writing a strategy by hand."""

from __future__ import annotations

import dataclasses
import typing
from datetime import UTC, datetime
from typing import Any, Literal, get_args, get_origin

from hypothesis import strategies as st

from memstream.schemas._fields import _unwrap_optional
from memstream.schemas.envelope import NAMESPACE_RE, Envelope
from memstream.schemas.events import EVENT_TYPES, ID

ids = st.from_regex(ID, fullmatch=True)
namespaces = st.from_regex(NAMESPACE_RE, fullmatch=True)
# text without C0 control characters (the decoder rejects those) and without lone surrogates
clean_text = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters=[chr(c) for c in range(32) if c not in (9, 10, 13)] + ["\x7f"],
    ),
    max_size=200,
)
datetimes = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | clean_text,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(clean_text, children, max_size=4)
    ),
    max_leaves=12,
)


def for_type(tp: Any, meta: typing.Mapping[str, Any]) -> st.SearchStrategy[Any]:
    inner, optional = _unwrap_optional(tp)
    base = _for_type(inner, meta)
    return st.none() | base if optional else base


def _for_type(tp: Any, meta: typing.Mapping[str, Any]) -> st.SearchStrategy[Any]:
    origin = get_origin(tp)
    if tp is str:
        if "pattern" in meta:
            return st.from_regex(meta["pattern"], fullmatch=True)
        return clean_text.filter(
            lambda s: meta.get("min_len", 0) <= len(s) <= meta.get("max_len", 10**9)
        )
    if tp is int:
        return st.integers(int(meta.get("ge", -(2**31))), int(meta.get("le", 2**31)))
    if tp is float:
        return st.floats(
            meta.get("ge", -1e9), meta.get("le", 1e9), allow_nan=False, allow_infinity=False
        )
    if tp is bool:
        return st.booleans()
    if tp is datetime:
        return datetimes
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if origin is list:
        low = meta.get("min_len", 0)
        return st.lists(
            for_type(get_args(tp)[0], {}),
            min_size=low,
            max_size=max(low, min(meta.get("max_len", 4), 4)),
        )
    if origin is dict:
        return st.dictionaries(clean_text, json_values, max_size=4)
    if tp is Any:
        return json_values
    if dataclasses.is_dataclass(tp):
        return payloads(tp)
    raise TypeError(tp)


def payloads(cls: type) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    fields = {f.name: for_type(hints[f.name], f.metadata) for f in dataclasses.fields(cls)}

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        kwargs = {name: draw(strategy) for name, strategy in fields.items()}
        try:
            return cls(**kwargs)
        except ValueError:  # cross-field rules (e.g. Feedback needs a target): draw again
            from hypothesis import reject

            reject()

    return build()


def envelopes(cls: type) -> st.SearchStrategy[Envelope[Any]]:
    return st.builds(
        Envelope,
        event_id=ids,
        type=st.just(cls.TYPE),  # type: ignore[attr-defined]
        schema_version=st.just(cls.VERSION),  # type: ignore[attr-defined]
        occurred_at=datetimes,
        recorded_at=datetimes,
        namespace=namespaces,
        session_id=st.none() | ids,
        causation_id=st.none() | ids,
        correlation_id=st.none() | ids,
        producer=st.text(min_size=1, max_size=20),
        payload=payloads(cls),
    )


all_envelopes = st.sampled_from(sorted(EVENT_TYPES)).flatmap(lambda t: envelopes(EVENT_TYPES[t]))
