"""WIT values <-> plain Python values, for wasmtime's dynamic component API.

wasmtime-py passes a WIT record as an object whose attribute names are the
kebab-case field names (`tool-name`), an enum as its case name, an option as
the value or None, `list<u8>` as bytes, a tuple as a tuple, and an ambiguous
variant as `Variant(tag, payload)`. Here, Python dicts with snake_case keys
stand for records, in both directions.

`Ok` and `Err` mark which case of a `result` a host function returns. The
dynamic API picks the case by the Python type of the value, which cannot work
when the ok type is an `option` (every value is an instance of `object`, so an
error would be lowered as `some`): `result<option<entry>, storage-error>` is
such a type. `install_result_cases` teaches wasmtime's ResultType to honour
explicit `Ok`/`Err` wrappers; values that are not wrapped keep wasmtime's own
behaviour.
"""

from __future__ import annotations

import ctypes
from typing import Any

from wasmtime import _ffi as ffi
from wasmtime.component import Record, Variant
from wasmtime.component import _types as wt_types


class Ok:
    """The `ok` case of a `result` returned by a host function."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None):
        self.value = value


class Err:
    """The `err` case of a `result` returned by a host function."""

    __slots__ = ("value",)

    def __init__(self, value: Any = None):
        self.value = value


_installed = False


def install_result_cases() -> None:
    """Makes wasmtime lower `Ok(x)` / `Err(e)` into the named result case."""
    global _installed
    if _installed:
        return
    original = wt_types.ResultType.convert_to_c

    def convert_to_c(self, store, val, ptr):  # type: ignore[no-untyped-def]
        if not isinstance(val, (Ok, Err)):
            return original(self, store, val, ptr)
        is_ok = isinstance(val, Ok)
        ty = self.ok if is_ok else self.err
        payload = None
        if ty is not None:
            raw = ffi.wasmtime_component_val_t()
            ty.convert_to_c(store, val.value, ctypes.pointer(raw))
            payload = ffi.wasmtime_component_val_new(ctypes.byref(raw))
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_RESULT
        ptr.contents.of.result.is_ok = is_ok
        ptr.contents.of.result.val = payload

    wt_types.ResultType.convert_to_c = convert_to_c  # type: ignore[method-assign]
    _installed = True


def to_wit(value: Any) -> Any:
    """A dict (snake_case keys) becomes a record (kebab-case attributes), recursively."""
    if isinstance(value, dict):
        record = Record()
        for key, item in value.items():
            setattr(record, key.replace("_", "-"), to_wit(item))
        return record
    if isinstance(value, list):
        return [to_wit(v) for v in value]
    return value


def from_wit(value: Any) -> Any:
    """A record becomes a dict with snake_case keys, recursively; a variant a
    `{"tag": ..., "payload": ...}` dict."""
    if isinstance(value, Record):
        return {key.replace("-", "_"): from_wit(item) for key, item in vars(value).items()}
    if isinstance(value, Variant):
        return {"tag": value.tag, "payload": from_wit(value.payload)}
    if isinstance(value, list):
        return [from_wit(v) for v in value]
    if isinstance(value, tuple):
        return tuple(from_wit(v) for v in value)
    return value


def field(record: Any, name: str) -> Any:
    """A record's field by its kebab-case WIT name."""
    return getattr(record, name)
