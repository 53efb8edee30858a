"""report.html for a class of 300 (tools/bench/class_report.py's): a table of students that sorts by a
click or the keyboard, offline, lists that wrap within 1280 px, and the ten near-copies listed as a hint."""

from __future__ import annotations

import json
import re

import pytest

from autograder.report.classreport import class_report
from tools.bench.class_report import COPIES, synthetic_class

N = 300


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    assignment, rows, codes, starter = synthetic_class(N)
    page = class_report(assignment, rows, codes=codes, starter=starter,
                        starter_name="course/02-custom-functions.ipynb")
    path = tmp_path_factory.mktemp("graded") / "report.html"
    path.write_text(page, encoding="utf-8")
    return path, rows


def table_rows(page: str) -> list[str]:
    body = page.split('<table id="students-table"', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr[ >].*?</tr>", body.split("<tbody>", 1)[1])


def test_the_table_has_a_row_per_student_with_a_link_to_their_page_and_a_column_per_problem(report):
    page = report[0].read_text()
    assert len(table_rows(page)) == N + COPIES
    header = page.split('<table id="students-table"', 1)[1].split("</thead>", 1)[0]
    assert re.findall(r"<button[^>]*>([^<]+)</button>", header) == [
        "student", "score", "KillHead", "MyReLU", "Exp", "LinearFunction"]  # no name, no status: none has one
    assert '<a href="s001/feedback.html">s001</a>' in table_rows(page)[0]


def test_late_and_adjusted_columns_show_only_in_a_class_where_a_grade_changed():
    """grading.toml's adjustments and late penalties (term/standing.py): a column each, and the grade after
    them, shown only when some student's grade changed."""
    from autograder.course import find_assignment
    from autograder.term.standing import Standing

    assignment = find_assignment("custom-functions")
    rows = [("a", {"score": 30, "tests": []}), ("b", {"score": 40, "tests": []})]
    same = {sid: Standing(graded=r["score"], max_score=50, problems={}, score=r["score"]) for sid, r in rows}
    assert "late penalty" not in class_report(assignment, rows, same)
    late = {**same,
            "b": Standing(graded=40, max_score=50, problems={}, late="1 day late", penalty=5, score=35)}
    shown = class_report(assignment, rows, late)
    header = shown.split('id="students-table"', 1)[1].split("</thead>", 1)[0]
    assert re.findall(r"<button[^>]*>([^<]+)</button>", header)[-2:] == ["late penalty", "grade"]
    assert '<td class="n" data-v="5">5</td>' in shown and '<td class="n" data-v="35">35</td>' in shown


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
    page = class_report(find_assignment("custom-functions"), [("a", {"score": 0, "tests": []})],
                        codes={"a": ["x"]})
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
    assert not tab.is_visible("#students-table")  # a class this size: the table is folded
    tab.click("#students-fold > summary")

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


# -- a class of 1,200 (large_class.py: results as the report reads them, not graded) ------------------------

BIG = 1200


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    from autograder.report.classreport import class_files
    from tests.report.large_class import large_class

    assignment, rows, kinds = large_class(BIG)
    files = class_files(assignment, rows)
    folder = tmp_path_factory.mktemp("big")
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder, rows, kinds


def sections(page: str) -> list[str]:
    return re.findall(r"<h2[^>]*>([^<]+)</h2>", page)


def test_at_1200_the_summary_histograms_and_causes_come_before_the_table_which_is_folded(big):
    page = (big[0] / "report.html").read_text()
    assert sections(page)[:3] == ["Scores", "Causes, by how many students hit them", "Students"]
    assert "1,200 submission(s); mean" in page
    assert '<details id="students-fold"><summary>' in page  # closed
    assert len(table_rows(page)) == BIG


def test_prerequisite_notes_are_never_causes_and_a_crash_counts_once_per_submission(big):
    from autograder.report.classreport import WHOLE, summarize

    _, rows, kinds = big
    data = summarize(["KillHead", "MyReLU", "Exp", "LinearFunction"], rows)
    notes = [t for _, r in rows for t in r["tests"] if t["output"].startswith("Not graded yet:")]
    assert notes, "the class has prerequisite notes"
    assert not [c for c in data["causes"] if c["cause"].startswith("Not graded yet")]
    crashed = [sid for sid, kind in kinds.items() if kind == "crash"]
    crashes = [c for c in data["causes"] if "SIGSEGV" in c["cause"]]
    assert len(crashes) == 1 and crashes[0]["students"] == crashed and crashes[0]["problem"] == WHOLE
    assert crashes[0]["problems"] == ["KillHead", "MyReLU", "Exp", "LinearFunction"]
    assert crashes[0]["cause"].startswith("Grading stopped: the worker was killed by SIGSEGV")
    wrong = [sid for sid, kind in kinds.items() if kind == "wrong"]
    assert data["causes"][0]["students"] == wrong and data["causes"][0]["problem"] == "KillHead"


def test_causes_csv_has_a_row_per_student_and_cause_in_the_pages_order(big):
    import csv

    folder, _, kinds = big
    read = list(csv.DictReader((folder / "causes.csv").open(encoding="utf-8")))
    page = (folder / "report.html").read_text()
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert [(r["student"], int(r["rank"])) for r in read] == [
        (sid, rank) for rank, c in enumerate(data["causes"], 1) for sid in c["students"]]
    crash = [r for r in read if "SIGSEGV" in r["cause"]]
    assert {r["student"] for r in crash} == {sid for sid, kind in kinds.items() if kind == "crash"}
    assert crash[0]["problem"] == "KillHead, MyReLU, Exp, LinearFunction"
    assert "causes.csv" in page


def test_the_share_of_common_code_is_said_as_a_whole_number():
    from autograder.course import find_assignment

    codes = {f"s{i}": ["x = 1"] for i in range(297)}  # more than 29.7 submissions: 30 or more
    page = class_report(find_assignment("custom-functions"),
                        [(sid, {"score": 0, "tests": []}) for sid in codes], codes=codes)
    assert "code that more than 29 submissions share" in page


@pytest.mark.browser
def test_at_1200_the_table_is_searched_filtered_and_unfolded_offline_within_1280_px(browser, big):
    folder, rows, kinds = big
    path = folder / "report.html"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requests, errors = [], []
    context.on("request", lambda r: requests.append(r.url))
    tab = context.new_page()
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(path.as_uri(), wait_until="load")

    def shown() -> list[str]:
        return tab.eval_on_selector_all("#students-table tbody tr:not([hidden])",
                                        "rows => rows.map(r => r.cells[0].textContent)")

    assert tab.is_visible("#f-search") and not tab.is_visible("#students-table")
    assert tab.evaluate("document.documentElement.scrollHeight") < 5000, "a folded page of 1,200 is short"
    tab.select_option("#f-status", "timed out")  # a filter opens the table
    assert tab.is_visible("#students-table")
    assert shown() == [sid for sid, kind in kinds.items() if kind == "hang"]
    tab.select_option("#f-status", "")
    tab.select_option("#f-problem", "MyReLU")
    lost = [sid for sid, r in rows if any(t["name"].startswith("MyReLU") and t["status"] == "failed"
                                          for t in r["tests"])]
    assert shown() == lost and tab.text_content("#f-count") == f"{len(lost)} of {BIG} students shown"
    tab.click("#f-clear")
    tab.click("#causes-table tr:nth-child(3) button.show")  # the second cause: the crash
    assert shown() == [sid for sid, kind in kinds.items() if kind == "crash"]
    tab.click("#f-clear")
    tab.fill("#f-search", "s0042")
    assert shown() == ["s0042"]
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1280, "the page pans sideways"
    assert requests == [path.as_uri()] and errors == []
    context.close()
