"""The event envelope and its wire codec (orjson).

Wire form: one JSON object per Kafka record, keyed by the tenant namespace so a
tenant's events stay in order on one partition::

    {"event_id": "<uuid7>", "type": "ConversationTurn", "schema_version": 2,
     "occurred_at": "...", "recorded_at": "...", "namespace": "acme",
     "session_id": "s1", "causation_id": null, "correlation_id": null,
     "producer": "chat-app", "payload": {...}}
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Generic, TypeVar

import orjson

from memstream.schemas._fields import DataclassCodec, parse_datetime, utc_now
from memstream.schemas.errors import EventValidationError
from memstream.schemas.events import EVENT_TYPES
from memstream.schemas.ids import new_event_id
from memstream.schemas.upcasters import upcast

P = TypeVar("P")

NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,199}")
# C0 controls other than tab, newline and carriage return break terminals and
# downstream tools; they are rejected rather than silently stripped.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Bidirectional embeddings, overrides and isolates make stored text display reversed
# ("lives in \u202eotroP"); plain marks (U+200E/U+200F) stay, right-to-left text needs them.
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")

_ENVELOPE_KEYS = frozenset(
    {
        "event_id",
        "type",
        "schema_version",
        "occurred_at",
        "recorded_at",
        "namespace",
        "session_id",
        "causation_id",
        "correlation_id",
        "producer",
        "payload",
    }
)
_REQUIRED_KEYS = ("event_id", "type", "schema_version", "occurred_at", "namespace", "payload")


@dataclass(frozen=True, slots=True)
class Limits:
    """What the decoder accepts. Text limits count characters of every free-text field."""

    max_event_bytes: int = 1_048_576
    max_text_chars: int = 32_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope(Generic[P]):
    event_id: str
    type: str
    schema_version: int
    occurred_at: datetime
    recorded_at: datetime
    namespace: str
    session_id: str | None = None
    causation_id: str | None = None
    correlation_id: str | None = None
    producer: str = "unknown"
    payload: P = field(repr=False)

    @property
    def key(self) -> bytes:
        """Kafka record key: the namespace, so one tenant's events share a partition."""
        return self.namespace.encode()

    def header(self) -> dict[str, Any]:
        """Every field but the payload, as the wire format names them."""
        return {
            "event_id": self.event_id,
            "type": self.type,
            "schema_version": self.schema_version,
            "occurred_at": self.occurred_at,
            "recorded_at": self.recorded_at,
            "namespace": self.namespace,
            "session_id": self.session_id,
            "causation_id": self.causation_id,
            "correlation_id": self.correlation_id,
            "producer": self.producer,
        }


def make_event(
    payload: P,
    *,
    namespace: str,
    occurred_at: datetime | None = None,
    session_id: str | None = None,
    causation_id: str | None = None,
    correlation_id: str | None = None,
    producer: str = "memstream",
    event_id: str | None = None,
    recorded_at: datetime | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Envelope[P]:
    """Build a validated envelope around ``payload`` (raises EventValidationError)."""
    now = utc_now()
    env = Envelope(
        event_id=event_id or new_event_id(),
        type=type(payload).TYPE,  # type: ignore[attr-defined]
        schema_version=type(payload).VERSION,  # type: ignore[attr-defined]
        occurred_at=occurred_at or now,
        recorded_at=recorded_at or now,
        namespace=namespace,
        session_id=session_id,
        causation_id=causation_id,
        correlation_id=correlation_id,
        producer=producer,
        payload=payload,
    )
    return validated(env, limits)


def validated(env: Envelope[P], limits: Limits = DEFAULT_LIMITS) -> Envelope[P]:
    """``env`` as an agent would decode it, or EventValidationError naming the field.

    The round trip through the decoder's checks makes the SDK reject exactly what agents
    would; what the JSON encoder refuses (lone surrogates, non-JSON types, non-string keys)
    is an EventValidationError with its path too, never an encoder error.
    """
    try:
        raw = encode(env)
    except orjson.JSONEncodeError as e:
        fields = {f.name: getattr(env, f.name) for f in dataclasses.fields(env)}
        raise _json_problem(fields, "", strict=True) or EventValidationError(
            "wrong_type", f"not encodable as JSON: {e}"
        ) from None
    return decode(raw, limits=limits)  # type: ignore[no-any-return]


def non_finite(payload: Any) -> EventValidationError | None:
    """The error for the first NaN or infinity in ``payload``, if any (any shape, even a
    cyclic one: the walk stops at a nesting the decoder would refuse anyway)."""
    problem = _json_problem(payload, "payload", strict=False)
    return problem if problem is not None and problem.code == "bad_number" else None


def reject_non_finite(payload: Any) -> None:
    """NaN and infinities are not JSON and orjson writes them as null: a producer's value
    would change silently (a NaN reward would vanish), so the SDK rejects them by path.
    For a payload that encoded (so it has no cycle): one flat pass in the common case."""
    stack = [getattr(payload, name) for name in payload.__dataclass_fields__]
    pop, extend = stack.pop, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is str or value is None or kind is int or kind is bool:
            continue
        if kind is float:
            if value * 0.0 != 0.0:  # NaN or an infinity
                raise non_finite(payload) or EventValidationError(
                    "bad_number", f"{value} is not a JSON number", "payload"
                )
        elif kind is dict:
            extend(value.values())
        elif kind is list or kind is tuple:
            extend(value)
        else:
            names = getattr(value, "__dataclass_fields__", None)
            if names is not None:
                extend([getattr(value, name) for name in names])


_MAX_WALK_DEPTH = 32  # deeper than the decoder accepts anyway (16 levels per free-form field)


def _json_problem(value: Any, root: str, *, strict: bool) -> EventValidationError | None:
    """The first value that JSON cannot carry faithfully, as an error with its path.

    Non-finite floats are always looked for (orjson writes them as null, silently); with
    ``strict``, also what makes orjson raise: lone surrogates, non-string keys, other types.
    """
    found = _walk(value, strict, 0)
    if found is None:
        return None
    code, message, reversed_path = found
    path = root
    for part in reversed(reversed_path):
        part = part.encode("utf-8", "backslashreplace").decode()  # a key may be the problem
        path = f"{path}{part}" if part.startswith("[") or not path else f"{path}.{part}"
    return EventValidationError(code, message, path if len(path) <= 200 else f"{path[:200]}...")


def _walk(value: Any, strict: bool, depth: int) -> tuple[str, str, list[str]] | None:
    """(code, message, path parts innermost first) of the first problem under ``value``."""
    if isinstance(value, str):
        if strict:
            try:
                value.encode()
            except UnicodeEncodeError as e:
                return "invalid_utf8", f"lone surrogate at character {e.start}: not UTF-8", []
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else ("bad_number", f"{value} is not a JSON number", [])
    if value is None or isinstance(value, int | datetime):
        if strict and type(value) is int and not -(2**63) <= value < 2**64:
            return "bad_number", "integer out of the 64-bit range", []
        return None
    if depth >= _MAX_WALK_DEPTH:
        return "too_deep", f"nesting deeper than {_MAX_WALK_DEPTH} levels", []
    items: Any
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                return "wrong_type", f"object keys must be strings, got {type(key).__name__}", []
            if strict and (found := _walk(key, True, depth)) is not None:
                return found[0], found[1], [key]
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    elif strict:
        return "wrong_type", f"not a JSON value: {type(value).__name__}", []
    else:
        return None
    for where, item in items:
        found = _walk(item, strict, depth + 1)
        if found is not None:
            found[2].append(f"[{where}]" if isinstance(where, int) else where)
            return found
    return None


def with_recorded_at(env: Envelope[P], at: datetime) -> Envelope[P]:
    return replace(env, recorded_at=at)


def record_headers(env: Envelope[Any]) -> list[tuple[str, bytes]]:
    """Kafka headers: routers and DLQ tooling see the type without decoding the value."""
    return [
        ("memstream-type", env.type.encode()),
        ("memstream-version", str(env.schema_version).encode()),
    ]


def encode(env: Envelope[Any]) -> bytes:
    return orjson.dumps({**env.header(), "payload": env.payload})


def _opt_id(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise EventValidationError(
            "bad_format", "must be an id string of letters, digits and ._:@/+=-", key
        )
    return value


def _datetime_field(obj: dict[str, Any], key: str) -> datetime:
    try:
        return parse_datetime(obj[key])
    except EventValidationError as e:
        raise e.at(key) from None


def decode(raw: bytes, *, limits: Limits = DEFAULT_LIMITS) -> Envelope[Any]:
    """Bytes from the wire -> a validated, upcast envelope. Raises only EventValidationError."""
    if not isinstance(raw, bytes):  # a record with no value (a tombstone) reads as None
        raise EventValidationError("bad_json", "record has no value")
    if len(raw) > limits.max_event_bytes:
        raise EventValidationError(
            "too_large", f"{len(raw)} bytes is over the {limits.max_event_bytes}-byte limit"
        )
    return from_dict(loads(raw), limits=limits)


def loads(raw: bytes) -> Any:
    """JSON bytes -> a value, or EventValidationError saying whether it was UTF-8 or JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as ue:
            raise EventValidationError(
                "invalid_utf8", f"not valid UTF-8 at byte {ue.start}"
            ) from None
        raise EventValidationError("bad_json", str(e)[:200]) from None


def from_dict(obj: Any, *, limits: Limits = DEFAULT_LIMITS) -> Envelope[Any]:
    if not isinstance(obj, dict):
        raise EventValidationError("wrong_type", "an event must be a JSON object")
    unknown = obj.keys() - _ENVELOPE_KEYS
    if unknown:
        raise EventValidationError(
            "unknown_field", f"unknown envelope field(s): {', '.join(sorted(unknown))[:200]}"
        )
    for key in _REQUIRED_KEYS:
        if key not in obj:
            raise EventValidationError("missing_field", "required envelope field is missing", key)
    event_type = obj["type"]
    if not isinstance(event_type, str):
        raise EventValidationError("wrong_type", "must be a string", "type")
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        raise EventValidationError(
            "unknown_type", f"unknown event type {event_type[:100]!r}", "type"
        )
    version = obj["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise EventValidationError("wrong_type", "must be a positive integer", "schema_version")
    current: int = cls.VERSION  # type: ignore[attr-defined]
    if version > current:
        raise EventValidationError(
            "unsupported_version",
            f"{event_type} v{version} is newer than this reader (v{current})",
            "schema_version",
        )
    event_id = _opt_id(obj, "event_id")
    if event_id is None:
        raise EventValidationError(
            "missing_field", "required envelope field is missing", "event_id"
        )
    namespace = obj["namespace"]
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise EventValidationError(
            "bad_namespace",
            "1-128 characters: letters, digits and ._:@- (starting with a letter or digit)",
            "namespace",
        )
    producer = obj.get("producer", "unknown")
    if not isinstance(producer, str) or not 0 < len(producer) <= 200:
        raise EventValidationError("bad_format", "must be a string of 1-200 characters", "producer")
    occurred_at = _datetime_field(obj, "occurred_at")
    recorded_at = (
        occurred_at if obj.get("recorded_at") is None else _datetime_field(obj, "recorded_at")
    )
    payload_obj = obj["payload"]
    if not isinstance(payload_obj, dict):
        raise EventValidationError("wrong_type", "must be an object", "payload")
    if version < current:
        payload_obj = upcast(event_type, version, current, payload_obj)
    codec = DataclassCodec.of(cls)
    try:
        payload = codec.from_json(payload_obj)
    except EventValidationError as e:
        raise e.at("payload") from None
    _check_text(payload, codec.text_fields, limits)
    return Envelope(
        event_id=event_id,
        type=event_type,
        schema_version=current,
        occurred_at=occurred_at,
        recorded_at=recorded_at,
        namespace=namespace,
        session_id=_opt_id(obj, "session_id"),
        causation_id=_opt_id(obj, "causation_id"),
        correlation_id=_opt_id(obj, "correlation_id"),
        producer=producer,
        payload=payload,
    )


def _check_text(payload: Any, text_fields: tuple[str, ...], limits: Limits) -> None:
    for name in text_fields:
        value = getattr(payload, name)
        if value is None:
            continue
        if len(value) > limits.max_text_chars:
            raise EventValidationError(
                "text_too_long",
                f"{len(value)} characters is over the {limits.max_text_chars} limit",
                f"payload.{name}",
            )
        bad = _CONTROL_RE.search(value)
        if bad is not None:
            raise EventValidationError(
                "control_characters",
                f"control character U+{ord(bad.group()):04X} at {bad.start()}",
                f"payload.{name}",
            )
        bidi = _BIDI_RE.search(value)
        if bidi is not None:
            raise EventValidationError(
                "control_characters",
                f"bidirectional control character U+{ord(bidi.group()):04X} at {bidi.start()}",
                f"payload.{name}",
            )
