"""The limits an instructor may change, declared once: each with its type, default (config.py's, with the
why), bounds and help. The command line's options are made from this table, grading.toml's [limits]
table is read by it, and docs/instructors.md's table of them is checked against it
(tests/test_settings.py), so that no number is repeated by hand.

What decides a value, first to last: the command line, grading.toml's [limits] in the graded folder
(so that a class re-graded later is graded with the same limits), the default.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder import config


class SettingError(ValueError):
    """A value out of its bounds or of the wrong kind: one paragraph, naming where it was given."""


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?", re.IGNORECASE)
_UNIT = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def size(text: str | int) -> int:
    """Bytes from "64M", "3G", "512MiB" or a number of bytes."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = _SIZE.fullmatch(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a size: write a number with K, M or G (64M, 3G)")
    return int(float(match[1]) * _UNIT[(match[2] or "").upper()[:1]])


def shown_size(value: int) -> str:
    for unit in ("G", "M", "K"):
        if value % _UNIT[unit] == 0:
            return f"{value // _UNIT[unit]}{unit}"
    return str(value)


def seconds(text: str | float) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(text, bool) or not math.isfinite(value):
        raise ValueError(f"{text!r} is not a number of seconds")
    return value


def whole(text: str | int) -> int:
    if isinstance(text, (bool, float)) or not str(text).strip().lstrip("+-").isdigit():
        raise ValueError(f"{text!r} is not a whole number")
    return int(text)


@dataclass(frozen=True)
class Setting:
    key: str  # grading.toml's [limits] key; the option is --key with dashes
    parse: Callable  # text (or a TOML value) -> the value
    default: object  # None: decided at run time (`decided` says how)
    low: float
    high: float
    help: str
    unit: str = ""  # how the docs' table says the default
    field: str = ""  # sandbox.Limits's field, where it is one
    shown: Callable = str  # the default as the docs' table says it
    decided: str = ""  # how a default of None is decided, for the help and the docs' table

    @property
    def option(self) -> str:
        return "--" + self.key.replace("_", "-")

    @property
    def rule(self) -> str:
        if self.parse is seconds:
            return f"a number of seconds greater than {self.low:g}"
        if self.parse is size:
            return f"a size from {shown_size(self.low)} to {shown_size(self.high)} (a number with K, M or G)"
        return f"from {self.low:g} to {self.high:g}"

    def check(self, value, source: str):
        """The value parsed, or a SettingError saying what source (an option, grading.toml's key) must be."""
        try:
            parsed = self.parse(value)
        except (TypeError, ValueError):
            raise SettingError(f"{source} must be {self.rule}, not {value!r}.") from None
        if not (parsed > self.low if self.parse is seconds else parsed >= self.low) or parsed > self.high:
            raise SettingError(f"{source} must be {self.rule}, not {self.describe(parsed)}.")
        return parsed

    def describe(self, value) -> str:
        return self.shown(value) if self.parse is size else f"{value:g}" if isinstance(value, float) \
            else str(value)


SETTINGS = (
    Setting("load_timeout", seconds, config.LOAD_SECONDS, 0, math.inf,
            f"seconds of its own CPU time to run a submission's cells (cells that wait: "
            f"{config.PROBLEM_WALL_FACTOR} times that on the wall clock)",
            " s", "load_seconds"),
    Setting("problem_timeout", seconds, None, 0, math.inf,
            f"seconds of its own CPU time to grade one problem, the same for every problem (one that waits: "
            f"{config.PROBLEM_WALL_FACTOR} times that on the wall clock)",
            " s", "problem_seconds",
            decided=f"{config.REFERENCE_SCALE} times the CPU time the problem's reference took in the "
                    f"grader, from {config.PROBLEM_FLOOR_SECONDS:g} to {config.PROBLEM_SECONDS:g} s"),
    Setting("memory", size, config.MEMORY_BYTES, 256 * 1024**2, 256 * 1024**3,
            "memory a worker may take on top of the clean parent's (64M, 3G)", "", "memory_bytes",
            shown_size),
    Setting("tmp_size", size, config.TMP_BYTES, 1024**2, 64 * 1024**3,
            "size of a worker's own /tmp and working folder, in memory (64M, 1G)", "", "tmp_bytes",
            shown_size),
    Setting("jobs", whole, None, 1, config.MAX_JOBS, "workers in parallel",
            decided=f"{config.WORKERS_PER_CORE} per core"),
)
BY_KEY = {s.key: s for s in SETTINGS}
TABLE = "limits"  # grading.toml's table of them


def add_options(parser: argparse.ArgumentParser, keys: tuple[str, ...] = tuple(BY_KEY),
                in_file: bool = True) -> None:
    """The options of these settings. Their default is None, so that a value not given is grading.toml's
    (in_file: the command reads one; a Gradescope archive does not)."""
    for key in keys:
        s = BY_KEY[key]
        default = f"; default: {s.decided if s.default is None else s.describe(s.default) + s.unit}"
        also = f"; also grading.toml's [{TABLE}] {s.key}" if in_file else ""
        parser.add_argument(s.option, type=str, default=None, metavar=s.key.upper(),
                            help=f"{s.help}{default}{also}")


def resolve(args: argparse.Namespace, folder: Path | None = None,
            keys: tuple[str, ...] = tuple(BY_KEY)) -> dict:
    """Every setting's value: the command line's, else grading.toml's [limits] in folder, else the default."""
    from_file = read_table(folder) if folder is not None else {}
    values = {}
    for key in keys:
        s = BY_KEY[key]
        given = getattr(args, key, None)
        if given is not None:
            values[key] = s.check(given, s.option)
        elif key in from_file:
            values[key] = s.check(from_file[key], f"{folder / 'grading.toml'}: [{TABLE}] {key}")
        else:
            values[key] = s.default
    return values


def read_table(folder: Path) -> dict:
    """grading.toml's [limits] table (its other tables are term/rules.py's), {} without one."""
    import tomllib

    path = folder / "grading.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # rules.py says what is wrong with the file, in its words
    table = data.get(TABLE, {})
    if not isinstance(table, dict):
        raise SettingError(f"{path}: [{TABLE}] is a table of settings ({', '.join(BY_KEY)}).")
    unknown = sorted(set(table) - set(BY_KEY))
    if unknown:
        raise SettingError(f"{path}: [{TABLE}] has {', '.join(unknown)}, which is no setting: it takes "
                           f"{', '.join(BY_KEY)}.")
    return table


def limits_of(values: dict):
    """sandbox.Limits with these settings' values."""
    from autograder.sandbox import Limits

    given = {BY_KEY[k].field: v for k, v in values.items()
             if k in BY_KEY and BY_KEY[k].field and v is not None}
    problem = Limits.problem_time(given.pop("problem_seconds", None))  # given: every problem's
    return Limits(**given, **problem)


def markdown_table() -> str:
    """docs/instructors.md's table of the settings (tests/test_settings.py keeps them equal)."""
    rows = ["| option | grading.toml `[limits]` | default | what |", "| --- | --- | --- | --- |"]
    for s in SETTINGS:
        default = s.decided if s.default is None else f"{s.describe(s.default)}{s.unit}"
        rows.append(f"| `{s.option}` | `{s.key}` | {default} | {s.help.split(' (')[0]}: {s.rule} |")
    return "\n".join(rows)
