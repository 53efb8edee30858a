"""An exception raised by the learner's code (or by PyTorch on its behalf), told in one sentence of ours
in the learner's names: what it means here and what to change. PyTorch's message stays below it, in the
traceback of the learner's own frames."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from autograder.judge.diagnose import raised_cause
from autograder.judge.returned import (
    correlation_mode,
    fitting_product,
    jvp_count,
    leaf_in_place,
    out_of_order,
    reduced_to_one,
)
from autograder.judge.saved_order import flag_of_another, unpacked_out_of_order
from autograder.judge.slips import SLIPS, first_line
from autograder.measure.contract import StudentError

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging


def _forward_called(error: StudentError) -> str | None:
    """The Function whose forward the learner's code calls directly (`CubeBackward.forward(...)`)."""
    for frame in error.frames:
        match = re.search(r"\b([A-Za-z_]\w*)\.forward\(", frame.code)
        if match:
            return match[1]
    return None


def error_cause(error: StudentError, view: Judging, case: CaseView) -> tuple[str, str]:
    """The sentence for an exception raised by student code, and the traceback to show with it (the
    learner's frames only; nothing for a body not written yet)."""
    kind = error.type
    details = error.traceback if kind != "NotImplementedError" else ""
    said = known_cause(error, view, case)
    if said is None:
        return raised_cause(error), details
    details = details.replace("Use tensor.detach().numpy() instead.", "(PyTorch's hint, tensor.detach()"
                              ".numpy(), would silence this error and zero the second derivatives.)")
    return said, details


def known_cause(error: StudentError, view: Judging, case: CaseView) -> str | None:
    """Our sentence for an error PyTorch raised on the learner's behalf, or None for one we do not know."""
    message, kind = error.message, error.type
    for cause in _CAUSES:
        said = cause(message, kind, error, view, case)
        if said:
            return said
    return None


def _direct_forward(message: str, kind: str, error: StudentError, view: Judging,
                    case: CaseView) -> str | None:
    called = _forward_called(error)
    if not called:
        return None
    return (f"backward calls {called}.forward(...) directly: call {called}.apply(...) instead. Called by "
            f"hand, forward runs as a plain function: autograd records no {called} node (so its backward "
            f"is never used) and grad mode stays on inside it. ({kind}: {first_line(message)})")


def _numpy_with_grad(message: str, kind: str, error: StudentError, view: Judging,
                     case: CaseView) -> str | None:
    if "Can't call numpy() on Tensor that requires grad" not in message:
        return None
    also = ""
    if view.problem.companion:
        also = (f" Where the computation must leave PyTorch, put it in {view.problem.companion}.forward "
                f"and call {view.problem.companion}.apply.")
    return (f"{error.raised_in or 'backward'} calls .numpy() on a tensor that requires grad. That "
            f"happens when backward itself is differentiated (create_graph=True, as gradgradcheck does): "
            f"autograd then records backward, and it cannot record NumPy. PyTorch's hint, "
            f"tensor.detach().numpy(), only silences the error: the second derivatives then come out as "
            f"zero. Write backward with torch operations (torch.exp instead of np.exp).{also}")


def _numpy_number(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if not re.search(r"expected np\.ndarray \(got numpy\.\w+\)", message):
        return None
    return ("torch.from_numpy was given a NumPy number, not an array: NumPy returns a plain number (such "
            "as numpy.float64) for a 0-dimensional input. Compute with torch operations instead "
            "(torch.exp(x)), which work for every shape and keep autograd's history.")


def _not_a_tensor(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"expected Variable or None \(got ([\w.]+)\)", message)
    if not match:
        return None
    got = match[1]
    returned = case.measured.backward_returns or []
    k = next((k for k, v in enumerate(returned)
              if v.kind not in ("Tensor", "None")), None)
    name = case.names[k] if k is not None and k < len(case.names) else "an input"
    fix = ("torch.from_numpy(...) converts it, but computing the gradient with torch operations is simpler"
           if "numpy" in got else "make it a tensor, or return None where there is no gradient")
    return (f"backward returned a {got} as the gradient for {name}, where autograd takes only a tensor "
            f"(shaped like {name}) or None: {fix}.")


def _count(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"function (\w+) returned an incorrect number of gradients \(expected (\d+), got "
                      r"(\d+)\)", message) or re.search(r"()returned an incorrect number of gradients "
                                                        r"\(expected (\d+), got (\d+)\)", message)
    if not match:
        return None
    expected, got = int(match[2]), int(match[3])
    companion = view.problem.companion
    if companion and match[1] == f"{companion}Backward":
        names = view.learner("companion", [])
        inputs = f" ({', '.join(names[:expected])})" if len(names) >= expected else ""
        return (f"{companion}.backward returned {got} value(s) but {companion}.forward takes {expected} "
                f"input(s){inputs}: {companion}.backward must return one gradient per input of "
                f"{companion}.forward, in order (None for an input that is not a tensor).")
    return _count_cause(view, case, expected, got)


def _gradient_for_number(message: str, kind: str, error: StudentError, view: Judging,
                         case: CaseView) -> str | None:
    match = re.search(r"returned a gradient different than None at position (\d+)", message)
    if not match:
        return None
    k = int(match[1]) - 1
    name = case.names[k] if k < len(case.names) else f"argument {k + 1}"
    value = case.encoded[k] if k < len(case.encoded) else None
    return (f"backward returned a gradient for {name} (= {value!r}), which is not a tensor: there is "
            f"nothing to differentiate there, so return None in its place.")


def _shape(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"returned an invalid gradient at index (\d+) - got \[([\d, ]*)\] but expected shape "
                      r"compatible with \[([\d, ]*)\]", message)
    if not match:
        return None
    k = int(match[1])
    name = case.names[k] if k < len(case.names) else f"argument {k + 1}"
    got, want = match[2].split(", "), match[3].split(", ")
    if not match[2] and match[3]:
        return f"backward returned one number (a tensor of shape []) for {name}, whose shape is " \
               f"[{match[3]}]: " + reduced_to_one(view, case, name, [int(n) for n in want])
    mode = correlation_mode(view, case, [int(n) for n in got if n], [int(n) for n in want if n])
    if mode:
        return (f"backward returned a gradient of shape [{match[2]}] for {name}, whose shape is "
                f"[{match[3]}]: {mode}")
    how = ": it looks transposed." if got[::-1] == want and got != want else \
        f": each gradient must have the shape of its input ({name}.shape)."
    return f"backward returned a gradient of shape [{match[2]}] for {name}, whose shape is [{match[3]}]{how}"


def _needs_input_grad(message: str, kind: str, error: StudentError, view: Judging,
                      case: CaseView) -> str | None:
    if kind != "IndexError" or not any("needs_input_grad[" in f.code
                                       for f in error.frames):
        return None
    said = flag_of_another(view)
    if said:
        return said
    read = [int(i) for f in error.frames for i in re.findall(r"needs_input_grad\[(\d+)\]", f.code)]
    if read and max(read) >= len(view.names):  # past every input, given or not: counted from 1
        last = len(view.names) - 1
        return (f"backward reads ctx.needs_input_grad[{max(read)}], but forward takes {len(view.names)} "
                f"inputs ({', '.join(view.names)}), so the flags are ctx.needs_input_grad[0] to "
                f"[{last}], counted from 0: {view.names[last]}'s is ctx.needs_input_grad[{last}].")
    return ("ctx.needs_input_grad has one entry per argument given to apply, so when an optional "
            "argument is left out it is shorter, and reading the flag of that argument fails "
            "(IndexError). Test the argument first (if bias is not None and "
            "ctx.needs_input_grad[2]).").replace("bias", _optional_name(view))


def _no_history(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "element 0 of tensors does not require grad and does not have a grad_fn" not in message:
        return None
    return ("backward's result has no autograd history: it was computed with values autograd cannot "
            "follow (torch.no_grad(), .detach(), .item(), NumPy, or a new tensor built from numbers).")


def _in_place(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "modified by an inplace operation" not in message:
        return None
    return (f"a tensor saved for backward was changed in place after it was saved, so autograd refuses "
            f"to use it: change a copy (x = x * 2, or x.clone()), and never change the inputs, the saved "
            f"tensors or {view.grad_output} in place.")


def _matmul(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", message)
    if not match:
        return None
    first, second = (int(match[1]), int(match[2])), (int(match[3]), int(match[4]))
    named = {tuple(shape): name for name, shape in zip(case.tensor_names, case.shapes)}
    if error.raised_in == "backward" and len(case.out_shape) == 2:
        named.setdefault(tuple(case.out_shape), view.grad_output)
    a = f"{named[first]} " if first in named else ""
    b = f"{named[second]} " if second in named else ""
    said = (f"{error.raised_in or 'forward'} multiplies {a}({first[0]}×{first[1]}) by {b}"
            f"({second[0]}×{second[1]}): a matrix product needs the columns of the first ({first[1]}) to "
            f"equal the rows of the second ({second[0]}).")
    transposed = {tuple(shape[::-1]): name for name, shape in zip(case.tensor_names, case.shapes)
                  if len(shape) == 2 and shape[0] != shape[1]}
    if error.raised_in == "backward" and (first in transposed or second in transposed):
        shape = second if second in transposed else first
        name = transposed[shape]
        fits = second[::-1][0] == first[1] if shape == second else second[0] == first[::-1][1]
        product = fitting_product(view, case, first, second)
        if not fits and product:
            return said + f" A product that fits and gives a gradient's shape is {product}."
        return said + (f" ({shape[0]}×{shape[1]}) is {name}.t(): use {name} itself there (the gradient of "
                       f"a @ {name}.t() with respect to a is grad_output @ {name}), so that each gradient "
                       f"gets its input's shape.")
    if second[1] == first[1] and b:
        said += (f" {b.strip() or 'The second'}.t() ({second[1]}×{second[0]}) fits: "
                 f"{b.strip() or 'it'} is stored as (out_features, in_features), so the product is "
                 f"{a.strip() or 'input'} @ {b.strip() or 'weight'}.t().")
    return said


def _no_storage(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "Cannot access data pointer of Tensor that doesn't have storage" not in message:
        return None
    return ("under torch.func.vmap (and torch.func.grad), forward receives batched tensors that have no "
            "storage of their own, so .numpy(), .item(), .tolist() and data_ptr() fail on them "
            "(generate_vmap_rule = True runs your forward on such tensors). Write forward with torch "
            "operations only (torch.clamp, torch.exp, torch.log1p...).")


def _op_returns_input(message: str, kind: str, error: StudentError, view: Judging,
                      case: CaseView) -> str | None:
    if "must not also be an input to this custom operator" not in message:
        return None
    return (f"the custom op {view.lookup} returns its own input (changed in place, as with x.div_(...), or x "
            f"itself or a view of it), which a custom op declared with mutates_args=() may not do: return a "
            f"new tensor, computed without in-place operations (x / (1 + x.abs())).")


def _setup_context_with_ctx(message: str, kind: str, error: StudentError, view: Judging,
                            case: CaseView) -> str | None:
    names = view.data.names
    forward = names.forward or []
    if kind != "TypeError" or names.setup_context is None or not forward or forward[0] != "ctx":
        return None
    given = ", ".join(forward[1:]) or "x"
    return (f"{view.lookup} defines setup_context, so PyTorch calls forward without ctx, as "
            f"forward({given}): your forward(ctx, {given}) then misses an argument ({kind}: "
            f"{first_line(message)}). Write forward({given}) and save tensors in setup_context (today's "
            f"style), or keep forward(ctx, {given}) and remove setup_context.")


def _no_jvp(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "You must implement the jvp function" not in message:
        return None
    return (f"{view.lookup} has no jvp staticmethod, which forward-mode AD (torch.func.jvp, "
            f"torch.autograd.forward_ad) calls: write jvp(ctx, x_t), returning the tangent of the output "
            f"(x_t times the derivative), and keep what it needs with ctx.save_for_forward in setup_context.")


def _saved_for_forward(message: str, kind: str, error: StudentError, view: Judging,
                       case: CaseView) -> str | None:
    frames = error.frames
    if kind != "ValueError" or "not enough values to unpack" not in message or not frames \
            or frames[-1].name != "jvp" or "saved_tensors" not in frames[-1].code:
        return None
    return ("jvp reads ctx.saved_tensors, which in jvp holds only the tensors setup_context passed to "
            "ctx.save_for_forward (ctx.save_for_backward keeps them for backward only): add "
            "ctx.save_for_forward(...) with the same tensors in setup_context.")


def _saved_a_tuple(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"save_for_(backward|forward) can only save variables, but argument (\d+) is of type "
                      r"(\w+)", message)
    if not match:
        return None
    numbers = [n for n in view.names if n not in case.tensor_names and n.isidentifier()]
    keep = f"ctx.{numbers[0]} = {numbers[0]}" if numbers else "ctx.n = n"
    how = (" setup_context's inputs is the tuple of forward's arguments: unpack it (x, = inputs, or "
           "inputs[0]) and save the tensor." if match[3] == "tuple" else " Save tensors only, and keep other "
           f"values as attributes of ctx ({keep}).")
    article = "an" if match[3][:1] in "aeiou" else "a"
    return (f"ctx.save_for_{match[1]} was given {article} {match[3]} as its argument {int(match[2]) + 1}, "
            f"where it takes tensors (or None) only.{how}")


def _no_vmap_rule(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "does not have vmap support" not in message:
        return None
    return (f"torch.func.vmap needs {view.lookup} to say how to batch it: set generate_vmap_rule = True in "
            f"the class (PyTorch then derives the rule from forward, which must then be written with torch "
            f"operations), or write a vmap staticmethod.")


def _ctx_attribute(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"'(\w+)Backward' object has no attribute '(\w+)'", message)
    if kind != "AttributeError" or not match:
        return None
    return (f"backward reads ctx.{match[2]}, which forward never set: store it in forward (ctx.{match[2]} = "
            f"...), before returning.")


def _item(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"a Tensor with (\d+) elements cannot be converted to Scalar", message)
    if not match:
        return None
    return (f"{error.raised_in or 'backward'} turns a tensor of {match[1]} entries into one number "
            f"(.item(), float() or int() do that, for one-entry tensors only): compute with the tensor "
            f"itself, entry by entry, which also keeps autograd's history.")


# In order, first match wins: saved tensors unpacked out of order first (a wrong order makes other errors);
# returned.py's and saved_order.py's beside their neighbours here; slips.py's (Python and PyTorch usage) last.
_CAUSES = [unpacked_out_of_order, _setup_context_with_ctx, _direct_forward, _numpy_with_grad, _numpy_number,
           _not_a_tensor, _count, out_of_order, _gradient_for_number, _shape, _needs_input_grad, _no_history,
           _in_place, leaf_in_place, _matmul, _no_storage, _op_returns_input, _no_jvp, jvp_count,
           _saved_for_forward, _saved_a_tuple, _no_vmap_rule, _ctx_attribute, _item, *SLIPS]


def opcheck_cause(test: str, text: str, view: Judging, case: CaseView) -> str | None:
    """A sentence for a failing test of torch.library.opcheck, where its own words need one."""
    said = known_cause(StudentError(message=text, raised_in=view.lookup), view, case)
    if said:
        return f"torch.library.opcheck's {test} fails: {said}"
    if "no fake impl registered" in text:
        return (f"torch.library.opcheck's {test} fails: {view.lookup} has no fake (no function "
                f"registered with @{view.lookup}.register_fake), which torch.compile and opcheck need: add "
                f"one returning a new tensor of the output's shape and dtype, such as torch.empty_like(x).")
    dtypes = re.search(r"Dtypes (torch\.\w+) and (torch\.\w+) are not equal", text)
    if dtypes:
        return (f"torch.library.opcheck's {test} fails: {view.lookup}'s fake returns {dtypes[2]} where the "
                f"op returns {dtypes[1]}: a new tensor made from a shape alone (torch.empty(x.shape)) takes "
                f"the default dtype. Use torch.empty_like(x), which keeps x's dtype and device.")
    match = re.search(r"outputs_alias_inputs check (True|False) != (True|False)", text)
    if match and match[1] == "True":
        return (f"torch.library.opcheck's {test} fails: {view.lookup}'s fake (the function given to "
                f"register_fake) returns its input itself, where the real op returns a new tensor. A fake "
                f"must return a new tensor of the output's shape and dtype, such as torch.empty_like(x).")
    if match:
        return (f"torch.library.opcheck's {test} fails: {view.lookup} returns its input (or a view of it) "
                f"where its fake returns a new tensor: return a new tensor from the op.")
    return None


def _optional_name(view: Judging) -> str:
    optional = view.data.names.optional or []
    return next((n for n in optional if isinstance(n, str) and n.isidentifier()), "bias")


def _count_cause(view: Judging, case: CaseView, expected: int, got: int) -> str:
    name = view.lookup
    given = case.names[:expected]
    optional = view.data.names.optional or []
    omitted = [n for n in view.names[expected:] if n in optional]
    if got > expected and omitted:
        returned = case.measured.backward_returns or []
        kind = (returned[expected].kind or "Tensor") if len(returned) > expected else "Tensor"
        what = "a tensor" if kind == "Tensor" else f"a {kind}"
        if not _ever_a_tensor(view, expected):
            return (f"backward returned {what} for {omitted[0]}, which is a number, not a tensor: return "
                    f"None in {omitted[0]}'s place, whether or not it was given. (Here {name}.apply was "
                    f"called without {' and '.join(omitted)}, and autograd refuses anything but None "
                    f"there.)")
        return (f"{name}.apply was called without {' and '.join(omitted)} here, so backward must return "
                f"{expected} values (for {', '.join(given)}), or None in the place of "
                f"{' and '.join(omitted)}: it returned {what} there. Compute that gradient only when "
                f"{omitted[0]} was given (if {omitted[0]} is not None ...).")
    return (f"backward returned {got} value(s) but forward takes {expected} input(s) ({', '.join(given)}): "
            f"return one value per input, in order, with None for the inputs that are not tensors.")


def _ever_a_tensor(view: Judging, position: int) -> bool:
    """Whether some case passes a tensor at this argument's position (bias), or never (eps)."""
    return any(len(c.encoded) > position and isinstance(c.encoded[position], dict) for c in view.cases)
