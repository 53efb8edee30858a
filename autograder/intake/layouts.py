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

from autograder.intake.unzip import Unpacked, ZipRefused, remove, unpack

SUFFIXES = (".ipynb", ".py")
METADATA = "submission_metadata.yml"
# Canvas's "Download Submissions" names: sortable name (no spaces), LATE when late, user id, submission id.
CANVAS_NAME = re.compile(r"^(?P<name>[^_]+)_(?:LATE_)?(?P<user>\d+)_(?P<submission>\d+)(?:_(?P<file>.*))?$")
MAX_FOLDER_ENTRIES = 5000  # entries looked at inside one student's folder
MAX_MODULES = 200  # helper modules beside one notebook
SKIPPED_FOLDERS = ("__MACOSX", "__pycache__")


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


def _entries(folder: Path) -> list[os.DirEntry]:
    with os.scandir(folder) as it:
        return sorted((e for e in it if not e.name.startswith(".") and e.name not in SKIPPED_FOLDERS),
                      key=lambda e: e.name)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _unreadable(name: str, error: OSError, where: str) -> Found:
    return Found(name, error=f"The grader could not open your submission's folder ({error.strerror}), so "
                             f"nothing in it could be graded. Tell your instructor.", where=where, unreadable=True)


class _Walker:
    def __init__(self, prefer: tuple[str, ...]):
        self.prefer = tuple(p.casefold() for p in prefer)
        self.discovery = Discovery([])

    # -- the top ------------------------------------------------------------------------------------

    def named(self, path: Path) -> None:
        if path.suffix == ".zip" and not path.is_dir():
            if not path.exists():
                raise NoSubmissions(f"{path} does not exist. Name notebooks (.ipynb), Python files (.py), zips "
                                    f"or folders that hold them.")
            try:
                unpacked = self.unpack(path)
            except ZipRefused as error:
                raise NoSubmissions(str(error)) from None
            self.folder(self.zip_root(unpacked.folder), f"{path.name}:")
        elif path.is_dir():  # the instructor's folder, followed if it is a link
            self.folder(path, f"{path}/")
        elif path.suffix in SUFFIXES and (path.is_symlink() or path.exists()):
            self.discovery.found.append(Found(path.stem, path, where=str(path)))  # the loader refuses non-files
        elif not path.exists():
            raise NoSubmissions(f"{path} does not exist. Name notebooks (.ipynb), Python files (.py), zips or "
                                f"folders that hold them.")
        else:
            raise NoSubmissions(f"{path} is neither a notebook (.ipynb) nor a Python file (.py) nor a zip nor a "
                                f"folder.")

    def unpack(self, path: Path) -> Unpacked:
        unpacked = unpack(path)
        self.discovery.temporary.append(unpacked.folder)
        for entry, why in unpacked.refused.items():
            self.discovery.warnings.append(f"{path.name}: {entry} was not unpacked: {why}.")
        return unpacked

    @staticmethod
    def zip_root(folder: Path) -> Path:
        """A zip of a single folder is that folder."""
        try:
            entries = _entries(folder)
        except OSError:
            return folder
        if len(entries) == 1 and _is_dir(entries[0]):
            return Path(entries[0].path)
        return folder

    # -- a folder of submissions ----------------------------------------------------------------------

    def folder(self, folder: Path, where: str) -> None:
        """Files lying directly in it are submissions (Canvas's grouped by user), subfolders students."""
        try:
            entries = _entries(folder)
        except OSError as error:
            raise NoSubmissions(f"The folder {folder} could not be read ({error.strerror}).") from None
        if any(e.name == METADATA for e in entries):
            self.gradescope(folder, entries, where)
            return
        files = [e for e in entries if not _is_dir(e) and Path(e.name).suffix in SUFFIXES]
        self.files(folder, files, where)
        for entry in entries:
            path = Path(entry.path)
            if _is_link(entry) and (path.suffix == ".zip" or entry.is_dir()):
                self.discovery.found.append(Found(entry.name, path, where=where + entry.name))  # refused on read
            elif _is_dir(entry):
                self.subfolder(path, where + entry.name + "/")
            elif path.suffix == ".zip":
                self.zip_in_folder(path, where + entry.name)

    def files(self, folder: Path, files: list[os.DirEntry], where: str) -> None:
        canvas: dict[str, list[os.DirEntry]] = {}
        for entry in files:
            match = CANVAS_NAME.match(Path(entry.name).stem)
            if match and not _is_link(entry):
                canvas.setdefault(match["user"], []).append(entry)
            else:
                self.discovery.found.append(Found(Path(entry.name).stem, Path(entry.path), where=where + entry.name))
        for user, group in canvas.items():
            self.discovery.found.append(self.canvas_group(user, group, where))

    def canvas_group(self, user: str, group: list[os.DirEntry], where: str) -> Found:
        """One Canvas user's files: the notebook (or the one .py) graded, the rest its modules."""
        uploaded = {}
        for entry in group:
            match = CANVAS_NAME.match(Path(entry.name).stem)
            original = (match["file"] or match["name"]) + Path(entry.name).suffix
            uploaded[Path(entry.path)] = re.sub(r"-\d+(\.\w+)$", r"\1", original)
        chosen, ignored, error = self.choose(list(uploaded), lambda p: uploaded[p])
        match = CANVAS_NAME.match((chosen or Path(group[0].path)).stem)
        identity = {"canvas_user": user, "canvas_submission": match["submission"], "name": match["name"]}
        if chosen is None:
            return Found(Path(group[0].name).stem, error=error, identity=identity, where=where + group[0].name)
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
            entries = _entries(root)
        except OSError as error:
            self.discovery.found.append(_unreadable(path.stem, error, where))
            return
        users = {m["user"] for e in entries if (m := CANVAS_NAME.match(Path(e.name).stem)) and not _is_dir(e)}
        if any(e.name == METADATA for e in entries) or len(users) > 1:
            self.folder(root, where + ":")  # a class: Gradescope's export, Canvas's download
        else:
            self.discovery.found.append(self.student(path.stem, unpacked.folder, where + ":"))

    def subfolder(self, folder: Path, where: str) -> None:
        try:
            entries = _entries(folder)
        except OSError as error:
            self.discovery.found.append(_unreadable(folder.name, error, where))
            return
        if any(e.name == METADATA for e in entries):
            self.gradescope(folder, entries, where)
            return
        own = [e for e in entries if not _is_dir(e) and Path(e.name).suffix in (*SUFFIXES, ".zip")]
        holding = [e for e in entries if _is_dir(e) and self.holds_submissions(Path(e.path))]
        if not own and len(holding) > 1:  # a folder of students: a section, an export
            for entry in holding:
                self.subfolder(Path(entry.path), where + entry.name + "/")
            return
        self.discovery.found.append(self.student(folder.name, folder, where))

    def holds_submissions(self, folder: Path, depth: int = 0) -> bool:
        try:
            entries = _entries(folder)
        except OSError:
            return False
        if any(not _is_dir(e) and Path(e.name).suffix in (*SUFFIXES, ".zip") for e in entries):
            return True
        return depth < 8 and any(_is_dir(e) and self.holds_submissions(Path(e.path), depth + 1) for e in entries)

    # -- one student's folder --------------------------------------------------------------------------

    def candidates(self, folder: Path) -> tuple[list[tuple[int, Path]], list[Path], str]:
        """(depth, path) of the notebooks and .py files below folder, the zips among them, and an error."""
        found, zips, folders, looked = [], [], [(0, folder)], 0
        while folders:
            depth, current = folders.pop()
            try:
                entries = _entries(current)
            except OSError as error:
                return [], [], f"could not be opened ({error.strerror})"
            for entry in entries:
                looked += 1
                if looked > MAX_FOLDER_ENTRIES:
                    return [], [], f"holds over {MAX_FOLDER_ENTRIES:,} files and folders"
                path = Path(entry.path)
                if _is_dir(entry):
                    if depth < 20:
                        folders.append((depth + 1, path))
                elif path.suffix in SUFFIXES and not path.stem.endswith("-checkpoint"):
                    found.append((depth, path))
                elif path.suffix == ".zip" and not _is_link(entry):
                    zips.append(path)
        return sorted(found, key=lambda c: (c[0], c[1].as_posix())), sorted(zips), ""

    def choose(self, paths: list[Path], name=lambda p: p.name) -> tuple[Path | None, list[Path], str]:
        """The file to grade among a student's files: the notebook (the one named like the lesson when
        there are several, else the first by name), else the one .py file (or the one no other imports)."""
        notebooks = [p for p in paths if p.suffix == ".ipynb"]
        pool = notebooks or [p for p in paths if p.suffix == ".py"]
        if not pool:
            return None, [], ("No notebook (.ipynb) or Python file (.py) was found in your submission. Hand in "
                              "your lesson notebook and resubmit.")
        if len(pool) == 1:
            return pool[0], [], ""
        preferred = [p for p in pool if Path(name(p)).stem.casefold() in self.prefer]
        if preferred:
            return preferred[0], [p for p in pool if p != preferred[0] and p.suffix == ".ipynb"], ""
        if notebooks:
            return notebooks[0], notebooks[1:], ""
        roots = [p for p in pool if not any(_imports(q, Path(name(p)).stem) for q in pool if q != p)]
        if len(roots) == 1:
            return roots[0], [], ""
        listed = ", ".join(name(p) for p in pool)
        return None, [], (f"Your submission holds several Python files and no notebook ({listed}), and the grader "
                          f"cannot tell which one is your work: hand in your notebook, or a single .py file (with "
                          f"the modules it imports).")

    def student(self, name: str, folder: Path, where: str, identity: dict | None = None) -> Found:
        identity = identity or {}
        found, zips, error = self.candidates(folder)
        if error:
            return Found(name, error=f"Your submission's folder {error}, so it was not graded.", where=where,
                         identity=identity, unreadable=True)
        if not found and zips:  # a student's zip inside their folder
            try:
                unpacked = self.unpack(zips[0])
            except ZipRefused as refused:
                return Found(name, error=str(refused), where=where, identity=identity)
            folder = unpacked.folder
            found, _, error = self.candidates(folder)
        links = [p for _, p in found if p.is_symlink()]
        shallow = [p for d, p in found if d == found[0][0]] if found else []
        chosen, ignored, error = self.choose(shallow)
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
            return Found(name, error=f"Your submission holds {len(modules)} Python files beside the notebook, over "
                                     f"the grader's limit of {MAX_MODULES}.", where=where, identity=identity)
        return Found(name, chosen, modules, identity, where=where + chosen.relative_to(folder).as_posix(),
                     ignored=[p.relative_to(folder).as_posix() for p in ignored], also=list(ignored))

    # -- Gradescope's export ---------------------------------------------------------------------------

    def gradescope(self, folder: Path, entries: list[os.DirEntry], where: str) -> None:
        metadata = self.metadata(folder / METADATA)
        for entry in entries:
            path = Path(entry.path)
            if entry.name == METADATA:
                continue
            if _is_link(entry):
                self.discovery.found.append(Found(entry.name, path, where=where + entry.name))
                continue
            if not _is_dir(entry):
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

    def metadata(self, path: Path) -> dict[str, dict]:
        """Folder name -> {"id", "identity", "tiebreak"} from submission_metadata.yml; what cannot be read
        is said to the instructor, and those folders keep their own names."""
        from autograder.intake.loader import Unreadable, read_file

        try:
            import yaml

            data = yaml.safe_load(read_file(path))
        except (Unreadable, ValueError, ImportError) as error:
            self.discovery.warnings.append(f"{path} could not be read ({str(error)[:200]}): the submissions "
                                           f"beside it keep their folders' names.")
            return {}
        except Exception as error:  # noqa: BLE001 - yaml's errors: a malformed file is the instructor's to know
            self.discovery.warnings.append(f"{path} is not valid YAML ({type(error).__name__}): the submissions "
                                           f"beside it keep their folders' names.")
            return {}
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
            tiebreak = first.get("email", "").split("@")[0] or first.get("sid", "") or identity["gradescope_submission"]
            out[str(key)] = {"id": identity["name"], "identity": identity, "tiebreak": tiebreak}
        return out


def _get(mapping: dict, key: str):
    """A value of Gradescope's metadata, whose keys are Ruby symbols (":name"), or plain keys."""
    for k in (f":{key}", key):
        if k in mapping:
            return mapping[k]
    return None


_IMPORT = r"^\s*(?:from\s+{0}(?:\s|\.)|import\s+(?:[\w.]+\s*,\s*)*{0}\b)"


def _imports(path: Path, module: str) -> bool:
    """Whether the Python file at path imports module (a look at its text: nothing is run)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(_IMPORT.format(re.escape(module)), text, re.MULTILINE) is not None


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
            walker.named(Path(path))
    except BaseException:
        walker.discovery.close()
        raise
    if not walker.discovery.found:
        walker.discovery.close()
        raise NoSubmissions("No submissions found: name notebooks (.ipynb), Python files (.py), zips of them or "
                            "folders holding them.")
    return walker.discovery
