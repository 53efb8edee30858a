"""predict(): does every Predict question's stored answer (the one its explanation was written for) equal
what its code does on this PyTorch, does a right and a wrong prediction each get the page they should,
and does a malformed one get one paragraph and no answer?"""

import re

import pytest

from autograder import predict
from autograder.course.predictions import all_questions
from autograder.prediction import normalise, run, same, show

QUESTIONS = all_questions()


def test_there_are_questions():
    assert len(QUESTIONS) >= 5


@pytest.mark.parametrize("question_id", sorted(QUESTIONS))
def test_the_answer_is_what_the_code_does(question_id):
    question = QUESTIONS[question_id]
    actual, _ = run(question)
    stored = normalise(question, question.answer)
    assert same(question, stored, actual), (
        f"{question_id}: the code gives {show(question, actual)}, the explanation says "
        f"{show(question, stored)}")


def a_wrong_prediction(question):
    """A prediction of the right form that differs from the answer."""
    answer = question.answer
    return {
        "bool": lambda: not answer,
        "int": lambda: answer + 1,
        "number": lambda: answer * 2 + 1,
        "numbers": lambda: tuple(x + 1 for x in answer),
        "names": lambda: set(answer) ^ {question.choices[0]} if question.choices else {"nothing"},
        "name": lambda: answer + "X",
        "shape": lambda: (*answer, 1),
        "raises": lambda: KeyboardInterrupt if answer is not None else RuntimeError,
        "choice": lambda: next(c for c in question.choices if c != answer),
        "values": lambda: (changed(answer[0], question.choices), *answer[1:]),
    }[question.form]()


def changed(value, words):
    """Another value of the same kind."""
    if isinstance(value, (tuple, list)):
        return (changed(value[0], words), *value[1:])
    if isinstance(value, bool) or value is None:
        return not value
    if isinstance(value, str):
        return next(w for w in words if w != value)
    return value + 1


@pytest.mark.parametrize("question_id", sorted(QUESTIONS))
def test_right_and_wrong_predictions_get_their_page(question_id):
    question = QUESTIONS[question_id]
    first_paragraph = question.why.split("\n\n")[0].split()[:6]
    for prediction, verdict in [(question.answer, "right"), (a_wrong_prediction(question), "not what")]:
        outcome = predict(question_id, prediction)
        text, page = repr(outcome), outcome._repr_html_()
        assert text.splitlines()[0] == f"predict({question_id!r}): {verdict}" + (
            "" if verdict == "right" else " the code does"), text
        assert " ".join(first_paragraph).replace("**", "") in " ".join(text.split())  # the why
        assert "The code gives" in text and "<details>" in page and "<h3>" in page
        assert outcome.right is (verdict == "right")


def test_a_wrong_prediction_names_both_answers():
    outcome = predict("1.leaves", {"w", "b"})
    assert "You predicted {'b', 'w'}. The code gives {'b', 'w', 'x', 'y'}." in repr(outcome)


@pytest.mark.parametrize("question_id, prediction, says", [
    ("1.leaves", ..., "in place of the `...`"),
    ("1.leaves", "w", "asks for a set of names"),
    ("1.leaves", {}, "write set() for no names"),
    ("1.leaves", {"w", "weights"}, "'weights' is not one of them"),
    ("1.detach-shares", 1, "asks for True or False"),
    ("1.ones-v", (4, 2), "It needs 4 numbers"),
    ("1.second-backward", "double", "The options are 'same', 'twice', 'zero'"),
    ("9.nothing", True, "There is no Predict question '9.nothing'"),
])
def test_a_malformed_prediction_gets_one_paragraph_and_no_answer(question_id, prediction, says):
    outcome = predict(question_id, prediction)
    text, page = repr(outcome), outcome._repr_html_()
    title, *body = text.split("\n\n")
    assert title.endswith("no prediction compared") and len(body) == 1, text
    assert says in " ".join(body[0].split())
    assert page.count("<p") == 1 and "<details>" not in page
    if question_id in QUESTIONS:
        why = QUESTIONS[question_id].why
        assert re.sub(r"\s+", " ", why)[:40] not in " ".join(text.split())


def test_predict_does_not_move_the_notebook_random_stream():
    import torch

    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    predict("1.leaves", {"w"})
    assert torch.equal(torch.rand(3), expected)
