"""predict(): a lesson's Predict question, answered in code before the answer is shown.

    from autograder import predict
    leaves = {"w", "b"}              # your prediction: which tensors have is_leaf True?
    predict("1.leaves", leaves)

runs the question's experiment (autograder/course/predictions/), compares what it gives with the
prediction and only then shows the answer and why: HTML in Jupyter, plain text elsewhere. The answers and
explanations live in the package, not in the notebook. A prediction of the wrong kind (a list where a
number is asked, the `...` still in place) gets one paragraph that says what to write, and no answer.
"""

from __future__ import annotations

import ast
import html
import math
import os
import re
import textwrap
import warnings
from dataclasses import dataclass, field

# How each form is written, for the paragraph that answers a malformed prediction.
EXAMPLES = {
    "bool": "True or False",
    "int": "a whole number, e.g. 3",
    "number": "a number, e.g. 0.5",
    "numbers": "a tuple of numbers, e.g. (4.0, 2.0)",
    "names": "a set of names in quotes, e.g. {\"w\", \"b\"}, or set() for none",
    "name": "a name in quotes, e.g. \"MulBackward0\"",
    "shape": "a tuple of sizes, e.g. (5, 3)",
    "raises": "the error's type, e.g. RuntimeError, or None if the code runs without an error",
    "choice": "one of the options in quotes",
    "values": "a tuple of values in the order the question gives, e.g. (True, None, 3)",
}


# Colours by class, as check()'s report (autograder/report/templates/) has them, so that a page showing
# the output in another theme (the site's dark mode) can restyle them; an inline colour it could not.
STYLE = ("<style>.ag-predict{font:13px/1.4 system-ui,sans-serif}"
         ".ag-predict .pass{color:#176f2c;font-weight:600}.ag-predict .fail{color:#b3261e;font-weight:600}"
         ".ag-predict .problem{color:#8a5300;font-weight:600}</style>")


class Malformed(ValueError):
    """A prediction predict() cannot compare: its message is the paragraph the learner reads."""


@dataclass
class Outcome:
    """What predict() returns: rich HTML in Jupyter, plain text elsewhere."""

    question_id: str
    problem: str = ""  # set when nothing was compared: the one paragraph to show
    right: bool = False
    predicted: str = ""
    actual: str = ""
    why: str = ""
    code: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        if self.problem:
            return f"predict({self.question_id!r}): no prediction compared"
        verdict = "right" if self.right else "not what the code does"
        return f"predict({self.question_id!r}): {verdict}"

    def _paragraphs(self) -> list[str]:
        if self.problem:
            return [self.problem]
        return [f"You predicted {self.predicted}. The code gives {self.actual}.", *self.notes,
                *[p for p in self.why.split("\n\n") if p.strip()]]

    def __repr__(self) -> str:
        body = ["\n".join(textwrap.fill(_plain(item), 100, subsequent_indent="  " * item.startswith("- "))
                           for item in _items(p)) for p in self._paragraphs()]
        code = [] if self.problem else ["The code that ran:", textwrap.indent(self.code, "    ")]
        return "\n\n".join([self.title, *body, *code])

    def _repr_html_(self) -> str:
        verdict = "pass" if self.right else ("problem" if self.problem else "fail")
        first, *rest = self._paragraphs()
        first = _html(first)
        parts = ['<div class="ag-report ag-predict">', STYLE,
                 f"<h3>{html.escape(self.title)}</h3>",
                 f'<p class="{verdict}">{first}</p>',
                 *[_block(p) for p in rest]]
        if not self.problem:
            parts.append("<details><summary>The code that ran</summary><pre>"
                         f"{html.escape(self.code)}</pre></details>")
        return "\n".join(parts + ["</div>"])


def _items(paragraph: str) -> list[str]:
    """A paragraph, or the items of a list written `- item` line by line."""
    if not paragraph.lstrip().startswith("- "):
        return [paragraph]
    return ["- " + item.strip() for item in re.split(r"(?:^|\n)\s*- ", paragraph.strip()) if item.strip()]


def _block(paragraph: str) -> str:
    items = _items(paragraph)
    if items == [paragraph]:
        return f"<p>{_html(paragraph)}</p>"
    return "<ul>" + "".join(f"<li>{_html(item[2:])}</li>" for item in items) + "</ul>"


def _plain(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def _html(text: str) -> str:
    """The small markdown of the explanations: `code` and **bold**."""
    escaped = html.escape(" ".join(text.split()), quote=False)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    escaped = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", escaped)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", escaped)


def predict(question_id: str, prediction) -> Outcome | None:
    """Compares `prediction` with what the experiment of question `question_id` does, then explains."""
    if os.environ.get("AUTOGRADER_BATCH"):
        return None  # inside a grading worker, as check(): no experiment run, nothing shown
    from autograder.course.predictions import all_questions, find

    question = find(question_id)
    if question is None:
        known = ", ".join(repr(q) for q in sorted(all_questions()))
        return Outcome(str(question_id), problem=(
            f"There is no Predict question {question_id!r}: copy the id from the lesson's cell. "
            f"The questions are {known}."))
    try:
        mine = normalise(question, prediction)
    except Malformed as error:
        return Outcome(question_id, problem=str(error))
    actual, shown = run(question)
    outcome = Outcome(question_id, right=same(question, mine, actual), predicted=show(question, mine),
                      actual=shown, why=question.why, code=question.code)
    if not same(question, normalise(question, question.answer), actual):
        import torch

        outcome.notes.append(f"(Note: the explanation below was written for a PyTorch that gives "
                             f"{show(question, normalise(question, question.answer))}; yours, "
                             f"{torch.__version__}, behaves differently.)")
    return outcome


def normalise(question, value):
    """The prediction in the form compared, or Malformed with the paragraph that says what to write."""
    form = question.form
    if value is Ellipsis:
        raise Malformed(f"Write your prediction in place of the `...` ({EXAMPLES[form]}), then run the "
                        "cell again: the answer and its explanation are shown once you have committed "
                        "to one.")
    kind = type(value).__name__

    def wrong(extra: str = "") -> Malformed:
        return Malformed(f"Question {question.id!r} asks for {EXAMPLES[form]}; you gave the {kind} "
                         f"{value!r}.{extra} Write it in that form and run the cell again (the answer stays "
                         f"hidden until then).")

    def number(x) -> float:
        if hasattr(x, "item") and getattr(x, "numel", lambda: 0)() == 1:
            x = x.item()
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise wrong()
        return float(x)

    if form == "bool":
        if not isinstance(value, bool):
            raise wrong()
        return value
    if form == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong()
        return value
    if form == "number":
        return number(value)
    if form == "numbers":
        expected = len(question.answer)
        if not isinstance(value, (tuple, list)) or len(value) != expected:
            raise wrong(f" It needs {expected} numbers, in the order the question gives.")
        return tuple(number(x) for x in value)
    if form == "names":
        if isinstance(value, dict) and not value:
            raise wrong(" In Python {} is an empty dict: write set() for no names.")
        if isinstance(value, str) or not isinstance(value, (set, frozenset, list, tuple)) \
                or not all(isinstance(x, str) for x in value):
            raise wrong()
        unknown = sorted(set(value) - set(question.choices)) if question.choices else []
        if unknown:
            raise wrong(f" The names to choose from are {', '.join(map(repr, question.choices))}; "
                        f"{', '.join(map(repr, unknown))} is not one of them.")
        return frozenset(value)
    if form == "name":
        if not isinstance(value, str):
            raise wrong()
        return value.strip()
    if form == "shape":
        if isinstance(value, int) and not isinstance(value, bool):
            raise wrong(" A shape is a tuple even with one size: (3,).")
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in value):
            raise wrong()
        return tuple(value)
    if form == "raises":
        if value is None or (isinstance(value, type) and issubclass(value, BaseException)):
            return value
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z_]\w*", value):
            return value
        raise wrong()
    if form == "values":
        expected = len(question.answer)
        if not isinstance(value, (tuple, list)) or len(value) != expected:
            raise wrong(f" It needs {expected} values, in the order the question gives.")
        value = _tuples(value)
        words = {x for x in _flat(value) if isinstance(x, str)}
        unknown = sorted(words - set(question.choices)) if question.choices else []
        if unknown:
            raise wrong(f" The words to use are {', '.join(map(repr, question.choices))}; "
                        f"{', '.join(map(repr, unknown))} is not one of them.")
        return value
    if form == "choice":
        options = {c.lower(): c for c in question.choices}
        if not isinstance(value, str) or value.strip().lower() not in options:
            raise wrong(f" The options are {', '.join(map(repr, question.choices))}.")
        return options[value.strip().lower()]
    raise AssertionError(form)


def _tuples(value):
    """Lists made tuples, at every depth; a tensor of one number made that number."""
    if isinstance(value, (list, tuple)):
        return tuple(_tuples(x) for x in value)
    if hasattr(value, "item") and getattr(value, "numel", lambda: 0)() == 1:
        return value.item()
    return value


def _flat(value):
    for x in value if isinstance(value, tuple) else (value,):
        yield from _flat(x) if isinstance(x, tuple) else (x,)


def _same_values(a, b, rel_tol: float) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) \
            and all(_same_values(x, y, rel_tol) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-9)
    return type(a) is type(b) and a == b


def run(question):
    """(the answer the experiment gives, as compared; how the page shows it)."""
    import torch

    tree = ast.parse(question.code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    namespace = {"torch": torch, "__name__": "__predict__"}
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        try:
            # the course's own experiment (autograder/course/predictions/), never the learner's code
            exec(compile(tree, f"<predict {question.id}>", "exec"), namespace)  # noqa: S102
            value = eval(compile(ast.Expression(last.value), f"<predict {question.id}>", "eval"),
                         namespace) if last is not None else None
        except Exception as error:
            if question.form != "raises":
                raise
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            return type(error), f"`{type(error).__name__}: {first}`"
    if question.form == "raises":
        return None, "no error"
    actual = normalise(question, value)
    return actual, show(question, actual)


def same(question, predicted, actual) -> bool:
    form = question.form
    if form == "number":
        return math.isclose(predicted, actual, rel_tol=question.rel_tol, abs_tol=1e-9)
    if form == "numbers":
        return all(math.isclose(p, a, rel_tol=question.rel_tol, abs_tol=1e-9)
                   for p, a in zip(predicted, actual))
    if form == "values":
        return _same_values(predicted, actual, question.rel_tol)
    if form == "raises":
        if predicted is None or actual is None:
            return predicted is actual
        names = [cls.__name__ for cls in actual.__mro__] if isinstance(actual, type) else [actual]
        wanted = predicted.__name__ if isinstance(predicted, type) else predicted
        return wanted in names
    return predicted == actual


def show(question, value) -> str:
    if question.form == "names":
        return "{" + ", ".join(repr(x) for x in sorted(value)) + "}" if value else "set() (no names)"
    if question.form == "raises":
        if value is None:
            return "no error"
        return f"`{value.__name__ if isinstance(value, type) else value}`"
    if question.form == "numbers":
        return "(" + ", ".join(f"{x:g}" for x in value) + ")"
    if question.form == "number":
        return f"{value:g}"
    if question.form == "values":
        return f"`{value!r}`"
    return f"`{value!r}`" if question.form in ("name", "shape", "choice") else repr(value)
