"""Does report.html's list of near-identical submissions list a copy that differs only in comments, layout
and names, and leave out two honest different answers, the starter notebook everyone shares and the
short answer most of a class finds on its own?"""

from __future__ import annotations

import re

from autograder.batch import starter_notebooks
from autograder.course import find_assignment
from autograder.intake.loader import read_cells
from autograder.report.similar import groups, near_identical, units_of
from tests.conftest import ROOT
from tools.bench.students import VARIANTS, variant_code

STARTER = read_cells(ROOT / "course" / "02-custom-functions.ipynb")


def answers(variant: dict[str, str] | str) -> list[str]:
    """A student's notebook: the lesson's starter cells, then an answer cell per problem."""
    chosen = {p: variant if isinstance(variant, str) else variant[p] for p in VARIANTS}
    return [*STARTER, *(variant_code(p, v) for p, v in chosen.items())]


def disguised(cells: list[str]) -> list[str]:
    """The same code with other comments, a docstring, other blank lines and other variable names."""
    names = {"result": "out_tensor", "grad_input": "g", "input": "inp", "output": "y"}
    out = []
    for cell in cells[len(STARTER):]:
        for old, new in names.items():
            cell = re.sub(rf"\b{old}\b", new, cell)
        docstring = '    """My own work."""\n\n    @staticmethod  # see lesson\n'
        cell = cell.replace("    @staticmethod\n", docstring, 1)
        out.append("# solution, copied from nobody\n" + cell.replace("\n\n", "\n\n\n"))
    return [*STARTER, *out]


def listed(pairs) -> set[frozenset[str]]:
    return {frozenset((p.a, p.b)) for p in pairs}


def honest_class() -> dict[str, list[str]]:
    other = {"KillHead": "right-mask", "MyReLU": "right-where", "Exp": "right-recompute",
             "LinearFunction": "right-matmul"}
    return {"ann": answers("right"), "ben": answers(other), "cat": list(STARTER), "dan": list(STARTER)}


def test_normalising_takes_out_comments_docstrings_layout_and_the_names_chosen():
    code = variant_code("MyReLU", "right")
    assert units_of(code) == units_of(disguised([*STARTER, code])[-1])
    assert units_of(code)[0].label == "class MyReLU"
    assert units_of(code) != units_of(variant_code("MyReLU", "right-where"))


def test_a_disguised_copy_is_listed_with_the_definitions_it_shares():
    codes = honest_class()
    codes["eve"] = disguised(codes["ann"])
    pairs = near_identical(codes, STARTER)
    assert listed(pairs) == {frozenset(("ann", "eve"))}
    (pair,) = pairs
    assert pair.similarity == 1.0 and pair.shared >= 30
    assert pair.identical == ["class Exp", "class KillHead", "class LinearFunction", "class MyReLU"]
    assert groups(pairs) == [["ann", "eve"]]


def test_honest_different_answers_and_the_untouched_starter_are_not_listed():
    assert near_identical(honest_class(), STARTER) == []


def test_without_the_starter_the_set_up_everyone_ran_makes_every_pair_alike():
    """The reason the starter is left out: the lesson's own cells alone would pass the threshold."""
    assert frozenset(("cat", "dan")) in listed(near_identical(honest_class(), []))


def test_two_students_who_hand_in_the_published_answers_did_not_copy_each_other():
    """The site publishes the solutions: the batch leaves out the lesson's solutions notebook too."""
    published = read_cells(ROOT / "solutions" / "02-custom-functions.ipynb")
    codes = {"ann": published, "ben": [cell + "\n# my answer\n" for cell in published]}
    assert listed(near_identical(codes, STARTER)) == {frozenset(("ann", "ben"))}
    assert near_identical(codes, STARTER + published) == []
    assert [p.name for p in starter_notebooks(find_assignment("custom-functions"))] == [
        "02-custom-functions.ipynb"] * 2


def test_the_answer_most_of_a_class_writes_is_everyones_but_a_rarer_copy_is_listed():
    codes = {f"s{i:02d}": answers("right") for i in range(20)}
    codes["ben"] = answers({"KillHead": "right-mask", "MyReLU": "right-where", "Exp": "right-recompute",
                            "LinearFunction": "right-matmul"})
    codes["bob"] = disguised(codes["ben"])
    assert listed(near_identical(codes, STARTER)) == {frozenset(("ben", "bob"))}


def test_a_cell_python_cannot_parse_is_compared_without_its_comments():
    broken = "def f(x:\n    return x  # mine\n"
    assert units_of(broken) == units_of("def f(x:   # other\n    return x\n")


def test_code_with_bytes_that_were_not_utf8_or_nested_past_the_parser_is_compared_without_failing():
    odd = "x = '\udc80'\n" + "y = " + "(" * 100_000 + "\n"
    assert near_identical({"a": [odd], "b": [odd]}) == []  # compared, and too short to be listed


def test_only_a_submissions_first_characters_are_compared(monkeypatch):
    """A submission of megabytes used to cost the report its whole length (12 s for 300,000 lines): is
    only its first MAX_CODE characters compared, the cell there cut?"""
    from autograder.report import similar

    given = []
    monkeypatch.setattr(similar, "units_of", lambda cell, cache=None: given.append(cell) or [])
    near_identical({"eve": ["x = 1\n" * similar.MAX_CODE, "y = 2\n"], "ann": STARTER})
    assert sum(map(len, given)) == similar.MAX_CODE + sum(map(len, STARTER))


def test_a_string_left_open_is_one_token_to_the_end_of_its_line(monkeypatch):
    """An unterminated string repeated ("s = 'a\\'a\\'...") was read from every quote to the end of the
    line, by _TOKEN and by Python's tokenizer: 10,000 repeats took 10 s, 50,000 over 5 minutes."""
    from autograder.report import similar

    assert similar._TOKEN.findall("s = '" + "a\\'" * 4 + "\nt = 1") == ["s", "=", "'" + "a\\'" * 4,
                                                                          "t", "=", "1"]
    seen, real = [], similar.tokenize.generate_tokens
    monkeypatch.setattr(similar.tokenize, "generate_tokens",
                        lambda readline: real(lambda: seen.append(line := readline()) or line))
    units_of("s = '" + "a\\'" * similar.MAX_LINE + "\nx = 1\n")
    assert all(len(line) <= similar.MAX_LINE for line in seen)
