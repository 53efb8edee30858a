"""The rules a Function must follow, read in the grader from the submission's source (parsed, never run),
so that a rule check rests on more than what the worker says.

Everything a worker sends can be written by the submission itself (docs/instructors.md, "What a takeover
can do"). Values are checked against the reference, which a worker never sees; the rules
(save_for_backward, no tensor kept on ctx, inputs, grad_output and tangents left as they were, the
companion Function used, the name bound to a Function) are not values; they are read in every way the
lessons write a Function: forward(ctx, ...), setup_context, jvp, a vmap rule, and the setup_context and
backward a custom op's register_autograd names (source_ast.py reads each method). A check of those
passes only when the worker says it does and the source does not show the contrary. Each fact below is
one that a right run of the same code would show too (a statement run whenever the method is: not under
an if, a loop or a try), so an honest worker's verdicts never change, and a forged "passed" needs a
source that agrees.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache

from autograder.judge.source_ast import (
    changed,
    from_inputs,
    input_names,
    is_name,
    kept_on_ctx,
    with_setup_context,
)


@dataclass(frozen=True)
class SourceFacts:
    """What the source shows of one problem's Function (the defaults: nothing against it).
    bound: how its name is bound ("class", "function" where only functions bear the name, "missing" where
    nothing does, "" where it cannot be told); saves: ctx.save_for_backward appears in the submission;
    companion_named: the companion's name is used outside its own definition; ctx_kept: (attribute,
    argument) a tensor argument (or "output") forward or setup_context (kept_in) keeps on ctx;
    inputs_changed, grad_changed, tangent_changed: (argument, line) an argument forward or setup_context
    (backward, jvp) changes in place; reads_flags: ctx.needs_input_grad (or requires_grad) appears in the
    submission. A custom op (torch.library) is read through the functions its register_autograd names."""

    bound: str = ""
    saves: bool = True
    companion_named: bool = True
    ctx_kept: tuple[tuple[str, str], ...] = ()
    inputs_changed: tuple[tuple[str, str], ...] = ()
    grad_changed: tuple[tuple[str, str], ...] = ()
    reads_flags: bool = True
    tangent_changed: tuple[tuple[str, str], ...] = ()
    output_changed: tuple[tuple[str, str], ...] = ()  # (output, line): setup_context changes the output
    kept_in: str = "forward"  # the method that keeps ctx_kept: forward, or setup_context
    changed_in: str = "forward"  # where inputs_changed are changed: forward, setup_context, the vmap rule


@dataclass(frozen=True)
class _Code:
    tree: ast.Module
    lines: list[str]
    helper: str = ""  # the helper module's name (helper for helper.py), "" for a cell
    nodes: tuple[ast.AST, ...] = field(default=(), compare=False)  # ast.walk(tree), walked once
    # name -> (node, other) for each statement binding it (other: `name = other`'s other), and name -> the
    # other nodes that bind it (a plain name stored or deleted); indexed once (_indexed)
    binds: dict = field(default_factory=dict, compare=False)
    stores: dict = field(default_factory=dict, compare=False)
    star: bool = False  # a star import


_STAR = re.compile(r"import[\s\\]*\*")  # the text of `from m import *`, as a cell must have it


class _Source:
    """A submission's cells and helper modules, each parsed when a name asked for appears in its text (a
    cell without the name's text cannot bind or use it), and each distinct text parsed once for the whole
    class: the cells a notebook is handed out with recur in every submission."""

    def __init__(self, cells: list[str], modules: dict[str, str]):
        self.pieces = [("", str(c)) for c in cells] + [(str(n).removesuffix(".py").replace("/", "."), str(s))
                                                       for n, s in sorted(modules.items())]

    def containing(self, text: str) -> tuple[_Code, ...]:
        found = (_code(source, helper) for helper, source in self.pieces if text in source)
        return tuple(c for c in found if c is not None)

    @property
    def star(self) -> bool:
        """A star import anywhere (it could bind any name)."""
        found = (_code(source, helper) for helper, source in self.pieces if _STAR.search(source))
        return any(c is not None and c.star for c in found)


@lru_cache(maxsize=256)
def _code(source: str, helper: str) -> _Code | None:
    """The text parsed, walked and indexed once (the trees are only read); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _indexed(tree, source.splitlines(), helper)


def _indexed(tree: ast.Module, lines: list[str], helper: str) -> _Code:
    nodes, binds, stores, star, aliases = tuple(ast.walk(tree)), {}, {}, False, set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.setdefault(node.name, []).append((node, None))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            star |= any(a.name == "*" for a in node.names)
            for a in node.names:
                binds.setdefault(a.asname or a.name.split(".")[0], []).append((node, None))
        elif isinstance(node, (ast.MatchAs, ast.MatchStar, ast.ExceptHandler)) and node.name:
            binds.setdefault(node.name, []).append((node, None))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            aliases.add(id(node.targets[0]))
            other = node.value.id if isinstance(node.value, ast.Name) else None
            binds.setdefault(node.targets[0].id, []).append((node, other))
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and id(node) not in aliases:
            stores.setdefault(node.id, []).append(node)
    return _Code(tree, lines, helper, nodes, binds, stores, star)


def _bindings(source: _Source, name: str) -> tuple[list[tuple[ast.AST, _Code, str | None]], bool]:
    """Every node that binds name anywhere in the code, with its code and, for `name = other`, other;
    and whether a star import could bind it too."""
    code = source.containing(name)
    found = [(node, c, other) for c in code for node, other in c.binds.get(name, ())]
    found += [(node, c, None) for c in code for node in c.stores.get(name, ())]
    return found, source.star


def _located(code: _Source, name: str, depth: int = 0) -> tuple[str, ast.ClassDef | None, _Code | None]:
    """How name is bound, and its class where one class statement alone binds it: directly, through one
    plain alias (Exp = ExpFunction), or imported from a helper module by its own name."""
    found, star = _bindings(code, name)
    if not found:
        return ("" if star else "missing"), None, None
    if all(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n, _, _ in found):
        return "function", None, None
    if len(found) == 1 and isinstance(found[0][2], str) and depth < 4:
        return _located(code, found[0][2], depth + 1)  # an alias of another name
    classes = [(n, c) for n, c, _ in found if isinstance(n, ast.ClassDef)]
    imports = [n for n, _, _ in found if isinstance(n, ast.ImportFrom)]
    if len(classes) == 1 and len(found) == 1 + len(imports) \
            and all(classes[0][1].helper and n.module == classes[0][1].helper for n in imports):
        return "class", classes[0][0], classes[0][1]
    return "", None, None


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    found = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name]
    return found[0] if len(found) == 1 else None


def _names_used(source: _Source, name: str, own: ast.ClassDef | None) -> bool:
    inside = {id(n) for n in ast.walk(own)} if own is not None else set()
    for c in source.containing(name):
        for node in c.nodes:
            if id(node) in inside:
                continue
            if (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) \
                    or (isinstance(node, ast.Attribute) and node.attr == name):
                return True
    return False


def read_source(problem, cells: list[str], modules: dict[str, str], tensors: list[bool]) -> SourceFacts:
    """The facts of problem's Function in the submission (tensors: which of forward's arguments are
    tensors in the first case)."""
    code = _Source(cells, modules)
    companion = getattr(problem, "companion", "") or ""
    text = "\n".join([*cells, *modules.values()])
    facts: dict = {"saves": "save_for_backward" in text,
                   "reads_flags": "needs_input_grad" in text or "requires_grad" in text,
                   "companion_named": not companion or _names_used(code, companion,
                                                                   _located(code, companion)[1])}
    if problem.kind != "function":
        return SourceFacts(**facts, **_custom_op(code, problem.lookup, tensors))
    bound, cls, where = _located(code, problem.lookup)
    if cls is None or where is None:
        return SourceFacts(bound, **facts, **_custom_op(code, problem.lookup, tensors))
    forward, backward = _method(cls, "forward"), _method(cls, "backward")
    setup = _method(cls, "setup_context")
    if forward is not None and setup is None and forward.args.vararg is None and forward.args.args:
        ctx, *names = [a.arg for a in forward.args.args]
        arguments = [n for n, t in zip(names, tensors) if t]
        dirty = any(isinstance(n, ast.Attribute) and n.attr == "mark_dirty" for n in ast.walk(forward))
        facts["ctx_kept"] = kept_on_ctx(forward, ctx, arguments)
        facts["inputs_changed"] = () if dirty else changed(forward, arguments, where.lines)
    elif forward is not None and setup is not None and forward.args.vararg is None:
        facts.update(with_setup_context(forward, setup, tensors, where.lines))
    if backward is not None and backward.args.vararg is None:
        facts["grad_changed"] = changed(backward, [a.arg for a in backward.args.args[1:]], where.lines)
    rule = _method(cls, "vmap")
    if not facts.get("inputs_changed") and rule is not None and rule.args.vararg is None:
        facts["inputs_changed"] = changed(rule, [a.arg for a, t in zip(rule.args.args[2:], tensors) if t],
                                           where.lines)
        facts["changed_in"] = "the vmap rule"
    jvp = _method(cls, "jvp")
    if jvp is not None and jvp.args.vararg is None:
        facts["tangent_changed"] = changed(jvp, [a.arg for a in jvp.args.args[1:]], where.lines)
    return SourceFacts(bound, **facts)


def _custom_op(code: _Source, name: str, tensors: list[bool]) -> dict:
    """The facts of a custom op bound to name, read in the setup_context and backward its one
    register_autograd names (`name.register_autograd(backward, setup_context=setup)`, or
    torch.library.register_autograd("namespace::name", ...)), each a function defined once."""
    calls = [n for c in code.containing("register_autograd") for n in c.nodes if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "register_autograd"
             and (is_name(n.func.value, name) or (n.args and isinstance(n.args[0], ast.Constant)
                                              and str(n.args[0].value).endswith("::" + name)))]
    if len(calls) != 1:
        return {}
    positional = [a for a in calls[0].args if not isinstance(a, ast.Constant)]
    setup = next((k.value for k in calls[0].keywords if k.arg == "setup_context"), None)
    facts: dict = {}
    setup_def = _defined_once(code, setup)
    backward_def = _defined_once(code, positional[0] if positional else None)
    if setup_def is not None and setup_def[0].args.vararg is None and len(setup_def[0].args.args) == 3:
        ctx, inputs, output = (a.arg for a in setup_def[0].args.args)
        bound = from_inputs(setup_def[0], inputs, tensors)
        facts["ctx_kept"] = kept_on_ctx(setup_def[0], ctx, [*bound, output], inputs, tensors)
        facts["kept_in"] = facts["changed_in"] = "setup_context"
        facts["inputs_changed"] = changed(setup_def[0], input_names(bound, inputs, tensors), setup_def[1],
                                          tuple(bound))
        facts["output_changed"] = changed(setup_def[0], [output], setup_def[1])
    if backward_def is not None and backward_def[0].args.vararg is None:
        function, lines = backward_def
        facts["grad_changed"] = changed(function, [a.arg for a in function.args.args[1:]], lines)
    return facts


def _defined_once(code: _Source, node: ast.AST | None) -> tuple[ast.FunctionDef, list[str]] | None:
    """The one def statement of the function a name refers to, and its code's lines (None for anything
    else: a lambda, a name bound twice)."""
    if not isinstance(node, ast.Name):
        return None
    found, _ = _bindings(code, node.id)
    if len(found) == 1 and isinstance(found[0][0], ast.FunctionDef):
        return found[0][0], found[0][1].lines
    return None


def tensor_arguments(problem, seed: int) -> list[bool]:
    """Which of forward's arguments are tensors in the problem's first case."""
    from autograder.judge.reference import encoded_once
    from autograder.measure.encoding import positional

    cases = encoded_once(problem, seed)
    return [isinstance(a, dict) and "values" in a for a in positional(cases[0])] if cases else []


def contradiction(check: str, problem, facts: SourceFacts | None) -> str | None:
    """Why the source contradicts a check the worker says passed (None: it does not, or it cannot
    tell), in the learner's terms."""
    if facts is None:
        return None
    name, read = problem.lookup, "(read from your code by the grader)"
    if check == "save_for_backward":
        if not facts.saves:
            return (f"Your code never calls ctx.save_for_backward {read}, so forward keeps no tensor for "
                    f"backward that way: pass the tensors backward needs to ctx.save_for_backward(...) in "
                    f"forward, and read them back from ctx.saved_tensors.")
        if facts.ctx_kept:
            attr, argument = facts.ctx_kept[0]
            what = "its output" if argument == "output" and facts.kept_in == "setup_context" \
                else f"{argument}, one of its inputs,"
            return (f"{facts.kept_in} keeps {what} as ctx.{attr}, a plain attribute of ctx {read}. In "
                    f"{facts.kept_in}, ctx.save_for_backward({argument}); in backward, read it back from "
                    f"ctx.saved_tensors.")
    if check == "inputs unchanged" and facts.inputs_changed:
        argument, line = facts.inputs_changed[0]
        return (f"{facts.changed_in} changes {argument} in place (`{line}`) without saying so with "
                f"ctx.mark_dirty {read}, so the caller's {argument} comes back changed: work on a copy, "
                f"{argument}.clone().")
    if check == "grad_output unchanged" and facts.grad_changed:
        argument, line = facts.grad_changed[0]
        return (f"backward changes {argument} in place (`{line}`) {read}: {argument} belongs to autograd. "
                f"Work on a copy, {argument}.clone().")
    if check == "needs_input_grad" and getattr(problem, "skips_unneeded", False) and not facts.reads_flags:
        return (f"Your code never reads ctx.needs_input_grad {read}, so backward cannot skip the gradient of "
                f"an input that needs none: compute each gradient only under `if ctx.needs_input_grad[i]:` "
                f"(i: the input's place among forward's arguments, from 0), and leave it None otherwise.")
    if check == "tangent unchanged" and facts.tangent_changed:
        argument, line = facts.tangent_changed[0]
        return (f"jvp changes {argument}, the tangent it is given, in place (`{line}`) {read}: {argument} "
                f"belongs to the caller. Return a new tensor: {argument} * (...).")
    if check == "companion used" and not facts.companion_named:
        companion = problem.companion
        return (f"Your code never uses {companion} outside its own definition {read}, so {name}.backward "
                f"cannot call {companion}.apply: return {companion}.apply(...) from {name}.backward.")
    return None


def failing_cause(check: str, facts: SourceFacts | None) -> str | None:
    """The cause the source shows of a check that fails, where the measurement alone would point
    elsewhere (None: the source shows none)."""
    if facts is not None and check == "forward" and facts.output_changed:
        output, line = facts.output_changed[0]
        return (f"setup_context changes {output}, the output forward returned, in place (`{line}`, read from "
                f"your code by the grader): the caller gets the changed tensor. Save what backward needs "
                f"without changing {output}: ctx.save_for_backward({output}) and compute the rest in "
                f"backward, or save a new tensor ({output}.abs() rather than {output}.abs_()).")
    return None


def unbound(problem, facts: SourceFacts | None) -> str | None:
    """Why the source says the problem's name is not a Function class at all (None: it does not say)."""
    if facts is None or problem.kind != "function":
        return None
    if facts.bound == "missing":
        return (f"{problem.lookup} is not defined in the submission (read from your code by the grader): "
                f"define it with exactly this name (names are case-sensitive).")
    if facts.bound == "function":
        return (f"{problem.lookup} is defined with def in your code (read from your code by the grader), as "
                f"a function, but the problem asks for a subclass of torch.autograd.Function.")
    return None
