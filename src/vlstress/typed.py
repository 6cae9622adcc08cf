"""A typed view of a params mapping: a (frozen) dataclass built field by field from its type hints.

The schema checks values (ranges, patterns, messages); this turns what it checked into real types
once, so code reads `block.eps` as a tuple of floats, never the string "1,4" or "None". A field
typed `tuple[X, ...]` takes a YAML list or a comma-separated string (DVC interpolates strings);
a wrong type is an error naming the dotted key.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from vlstress.errors import VlstressError

T = TypeVar("T")


def build(kind: type[T], value: Any, where: str) -> T:
    """`value` (a params mapping) as an instance of the dataclass `kind`; `where` names it."""
    return _convert(kind, value, where)


def _fail(where: str, expected: str, value: Any) -> VlstressError:
    return VlstressError(f"params `{where}`: expected {expected}, got {value!r}")


def _dataclass(kind: type, value: Any, where: str) -> Any:
    if not isinstance(value, Mapping):
        raise _fail(where, f"a mapping ({kind.__name__})", value)
    hints = typing.get_type_hints(kind)
    fields = [f for f in dataclasses.fields(kind) if f.init]
    names = [f.name for f in fields]
    unknown = sorted(str(key) for key in value if key not in names)
    if unknown:
        raise VlstressError(
            f"params `{where}`: unknown key(s) {', '.join(unknown)}; known: {', '.join(names)}"
        )
    found = {}
    for f in fields:
        if f.name in value:
            found[f.name] = _convert(hints[f.name], value[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise VlstressError(f"params `{where}`: `{f.name}` is missing")
    return kind(**found)


def _convert(kind: Any, value: Any, where: str) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any:
        return value
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return _dataclass(kind, value, where)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [arg for arg in args if arg is not type(None)]
        if len(options) == 1:
            return _convert(options[0], value, where)
        for option in options:
            try:
                return _convert(option, value, where)
            except VlstressError:
                continue
        raise _fail(where, " or ".join(map(_name, args)), value)
    if origin is typing.Literal:
        if value not in args:
            raise _fail(where, "one of " + ", ".join(map(repr, args)), value)
        return value
    if origin is tuple:
        item = args[0]
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise _fail(where, "a list (or a comma-separated string)", value)
        return tuple(_convert(item, part, f"{where}[{i}]") for i, part in enumerate(value))
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise _fail(where, "a mapping", value)
        return {str(key): _convert(args[1], item, f"{where}.{key}") for key, item in value.items()}
    return _scalar(kind, value, where)


def _scalar(kind: Any, value: Any, where: str) -> Any:
    if kind is bool:
        if not isinstance(value, bool):
            raise _fail(where, "true or false", value)
        return value
    if kind is int:
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise _fail(where, "an integer", value) from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(where, "an integer", value)
        return value
    if kind is float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise _fail(where, "a number", value) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(where, "a number", value)
        return float(value)
    if kind is str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise _fail(where, "a string", value)
        return str(value)
    raise TypeError(f"params `{where}`: no conversion to {kind!r}")  # a declaration error


def _name(kind: Any) -> str:
    return "null" if kind is type(None) else getattr(kind, "__name__", str(kind))


def keys(kind: type) -> list[str]:
    """The keys a block's dataclass declares (a test holds them equal to the schema's)."""
    return [f.name for f in dataclasses.fields(kind) if f.init]
