"""What the site changes in a lesson notebook before Sphinx reads it (tools/build_site.py calls these).

Nothing here edits the repository's notebooks: each function takes the notebook the site is about to
show (or offer for download) and returns or changes that copy.

- tracebacks: no path of the machine that ran the notebook, and the frames inside installed packages
  (torch) folded into one line, so that an expected error shows the learner's code and the message;
- Predict sections: the output that answers the question folds behind "Show the answer", and the
  written explanation moves below the question's code (the notebook has it above, for the learner to
  fill in before running);
- "What goes wrong here?" headings: a bare one is named after its section, so anchors and the table of
  contents tell them apart (site/_ext/course_html.py folds their explanations);
- headings lose the numbers some lessons write: the site numbers every lesson the same way;
- "Lesson N" in the prose links to that lesson, and the cited tutorials and notes link to their pages.
"""

from __future__ import annotations

import re
from collections import Counter

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A folder of installed packages or of Python's standard library, wherever the machine had it (IPython
# writes the home folder as ~): /x/.venv/lib/python3.11/site-packages/, ~/.pyenv/versions/3.11/lib/python3.11/
PACKAGES = re.compile(r"(?:[A-Za-z]:|~)?[/\\][^\s'\"()<>]*?[/\\]"
                      r"(?:(?:site|dist)-packages|lib[/\\]python\d+(?:\.\d+)?)[/\\](?!(?:site|dist)-packages)")
# Any other absolute path under a home, work or temporary folder.
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:home|Users|work|root|tmp|private|mnt|srv|opt)/[^\s'\"()<>:]*")
FRAME = re.compile(r"^File (?P<file>.+?):(?P<line>\d+)(?:, in (?P<where>.*))?$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
WHAT_GOES_WRONG = "What goes wrong here?"
LABEL = "course_toggle_label"  # cell metadata: the label of the toggle that folds a written solution
ANSWER_PROMPTS = {"code_prompt_show": "Show the answer", "code_prompt_hide": "Hide the answer"}


def scrub_paths(text: str) -> str:
    """The text with installed packages' folders shortened to `.../` and other machine paths to their
    last two parts (`.../folder/file.py`)."""
    text = PACKAGES.sub(".../", text)
    return MACHINE_PATH.sub(lambda m: ".../" + "/".join(m.group(0).rstrip("/").split("/")[-2:]), text)


def frame_file(entry: str) -> str | None:
    """The file of a traceback entry ("File /x/y.py:12, in f"), or None if the entry is not a frame."""
    first = ANSI.sub("", entry).lstrip("\n").split("\n", 1)[0]
    match = FRAME.match(first)
    return match.group("file") if match else None


def is_package_frame(entry: str) -> bool:
    file = frame_file(entry)
    return file is not None and PACKAGES.search(file) is not None


def folded(frames: list[str]) -> str:
    """One line in place of consecutive frames inside installed packages or the standard library: the
    first one's place, and how many more there are, inside what ("... (and 2 more frames inside torch)")."""
    places = [scrub_paths(ANSI.sub("", frame).lstrip("\n").split("\n", 1)[0]) for frame in frames]
    inside = []
    for place in places:
        top = place.removeprefix("File .../").split("/", 1)[0].split(":", 1)[0].removesuffix(".py")
        if top not in inside:
            inside.append(top)
    more = len(frames) - 1
    note = f" (and {more} more frame{'s' if more > 1 else ''} inside {', '.join(inside)})" if more else ""
    where = re.sub(r"(, in [\w.<>]+)\(.*\)$", r"\1()", places[0])  # the function's name, not its signature
    return f"\x1b[2m{where}{note}\x1b[0m"


def short_traceback(traceback: list[str]) -> list[str]:
    """The learner's frames and the messages; runs of frames inside torch (or any installed package)
    folded into one line each; no machine path anywhere."""
    out, run = [], []
    for entry in traceback:
        if is_package_frame(entry):
            run.append(entry)
            continue
        if run:
            out.append(folded(run))
            run = []
        out.append(scrub_paths(entry))
    if run:
        out.append(folded(run))
    return out


def scrub_outputs(nb, fold_frames: bool = True) -> None:
    """Every output of the notebook without machine paths; tracebacks shortened when fold_frames."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output.traceback = (short_traceback(output.traceback) if fold_frames
                                    else [scrub_paths(entry) for entry in output.traceback])
            elif output.get("output_type") == "stream":
                output.text = scrub_paths(output.text)
            for mime, data in output.get("data", {}).items():
                if mime.startswith("text/") and isinstance(data, str):
                    output.data[mime] = scrub_paths(data)


def headings(cell) -> list[tuple[int, str]]:
    """The (level, text) of each heading line of a markdown cell, outside code fences."""
    found, fence = [], False
    for line in cell.source.splitlines() if cell.cell_type == "markdown" else []:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        match = None if fence else HEADING.match(line)
        if match and "SOLUTION" not in match.group(2):
            found.append((len(match.group(1)), match.group(2)))
    return found


def explanations_after_code(nb) -> int:
    """In every "Predict" section, the written explanation (a solution region of a markdown cell that
    comes before the question's code, so that the learner writes a guess first) moves below that code,
    where the reader who has run it looks for it. Returns how many moved."""
    cells, moved, predict = list(nb.cells), [], False
    index = 0
    while index < len(cells):
        cell = cells[index]
        found = headings(cell)
        if found:
            predict = found[-1][1].startswith("Predict")
        elif (predict and cell.cell_type == "markdown" and "BEGIN SOLUTION" in cell.source
              and not any(cell is done for done in moved)):
            answer = index + 1  # the first code cell with outputs after it, in the same section
            while answer < len(cells) and not headings(cells[answer]) and not (
                    cells[answer].cell_type == "code" and cells[answer].get("outputs")):
                answer += 1
            if answer < len(cells) and cells[answer].cell_type == "code":
                while answer + 1 < len(cells) and cells[answer + 1].cell_type == "code":
                    answer += 1  # the end of that run of code cells
                cells.insert(answer, cells.pop(index))
                moved.append(cell)
                continue  # the cell now at `index` is the next one
        index += 1
    nb.cells = cells
    return len(moved)


def fold_predict_answers(nb) -> int:
    """In every "Predict" section, the outputs that answer the question fold behind "Show the answer".

    A Predict section runs from its heading to the next heading. Its answer is the first run of code
    cells with outputs after the question, up to the prose that discusses them; the written solution
    (explanations_after_code puts it after the answer) is a toggle of its own, labelled "Show the
    explanation". Returns how many cells were folded.
    """
    count, state = 0, None  # state: None outside, "question", then "answer" once an output was folded
    for cell in nb.cells:
        found = headings(cell)
        if found:
            state = "question" if found[-1][1].startswith("Predict") else None
            continue
        if state is None:
            continue
        if cell.cell_type == "markdown":
            if "BEGIN SOLUTION" in cell.source:
                cell.metadata[LABEL] = "Show the explanation"
            elif state == "answer":
                state = None
            continue
        if cell.cell_type == "code" and cell.get("outputs"):
            tags = list(cell.metadata.get("tags", []))
            if "hide-output" not in tags:
                cell.metadata["tags"] = [*tags, "hide-output"]
            cell.metadata.setdefault("mystnb", {}).update(ANSWER_PROMPTS)
            state, count = "answer", count + 1
    return count


def plain(title: str) -> str:
    """A heading's text without its number ("3. Non-tensor ..." -> "Non-tensor ...")."""
    return re.sub(r"^\d+\.\s+", "", title).strip()


ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]


def name_what_goes_wrong(nb) -> None:
    """Each bare "What goes wrong here?" heading gets the title of the section it belongs to (and "second
    mistake" and so on when one section has several), so that anchors and the table of contents tell
    them apart. A heading that already names its mistake ("What goes wrong here? Reading `z.grad`") is
    left as the author wrote it."""
    parents: dict[int, str] = {}
    seen: Counter = Counter()
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for index, line in enumerate(lines):
            match = HEADING.match(line)
            if not match or "SOLUTION" in match.group(2):
                continue
            level, title = len(match.group(1)), match.group(2)
            if title != WHAT_GOES_WRONG:
                parents = {lvl: text for lvl, text in parents.items() if lvl < level}
                parents[level] = title
                continue
            above = [parents[lvl] for lvl in sorted(parents) if 1 < lvl < level]
            context = plain(above[-1]) if above else ""
            seen[context] += 1
            count = seen[context]
            if count > 1:
                nth = ORDINALS[count - 1] if count <= len(ORDINALS) else "another"
                context = f"{context}, {nth} mistake" if context else f"the {nth} mistake"
            if context:
                lines[index] = f"{match.group(1)} {WHAT_GOES_WRONG} ({context})"
        cell.source = "\n".join(lines)


LESSON_TITLE = re.compile(r"^Lesson \d+:\s+")


def number_free_headings(nb) -> None:
    """Headings without the numbers some lessons write ("## 3. Non-tensor ...", "# Lesson 2: Writing
    ..."): the site numbers every lesson and its sections the same way (index.md's numbered toctree:
    "2.3. Non-tensor ...")."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines, fence = cell.source.split("\n"), None
        for index, line in enumerate(lines):
            opens = re.match(r"(`{3,}|~{3,})", line.lstrip())
            if fence is not None:
                fence = None if line.lstrip().startswith(fence) else fence
                continue
            if opens:
                fence = opens.group(1)
                continue
            match = HEADING.match(line)
            if match and "SOLUTION" not in match.group(2):
                title = plain(match.group(2))
                if len(match.group(1)) == 1:
                    title = LESSON_TITLE.sub("", title)
                lines[index] = f"{match.group(1)} {title}"
        cell.source = "\n".join(lines)


# The tutorials and notes the lessons cite by title, and the course they started from: the address each
# title links to. Titles are matched between double quotes, across a line break.
CITED = {
    "Automatic Differentiation with `torch.autograd`":
        "https://docs.pytorch.org/tutorials/beginner/basics/autogradqs_tutorial.html",
    "Learn the Basics": "https://docs.pytorch.org/tutorials/beginner/basics/intro.html",
    "Autograd Mechanics": "https://docs.pytorch.org/docs/stable/notes/autograd.html",
    "Creating Extensions Using NumPy and SciPy":
        "https://docs.pytorch.org/tutorials/advanced/numpy_extensions_tutorial.html",
    "Extending torch.autograd": "https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",
    "Gradcheck mechanics": "https://docs.pytorch.org/docs/stable/notes/gradcheck.html",
    "Double Backward with Custom Functions":
        "https://docs.pytorch.org/tutorials/intermediate/custom_function_double_backward_tutorial.html",
    "Fusing Convolution and Batch Norm using Custom Function":
        "https://docs.pytorch.org/tutorials/intermediate/custom_function_conv_bn_tutorial.html",
    "Extending torch.func with autograd.Function": "https://docs.pytorch.org/docs/stable/notes/extending.func.html",
    "Forward-mode Automatic Differentiation (Beta)":
        "https://docs.pytorch.org/tutorials/intermediate/forward_ad_usage.html",
    "Custom Python Operators": "https://docs.pytorch.org/tutorials/advanced/python_custom_ops.html",
    "PyTorch Custom Operators": "https://docs.pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
    "Automatic Mixed Precision": "https://docs.pytorch.org/docs/stable/notes/amp_examples.html",
}
# Text a link must not be made inside: code, math, links and HTML already there.
PROTECTED = re.compile(r"(`+)[\s\S]*?\1|\$\$[\s\S]*?\$\$|\$[^$\n]+\$|\[[^\]]*\]\([^)]*\)|<[^>\n]+>")
LESSON_REF = re.compile(r"\b([Ll]esson) (\d+)\b")
# the lessons number their sections "## 4. ..." and say "section 4", "Lesson 2, §5"; the site numbers
# them "2.4." (number_free_headings): the references follow it
SECTION_REF = re.compile(r"\b([Ss]ection) (\d+)\b(?!\.\d)")
LESSON_SECTION_REF = re.compile(r"\b([Ll]esson) (\d+), §(\d+)\b(?!\.\d)")
BARE_ADDRESS = re.compile(r"(?<![\w/.])((?:fleuret\.org|pytorch\.org|nenadmarkus\.com)(?:/[\w./#-]*[\w/])?)")


def cited_title(title: str) -> re.Pattern:
    words = [re.escape(word) for word in title.split()]
    return re.compile(r'"(' + r"\s+".join(words) + r')"')


def link_free_text(text: str, lessons: dict[int, str], current: str) -> str:
    """Lesson references and bare addresses of prose (never code, math or a link) become links, and
    section numbers take their lesson's, as the site's headings do ("section 4" of lesson 2: "section
    2.4"; "Lesson 7, §8": "Lesson 7, §7.8")."""
    def lesson(match):
        target = lessons.get(int(match.group(2)))
        if target is None or target == current:
            return match.group(0)
        return f"{{doc}}`{match.group(1)} {match.group(2)} <{target}>`"

    here = int(current[:2]) if current[:2].isdigit() else None

    def prose(free: str) -> str:
        free = BARE_ADDRESS.sub(lambda m: f"[{m.group(1)}](https://{m.group(1)})", free)
        free = LESSON_SECTION_REF.sub(lambda m: f"{m[1]} {m[2]}, §{m[2]}.{m[3]}", free)
        if here is not None:
            free = SECTION_REF.sub(lambda m: f"{m.group(1)} {here}.{m.group(2)}", free)
        return LESSON_REF.sub(lesson, free)

    out, position = [], 0
    for protected in PROTECTED.finditer(text):
        out += [prose(text[position:protected.start()]), protected.group(0)]
        position = protected.end()
    return "".join(out) + prose(text[position:])


def link_references(nb, lessons: dict[int, str], current: str) -> None:
    """"Lesson N" links to lesson N, a cited tutorial's or note's title to its page, a bare address
    (fleuret.org/ee559) to itself. Headings and code blocks are left as they are."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        source = cell.source
        for title, url in CITED.items():
            source = cited_title(title).sub(lambda m, url=url: f'"[{m.group(1)}]({url})"', source)
        cell.source = "\n".join(
            text if keep else link_free_text(text, lessons, current) for keep, text in prose_runs(source))


def prose_runs(source: str) -> list[tuple[bool, str]]:
    """The source in runs of lines: (True, text) for headings and fenced code, kept as they are;
    (False, text) for prose."""
    runs: list[tuple[bool, list[str]]] = []
    fence = None
    for line in source.split("\n"):
        stripped = line.lstrip()
        opens = re.match(r"(`{3,}|~{3,})", stripped)
        keep = fence is not None or bool(opens) or bool(HEADING.match(line))
        if fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None and opens:
            fence = opens.group(1)
        if runs and runs[-1][0] == keep:
            runs[-1][1].append(line)
        else:
            runs.append((keep, [line]))
    return [(keep, "\n".join(lines)) for keep, lines in runs]
