"""Does PyTorch still behave as the lessons say? Each claim is checked by running its own cell.

A lesson's demonstration cells carry `"claim": "<name>"` in their metadata. For each lesson, the test
runs the set-up code (the code cells before the first `##` section), then every claim cell in the order
of the notebook, in one namespace, as a reader would; no cell may raise, and the errors a lesson shows
go through `expect_error`, which must see one (the test records each). It then asserts the outcome the
lesson states in words, so that a PyTorch release that changes the behaviour fails here, by claim, rather
than only as a changed output in nbval.
"""

from __future__ import annotations

import io
import linecache
import re
import sys
import types
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from functools import cache

import nbformat
import pytest
import torch

from tests.conftest import ROOT

pytestmark = pytest.mark.stack  # the lessons' claims, on every torch the course supports (make test-torch)
MAGIC = re.compile(r"^\s*[%!]", re.MULTILINE)


@dataclass
class Outcome:
    namespace: dict
    stdout: str = ""
    errors: list[BaseException] = field(default_factory=list)

    @property
    def error(self) -> BaseException:
        assert self.errors, "the claim's cells show no error through expect_error"
        return self.errors[-1]


def _python(source: str) -> str:
    """A cell's source without IPython magics and shell escapes."""
    return "\n".join("pass" if MAGIC.match(line) else line for line in source.splitlines())


def recording(expect_error, outcome: list[Outcome]):
    """expect_error, which also appends the error it shows to the errors of the current claim."""

    @contextmanager
    def recorded(*args, **kwargs):
        with expect_error(*args, **kwargs):
            try:
                yield
            except BaseException as error:
                outcome[0].errors.append(error)
                raise

    return recorded


@cache
def claims(lesson: str) -> dict[str, Outcome]:
    from autograder import expect_error

    nb = nbformat.read(ROOT / "solutions" / f"{lesson}.ipynb", as_version=4)
    # torch's global settings as a fresh kernel has them (a lesson run before may have changed them)
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    module = types.ModuleType("__lesson__")  # importable, as torch.compile looks the cells' module up
    sys.modules[module.__name__] = module
    namespace: dict = module.__dict__
    namespace["display"] = lambda *args, **kwargs: None
    outcomes: dict[str, Outcome] = {}
    current: list[Outcome] = []
    in_setup = True
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## "):
            in_setup = False
        if cell.cell_type != "code" or not (in_setup or "claim" in cell.metadata):
            continue
        name = cell.metadata.get("claim", "set-up")
        outcome = outcomes.setdefault(name, Outcome(namespace))
        current[:] = [outcome]
        out = io.StringIO()
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            try:
                source, filename = _python(cell.source), f"<{lesson} cell {index}>"
                # as in a notebook, tracebacks (anomaly mode's forward trace among them) show the lines
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                exec(compile(source, filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - as Jupyter
            except Exception as error:
                raise AssertionError(f"{lesson} cell {index} ({name}) raised {error!r}") from error
        if namespace.get("expect_error") is expect_error:  # imported by the set-up cell
            namespace["expect_error"] = recording(expect_error, current)
        outcome.stdout += out.getvalue()
        outcome.namespace = dict(namespace)  # as the claim's cells left it: later cells may rebind names
    return outcomes


def claim(lesson: str, name: str) -> Outcome:
    found = claims(lesson)
    assert name in found, f"{lesson} has no cell with the claim {name!r} (claims: {sorted(found)})"
    return found[name]


# -- Lesson 1: autograd basics ------------------------------------------------------------------------

L1 = "01-autograd-basics"


def test_two_losses_on_one_trunk_want_one_backward():
    """(loss_a + loss_b).backward() walks the shared trunk once, two calls with retain_graph twice, and
    both leave the same gradient."""
    ns = claim(L1, "l1-trunk").namespace
    assert (ns["passes_sum"], ns["passes_two"]) == (1, 2)
    assert ns["grad_sum"].allclose(ns["grad_two"])


def test_a_vector_jacobian_product_costs_about_two_forwards():
    """A linear layer's backward counts twice the FLOPs of its forward when its input needs a gradient,
    and once when it does not."""
    flops = claim(L1, "l1-vjp-cost").namespace["flops"]
    assert flops[True][1] == 2 * flops[True][0]
    assert flops[False][1] == flops[False][0]


def test_contributions_are_summed_before_they_reach_a_leaf():
    """u = t*t + 2t: the gradient reaches t once, already summed (8), not once per path."""
    out = claim(L1, "l1-accumulate-once").stdout
    assert out.count("gradient arriving at t") == 1
    assert "gradient arriving at t: tensor(8.)" in out and "t.grad: tensor(8.)" in out


def test_detach_shares_the_version_counter():
    """Changing a detached tensor in place makes the backward of its original fail the version check."""
    assert "modified by an inplace operation" in str(claim(L1, "l1-detach-version").error)


def test_inference_tensors_cannot_be_saved_for_backward():
    """A tensor made under inference_mode cannot be used later where autograd must save it."""
    outcome = claim(L1, "l1-inference")
    assert "requires_grad: False | inference tensor: True" in outcome.stdout
    assert "Inference tensors cannot be saved for backward" in str(outcome.error)


# -- Lesson 2: writing a custom Function --------------------------------------------------------------

L2 = "02-custom-functions"


def test_save_for_backward_checks_versions():
    """A tensor saved with save_for_backward and then changed in place makes backward raise."""
    assert "modified by an inplace operation" in str(claim(L2, "l2-version").error)


def test_an_attribute_gives_a_wrong_gradient_after_an_in_place_change():
    """The same change to a tensor kept as ctx.input goes unnoticed, and the gradient is wrong."""
    ns = claim(L2, "l2-stash-inplace").namespace
    x = ns["x"]
    assert not x.grad.allclose(2 * (2 * x.detach()).cos())
    assert x.grad.allclose(2 * (2 * x.detach() + 1).cos())


def test_an_output_kept_as_an_attribute_makes_a_reference_cycle():
    """An output kept as ctx.result survives `del` until the garbage collector runs; saved with
    save_for_backward, it is freed at once."""
    out = claim(L2, "l2-cycle").stdout
    assert re.search(r"Sigmoid +alive after del: False +after gc.collect\(\): False", out)
    assert re.search(r"SigmoidStashed +alive after del: True +after gc.collect\(\): False", out)


def test_saved_tensor_hooks_see_save_for_backward_only():
    """The hooks see Sin's saved input, not SinStashed's attribute."""
    assert claim(L2, "l2-hooks").stdout == "Sin\n  pack   (3,)\n  unpack (3,)\nSinStashed\n"


def test_intermediates_may_be_saved():
    """save_for_backward takes intermediates; the hooks see both; the gradient is cosh."""
    outcome = claim(L2, "l2-intermediate-saved")
    assert outcome.stdout.count("  pack ") == 2 and outcome.stdout.count("  unpack") == 2
    x = outcome.namespace["x"]
    assert x.grad.allclose(x.detach().cosh())


def test_needs_input_grad_is_fixed_when_apply_runs():
    """Asking only for the weight's gradient still runs backward with needs_input_grad (True, True)."""
    outcome = claim(L2, "l2-needs-input-grad-fixed")
    assert "backward: needs_input_grad = (True, True)" in outcome.stdout
    assert outcome.namespace["x"].grad is None


def test_not_every_builtin_backward_is_twice_differentiable():
    """The multi-class hinge loss passes gradcheck, and its gradgradcheck raises: its backward has no
    derivative (on every torch the course supports; torch.cdist, the lesson's example before, gained one)."""
    outcome = claim(L2, "l2-hinge-gradgrad")
    assert "first derivatives: True" in outcome.stdout
    assert isinstance(outcome.error, RuntimeError)
    assert "derivative for aten::multi_margin_loss_backward is not implemented" in str(outcome.error)


# -- Lesson 3: training through a custom Function -------------------------------------------------------

L3 = "03-training"


def test_writing_into_a_broadcast_gradient_raises_up_to_2_14_and_zeroes_it_from_2_15():
    """sum()'s gradient is one number broadcast (strides 0): up to torch 2.14 writing into it raises;
    from 2.15 on the write goes through and x.grad comes back all zeros, as the lesson says of each."""
    out = claim(L3, "l3-write-into-broadcast-gradient").stdout
    if tuple(int(n) for n in torch.__version__.split(".")[:2]) < (2, 15):
        assert out.startswith("RuntimeError: unsupported operation: more than one element of the written-to "
                              "tensor refers to a single memory location."), out
    else:
        assert out.startswith("no error; x.grad[0] = tensor([0., 0., 0., 0., 0., 0., 0., 0.])"), out


# -- Lesson 4: gradcheck -------------------------------------------------------------------------------

L4 = "04-gradcheck"


def test_gradcheck_numbers_only_the_inputs_that_require_grad():
    """The faulty gradient of y is named input 1 beside a differentiable x, input 0 once x is detached."""
    assert claim(L4, "l4-input-numbering").stdout == (
        "Jacobian mismatch for output 0 with respect to input 1,\n"
        "Jacobian mismatch for output 0 with respect to input 0,\n")


def test_the_stack_overflow_convolution_fails_gradcheck_twice():
    """The answer's backward, as posted, fails for the input (a transposed filter: 2 and 3 swapped); with
    that fixed, it fails for the filter (grad_output read in reverse)."""
    import torch

    first = str(claim(L4, "l4-scipy").error)
    assert first.startswith("Jacobian mismatch for output 0 with respect to input 0")
    second = claim(L4, "l4-scipy-second-bug")
    assert str(second.error).startswith("Jacobian mismatch for output 0 with respect to input 1")
    ns = second.namespace
    a, b = torch.rand(4, 5, dtype=torch.float64), torch.rand(2, 3, dtype=torch.float64)
    conv = torch.nn.functional.conv2d(a[None, None], b[None, None])[0, 0]
    assert torch.allclose(torch.from_numpy(ns["correlate2d"](a.numpy(), b.numpy())), conv)


def test_variable_returns_a_new_tensor_without_history():
    """Variable(t), a 2018 spelling, is not t: it shares t's memory and drops its history."""
    assert claim(L4, "l4-variable").stdout == (
        "Variable(t) is t: False | shares t's memory: True | history: None | requires_grad: False\n")


def test_logsumexp_as_written_overflows():
    """log(sum(exp(x))) of [1000, 1000] is inf in float64; torch.logsumexp is not."""
    assert claim(L4, "l4-lse-overflow").stdout.startswith("as written: inf | torch.logsumexp: 1000.69")


def test_a_surrogate_fails_gradcheck_and_matches_its_intended_vjp():
    """Straight-through round: gradcheck fails (the numerical Jacobian is zero), backward is v."""
    outcome = claim(L4, "l4-surrogate")
    assert str(outcome.error).startswith("Jacobian mismatch for output 0 with respect to input 0")
    assert "backward gives the identity's vjp: True" in outcome.stdout


def test_autograd_reduces_a_broadcast_gradient_and_refuses_another_shape():
    """A (4, 3) gradient for a (3,) bias is summed over the rows; a (4, 2) one raises; after .sum(),
    grad_output is expanded (strides 0)."""
    outcome = claim(L4, "l4-shape-contract")
    assert "grad_output: (4, 3) | strides: (0, 0)" in outcome.stdout
    assert "bias.grad: tensor([4., 4., 4.])" in outcome.stdout
    assert "got [4, 2] but expected shape compatible with [3]" in str(outcome.error)


def test_anomaly_mode_names_the_node_that_returned_nan():
    """set_detect_anomaly names EntropyBackward and the forward line; the nodes can be walked and called."""
    outcome = claim(L4, "l4-debugging")
    assert "Function 'EntropyBackward' returned nan values in its 0th output" in str(outcome.error)
    assert "loss = (Entropy.apply(p) * weights).sum()" in outcome.stdout
    walk = "node: SumBackward0\nnode: MulBackward0\nnode: EntropyBackward\nnode: AccumulateGrad"
    assert walk in outcome.stdout
    assert ("MulBackward0 sends: tensor([0., 1., 1.]) | EntropyBackward returns: tensor([    nan,"
            in outcome.stdout)


def test_backward_frees_saved_tensors_but_not_ctx_attributes():
    """After one backward the attribute survives, a second backward raises, retain_graph allows two."""
    outcome = claim(L4, "l4-retain-graph")
    assert "the attribute is still there: tensor([1., 1., 1.])" in outcome.stdout
    assert "Trying to backward through the graph a second time" in str(outcome.error)
    assert "with retain_graph=True, twice: tensor([4., 4., 4.])" in outcome.stdout



def test_fast_mode_scales_atol_by_the_sums_of_u_and_v():
    """Fast mode allows atol * sum(u) * sum(v) + rtol * |numerical|: the buggy CumSum on 4 entries passes on
    rtol; a backward 400% wrong at one of 1000 entries fails slow mode and fast mode with atol=0, and
    passes fast mode with the default atol, its error below the scaled atol and above rtol's share."""
    assert "difference: 1.83e-03\nallowed:    atol * sum(u) * sum(v) + rtol * |numerical| = 3.06e-05 + " \
        "1.90e-03" in claim(L4, "l4-fast-tolerance").stdout
    stdout = claim(L4, "l4-fast-atol").stdout
    assert "slow mode          passes: False\nfast mode          passes: True\n" \
        "fast mode, atol=0  passes: False" in stdout
    error, scaled, relative = (float(x) for x in re.findall(r"\d\.\de-\d\d", stdout))
    assert relative < error < scaled


def test_nondet_tol_accepts_a_backward_that_differs_by_rounding():
    """A backward summing in a random order is 'not reentrant' by default, and passes with nondet_tol."""
    stdout = claim(L4, "l4-nondet-tol").stdout
    assert stdout.startswith("GradcheckError: Backward is not reentrant")
    assert "with nondet_tol=1e-12: True" in stdout


def test_check_undefined_grad_hands_backward_none():
    """With set_materialize_grads(False), gradcheck's default check passes None to backward (which then
    raises), as a Function returning None for its input does in training; handling None fixes both."""
    outcome = claim(L4, "l4-undefined-grad")
    assert "check_undefined_grad=False: True" in outcome.stdout
    assert [type(e) for e in outcome.errors[-2:]] == [TypeError, TypeError]
    assert "fixed: True" in outcome.stdout


def test_check_batched_grad_runs_backward_under_vmap():
    """A backward through NumPy passes the default gradcheck and fails check_batched_grad, as it fails
    autograd.grad(is_grads_batched=True); the same backward in torch operations passes both."""
    outcome = claim(L4, "l4-batched-grad")
    assert "NumpySin, default options: True" in outcome.stdout
    assert "TorchSin, check_batched_grad=True: True" in outcome.stdout
    assert "TorchSin's Jacobian is diag(cos x): True" in outcome.stdout
    assert "batched gradient" in str(outcome.errors[-2]) and isinstance(outcome.errors[-1], RuntimeError)

# -- Lesson 5: double backward -------------------------------------------------------------------------

L5 = "05-double-backward"


def test_backward_is_recorded_only_under_create_graph():
    """forward runs with grad mode off; backward runs with it on exactly when create_graph=True."""
    assert claim(L5, "l5-grad-mode").stdout == (
        "grad(out, x):\n"
        "forward:  grad mode False, y.requires_grad = False\n"
        "backward: grad mode False, grad_x.requires_grad = False\n"
        "grad(out, x, create_graph=True):\n"
        "forward:  grad mode False, y.requires_grad = False\n"
        "backward: grad mode True, grad_x.requires_grad = True\n")


def test_a_gradgradcheck_failure_names_the_first_input_only():
    """SquareDetach fails gradgradcheck for x (input 0); checked alone, the dependence on v is right."""
    outcome = claim(L5, "l5-detach-v")
    assert str(outcome.error).startswith("Jacobian mismatch for output 0 with respect to input 0")
    assert "gradcheck with respect to v alone: True" in outcome.stdout


def test_sinhbad_loses_the_second_derivative():
    """Intermediates kept on ctx give analytical second derivatives of zero."""
    message = str(claim(L5, "l5-sinhbad").error)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0")
    assert message.split("analytical:")[1].count("0.") == 9


def test_what_is_kept_decides_double_backward_and_how_it_is_kept_the_rest():
    """The grid: save_for_backward gives the in-place check and hook visibility and no cycle, for every
    tensor; an output kept as an attribute makes a cycle; inputs and outputs pass gradgradcheck however
    they are kept, intermediates fail however they are kept."""
    grid = claim(L5, "l5-grid").namespace["grid"]
    for (kept, how), row in grid.items():
        saved = how == "save_for_backward"
        assert row["in-place change"] == ("error" if saved else "unnoticed"), (kept, how)
        assert row["hooks see it"] is saved, (kept, how)
        assert row["cycle"] is (kept == "output" and not saved), (kept, how)
        assert row["gradgradcheck"] is (kept != "intermediate"), (kept, how)
    assert len(grid) == 6


# -- Lesson 6: conv-bn fusion --------------------------------------------------------------------------

L6 = "06-conv-bn-fusion"


def test_fused_backward_honours_needs_input_grad():
    """With data that needs no gradient, the fused step skips the first layer's transposed convolution
    (2 N C_out H W C_in k^2 FLOPs), and recomputation costs about a third more convolution work."""
    flops = claim(L6, "l6-flops").namespace["flops"]
    assert flops["fused", True] - flops["fused", False] == 2 * 8 * 16 * 30 * 30 * 3 * 3 * 3
    assert 1.3 < flops["fused", False] / flops["unfused", False] < 1.4


def test_fusion_halves_held_bytes_but_not_the_shallow_peak():
    """The fused and checkpointed networks hold about half the unfused bytes between forward and
    backward; the fused peak is above the unfused one for one pair and below it for eight;
    checkpointing's peak is never above the unfused one's and below the fused one's at every depth."""
    memory = claim(L6, "l6-peak").namespace["memory"]
    for pairs, row in memory.items():
        (held_u, peak_u), (held_f, peak_f), (held_c, peak_c) = row["unfused"], row["fused"], row["checkpoint"]
        assert 0.45 < held_f / held_u < 0.55 and abs(held_c / held_f - 1) < 0.02, pairs
        assert peak_c <= peak_u * 1.001 and peak_c < peak_f, pairs
    assert memory[1]["fused"][1] > memory[1]["unfused"][1]
    assert memory[8]["fused"][1] < memory[8]["unfused"][1]


def test_once_differentiable_raises_when_grad_output_has_history():
    """A gradient penalty through Conv2D (pow(2) after it) reaches the Error node and raises."""
    outcome = claim(L6, "l6-once-differentiable")
    assert ("trying to differentiate twice a function that was marked with @once_differentiable"
            in str(outcome.error))
    assert outcome.stdout.endswith("Error True\n")


def test_once_differentiable_is_skipped_by_autograd_grad_and_caught_by_gradgradcheck():
    """The same penalty plus ||w||^2, differentiated with torch.autograd.grad with respect to the weight:
    no error, exactly 2w; gradgradcheck on Conv2D fails."""
    outcome = claim(L6, "l6-once-silent")
    assert "gradient is exactly 2 * weight: True" in outcome.stdout
    assert "Jacobian mismatch" in str(outcome.error)


# -- Lesson 7: custom Functions in today's PyTorch -----------------------------------------------------

L7 = "07-modern-functions"


def test_non_tensor_outputs_get_none_in_backward():
    """An int returned by forward comes back as an int, and backward receives None for it."""
    out = claim(L7, "l7-non-tensor-output").stdout
    assert "clipped: 2 int" in out and "backward receives grad_count = None" in out


def test_an_input_or_a_view_returned_comes_back_as_a_view_that_may_not_change_in_place():
    """Identity and FirstRow return views of their input with their own node; changing one in place
    is forbidden."""
    outcome = claim(L7, "l7-views")
    assert "Identity: out is h: False | a view of h: True | grad_fn: IdentityBackward" in outcome.stdout
    assert "FirstRow: a view of h: True | grad_fn: FirstRowBackward" in outcome.stdout
    # (older torch names the node, FirstRowBackward, where newer ones name the Function)
    said = str(outcome.error)
    assert re.search(r"Output 0 of FirstRow(Backward)? is a view and is being modified inplace", said)


def test_an_in_place_op_bumps_the_version_itself_and_mark_dirty_bumps_it_for_unseen_writes():
    """x.mul_(2) makes a saved copy stale with or without mark_dirty; a NumPy write only with it, and
    without it the gradient is silently computed from the doubled values."""
    out = claim(L7, "l7-mark-dirty-version").stdout.splitlines()
    assert out[0].startswith("torch mark_dirty=False a._version=1 | RuntimeError: one of the variables")
    assert out[1].startswith("torch mark_dirty=True  a._version=2 | RuntimeError: one of the variables")
    assert out[2].startswith("numpy mark_dirty=False a._version=0 | x.grad: tensor([4., 8.])")
    assert out[3].startswith("numpy mark_dirty=True  a._version=1 | RuntimeError: one of the variables")


def test_numpy_second_derivative_is_wrong_without_the_decorator_and_raises_with_it():
    """Without the decorator the NumPy backward gives a wrong second derivative, silently; with it, the
    same computation raises (grad_output = 2x^3 has a history)."""
    assert "second derivative: tensor([ 18., 288.])" in claim(L7, "l7-once-wrong").stdout
    error = claim(L7, "l7-once-raises").error
    assert "trying to differentiate twice a function that was marked with @once_differentiable" in str(error)


def test_once_differentiable_is_silent_when_no_grad_output_has_history():
    """x * w under the decorator, differentiated from a plain sum with create_graph: gx has no history
    and w.grad is [6, 8] instead of [12, 16]; gradgradcheck reports w's second derivatives as zeros."""
    outcome = claim(L7, "l7-once-silent")
    assert "gx: tensor([3., 4.]) | gx.requires_grad: False" in outcome.stdout
    assert "w.grad: tensor([6., 8.]) | right answer, 4w: tensor([12., 16.])" in outcome.stdout
    assert "gradgradcheck: Jacobian mismatch for output 0 with respect to input 1" in outcome.stdout


def test_two_reverse_passes_give_a_jacobian_vector_product():
    """Forward mode needs a jvp, but the double-vjp trick gives J v = exp(x) v from backward alone."""
    outcome = claim(L7, "l7-double-vjp")
    assert "You must implement the jvp function" in str(outcome.error)
    assert "J v from two reverse passes: tensor([1.0000, 2.7183], dtype=torch.float64)" in outcome.stdout


def test_dynamo_traces_numpy_inside_a_function():
    """A Function with a NumPy forward compiles with fullgraph=True: np.exp is captured as wrapped_exp,
    and the gradient is exp(x)."""
    out = claim(L7, "l7-compile-numpy-function").stdout
    assert "wrapped_exp" in out and "gradient: tensor([1.0000, 2.7183])" in out


def test_code_dynamo_cannot_read_is_a_graph_break_that_still_trains():
    """ListExp's .tolist() breaks the graph (explain counts the breaks); compiled anyway, the gradient
    is 2 cos(x) exp(sin x)."""
    out = claim(L7, "l7-compile-graph-break").stdout
    assert re.search(r"graph breaks: [1-9]", out)
    assert re.search(r"first reason: .*tolist", out)  # "Tensor.tolist()", or older torch's words on tolist
    assert "gradient: tensor([2.0000, 2.5068]) | 2 cos(x) exp(sin x): tensor([2.0000, 2.5068])" in out


def test_custom_op_results_may_not_alias_inputs_unless_the_schema_says_so():
    """custom_op refuses an input returned as is; a schema with an alias annotation allows a view."""
    out = claim(L7, "l7-custom-op-alias").stdout
    assert "custom_op: The output of this custom operator (1) must not also be an input" in out
    assert "first_row shares x's memory: True" in out and "'test_schema': 'SUCCESS'" in out


def test_checkpoint_cannot_free_a_tensor_kept_on_ctx():
    """Under torch.utils.checkpoint, an intermediate saved with save_for_backward is freed after forward,
    one kept as a ctx attribute stays; both gradients are right."""
    assert claim(L6, "l6-checkpoint-escape").stdout == (
        "save_for_backward: 2 * X still in memory after forward: False\n"
        "                   gradient right: True\n"
        "attribute        : 2 * X still in memory after forward: True\n"
        "                   gradient right: True\n")


def test_reentrant_checkpoint_uses_no_hooks_and_a_missing_argument_warns():
    """use_reentrant=True frees 2 * X in both cases (no node outlives forward); without the argument,
    checkpoint warns."""
    out = claim(L6, "l6-checkpoint-reentrant").stdout
    assert "use_reentrant=True, save_for_backward: 2 * X still in memory after forward: False" in out
    assert "use_reentrant=True, attribute        : 2 * X still in memory after forward: False" in out
    assert ("without use_reentrant: torch.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly") in out


# -- Lesson 8: custom Functions under torch.compile and mixed precision ------------------------------

L8 = "08-compile-and-mixed-precision"


def test_a_registered_backward_is_traced_under_compile():
    """A NumPy backward given to register_autograd works eagerly and fails when compiled."""
    outcome = claim(L8, "l8-compile-numpy-backward")
    assert "eager gradient: tensor([2., 4.])" in outcome.stdout
    assert ".numpy() is not supported for tensor subclasses" in str(outcome.error)


def test_autocast_needs_custom_fwd_and_custom_bwd():
    """Under autocast, a backward without custom_bwd called after the region runs with autocast off and
    meets bfloat16 against float32; called inside the region, it runs with autocast on; with the
    decorators it runs under forward's state; with cast_inputs, in float32; and the decorators need
    forward(ctx, ...)."""
    outcome = claim(L8, "l8-amp")
    assert "expected m1 and m2 to have the same dtype" in str(outcome.error)
    assert "backward: autocast on: False | grad_output: torch.bfloat16" in outcome.stdout
    inside = "backward: autocast on: True | grad_output: torch.bfloat16\na.grad: torch.float32"
    assert inside in outcome.stdout
    assert "AutocastMatMul: out torch.bfloat16\nbackward: autocast on: True" in outcome.stdout
    assert ("Float32MatMul: out torch.float32\nbackward: autocast on: False | grad_output: torch.float32"
            in outcome.stdout)
    assert ("AttributeError: 'SplitMatMulBackward' object has no attribute '_fwd_used_autocast'"
            in outcome.stdout)


def test_a_custom_op_body_runs_under_the_callers_autocast_until_it_has_a_rule():
    """float32 inputs, a bfloat16 product inside under autocast; with register_autocast (or the rule by
    hand before torch 2.6), float32 throughout."""
    out = claim(L8, "l8-custom-op-autocast").stdout
    assert out.startswith("  inside: x torch.float32, x @ w torch.bfloat16\nout: torch.bfloat16\n")
    assert out.endswith("  inside: x torch.float32, x @ w torch.float32\nout: torch.float32\n")


def test_vmap_over_a_custom_op_loops_without_a_rule_and_calls_it_once_with_one():
    """Without register_vmap, vmap calls the operator once per sample; with it, once."""
    without, with_rule = claim(L8, "l8-register-vmap").stdout.split("with the rule:\n")
    assert without.count("inside:") == 5 and with_rule.count("inside:") == 1
    assert "result: torch.Size([5, 4, 2]) | same values: True" in with_rule
