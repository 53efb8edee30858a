"""Hands each student their feedback page, where an LMS or a mail merge takes it, from a graded folder:

    python -m autograder release --graded DIR --to RELEASE_DIR [--format folders|zip|canvas]
                                 [--name-by id|email|sid|canvas] [--policy best|latest]

- `folders` (the default): RELEASE_DIR/<name>/<assignment>-feedback.html, a folder per student;
- `zip`: RELEASE_DIR/<name>.zip holding <assignment>-feedback.html, a zip per student;
- `canvas`: RELEASE_DIR/canvas-feedback.zip, every page named as Canvas's own download names the
  student's file (`<name>_<user id>_<file id>_<assignment>-feedback.html`), which is what its
  "Re-Upload Submissions" reads to attach each file to that student's submission as a comment.

<name> is the submission's id (`--name-by id`), or the student's email, student id (Gradescope's
export) or Canvas user ID (Canvas's download): what the LMS or the mail merge matches on. A group
submission gives each of its students their copy; a student with several submissions gets the page of
the one `--policy` chooses, as in the gradebook export. RELEASE_DIR/manifest.csv lists every file with
the student's name, email, ids and score: the data source of a mail merge that attaches a file per
recipient. Nothing is written when a student lacks the identifier asked for; a release made again
replaces the files of the previous one (the ones its manifest lists), and only those.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config
from autograder.intake.loader import safe_id
from autograder.report.csvsafe import FORMULA_START, cell
from autograder.report.export import choose, read_graded
from autograder.report.files import Graded, write_atomic
from autograder.report.roster import CANVAS_DOWNLOAD, ExportError, people_of

FORMATS = ("folders", "zip", "canvas")
NAMES = ("id", "email", "sid", "canvas")
MANIFEST = "manifest.csv"
HEADER = ["file", "submission", "name", "email", "sid", "canvas_user", "score", "max_score"]
# what a release writes (a stale one is removed only when its manifest names it so)
_WRITTEN = re.compile(r"[^./\\][^/\\]*(\.zip|/[^./\\][^/\\]*-feedback\.html)")
CANVAS_ZIP = "canvas-feedback.zip"
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # a release made twice is the same bytes
_WHAT = {"email": "An email (from Gradescope's export)", "sid": "A student id (from Gradescope's export)",
         "canvas": "A Canvas user ID and file id (from Canvas's Download Submissions)"}


class ReleaseError(ExportError):
    """A usage mistake: nothing graded, a folder that cannot be written, a student without the name asked."""


@dataclass
class Release:
    files: list[str] = field(default_factory=list)  # relative to RELEASE_DIR, the manifest last
    students: int = 0
    duplicates: list[str] = field(default_factory=list)  # several submissions for one name


def recipients(graded: list[Graded], by: str, policy: str,
               release: Release) -> dict[str, tuple[dict, Graded]]:
    """name -> (the student, the submission whose page they get)."""
    mine: dict[str, list[tuple[dict, Graded]]] = {}
    lacking = []
    for g in graded:
        people = people_of(g)
        if by == "id":  # one page per submission, a group's under its names
            people = people if len(people) == 1 else [{"name": g.identity.get("name", "")}]
        for person in people:
            key = {"id": "", "canvas": "canvas_user"}.get(by, by)
            name = g.submission if by == "id" else str(person.get(key) or "")
            if by == "canvas" and not canvas_file_id(g):
                name = ""
            if not name:
                lacking.append(g.submission)
            else:
                mine.setdefault(name.casefold() if by == "email" else name, []).append((person, g))
    if lacking:
        lacking = list(dict.fromkeys(lacking))  # a group's submission once
        shown = ", ".join(lacking[:10]) + (" ..." if len(lacking) > 10 else "")
        raise ReleaseError(f"{_WHAT[by]} is needed for every submission, and {len(lacking)} have none: "
                           f"{shown}. Nothing was written. Use --name-by id (the submission's id) with "
                           f"--format folders or zip, or another identifier these submissions carry.")
    chosen = {}
    for name, pairs in mine.items():
        if len({id(g) for _, g in pairs}) > 1:
            release.duplicates.append(f"{name}: " + ", ".join(g.submission for _, g in pairs))
        best = choose([g for _, g in pairs], policy)
        chosen[name] = next(p for p in pairs if p[1] is best)
    return chosen


def canvas_file_id(g: Graded) -> str:
    """The id of the file the student handed in on Canvas: Re-Upload Submissions attaches a file to the
    submission that holds the file whose id the name carries."""
    match = CANVAS_DOWNLOAD.match(g.submission)
    return str(g.identity.get("canvas_submission") or (match["submission"] if match else ""))


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(zipfile.ZipInfo(name, _FIXED_TIME), data)
    return buffer.getvalue()


def previous_files(to: Path) -> list[str]:
    """The files of the release already in RELEASE_DIR (its manifest's); an error if RELEASE_DIR holds
    anything else, which a release must not mix with or replace."""
    if not to.exists():
        return []
    if not to.is_dir():
        raise ReleaseError(f"--to {to} is a file: name a folder for the release.")
    if (to / MANIFEST).is_file():
        with (to / MANIFEST).open(encoding="utf-8", newline="", errors="replace") as f:
            rows = list(csv.reader(f))
        if rows and rows[0] == HEADER:  # a release's: only the files it wrote, inside RELEASE_DIR
            return [f for f in (row[0] for row in rows[1:] if row) if _WRITTEN.fullmatch(f)] + [CANVAS_ZIP]
    if any(to.iterdir()):
        raise ReleaseError(f"--to {to} is not empty and holds no release (no {MANIFEST}): name a new "
                           f"folder, so that nothing else is handed out with the students' pages.")
    return []


def _pages(graded_folder: Path, chosen: dict[str, tuple[dict, Graded]], fmt: str, page: str):
    """(where each page goes, its bytes) and the manifest's rows."""
    pages, rows, taken = {}, [], {}
    for name, (person, g) in chosen.items():
        path = graded_folder / g.submission / "feedback.html"
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ReleaseError(f"{path} could not be read ({error.strerror}): grade the folder again (python "
                               f"-m autograder grade --out {graded_folder} ...), then release.") from None
        if fmt == "canvas":  # Canvas's own download name: sortable name, user id, file id, file name
            sortable = safe_id(str(person.get("name") or "student")).replace("_", "")
            where = f"{sortable}_{person['canvas_user']}_{canvas_file_id(g)}_{page}"
        else:
            safe = safe_id(name)
            safe = "_" + safe if safe.startswith((*FORMULA_START, "'")) else safe  # the manifest names it
            where = f"{safe}.zip" if fmt == "zip" else f"{safe}/{page}"
        other = taken.setdefault(where.casefold(), g.submission)
        if other != g.submission:
            raise ReleaseError(f"{other} and {g.submission} would get one file, {where}: their names (by "
                               f"--name-by) differ only in case, in characters a file name cannot hold, or "
                               f"past the length a file name can have, and one student would get the "
                               f"other's page. Nothing was written. Use --name-by id (each submission's id, "
                               f"unique) or another identifier these submissions carry.")
        pages[where] = data
        who = [person.get(k, "") for k in ("name", "email", "sid", "canvas_user")]
        rows.append([where, g.submission, *who, f"{g.score:g}", f"{g.max_score:g}"])
    return pages, rows


def release(graded_folder: Path, to: Path, fmt: str = "folders", by: str = "id",
            policy: str = config.POLICY) -> Release:
    """Writes the release (see the module's docstring) and says what it wrote."""
    by = "canvas" if fmt == "canvas" else by
    if to.resolve() == graded_folder.resolve() or graded_folder.resolve() in to.resolve().parents:
        raise ReleaseError(f"--to {to} is inside the graded folder {graded_folder}: name a folder outside "
                           f"it.")
    graded, assignment = read_graded(graded_folder)
    if not graded:
        raise ReleaseError(f"{graded_folder}/grades.csv lists no submission: there is nothing to release.")
    old = previous_files(to)
    result = Release()
    page = f"{safe_id(assignment)}-feedback.html"
    pages, rows = _pages(graded_folder, recipients(graded, by, policy, result), fmt, page)
    written = {CANVAS_ZIP: _zip(pages)} if fmt == "canvas" else \
        {where: _zip({page: data}) if fmt == "zip" else data for where, data in pages.items()}
    try:
        for stale in (f for f in old if f and f not in written):
            (to / stale).unlink(missing_ok=True)
            if (to / stale).parent != to and not any((to / stale).parent.iterdir()):
                (to / stale).parent.rmdir()
        for where, data in written.items():
            (to / where).parent.mkdir(parents=True, exist_ok=True)
            tmp = (to / where).with_name(f".{(to / where).name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(to / where)
        write_atomic(to / MANIFEST, manifest(rows))
    except OSError as error:
        raise ReleaseError(f"Cannot write the release into {to} ({error.strerror}). Choose a folder you can "
                           f"write to with --to.") from None
    result.files = [*written, MANIFEST]
    result.students = len(rows)
    return result


def add_arguments(parser):
    """The release command's options (cli.py adds --policy, shared with export)."""
    parser.add_argument("--graded", required=True, type=Path, metavar="DIR",
                        help="a folder written by `grade`")
    parser.add_argument("--to", required=True, type=Path, metavar="RELEASE_DIR", help="the folder to write")
    parser.add_argument("--format", default=FORMATS[0], choices=FORMATS,
                        help="a folder or a zip per student, or one zip for Canvas's Re-Upload Submissions")
    parser.add_argument("--name-by", default=NAMES[0], choices=NAMES,
                        help="name each student's folder or zip by the submission's id, email, student id "
                             "(Gradescope) or Canvas user ID")
    return parser


def manifest(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows([[cell(str(v)) for v in row] for row in rows])
    return buffer.getvalue()


def describe(result: Release, to: Path, fmt: str) -> str:
    where = {"folders": "a folder per student", "zip": "a zip per student",
             "canvas": f"{CANVAS_ZIP}, for Canvas's Re-Upload Submissions"}[fmt]
    lines = [f"Released {result.students} student(s)' feedback into {to}: {where}; {MANIFEST} lists each "
             + "file with the student's name, email and ids (a mail merge's data source)."]
    if result.duplicates:
        lines.append(f"Several submissions for one student (the page of the one --policy chooses): "
                     f"{'; '.join(result.duplicates)}.")
    return "\n".join(lines)
