"""Reading plain JSON that crossed the trust boundary, defensively: each validator returns the value when
it has the type it must have, else None (never raising); `Plain` writes a frozen dataclass of
contract.py back as the JSON it was read from."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

_TEXT = 20_000  # longer than anything the worker writes (calls.MAX_TEXT): a forged essay is cut here


def text(value: Any) -> str | None:
    return value[:_TEXT] if isinstance(value, str) else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def index(value: Any) -> int | None:
    """An int that can index a list: not negative."""
    found = integer(value)
    return found if found is not None and found >= 0 else None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_PLAIN_NUMBERS = frozenset((int, float))  # what JSON reads a number as


def numbers(value: Any, depth: int = 1) -> list | None:
    """Nested lists of numbers, `depth` deep (1: a list of numbers), or None."""
    if not isinstance(value, list):
        return None
    if depth == 1:  # JSON's own ints and floats told apart in C, without a call for each; others one by one
        plain_numbers = all(map(_PLAIN_NUMBERS.__contains__, map(type, value)))
        return value if plain_numbers or all(_number(x) for x in value) else None
    inner = [numbers(v, depth - 1) for v in value]
    return None if any(v is None for v in inner) else inner


def each(value: Any, valid) -> list | None:
    """A list whose every entry passes `valid` (which returns it, or None), or None."""
    if not isinstance(value, list):
        return None
    found = [valid(v) for v in value]
    return None if any(v is None for v in found) else found


def strings(value: Any) -> list[str] | None:
    return each(value, text)


def texts(value: Any) -> dict[str, str] | None:
    """A mapping of strings to strings, or None."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        return None
    return {k: v[:_TEXT] for k, v in value.items()}


def plain(value: Any) -> Any:
    if isinstance(value, Plain):
        return value.to_plain()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


class Plain:
    """`to_plain`: the JSON the worker writes, one key per field that holds something."""

    def to_plain(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)  # type: ignore[arg-type]
                if getattr(self, f.name) is not None}
