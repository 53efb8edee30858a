"""What a method's statements surely do, read in its syntax tree (never run): the arguments it changes in
place and the tensors it keeps as attributes of ctx, for judge/source.py. "Surely": a statement run
whenever the method is (not under an if, a loop or a try), a call made whenever the statement is."""

from __future__ import annotations

import ast

# Methods that change every value of a tensor of random numbers (randn): a Function that calls one on its
# input (or grad_output) in place changes it, as the worker would measure.
CHANGING = frozenset({
    "add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "exp_", "log_", "neg_", "abs_", "pow_",
    "sqrt_", "relu_", "clamp_", "clamp_min_", "clamp_max_", "masked_fill_", "sigmoid_", "tanh_", "sin_",
    "cos_", "square_", "normal_", "uniform_", "addmm_", "addcmul_", "addcdiv_", "index_fill_", "scatter_",
    "scatter_add_", "index_add_", "floor_", "ceil_", "round_", "sign_", "reciprocal_", "exponential_"})


def _always_run(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run whenever the body is, in order, up to the first that leaves it: `with` blocks
    are entered; if, loops, try and match may skip theirs."""
    out = []
    for statement in body:
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            out += _always_run(statement.body)
        else:
            out.append(statement)
        if isinstance(statement, (ast.Return, ast.Raise)):
            break
    return out


def _assigned_lines(function: ast.FunctionDef, name: str) -> list[int]:
    """The lines where the function binds name again (the argument then no longer is the caller's)."""
    lines = []
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            lines.append(node.lineno)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not function:
            continue
    return lines


def _changes(statement: ast.stmt, name: str) -> bool:
    """Whether the statement changes the tensor `name` in place."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id == name
    if isinstance(statement, ast.Assign) \
            and any(isinstance(t, ast.Subscript) and is_name(t.value, name) for t in statement.targets):
        return True
    if isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) \
            and statement.value is not None:
        return any(_changing_call(call, name) for call in _evaluated_calls(statement.value))
    return False


def _evaluated_calls(node: ast.AST) -> list[ast.Call]:
    """The calls an expression surely makes when evaluated: not those under a condition (x if c else y,
    and, or), in a comprehension or a lambda."""
    if isinstance(node, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                         ast.GeneratorExp)):
        return []
    calls = [node] if isinstance(node, ast.Call) else []
    for child in ast.iter_child_nodes(node):
        calls += _evaluated_calls(child)
    return calls


def _changing_call(call: ast.Call, name: str) -> bool:
    """name.add_(...) and the like, or a call writing into name with out=name."""
    if isinstance(call.func, ast.Attribute) and call.func.attr in CHANGING and is_name(call.func.value, name):
        return True
    return any(k.arg == "out" and is_name(k.value, name) for k in call.keywords)


def is_name(node: ast.AST, name: str) -> bool:
    """name itself, or name.data; name may be an item of setup_context's inputs, "inputs[0]"."""
    if isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    if "[" in name:
        return isinstance(node, ast.Subscript) and ast.unparse(node) == name
    return isinstance(node, ast.Name) and node.id == name


def changed(function: ast.FunctionDef | None, arguments: list[str], lines: list[str],
            unpacked: tuple[str, ...] = ()) -> tuple:
    """(argument, line) for each argument the function surely changes in place before binding it again
    (`unpacked`: names bound once, to an argument, by setup_context's `x, = inputs`)."""
    if function is None:
        return ()
    found, assigned = [], {name: _assigned_lines(function, name.split("[")[0]) for name in arguments}
    for statement in _always_run(function.body):
        for name in arguments:
            again = [n for n in assigned[name] if n < statement.lineno and name not in unpacked]
            if not again and _changes(statement, name):
                line = lines[statement.lineno - 1] if statement.lineno <= len(lines) else ""
                found.append((name, line.strip()[:120]))
    return tuple(dict.fromkeys(found))


def kept_on_ctx(forward: ast.FunctionDef | None, ctx: str, arguments: list[str], inputs: str = "",
                 tensors: list[bool] | None = None) -> tuple:
    """(attribute, argument) for each tensor argument forward (or setup_context) surely keeps as an
    attribute of ctx (and never sets again or deletes); in setup_context, `inputs[k]` of a tensor too."""
    if forward is None:
        return ()
    sets: dict[str, int] = {}
    for node in ast.walk(forward):
        if isinstance(node, ast.Attribute) and is_name(node.value, ctx) \
                and isinstance(node.ctx, (ast.Store, ast.Del)):
            sets[node.attr] = sets.get(node.attr, 0) + 1
    found = []
    for statement in _always_run(forward.body):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if not (isinstance(target, ast.Attribute) and is_name(target.value, ctx)
                and sets.get(target.attr) == 1):
            continue
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        for v in values:
            if isinstance(v, ast.Name) and v.id in arguments \
                    and not [n for n in _assigned_lines(forward, v.id) if n < statement.lineno]:
                found.append((target.attr, v.id))
            k = item_of(v, inputs) if inputs else None
            if k is not None and tensors and k < len(tensors) and tensors[k] \
                    and not [n for n in _assigned_lines(forward, inputs) if n < statement.lineno]:
                found.append((target.attr, f"{inputs}[{k}]"))
    return tuple(found)


def from_inputs(setup: ast.FunctionDef, inputs: str, tensors: list[bool]) -> dict[str, int]:
    """The names setup_context binds to forward's tensor arguments, by position, from its `inputs`
    (`x, = inputs`, `(x, w) = inputs`, `x = inputs[0]`), where run whenever setup_context is."""
    found: dict[str, int] = {}
    for statement in _always_run(setup.body):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if is_name(value, inputs) and isinstance(target, (ast.Tuple, ast.List)):
            for k, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    break
                if isinstance(element, ast.Name):
                    found[element.id] = k
        elif isinstance(target, ast.Name) and item_of(value, inputs) is not None:
            found[target.id] = item_of(value, inputs)
    return {n: k for n, k in found.items() if k < len(tensors) and tensors[k]
            and len(_assigned_lines(setup, n)) == 1}


def item_of(node: ast.AST, inputs: str) -> int | None:
    """k for `inputs[k]` (k a non-negative constant)."""
    if isinstance(node, ast.Subscript) and is_name(node.value, inputs) \
            and isinstance(node.slice, ast.Constant) \
            and type(node.slice.value) is int and node.slice.value >= 0:
        return node.slice.value
    return None


def with_setup_context(forward: ast.FunctionDef, setup: ast.FunctionDef, tensors: list[bool],
                        lines: list[str]) -> dict:
    """The facts of a forward without ctx and its setup_context(ctx, inputs, output): the tensors
    setup_context keeps on ctx, and the inputs forward or setup_context changes in place."""
    facts: dict = {}
    if setup.args.vararg is None and len(setup.args.args) == 3:
        ctx, inputs, output = (a.arg for a in setup.args.args)
        bound = from_inputs(setup, inputs, tensors)
        facts["ctx_kept"] = kept_on_ctx(setup, ctx, [*bound, output], inputs, tensors)
        facts["kept_in"] = "setup_context"
        dirty = any(isinstance(n, ast.Attribute) and n.attr == "mark_dirty" for n in ast.walk(setup))
        facts["output_changed"] = changed(setup, [output], lines)
        if not dirty:
            arguments = [a.arg for a, t in zip(forward.args.args, tensors) if t]
            facts["inputs_changed"] = changed(forward, arguments, lines)
            if not facts["inputs_changed"]:
                facts["inputs_changed"] = changed(setup, input_names(bound, inputs, tensors), lines,
                                                  tuple(bound))
                facts["changed_in"] = "setup_context"
    return facts


def input_names(bound: dict[str, int], inputs: str, tensors: list[bool]) -> list[str]:
    """What setup_context calls forward's tensor arguments: its own names, and inputs[k]."""
    return [*bound, *(f"{inputs}[{k}]" for k, t in enumerate(tensors) if t)]
