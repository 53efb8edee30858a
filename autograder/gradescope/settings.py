"""How an archive grades (gradescope.json, written by build.py and read on Gradescope), and the assignment
it names, loaded with any private extension files."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config

SETTINGS_FILE = "gradescope.json"


@dataclass
class Settings:
    """How the archive grades, written into it as gradescope.json. Defaults: config.py."""

    assignment: str
    extra: list[str] = field(default_factory=list)  # private extension files, inside source/extra/
    visibility: str = config.VISIBILITY  # of the tests students may see
    hidden_visibility: str = config.HIDDEN_VISIBILITY  # of hidden problems and checks
    # html (pictures as PNG), md (pictures as PNG), text (no pictures)
    output_format: str = config.OUTPUT_FORMAT
    load_seconds: float = config.LOAD_SECONDS
    problem_seconds: float | None = None  # None: each problem's scaled to its reference (budget.scaled)
    seed: int = config.SEED
    picture_bytes: int = config.PICTURE_BYTES  # base64 PNG allowed in one results.json; beyond it, words only

    def validate(self) -> None:
        for name, value in (("visibility", self.visibility), ("hidden_visibility", self.hidden_visibility)):
            if value not in config.VISIBILITIES:
                raise ValueError(f"{name} must be one of {', '.join(config.VISIBILITIES)}, not {value!r}.")
        if self.output_format not in config.OUTPUT_FORMATS:
            raise ValueError(f"output_format must be one of {', '.join(config.OUTPUT_FORMATS)}, "
                             f"not {self.output_format!r}.")

    def limits(self):
        """The sandbox's limits on Gradescope: these times, and no capability left to workers, so that
        /autograder/source (mode 700: the grader, the references, hidden problems) is closed to them."""
        from autograder.sandbox import Limits

        return Limits(load_seconds=self.load_seconds, **Limits.problem_time(self.problem_seconds),
                      keep_read_search=False)

    @classmethod
    def read(cls, path: Path) -> Settings:
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {f.name for f in dataclasses.fields(cls)}
        settings = cls(**{k: v for k, v in data.items() if k in known})
        settings.validate()
        return settings


def prepare(root: Path, validated: bool = True) -> tuple[Settings, object]:
    """Reads the settings and loads the assignment (with any private extension files), validated
    (validate.py: raises InvalidAssignment naming the problem and the cause). run_autograder skips the
    validation: setup.sh's check did it once for the image."""
    from autograder.course.assignments.registry import load
    from autograder.judge.validate import validate

    source = root / "source"
    settings = Settings.read(source / SETTINGS_FILE)
    registry = load(source / name for name in settings.extra)
    assignment = registry.find_assignment(settings.assignment)
    if validated:
        validate(assignment, settings.seed, registry.origins)
    return settings, assignment
