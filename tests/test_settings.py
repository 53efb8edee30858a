"""The limits an instructor may change (autograder/settings.py): declared once, read from the command line
and grading.toml's [limits], and the docs' numbers are the declaration's."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import config, settings
from autograder.cli import build_parser
from autograder.term.rules import read_rules

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "instructors.md").read_text()


def test_the_docs_table_is_the_declarations():
    assert settings.markdown_table() in DOCS


def test_the_docs_sizes_and_times_are_the_defaults():
    tmp = f"{config.TMP_BYTES // 1024**2} MiB tmpfs"
    assert re.findall(r"\d+ MiB tmpfs", DOCS) and set(re.findall(r"\d+ MiB tmpfs", DOCS)) == {tmp}
    load, floor = settings.BY_KEY["load_timeout"].default, config.PROBLEM_FLOOR_SECONDS
    most = config.PROBLEM_SECONDS
    shown = f"| `--load-timeout`, `--problem-timeout` | {load:g} s, scaled ({floor:g} to {most:g} s) |"
    assert shown in DOCS  # Gradescope's
    scale = (f"each gets {config.REFERENCE_SCALE} times the CPU time the grader\nspent computing its "
             f"reference's outputs and Jacobians (once a run), at least {floor:g} s and at most {most:g} s")
    assert scale in DOCS


def test_the_containers_mount_no_size_of_their_own():
    source = (ROOT / "autograder" / "sandbox" / "container.py").read_text()
    assert not re.findall(r"size=\d", source) and not re.findall(r"nr_inodes=\d", source)


def test_every_setting_is_an_option_of_grade_with_its_default_in_the_help():
    grade = build_parser()._subparsers._group_actions[0].choices["grade"]
    options = {a.option_strings[0]: a for a in grade._actions if a.option_strings}
    for s in settings.SETTINGS:
        assert s.option in options and "grading.toml's [limits] " + s.key in options[s.option].help
        if s.default is not None:
            assert f"; default: {s.describe(s.default)}{s.unit};" in options[s.option].help


def args(**given) -> argparse.Namespace:
    return argparse.Namespace(**{s.key: given.get(s.key) for s in settings.SETTINGS})


def test_the_command_line_wins_then_grading_toml_then_the_default(tmp_path):
    (tmp_path / "grading.toml").write_text(
        '[limits]\nproblem_timeout = 30\nmemory = "4G"\ntmp_size = "256M"\n'
        '[late]\ndue = 2026-11-01T12:00:00Z\nper = "day"\npenalty = 1\n')
    assert read_rules(tmp_path) is not None  # the rules' reader leaves [limits] to settings.py
    values = settings.resolve(args(memory="1G"), tmp_path)
    assert values == {"load_timeout": config.LOAD_SECONDS, "problem_timeout": 30.0, "memory": 1024**3,
                      "tmp_size": 256 * 1024**2, "jobs": None}
    limits = settings.limits_of(values)
    assert (limits.memory_bytes, limits.tmp_bytes, limits.problem_seconds) == (1024**3, 256 * 1024**2, 30.0)
    assert not limits.scale_to_reference, "a problem time given in grading.toml is every problem's"


@pytest.mark.parametrize(("given", "seconds", "scaled"), [({}, config.PROBLEM_SECONDS, True),
                                                           ({"problem_timeout": "2.5"}, 2.5, False)])
def test_a_problem_time_given_is_every_problems_and_none_scales_each(given, seconds, scaled):
    limits = settings.limits_of(settings.resolve(args(**given)))
    assert (limits.problem_seconds, limits.scale_to_reference) == (seconds, scaled)


@pytest.mark.parametrize(("toml", "said"), [
    ("[limits]\nmemory = \"1K\"\n",
     "[limits] memory must be a size from 256M to 256G (a number with K, M or G), not 1K."),
    ("[limits]\ntimeout = 3\n", "[limits] has timeout, which is no setting: it takes load_timeout,"),
    ("[limits]\nproblem_timeout = \"soon\"\n",
     "[limits] problem_timeout must be a number of seconds greater than 0, not 'soon'."),
])
def test_a_wrong_value_in_grading_toml_names_the_file_and_the_key(tmp_path, toml, said):
    (tmp_path / "grading.toml").write_text(toml)
    with pytest.raises(settings.SettingError, match=re.escape(said)) as caught:
        settings.resolve(args(), tmp_path)
    assert str(tmp_path / "grading.toml") in str(caught.value)


def test_a_size_out_of_bounds_is_a_usage_error_in_one_paragraph(tmp_path):
    result = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
                             "--out", str(tmp_path / "out"), "--tmp-size", "10G0",
                             str(ROOT / "examples" / "custom-functions")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--tmp-size must be a size from 1M to 64G (a number with K, M or G), not '10G0'. Nothing was " \
           "graded." in result.stderr.replace("\n  ", " ")


def test_the_docs_example_of_limits_is_read_as_it_says(tmp_path):
    example = re.search(r"```\n(\[limits\].*?)```", DOCS, re.DOTALL)[1]
    (tmp_path / "grading.toml").write_text(example)
    values = settings.resolve(args(), tmp_path)
    assert (values["problem_timeout"], values["memory"], values["tmp_size"]) == (
        30, 4 * 1024**3, 256 * 1024**2)


def test_limits_from_grading_toml_are_said_on_the_terminal(tmp_path, capsys):
    from autograder.cli import check_settings

    (tmp_path / "grading.toml").write_text('[limits]\nproblem_timeout = 5\nmemory = "2G"\n')
    values = check_settings(args(memory="1G"), tmp_path)
    assert values["memory"] == 1024**3 and values["problem_timeout"] == 5
    said = capsys.readouterr().err.replace("\n  ", " ")
    assert said == f"autograder: {tmp_path / 'grading.toml'} [limits]: problem_timeout = 5.\n"
