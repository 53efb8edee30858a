"""Is every default written once, in config.py, and read from there by the command line, the sandbox's
limits and Gradescope's settings?"""

import dataclasses

from autograder import config, settings
from autograder.cli import build_parser
from autograder.gradescope.settings import Settings
from autograder.sandbox import Limits


def test_limits_take_their_defaults_from_config():
    limits = Limits()
    assert (limits.load_seconds, limits.problem_seconds, limits.memory_bytes, limits.processes,
            limits.file_bytes, limits.open_files, limits.output_bytes) == \
        (config.LOAD_SECONDS, config.PROBLEM_SECONDS, config.MEMORY_BYTES, config.PROCESSES,
         config.FILE_BYTES, config.OPEN_FILES, config.OUTPUT_BYTES)


def test_command_line_defaults_are_config():
    parser = build_parser()
    grade = parser.parse_args(["grade", "--assignment", "a", "--out", "o", "s.py"])
    limits = settings.resolve(grade)  # unset on the command line: grading.toml's, else the defaults
    assert (limits["load_timeout"], limits["problem_timeout"], grade.seed, grade.policy) == \
        (config.LOAD_SECONDS, None, config.SEED, config.POLICY)  # None: each problem's scaled
    scaled = settings.limits_of(limits)
    assert (scaled.problem_seconds, scaled.scale_to_reference) == (config.PROBLEM_SECONDS, True)
    gradescope = parser.parse_args(["gradescope", "--assignment", "a", "--out", "a.zip"])
    limits = settings.resolve(gradescope, keys=("load_timeout", "problem_timeout"))
    assert (gradescope.visibility, gradescope.hidden_visibility, gradescope.output_format,
            limits["load_timeout"], limits["problem_timeout"], gradescope.seed) == \
        (config.VISIBILITY, config.HIDDEN_VISIBILITY, config.OUTPUT_FORMAT, config.LOAD_SECONDS,
         None, config.SEED)


def test_gradescope_settings_defaults_are_config():
    settings = dataclasses.asdict(Settings("a"))
    assert settings == {"assignment": "a", "extra": [], "visibility": config.VISIBILITY,
                        "hidden_visibility": config.HIDDEN_VISIBILITY, "output_format": config.OUTPUT_FORMAT,
                        "load_seconds": config.LOAD_SECONDS, "problem_seconds": None,
                        "seed": config.SEED, "picture_bytes": config.PICTURE_BYTES}
    limits = Settings("a").limits()
    assert (limits.load_seconds, limits.problem_seconds, limits.scale_to_reference, limits.keep_read_search) \
        == (config.LOAD_SECONDS, config.PROBLEM_SECONDS, True, False)
    fixed = Settings("a", problem_seconds=7.0).limits()
    assert (fixed.problem_seconds, fixed.scale_to_reference) == (7.0, False)
