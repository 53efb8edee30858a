"""Who handed in what: the submissions in the files and folders named on the command line, laid out as
instructors receive them, each with a stable id and, where the layout says, the student's identity.

- A `.ipynb` or `.py` file named directly, or lying directly in a named folder, is one submission; its
  id is the file name without extension (made unique).
- Files lying directly in a folder and named as Canvas's "Download Submissions" names them
  (`<name>_[LATE_]<user id>_<submission id>_<file>`) are grouped by Canvas user: a student's notebook is
  graded and the other `.py` files they handed in are its modules, under the names they uploaded
  (`helpers-1.py`, Canvas's name for a resubmitted `helpers.py`, is `helpers.py` again; among equals the
  latest upload is graded). The late flag and the upload number are kept; a user who handed in only
  other files (a PDF) gets a submission that says so.
- A subfolder of a named folder is one student's submission, its id the subfolder's name: one file is
  graded (student_files.choose: the same rule on Gradescope, `uploads`), and the other `.py` files
  beside it are modules it can import. A subfolder with no submission file of its own and several
  subfolders that hold some (a section, an export) is read as a folder of students; each of its
  folders is a student, one with nothing to grade (a PDF only) included.
- nbgrader's `submitted/` or `autograded/` (nbgrader.py): a folder per student, in it a folder per
  assignment; this assignment's folder is graded as the student's submission. Folders named on the
  command line that share a name (`submitted/*/ps2`) are each the submission of the folder above.
- A folder holding Gradescope's `submission_metadata.yml` (its "Export Submissions") is a folder of
  students whose ids are the students' names from the metadata (a group submission: the names joined
  with " + "), with their emails and student ids kept for the gradebook.
- A `.zip` named directly is read as the folder it holds (a zip of a single folder: that folder). A
  `.zip` lying in a folder is one student's submission (its id the zip's name), unless it holds a
  class: Gradescope's metadata, or files of several Canvas users.

Ids depend on the student only, never on the order or number of the others: two students whose names
collide are told apart by their email or student id where the layout gives one, else by -2, -3 in the
order found. Zips are unpacked by unzip.py into temporary folders the caller removes (`Discovery.close`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config
from autograder.intake.files import SUFFIXES, is_dir, is_link, listing
from autograder.intake.found import Found, NoSubmissions, unreadable_folder
from autograder.intake.gradescope_metadata import METADATA, read_metadata
from autograder.intake.nbgrader import (
    EXCHANGE,
    NBGRADER_ROOTS,
    course_folder,
    exchange_folders,
    latest_submissions,
)
from autograder.intake.student_files import candidates, choose
from autograder.intake.unzip import Unpacked, ZipRefused, remove, unpack

# Canvas's "Download Submissions" names: sortable name (no spaces), LATE when late, user id, submission id.
CANVAS_NAME = re.compile(r"^(?P<name>[^_]+)_(?P<late>LATE_)?(?P<user>\d+)_(?P<submission>\d+)"
                         r"(?:_(?P<file>.*))?$")
RESUBMITTED = re.compile(r"-(\d+)(\.\w+)$")  # Canvas's name for a file uploaded again: hw-1.ipynb
MAX_MODULES = 200  # helper modules beside one notebook
_MISSING = ("{path} does not exist. Name notebooks (.ipynb), Python files (.py), zips or folders that hold "
            "them.")


@dataclass
class Discovery:
    found: list[Found]
    temporary: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # for the instructor: refused zip entries, metadata

    def close(self) -> None:
        for folder in self.temporary:
            remove(folder)


class _Walker:
    def __init__(self, prefer: tuple[str, ...], problems: tuple[str, ...] = ()):
        self.prefer, self.problems = tuple(p.casefold() for p in prefer), tuple(problems)
        self.discovery = Discovery([])
        self.budget = [config.UNZIP_BYTES]  # bytes every zip of this run may still unpack, together

    # -- the top ------------------------------------------------------------------------------------

    def named(self, path: Path, alone: bool = True) -> None:
        """One path of the command line; `alone` when it is the only one (a zip that cannot be unpacked
        then stops the run with the cause, else it is that submission's error, as `grade *.zip` names
        each student's zip)."""
        if path.suffix == ".zip" and not path.is_dir():
            if not path.exists():
                raise NoSubmissions(_MISSING.format(path=path))
            try:
                unpacked = self.unpack(path)
            except ZipRefused as error:
                if alone:
                    raise NoSubmissions(str(error)) from None
                self.discovery.found.append(Found(path.stem, error=str(error), found_at=str(path)))
                return
            self.folder(self.zip_root(unpacked.folder), f"{path.name}:")
        elif path.is_dir():  # the instructor's folder, followed if it is a link
            self.folder(path, f"{path}/")
        elif path.suffix in SUFFIXES and (path.is_symlink() or path.exists()):
            # the loader refuses what is not a regular file
            self.discovery.found.append(Found(path.stem, path, found_at=str(path)))
        elif not path.exists():
            raise NoSubmissions(_MISSING.format(path=path))
        else:
            raise NoSubmissions(f"{path} is neither a notebook (.ipynb) nor a Python file (.py) nor a zip "
                                f"nor a folder.")

    def unpack(self, path: Path) -> Unpacked:
        unpacked = unpack(path, budget=self.budget)
        self.discovery.temporary.append(unpacked.folder)
        for entry, why in unpacked.refused.items():
            self.discovery.warnings.append(f"{path.name}: {entry} was not unpacked: {why}.")
        for entry in unpacked.code_page:
            self.discovery.warnings.append(f"{path.name}: the name of {entry} is not UTF-8; it was read as "
                                           f"the zip standard's code page 437. Check the student's name.")
        return unpacked

    @staticmethod
    def zip_root(folder: Path) -> Path:
        """A zip of a single folder is that folder."""
        try:
            entries = listing(folder)
        except OSError:
            return folder
        if len(entries) == 1 and is_dir(entries[0]):
            return Path(entries[0].path)
        return folder

    # -- a folder of submissions ----------------------------------------------------------------------

    def folder(self, folder: Path, where: str) -> None:
        """Files lying directly in it are submissions (Canvas's grouped by user), subfolders students."""
        try:
            entries = listing(folder)
        except OSError as error:
            raise NoSubmissions(f"The folder {folder} could not be read ({error.strerror}).") from None
        if any(e.name == METADATA for e in entries):
            self.gradescope(folder, entries, where)
            return
        if folder.name in NBGRADER_ROOTS:
            self.nbgrader(folder, entries, where)
            return
        if exchange := exchange_folders(folder, entries):
            self.exchange(exchange)
            return
        # Canvas's files of any kind: a student who handed in a PDF only still gets a row
        files = [e for e in entries if not is_dir(e)
                 and (Path(e.name).suffix in SUFFIXES or CANVAS_NAME.match(Path(e.name).stem))]
        self.files(folder, files, where)
        for entry in entries:
            path = Path(entry.path)
            if is_link(entry) and (path.suffix == ".zip" or entry.is_dir()):  # listed, refused on read
                self.discovery.found.append(Found(entry.name, path, found_at=where + entry.name))
            elif is_dir(entry):
                self.subfolder(path, where + entry.name + "/")
            elif path.suffix == ".zip":
                self.zip_in_folder(path, where + entry.name)

    def files(self, folder: Path, files: list[os.DirEntry], where: str) -> None:
        canvas: dict[str, list[os.DirEntry]] = {}
        for entry in files:
            match = CANVAS_NAME.match(Path(entry.name).stem)
            if match and not is_link(entry):
                canvas.setdefault(match["user"], []).append(entry)
            elif Path(entry.name).suffix in SUFFIXES:
                path = Path(entry.path)
                self.discovery.found.append(Found(path.stem, path, found_at=where + entry.name))
        for user, group in canvas.items():
            self.discovery.found.append(self.canvas_group(user, group, where))

    def canvas_group(self, user: str, group: list[os.DirEntry], where: str) -> Found:
        """One Canvas user's files: the notebook (or the one .py) graded, the rest its modules. Canvas
        names a file uploaded again `hw-1.ipynb`: among equals, the latest upload is graded."""
        uploaded, again = {}, {}
        for entry in group:
            match = CANVAS_NAME.match(Path(entry.name).stem)
            original = (match["file"] or match["name"]) + Path(entry.name).suffix
            resubmitted = RESUBMITTED.search(original)
            again[Path(entry.path)] = int(resubmitted[1]) if resubmitted else 0
            uploaded[Path(entry.path)] = RESUBMITTED.sub(r"\2", original)
        paths = sorted(uploaded, key=lambda p: (-again[p], p.name))
        choice = choose(paths, self.prefer, lambda p: uploaded[p], self.problems)
        match = CANVAS_NAME.match((choice.chosen or paths[0]).stem)
        identity = {"canvas_user": user, "canvas_submission": match["submission"], "name": match["name"],
                    "late": bool(match["late"])}
        if choice.chosen is not None and again[choice.chosen]:
            identity["resubmission"] = again[choice.chosen]
        if choice.chosen is None:
            first = paths[0].name
            return Found(Path(first).stem, error=choice.error, identity=identity, found_at=where + first)
        chosen = choice.chosen  # the latest upload of each module last, so that it is kept:
        modules = {uploaded[p]: p for p in reversed(paths) if p != chosen and p.suffix == ".py"}
        for p in choice.ignored:
            if uploaded[p] == uploaded[chosen] and again[p] < again[chosen]:
                choice.ignored[p] = f"not graded: an earlier upload of {uploaded[p]} ({chosen.name} is later)"
        return Found(chosen.stem, chosen, modules, identity, found_at=where + chosen.name,
                     ignored=[f"{p.name}: {why}" for p, why in choice.ignored.items()])

    def zip_in_folder(self, path: Path, where: str) -> None:
        try:
            unpacked = self.unpack(path)
        except ZipRefused as error:
            self.discovery.found.append(Found(path.stem, error=str(error), found_at=where))
            return
        root = self.zip_root(unpacked.folder)
        try:
            entries = listing(root)
        except OSError as error:
            self.discovery.found.append(unreadable_folder(path.stem, error, where))
            return
        users = {m["user"] for e in entries if (m := CANVAS_NAME.match(Path(e.name).stem)) and not is_dir(e)}
        if any(e.name == METADATA for e in entries) or len(users) > 1:
            self.folder(root, where + ":")  # a class: Gradescope's export, Canvas's download
        else:
            found = self.student(path.stem, unpacked.folder, where + ":")
            if found.graded is None and unpacked.refused:  # say what in the zip could not be unpacked
                found.error += " " + " ".join(f"{entry} was not unpacked: {why}."
                                              for entry, why in unpacked.refused.items())
            self.discovery.found.append(found)

    def subfolder(self, folder: Path, where: str) -> None:
        try:
            entries = listing(folder)
        except OSError as error:
            self.discovery.found.append(unreadable_folder(folder.name, error, where))
            return
        if any(e.name == METADATA for e in entries):
            self.gradescope(folder, entries, where)
            return
        if folder.name in NBGRADER_ROOTS:
            self.nbgrader(folder, entries, where)
            return
        if exchange := exchange_folders(folder, entries):
            self.exchange(exchange)
            return
        own = [e for e in entries if not is_dir(e) and Path(e.name).suffix in (*SUFFIXES, ".zip")]
        holding = [e for e in entries if is_dir(e) and self.holds_submissions(Path(e.path))]
        if not own and len(holding) > 1:  # a folder of students: a section, an export
            for entry in (e for e in entries if is_dir(e)):  # a student who handed in a PDF only too
                self.subfolder(Path(entry.path), where + entry.name + "/")
            return
        self.discovery.found.append(self.student(folder.name, folder, where))

    def holds_submissions(self, folder: Path, depth: int = 0) -> bool:
        try:
            entries = listing(folder)
        except OSError:
            return False
        if any(not is_dir(e) and Path(e.name).suffix in (*SUFFIXES, ".zip") for e in entries):
            return True
        folders = [Path(e.path) for e in entries if is_dir(e)]
        return depth < 8 and any(self.holds_submissions(f, depth + 1) for f in folders)

    # -- one student's folder --------------------------------------------------------------------------

    def student(self, name: str, folder: Path, where: str, identity: dict | None = None) -> Found:
        identity = identity or {}
        found, zips, error = candidates(folder)
        if error:
            return Found(name, error=f"Your submission's folder {error}, so it was not graded.",
                         found_at=where, identity=identity, unreadable=True)
        if not found and zips:  # a student's zip inside their folder
            try:
                unpacked = self.unpack(zips[0])
            except ZipRefused as refused:
                return Found(name, error=str(refused), found_at=where, identity=identity)
            folder = unpacked.folder
            found, _, error = candidates(folder)
        links = [p for _, p in found if p.is_symlink()]
        # notebooks at any depth, shallower first among equals; .py files only beside the top ones
        shallow = [p for d, p in found if d == found[0][0] or p.suffix == ".ipynb"] if found else []
        choice = choose(shallow, self.prefer, problems=self.problems)
        chosen = choice.chosen
        if chosen is None:
            if links:  # a link where the notebook should be: the loader says why it is refused
                return Found(name, links[0], found_at=where, identity=identity)
            return Found(name, error=choice.error, found_at=where, identity=identity)
        base = chosen.parent
        modules = {}
        for _, path in found:
            if path.suffix == ".py" and path != chosen and base in path.parents:
                modules[path.relative_to(base).as_posix()] = path
        if len(modules) > MAX_MODULES:
            why = (f"Your submission holds {len(modules)} Python files beside the notebook, over the "
                   f"grader's limit of {MAX_MODULES}.")
            return Found(name, error=why, found_at=where, identity=identity)
        return Found(name, chosen, modules, identity, found_at=where + chosen.relative_to(folder).as_posix(),
                     ignored=[f"{p.relative_to(folder).as_posix()}: {why}" for p, why in
                              choice.ignored.items()])

    # -- nbgrader's course folder (submitted/<student>/<assignment>/) and exchange (inbound/) ------------

    def nbgrader(self, folder: Path, entries: list[os.DirEntry], where: str) -> None:
        course_folder(self, folder, entries, where)

    def exchange(self, folders: list[Path]) -> None:
        """Each student's latest submission of the assignment in nbgrader's exchange (nbgrader.py)."""
        students, refusal = latest_submissions(folders, self.prefer)
        if refusal:
            raise NoSubmissions(refusal)
        for student, (path, identity) in students.items():
            self.discovery.found.append(self.student(student, path, f"{path}/", identity))

    # -- Gradescope's export ---------------------------------------------------------------------------

    def gradescope(self, folder: Path, entries: list[os.DirEntry], where: str) -> None:
        metadata, warning = read_metadata(folder / METADATA)
        self.discovery.warnings += [warning] if warning else []
        for entry in entries:
            path = Path(entry.path)
            if entry.name == METADATA:
                continue
            if is_link(entry):
                self.discovery.found.append(Found(entry.name, path, found_at=where + entry.name))
                continue
            if not is_dir(entry):
                if path.suffix in SUFFIXES:
                    self.discovery.found.append(Found(path.stem, path, found_at=where + entry.name))
                continue
            about = metadata.get(entry.name)
            if about is None:
                self.subfolder(path, where + entry.name + "/")
                continue
            found = self.student(about["id"], path, where + entry.name + "/", about["identity"])
            found.tiebreak = about["tiebreak"]
            self.discovery.found.append(found)


def uploads(folder: Path, prefer: tuple[str, ...] = (), problems: tuple[str, ...] = ()) -> Discovery:
    """What one student uploaded (Gradescope's submission folder): the file graded by the very rule of a
    student's folder in a local batch (student_files.choose), with the .py files beside it as its
    modules, and the other notebooks named as not graded."""
    walker = _Walker(prefer, problems)
    walker.discovery.found = [walker.student(folder.name, folder, "")]
    return walker.discovery


def discover(paths: list[Path], prefer: tuple[str, ...] = (), problems: tuple[str, ...] = ()) -> Discovery:
    """Every submission in paths (see the module's docstring); raises NoSubmissions when there is none,
    or when a path named is missing or cannot be read. `prefer`: names (without extension) of the lesson's
    notebook, `problems` the names the assignment grades: together they choose the file to grade when a
    student's folder holds several (student_files.choose)."""
    walker = _Walker(prefer, problems)
    shared = Counter(Path(p).name for p in paths if Path(p).is_dir())
    exchange = [Path(p) for p in paths if Path(p).is_dir() and EXCHANGE.match(Path(p).name)]
    try:
        if exchange:  # inbound/*+ps1+*: submissions of nbgrader's exchange, named one by one
            walker.exchange(exchange)
        for path in (Path(p) for p in paths if Path(p) not in exchange):
            if path.is_dir() and (shared[path.name] > 1 or path.parent.parent.name in NBGRADER_ROOTS):
                # submitted/*/ps2: one student's folder each, named by the folder above
                student = path.resolve().parent.name
                walker.discovery.found.append(walker.student(student, path, f"{path}/", {"name": student}))
            elif path.is_dir() and path.parent.name in NBGRADER_ROOTS:  # submitted/alice: one student
                try:
                    own = [e for e in listing(path.parent) if e.name == path.name]
                except OSError as error:
                    raise NoSubmissions(f"The folder {path.parent} could not be read "
                                        f"({error.strerror}).") from None
                walker.nbgrader(path.parent, own, f"{path.parent}/")
            else:
                walker.named(path, alone=len(paths) == 1)
    except BaseException:
        walker.discovery.close()
        raise
    if not walker.discovery.found:
        walker.discovery.close()
        raise NoSubmissions("No submissions found: name notebooks (.ipynb), Python files (.py), zips of them "
                            "or folders holding them.")
    return walker.discovery
