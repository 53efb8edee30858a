"""Gradescope's "Export Submissions": submission_metadata.yml says who handed in each folder (names,
emails, student ids; a group's names joined with " + ")."""

from __future__ import annotations

from pathlib import Path

from autograder.intake.files import Unreadable, read_file

METADATA = "submission_metadata.yml"


def read_metadata(path: Path) -> tuple[dict[str, dict], str]:
    """Folder name -> {"id", "identity", "tiebreak"} from submission_metadata.yml, and what the
    instructor should be told ("" when all is well): folders missing from it keep their own names."""
    try:
        import yaml

        data = yaml.safe_load(read_file(path))
    except (Unreadable, ValueError, ImportError) as error:
        return {}, (f"{path} could not be read ({str(error)[:200]}): the submissions beside it keep their "
                    f"folders' names.")
    except Exception as error:  # noqa: BLE001 - yaml's errors: a malformed file is the instructor's to know
        return {}, (f"{path} is not valid YAML ({type(error).__name__}): the submissions beside it keep "
                    f"their folders' names.")
    out = {}
    for key, about in (data or {}).items() if isinstance(data, dict) else ():
        if not isinstance(about, dict):
            continue
        people = [p for p in _get(about, "submitters") or [] if isinstance(p, dict)]
        names = [str(_get(p, "name") or "").strip() for p in people]
        names = [n for n in names if n]
        if not names:
            continue
        submitters = [{k: str(_get(p, k)) for k in ("name", "email", "sid") if _get(p, k) is not None}
                      for p in people]
        identity = {"name": " + ".join(names), "submitters": submitters,
                    "gradescope_submission": str(key).removeprefix("submission_")}
        created = _get(about, "created_at")
        if created is not None:
            identity["submitted"] = str(created)
        first = submitters[0]
        tiebreak = (first.get("email", "").split("@")[0] or first.get("sid", "")
                    or identity["gradescope_submission"])
        out[str(key)] = {"id": identity["name"], "identity": identity, "tiebreak": tiebreak}
    return out, ""


def _get(mapping: dict, key: str):
    """A value of Gradescope's metadata, whose keys are Ruby symbols (":name"), or plain keys."""
    for k in (f":{key}", key):
        if k in mapping:
            return mapping[k]
    return None
