"""Strict conversion of decoded JSON into typed dataclasses, and the JSON Schema of each.

One mechanism serves both directions: the type hints of a payload dataclass plus
the constraints in ``field(metadata=...)`` decide what is accepted and what the
exported JSON Schema says, so producers in other languages validate exactly like we do.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal, Union, get_args, get_origin

from memstream.schemas.errors import EventValidationError

Converter = Callable[[Any], Any]

_JSON_SCALARS = (str, int, float, bool, type(None))


def spec(
    *,
    min_len: int | None = None,
    max_len: int | None = None,
    ge: float | None = None,
    le: float | None = None,
    pattern: str | None = None,
    text: bool = False,
    description: str = "",
) -> dict[str, Any]:
    """Field metadata: constraints checked on decode and written to the JSON Schema.

    ``text=True`` marks free text that the configured text limit applies to.
    """
    meta: dict[str, Any] = {"description": description, "text": text}
    for key, value in (
        ("min_len", min_len),
        ("max_len", max_len),
        ("ge", ge),
        ("le", le),
        ("pattern", pattern),
    ):
        if value is not None:
            meta[key] = value
    return meta


def parse_datetime(value: Any, path: str = "", *, naive_is_utc: bool = False) -> datetime:
    """An ISO 8601 string as a UTC datetime, or EventValidationError at ``path``: not a
    string, not a time, no offset (unless ``naive_is_utc``: the CLI and JSONL intake read
    none as UTC), or outside what UTC can hold (year 1 at +14:00). Every door reads times
    through this one rule."""
    if not isinstance(value, str):
        raise EventValidationError(
            "wrong_type", f"expected an ISO 8601 string, got {_kind(value)}", path
        )
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise EventValidationError(
            "bad_datetime", f"not an ISO 8601 date-time: {value[:64]!r}", path
        ) from None
    if parsed.tzinfo is None:
        if not naive_is_utc:
            raise EventValidationError(
                "bad_datetime", "date-time needs a UTC offset (e.g. Z or +00:00)", path
            )
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise EventValidationError(
            "bad_datetime", f"out of range in UTC: {value[:64]!r}", path
        ) from None


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _check_json(value: Any, depth: int = 0) -> Any:
    """Free-form JSON (metadata, evidence): any JSON value, bounded nesting."""
    if depth > 16:
        raise EventValidationError("too_deep", "JSON nesting deeper than 16 levels")
    if isinstance(value, _JSON_SCALARS):
        if isinstance(value, float) and value != value:
            raise EventValidationError("bad_number", "NaN is not valid JSON")
        return value
    if isinstance(value, list):
        return [_check_json(v, depth + 1) for v in value]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise EventValidationError("wrong_type", "object keys must be strings")
        return {k: _check_json(v, depth + 1) for k, v in value.items()}
    raise EventValidationError("wrong_type", f"not a JSON value: {_kind(value)}")


def _scalar(expected: type, meta: Mapping[str, Any]) -> Converter:
    min_len, max_len = meta.get("min_len"), meta.get("max_len")
    ge, le = meta.get("ge"), meta.get("le")
    pattern = re.compile(meta["pattern"]) if "pattern" in meta else None

    def convert_bounded_str(value: Any) -> Any:
        if not isinstance(value, str):
            raise EventValidationError("wrong_type", f"expected a string, got {_kind(value)}")
        if min_len is not None and len(value) < min_len:
            raise EventValidationError("too_short", f"needs at least {min_len} characters")
        if max_len is not None and len(value) > max_len:
            raise EventValidationError("too_long", f"longer than {max_len} characters")
        if pattern is not None and not pattern.fullmatch(value):
            raise EventValidationError("bad_format", f"does not match {pattern.pattern}")
        return value

    if expected is str and ge is None and le is None:
        # the common cases first, without the branches of the general converter below
        # (every field of every event decoded goes through one of these)
        if min_len is None and max_len is None and pattern is None:

            def convert_str(value: Any) -> Any:
                if not isinstance(value, str):
                    raise EventValidationError(
                        "wrong_type", f"expected a string, got {_kind(value)}"
                    )
                return value

            return convert_str
        return convert_bounded_str

    def convert(value: Any) -> Any:
        if expected is float:
            # JSON has one number type: accept integers where a float is expected.
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise EventValidationError("wrong_type", f"expected a number, got {_kind(value)}")
            value = float(value)
            if value != value or value in (float("inf"), float("-inf")):
                raise EventValidationError("bad_number", "number must be finite")
        elif expected is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise EventValidationError("wrong_type", f"expected an integer, got {_kind(value)}")
        elif expected is bool:
            if not isinstance(value, bool):
                raise EventValidationError("wrong_type", f"expected a boolean, got {_kind(value)}")
        elif expected is str:
            value = convert_bounded_str(value)
        if ge is not None and value < ge:
            raise EventValidationError("out_of_range", f"must be >= {ge}")
        if le is not None and value > le:
            raise EventValidationError("out_of_range", f"must be <= {le}")
        return value

    return convert


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0], True
    return tp, False


def converter_for(tp: Any, meta: Mapping[str, Any]) -> Converter:
    inner, optional = _unwrap_optional(tp)
    base = _converter_for(inner, meta)
    if not optional:
        return base

    def convert_optional(value: Any) -> Any:
        return None if value is None else base(value)

    return convert_optional


def _converter_for(tp: Any, meta: Mapping[str, Any]) -> Converter:
    origin = get_origin(tp)
    if tp is Any:
        return _check_json
    if tp in (str, int, float, bool):
        return _scalar(tp, meta)
    if tp is datetime:
        return parse_datetime
    if origin is Literal:
        allowed = get_args(tp)

        def convert_literal(value: Any) -> Any:
            if isinstance(value, bool) or value not in allowed:
                shown = ", ".join(repr(a) for a in allowed)
                raise EventValidationError(
                    "bad_value", f"must be one of {shown}, got {value!r:.64}"
                )
            return value

        return convert_literal
    if origin in (list, tuple):
        (item_tp, *_rest) = get_args(tp)
        item = converter_for(item_tp, {})
        max_len = meta.get("max_len")
        min_len = meta.get("min_len")

        def convert_list(value: Any) -> Any:
            if not isinstance(value, list):
                raise EventValidationError("wrong_type", f"expected an array, got {_kind(value)}")
            if max_len is not None and len(value) > max_len:
                raise EventValidationError("too_long", f"more than {max_len} items")
            if min_len is not None and len(value) < min_len:
                raise EventValidationError("too_short", f"needs at least {min_len} items")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(item(v))
                except EventValidationError as e:
                    raise e.at(f"[{i}]") from None
            return tuple(out) if origin is tuple else out

        return convert_list
    if origin is dict:
        return _check_json_object
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return DataclassCodec.of(tp).from_json
    raise TypeError(f"unsupported field type {tp!r}")


def _check_json_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise EventValidationError("wrong_type", f"expected an object, got {_kind(value)}")
    return _check_json(value)


class DataclassCodec:
    """Converts a decoded JSON object into one dataclass, strictly.

    Unknown keys are rejected (a typo in a producer must not vanish silently);
    missing keys fall back to the field default or raise ``missing_field``.
    """

    _cache: typing.ClassVar[dict[type, DataclassCodec]] = {}

    def __init__(self, cls: type) -> None:
        self.cls = cls
        hints = typing.get_type_hints(cls)
        self.fields: list[tuple[str, Converter, bool, bool]] = []
        for f in dataclasses.fields(cls):
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            self.fields.append(
                (
                    f.name,
                    converter_for(hints[f.name], f.metadata),
                    has_default,
                    f.metadata.get("text", False),
                )
            )
        self.names = frozenset(name for name, *_ in self.fields)
        self.text_fields = tuple(name for name, _c, _d, is_text in self.fields if is_text)

    @classmethod
    def of(cls, dc: type) -> DataclassCodec:
        codec = cls._cache.get(dc)
        if codec is None:
            codec = cls._cache[dc] = DataclassCodec(dc)
        return codec

    def from_json(self, value: Any) -> Any:
        if not isinstance(value, dict):
            raise EventValidationError("wrong_type", f"expected an object, got {_kind(value)}")
        unknown = value.keys() - self.names
        if unknown:
            raise EventValidationError(
                "unknown_field", f"unknown field(s): {', '.join(sorted(unknown))[:200]}"
            )
        kwargs: dict[str, Any] = {}
        for name, convert, has_default, _is_text in self.fields:
            if name in value:
                try:
                    kwargs[name] = convert(value[name])
                except EventValidationError as e:
                    raise e.at(name) from None
            elif not has_default:
                raise EventValidationError("missing_field", "required field is missing", name)
        return self.cls(**kwargs)


def json_schema(tp: Any, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) for a field type, with the same constraints as the decoder."""
    meta = meta or {}
    inner, optional = _unwrap_optional(tp)
    schema = _schema(inner, meta)
    if meta.get("description"):
        schema["description"] = meta["description"]
    if optional:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def _schema(tp: Any, meta: Mapping[str, Any]) -> dict[str, Any]:
    origin = get_origin(tp)
    if tp is Any:
        return {}
    if tp is str:
        s: dict[str, Any] = {"type": "string"}
        if "min_len" in meta:
            s["minLength"] = meta["min_len"]
        if "max_len" in meta:
            s["maxLength"] = meta["max_len"]
        if "pattern" in meta:
            s["pattern"] = f"^(?:{meta['pattern']})$"
        return s
    if tp in (int, float):
        s = {"type": "integer" if tp is int else "number"}
        if "ge" in meta:
            s["minimum"] = meta["ge"]
        if "le" in meta:
            s["maximum"] = meta["le"]
        return s
    if tp is bool:
        return {"type": "boolean"}
    if tp is datetime:
        return {"type": "string", "format": "date-time"}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin in (list, tuple):
        s = {"type": "array", "items": json_schema(get_args(tp)[0])}
        if "max_len" in meta:
            s["maxItems"] = meta["max_len"]
        if "min_len" in meta:
            s["minItems"] = meta["min_len"]
        return s
    if origin is dict:
        return {"type": "object"}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return dataclass_schema(tp)
    raise TypeError(f"unsupported field type {tp!r}")


def dataclass_schema(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        props[f.name] = json_schema(hints[f.name], f.metadata)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    schema: dict[str, Any] = {
        "type": "object",
        "title": cls.__name__,
        "properties": props,
        "additionalProperties": False,
    }
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    if required:
        schema["required"] = required
    return schema


def utc_now() -> datetime:
    return datetime.now(UTC)
