"""Does the grader read what a worker sends through its types (autograder/measure/contract.py): the same
JSON back from `to_plain`, and a forged or truncated payload (a wrong type at any field, a missing key, a
huge list, nested garbage) parsed without raising and judged into checks that fail with a sentence,
never a traceback of the grader?"""

import json

import pytest

from autograder.course.assignments.registry import find_problem
from autograder.judge.plan import plan_in_full, probe, with_measured_in_full
from autograder.judge.reference import encoded_cases, expectations
from autograder.judge.verdicts import judge
from autograder.measure.checks import CompanionUse
from autograder.measure.contract import CaseMeasurement, Output, ProblemMeasurement, StudentError
from tests.wrong_functions import CUBE, HEADER, RIGHT, SINH, SOMETHING_SWAPPED

RELU = next(source for name, source in RIGHT if name == "MyReLU")
CUBE_DETACHED = CUBE.format(cube="return CubeBackward.apply(grad_out, x.detach())",
                            cube_backward="return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 6 * x")
SINH_IGNORES = SINH.format(body="return grad_out * (expx + expnegx) / 2")
# what each covers: a right answer; two inputs (subsets) and a wrong gradient (whole Jacobians measured
# in full); a check's own measurement (companion used) and second derivatives; several outputs
SUBMISSIONS = [("MyReLU", RELU), ("Something", SOMETHING_SWAPPED), ("Cube", CUBE_DETACHED),
               ("Sinh", SINH_IGNORES)]
_MEASURED: dict[str, dict] = {}


def measured(problem: str, source: str) -> dict:
    """What a worker would send for this submission, through JSON as it crosses the boundary."""
    if problem not in _MEASURED:
        spec = find_problem(problem)
        namespace: dict = {}
        exec(compile(HEADER + source, f"<cell {problem}>", "exec"), namespace)  # noqa: S102 - the test's own
        data = probe(spec, namespace, encoded_cases(spec), 0, expectations(spec))
        _MEASURED[problem] = json.loads(json.dumps(data))
    return _MEASURED[problem]


def without_nulls(value, under: str = ""):
    """The JSON with every key holding null left out (they read as absent), except inside the open-ended
    values (a check's own measurement, the graph), which are kept as they came."""
    if isinstance(value, dict) and under not in ("checks", "graph"):
        return {k: without_nulls(v, k) for k, v in value.items() if v is not None}
    if isinstance(value, list) and under not in ("checks", "graph"):
        return [without_nulls(v, under) for v in value]
    return value


@pytest.mark.parametrize(("problem", "source"), SUBMISSIONS, ids=[s[0] for s in SUBMISSIONS])
def test_round_trip_keeps_the_data(problem, source):
    """Does to_plain write back the JSON that was parsed, and parsing it again give the same objects?"""
    data = measured(problem, source)
    parsed = ProblemMeasurement.from_plain(data)
    assert parsed is not None and parsed.cases and all(c is not None for c in parsed.cases)
    assert parsed.to_plain() == without_nulls(data)
    assert ProblemMeasurement.from_plain(parsed.to_plain()) == parsed
    spec = find_problem(problem)
    assert judge(spec, parsed) == judge(spec, data)  # judged alike, parsed or plain


def test_the_measurements_the_checks_read_are_there():
    """Do the typed fields hold what was measured (nothing silently dropped as malformed)?"""
    something = ProblemMeasurement.from_plain(measured("Something", SOMETHING_SWAPPED))
    case = something.cases[0]
    assert case.output.type == "Tensor" and case.output.dtype == "torch.float64"
    assert len(case.output.values) == len(something.cases[0].vjp[0]) and case.subsets
    assert any(c.jacobian is not None and c.numerical is not None for c in something.cases)
    assert something.names.forward == ["input1", "input2"] and something.parts[0] == "forward"
    cube = ProblemMeasurement.from_plain(measured("Cube", CUBE_DETACHED))
    assert cube.cases[0].second is not None and cube.cases[0].second.hvp is not None
    use = CompanionUse.from_plain(cube.own("companion used"))
    assert use is not None and not use.uses and "detached" in use.calls[0]
    sinh = ProblemMeasurement.from_plain(measured("Sinh", SINH_IGNORES))
    assert sinh.cases[0].extra_outputs and sinh.cases[0].extra_outputs[0].fd is not None


def test_an_error_round_trips_and_keeps_its_frames():
    error = {"type": "RuntimeError", "message": "boom", "raised_in": "backward", "traceback": "Traceback",
             "frames": [{"file": "<your notebook>", "line": 3, "name": "backward", "code": "x.numpy()"}]}
    parsed = StudentError.from_plain(error)
    assert parsed.frames[0].code == "x.numpy()" and parsed.to_plain() == error
    assert CompanionUse.from_plain({"error": error}).error == parsed


GARBAGE = [None, "forged", -3, 2.5, True, [], {}, [None], ["x", {"y": []}], {"a": {"b": [[[]]]}},
           [[[["deep"]]]], "x" * 100_000, list(range(50_000)), [[0.5] * 3] * 2_000]


def paths(value, path=()):
    """Every key of every dict in the payload and the first entry of every list: where to forge."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key)
            if key not in ("graph", "values", "vjp", "vjp2", "fd", "jacobian", "numerical"):
                yield from paths(inner, (*path, key))
    elif isinstance(value, list) and value:
        yield (*path, 0)
        yield from paths(value[0], (*path, 0))


def forged(data, path, value, drop=False):
    copy = json.loads(json.dumps(data))
    inner = copy
    for key in path[:-1]:
        inner = inner[key]
    if drop:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return copy


def assert_told(problem, results):
    """Every check has a result, and every failure a sentence of ours, with no frame of the grader; where
    the numbers cannot be judged at all, the reason is one of the validations' own (untrusted.py), not a
    Python error of the grader's (a KeyError, an IndexError...)."""
    assert len(results) == len({r.check for r in results}) and results
    for r in results:
        assert r.passed or r.message.strip(), r
        if "came back malformed (" in r.message:
            reason = r.message.split("came back malformed (", 1)[1]
            assert reason.startswith(("malformed", "a ")) or "measured cases" in reason.split(")")[0], reason
        for text in (r.message, r.details):
            assert "autograder/" not in text and 'File "' not in text.replace('File "<', ""), text


@pytest.mark.parametrize(("problem", "source"), SUBMISSIONS[1:], ids=[s[0] for s in SUBMISSIONS[1:]])
def test_forged_payloads_parse_and_are_judged_with_sentences(problem, source):
    """Every field of a real measurement, in turn replaced by garbage of each kind or left out: parsing
    never raises, and the judge fails checks with a sentence, never a traceback."""
    spec, data = find_problem(problem), measured(problem, source)
    tried = 0
    for path in dict.fromkeys(paths(data)):
        for value in [*GARBAGE, "drop"] if len(path) <= 3 else GARBAGE[:6] + ["drop"]:
            payload = forged(data, path, value, drop=value == "drop")
            ProblemMeasurement.from_plain(payload)
            plan_in_full(spec, payload, expectations(spec))
            with_measured_in_full(payload, payload)
            assert_told(spec, judge(spec, payload))
            tried += 1
    assert tried > 300


@pytest.mark.parametrize("payload", [None, "x", 7, [], [{}], {"cases": "x"}, {"cases": [None, 3]},
                                     {"defined": True, "kind": "Function", "cases": [[1, 2]]},
                                     {"defined": "yes", "kind": ["Function"]}])
def test_a_payload_that_is_no_measurement_fails_every_check(payload):
    spec = find_problem("MyReLU")
    results = judge(spec, payload)
    assert_told(spec, results)
    assert not any(r.passed for r in results)


def test_forged_numbers_fail_the_checks_that_read_them():
    """A forged output, gradient or error reads as what it is: the check that needs it fails."""
    spec, data = find_problem("MyReLU"), measured("MyReLU", RELU)
    assert all(r.passed for r in judge(spec, data))
    cases = [(("cases", 0, "output", "values"), ["1"], "forward"),
             (("cases", 0, "output", "values"), list(range(50_000)), "forward"),
             (("cases", 0, "output", "shape"), "3", "forward"),
             (("cases", 0, "vjp"), [[float("nan")] * 3], "gradient"),
             (("cases", 0, "vjp"), "drop", "gradient"),
             (("cases", 0, "backward_returns"), [{"kind": 5}], "backward returns"),
             (("cases", 0, "error"), {"type": ["x"], "frames": "y"}, "forward")]
    for path, value, check in cases:
        results = {r.check: r for r in judge(spec, forged(data, path, value, drop=value == "drop"))}
        assert not results[check].passed and results[check].message, (path, value)
        assert_told(spec, list(results.values()))


def test_parsing_keeps_types_and_drops_what_is_malformed():
    case = CaseMeasurement.from_plain({"output": {"type": "Tensor", "shape": [2, "x"], "values": [1.0, None],
                                                  "has_grad_fn": "yes"},
                                       "saved": [{"kind": "input", "index": 0}, "junk"],
                                       "inputs_changed": [0, -1], "vjp": [[1.0], [True]],
                                       "error": {"type": 3, "message": "m" * 30_000, "frames": [1, {}]}})
    assert case.output == Output(type="Tensor")
    assert case.saved is None and case.inputs_changed is None and case.vjp is None
    assert case.error.type == "" and len(case.error.message) == 20_000 and len(case.error.frames) == 1
    assert CaseMeasurement.from_plain([1]) is None and ProblemMeasurement.from_plain("x") is None
