"""The Predict questions of the lessons, for predict() (autograder/prediction.py): data, kept out of the
notebooks so that a learner reads the answer and its explanation only after committing to a guess.

A question's id is "<lesson>.<name>" ("1.leaves"); the questions of lesson N are in lessonN.py, each a
Question in its QUESTIONS list. `code` is the experiment, as the lesson runs it: predict() runs it when
the learner asks, and the value of its last line (an expression) is the answer; for the form "raises",
the answer is the type of the error it raises, or None. `answer` is what the code gave when `why` was
written: tests/test_predict.py runs every question and fails where a PyTorch release gives another.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

# What a prediction is, per form: predict() checks the learner's value against it and says so.
FORMS = ("bool", "int", "number", "numbers", "names", "name", "shape", "raises", "choice", "values")


@dataclass(frozen=True)
class Question:
    id: str
    form: str
    code: str
    answer: object
    why: str
    # "choice": the options; "names" and "values": the names or words a prediction may use
    choices: tuple[str, ...] = ()
    rel_tol: float = 1e-3  # "number" and "numbers": how close a prediction must be

    def __post_init__(self):
        if self.form not in FORMS:
            raise ValueError(f"question {self.id}: form {self.form!r} is not one of {', '.join(FORMS)}")


def _modules() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name.startswith("lesson"))


def all_questions() -> dict[str, Question]:
    """Every question of every lesson, by id."""
    found: dict[str, Question] = {}
    for name in _modules():
        for question in importlib.import_module(f"{__name__}.{name}").QUESTIONS:
            if question.id in found:
                raise ValueError(f"two questions have the id {question.id!r}")
            found[question.id] = question
    return found


def find(question_id: str) -> Question | None:
    """The question with this id, or None."""
    lesson = question_id.split(".", 1)[0] if isinstance(question_id, str) else ""
    if not lesson.isdigit() or f"lesson{int(lesson)}" not in _modules():
        return None
    module = importlib.import_module(f"{__name__}.lesson{int(lesson)}")
    return next((q for q in module.QUESTIONS if q.id == question_id), None)
