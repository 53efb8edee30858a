"""report.html for a class of 300 (tools/bench/class_report.py's): a table of students that sorts by a
click or the keyboard, offline, lists that wrap within 1280 px, and the ten near-copies listed as a hint."""

from __future__ import annotations

import re

import pytest

from autograder.report import classreport
from autograder.report.classreport import Column, class_report
from tools.bench.class_report import COPIES, synthetic_class

N = 300


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    assignment, rows, codes, starter = synthetic_class(N)
    page = class_report(assignment, rows, codes, starter, "course/02-custom-functions.ipynb")
    path = tmp_path_factory.mktemp("graded") / "report.html"
    path.write_text(page, encoding="utf-8")
    return path, rows


def table_rows(page: str) -> list[str]:
    body = page.split('<table id="students-table"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>.*?</tr>", body.split("<tbody>", 1)[1])


def test_the_table_has_a_row_per_student_with_a_link_to_their_page_and_a_column_per_problem(report):
    page = report[0].read_text()
    assert len(table_rows(page)) == N + COPIES
    header = page.split('<table id="students-table"', 1)[1].split("</thead>", 1)[0]
    assert re.findall(r"<button[^>]*>([^<]+)</button>", header) == [
        "student", "score", "KillHead", "MyReLU", "Exp", "LinearFunction"]  # no name, no status: none has one
    assert '<a href="s001/feedback.html">s001</a>' in table_rows(page)[0]


def test_a_column_shows_only_where_a_result_has_its_value(monkeypatch):
    """Late work or adjustments: one Column each, shown only in a class where some result holds one."""
    from autograder.course import find_assignment

    late = Column("late penalty", lambda row: row["extra"].get("late"))
    monkeypatch.setattr(classreport, "COLUMNS", (*classreport.COLUMNS, late))
    assignment = find_assignment("custom-functions")
    plain = {"score": 1, "tests": [], "extra_data": {}}
    penalised = {"score": 1, "tests": [], "extra_data": {"late": -2}}
    assert "late penalty" not in class_report(assignment, [("a", plain)])
    shown = class_report(assignment, [("a", plain), ("b", penalised)])
    assert ">late penalty</button>" in shown and '<td class="n" data-v="-2">-2</td>' in shown


def test_the_copies_are_listed_as_a_hint_naming_what_they_share(report):
    page = report[0].read_text()
    section = page.split('id="similar"', 1)[1].split("<h2", 1)[0]
    assert "A hint of where to look, not a verdict." in section
    copies = [f"copy{i + 1:02d}" for i in range(COPIES)]
    first = section.split("<tr>")[2]  # the largest group first
    assert re.findall(r">(copy\d+)</a>", first) == copies
    assert "45 pairs, 100% to 100% alike" in first
    assert ("identical: class Exp, class KillHead, class LinearFunction, class MyReLU, def zero_columns"
            in first)


def test_without_the_code_the_page_says_it_compared_nothing():
    from autograder.course import find_assignment

    page = class_report(find_assignment("custom-functions"), [("a", {"score": 0, "tests": []})])
    assert "Not compared: the report was written without the submissions' code." in page


def test_a_comparison_that_fails_costs_its_section_only(monkeypatch):
    from autograder.course import find_assignment
    from autograder.report import similar

    def broken(codes, starter):
        raise RecursionError

    monkeypatch.setattr(similar, "near_identical", broken)
    page = class_report(find_assignment("custom-functions"), [("a", {"score": 0, "tests": []})], {"a": ["x"]})
    assert "Not compared: the comparison failed (RecursionError)" in page and 'id="students-table"' in page


@pytest.mark.browser
def test_the_table_sorts_by_a_click_and_by_the_keyboard_offline_within_1280_px(browser, report):
    path, rows = report
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests = []
    context.on("request", lambda r: requests.append(r.url))
    tab = context.new_page()
    errors = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(path.as_uri(), wait_until="load")

    def column(index: int) -> list[str]:
        return tab.eval_on_selector_all("#students-table tbody tr",
                                        f"rows => rows.map(r => r.cells[{index}].textContent)")

    scores = sorted((r["score"], sid) for sid, r in rows)
    assert column(0) == [sid for sid, _ in rows]  # the batch's order until a header is clicked
    tab.click("#students-table th:nth-child(2) button")
    assert [float(s) for s in column(1)] == [s for s, _ in scores]  # numbers as numbers, not as text
    assert tab.get_attribute("#students-table th:nth-child(2)", "aria-sort") == "ascending"
    tab.click("#students-table th:nth-child(2) button")
    assert [float(s) for s in column(1)] == sorted((s for s, _ in scores), reverse=True)
    tab.focus("#students-table th:nth-child(1) button")
    tab.keyboard.press("Enter")
    assert column(0) == sorted((sid for sid, _ in rows), key=lambda s: (s.rstrip("0123456789"),
                                                                        int(re.sub(r"\D", "", s))))
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1280, "the page pans sideways"
    assert requests == [path.as_uri()] and errors == []
    context.close()
