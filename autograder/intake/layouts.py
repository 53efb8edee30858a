"""Who handed in what: the submissions in the files and folders named on the command line, laid out as
instructors receive them, each with a stable id and, where the layout says, the student's identity.

- A `.ipynb` or `.py` file named directly, or lying directly in a named folder, is one submission; its
  id is the file name without extension (made unique).
- Files lying directly in a folder and named as Canvas's "Download Submissions" names them
  (`<name>_[LATE_]<user id>_<submission id>_<file>`) are grouped by Canvas user: a student's notebook is
  graded and the other `.py` files they handed in are its modules, under the names they uploaded
  (`helpers-1.py`, Canvas's name for a resubmitted `helpers.py`, is `helpers.py` again).
- A subfolder of a named folder is one student's submission, its id the subfolder's name: its notebook
  is graded (or its one `.py` file when there is no notebook), and the other `.py` files beside it are
  modules it can import. A subfolder with no submission file of its own and several subfolders that
  hold some (a section, an export) is read as a folder of students.
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
from dataclasses import dataclass, field
from pathlib import Path

from autograder import config
from autograder.intake.files import SUFFIXES, is_dir, is_link, listing
from autograder.intake.gradescope_metadata import METADATA, read_metadata
from autograder.intake.student_files import candidates, choose
from autograder.intake.unzip import Unpacked, ZipRefused, remove, unpack

# Canvas's "Download Submissions" names: sortable name (no spaces), LATE when late, user id, submission id.
CANVAS_NAME = re.compile(r"^(?P<name>[^_]+)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)(?:_(?P<file>.*))?$")
MAX_MODULES = 200  # helper modules beside one notebook
_MISSING = ("{path} does not exist. Name notebooks (.ipynb), Python files (.py), zips or folders that hold "
            "them.")


class NoSubmissions(ValueError):
    pass


@dataclass
class Found:
    """One submission before it is read: its id's base, the file graded, its modules (name in the
    worker's folder -> file), who handed it in, and why it cannot be graded when that is already known."""

    name: str
    graded: Path | None = None
    modules: dict[str, Path] = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    error: str = ""
    where: str = ""  # for the instructor: where it was found
    ignored: list[str] = field(default_factory=list)  # other notebooks beside the graded one
    tiebreak: str = ""  # what tells two students of the same name apart (an email, a student id)
    unreadable: bool = False  # a folder the grader could not open: the instructor is told
    also: list[Path] = field(default_factory=list)  # the other notebooks (ignored), as files


@dataclass
class Discovery:
    found: list[Found]
    temporary: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # for the instructor: refused zip entries, metadata

    def close(self) -> None:
        for folder in self.temporary:
            remove(folder)


def _unreadable(name: str, error: OSError, where: str) -> Found:
    why = (f"The grader could not open your submission's folder ({error.strerror}), so nothing in it could "
           f"be graded. Tell your instructor.")
    return Found(name, error=why, where=where, unreadable=True)


class _Walker:
    def __init__(self, prefer: tuple[str, ...]):
        self.prefer = tuple(p.casefold() for p in prefer)
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
                self.discovery.found.append(Found(path.stem, error=str(error), where=str(path)))
                return
            self.folder(self.zip_root(unpacked.folder), f"{path.name}:")
        elif path.is_dir():  # the instructor's folder, followed if it is a link
            self.folder(path, f"{path}/")
        elif path.suffix in SUFFIXES and (path.is_symlink() or path.exists()):
            # the loader refuses what is not a regular file
            self.discovery.found.append(Found(path.stem, path, where=str(path)))
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
        files = [e for e in entries if not is_dir(e) and Path(e.name).suffix in SUFFIXES]
        self.files(folder, files, where)
        for entry in entries:
            path = Path(entry.path)
            if is_link(entry) and (path.suffix == ".zip" or entry.is_dir()):  # listed, refused on read
                self.discovery.found.append(Found(entry.name, path, where=where + entry.name))
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
            else:
                path = Path(entry.path)
                self.discovery.found.append(Found(path.stem, path, where=where + entry.name))
        for user, group in canvas.items():
            self.discovery.found.append(self.canvas_group(user, group, where))

    def canvas_group(self, user: str, group: list[os.DirEntry], where: str) -> Found:
        """One Canvas user's files: the notebook (or the one .py) graded, the rest its modules."""
        uploaded = {}
        for entry in group:
            match = CANVAS_NAME.match(Path(entry.name).stem)
            original = (match["file"] or match["name"]) + Path(entry.name).suffix
            uploaded[Path(entry.path)] = re.sub(r"-\d+(\.\w+)$", r"\1", original)
        chosen, ignored, error = choose(list(uploaded), self.prefer, lambda p: uploaded[p])
        match = CANVAS_NAME.match((chosen or Path(group[0].path)).stem)
        identity = {"canvas_user": user, "canvas_submission": match["submission"], "name": match["name"]}
        if chosen is None:
            first = group[0].name
            return Found(Path(first).stem, error=error, identity=identity, where=where + first)
        modules = {uploaded[p]: p for p in uploaded if p != chosen and p.suffix == ".py"}
        return Found(chosen.stem, chosen, modules, identity, where=where + chosen.name,
                     ignored=[uploaded[p] for p in ignored])

    def zip_in_folder(self, path: Path, where: str) -> None:
        try:
            unpacked = self.unpack(path)
        except ZipRefused as error:
            self.discovery.found.append(Found(path.stem, error=str(error), where=where))
            return
        root = self.zip_root(unpacked.folder)
        try:
            entries = listing(root)
        except OSError as error:
            self.discovery.found.append(_unreadable(path.stem, error, where))
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
            self.discovery.found.append(_unreadable(folder.name, error, where))
            return
        if any(e.name == METADATA for e in entries):
            self.gradescope(folder, entries, where)
            return
        own = [e for e in entries if not is_dir(e) and Path(e.name).suffix in (*SUFFIXES, ".zip")]
        holding = [e for e in entries if is_dir(e) and self.holds_submissions(Path(e.path))]
        if not own and len(holding) > 1:  # a folder of students: a section, an export
            for entry in holding:
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
            return Found(name, error=f"Your submission's folder {error}, so it was not graded.", where=where,
                         identity=identity, unreadable=True)
        if not found and zips:  # a student's zip inside their folder
            try:
                unpacked = self.unpack(zips[0])
            except ZipRefused as refused:
                return Found(name, error=str(refused), where=where, identity=identity)
            folder = unpacked.folder
            found, _, error = candidates(folder)
        links = [p for _, p in found if p.is_symlink()]
        shallow = [p for d, p in found if d == found[0][0]] if found else []
        chosen, ignored, error = choose(shallow, self.prefer)
        if chosen is None:
            if links:  # a link where the notebook should be: the loader says why it is refused
                return Found(name, links[0], where=where, identity=identity)
            return Found(name, error=error, where=where, identity=identity)
        base = chosen.parent
        modules = {}
        for _, path in found:
            if path.suffix == ".py" and path != chosen and base in path.parents:
                modules[path.relative_to(base).as_posix()] = path
        if len(modules) > MAX_MODULES:
            why = (f"Your submission holds {len(modules)} Python files beside the notebook, over the "
                   f"grader's limit of {MAX_MODULES}.")
            return Found(name, error=why, where=where, identity=identity)
        return Found(name, chosen, modules, identity, where=where + chosen.relative_to(folder).as_posix(),
                     ignored=[p.relative_to(folder).as_posix() for p in ignored], also=list(ignored))

    # -- Gradescope's export ---------------------------------------------------------------------------

    def gradescope(self, folder: Path, entries: list[os.DirEntry], where: str) -> None:
        metadata, warning = read_metadata(folder / METADATA)
        self.discovery.warnings += [warning] if warning else []
        for entry in entries:
            path = Path(entry.path)
            if entry.name == METADATA:
                continue
            if is_link(entry):
                self.discovery.found.append(Found(entry.name, path, where=where + entry.name))
                continue
            if not is_dir(entry):
                if path.suffix in SUFFIXES:
                    self.discovery.found.append(Found(path.stem, path, where=where + entry.name))
                continue
            about = metadata.get(entry.name)
            if about is None:
                self.subfolder(path, where + entry.name + "/")
                continue
            found = self.student(about["id"], path, where + entry.name + "/", about["identity"])
            found.tiebreak = about["tiebreak"]
            self.discovery.found.append(found)


def uploads(folder: Path, prefer: tuple[str, ...] = ()) -> Discovery:
    """What one student uploaded (Gradescope's submission folder): each notebook, with the .py files
    beside it as its modules; without a notebook, the one .py file (or the one no other imports)."""
    walker = _Walker(prefer)
    first = walker.student(folder.name, folder, "")
    found = [first]
    if first.graded is not None:
        for name, path in zip(first.ignored, first.also):
            modules = {p.relative_to(path.parent).as_posix(): p for p in first.modules.values()
                       if path.parent in p.parents}
            found.append(Found(path.stem, path, modules, where=name))
        first.ignored, first.also = [], []
    walker.discovery.found = found
    return walker.discovery


def discover(paths: list[Path], prefer: tuple[str, ...] = ()) -> Discovery:
    """Every submission in paths (see the module's docstring); raises NoSubmissions when there is none,
    or when a path named is missing or cannot be read. `prefer`: names (without extension) of the file to
    grade when a student's folder holds several, e.g. the lesson's notebook."""
    walker = _Walker(prefer)
    try:
        for path in paths:
            walker.named(Path(path), alone=len(paths) == 1)
    except BaseException:
        walker.discovery.close()
        raise
    if not walker.discovery.found:
        walker.discovery.close()
        raise NoSubmissions("No submissions found: name notebooks (.ipynb), Python files (.py), zips of them "
                            "or folders holding them.")
    return walker.discovery
