"""PyTorch API names in the lessons' prose link to their pages on docs.pytorch.org.

Inline code that names an API of the table below (`torch.autograd.gradcheck`, `ctx.save_for_backward`,
`torch.no_grad()`, `@once_differentiable`) becomes a link to its documentation page, the first time the
page is named in each section (`gradcheck` after `torch.autograd.gradcheck` is not linked again), so that
a reader who lands on a section by search finds the link there. Headings and existing links are left alone.
The addresses are plain links: nothing is fetched at build time.

The table holds what the lessons use. tests/tools/test_api_links.py checks that every address has the
shape of a page of the documentation and names the API it is for, and that every `torch.`-qualified name in
the lessons' inline code is in API or in UNMAPPED: a lesson that starts using a new name fails there until
the name gets its page here (or a reason in UNMAPPED).
"""

from __future__ import annotations

import re

from docutils import nodes

DOCS = "https://docs.pytorch.org/docs/stable/"

# name as the lessons write it -> its page, relative to DOCS
API = {
    # torch.autograd and the Function API
    "torch.autograd": "autograd.html",
    "torch.autograd.Function": "autograd.html#torch.autograd.Function",
    "Function": "autograd.html#torch.autograd.Function",
    "torch.autograd.grad": "generated/torch.autograd.grad.html",
    "torch.autograd.backward": "generated/torch.autograd.backward.html",
    "torch.autograd.gradcheck": "generated/torch.autograd.gradcheck.gradcheck.html",
    "gradcheck": "generated/torch.autograd.gradcheck.gradcheck.html",
    "torch.autograd.gradgradcheck": "generated/torch.autograd.gradcheck.gradgradcheck.html",
    "gradgradcheck": "generated/torch.autograd.gradcheck.gradgradcheck.html",
    "torch.autograd.function.once_differentiable":
        "generated/torch.autograd.function.once_differentiable.html",
    "once_differentiable": "generated/torch.autograd.function.once_differentiable.html",
    "torch.autograd.functional.jacobian": "generated/torch.autograd.functional.jacobian.html",
    "torch.autograd.graph.save_on_cpu": "autograd.html#torch.autograd.graph.save_on_cpu",
    "torch.autograd.graph.saved_tensors_hooks": "autograd.html#torch.autograd.graph.saved_tensors_hooks",
    "torch.autograd.set_detect_anomaly": "autograd.html#torch.autograd.set_detect_anomaly",
    "ctx.save_for_backward": "generated/torch.autograd.function.FunctionCtx.save_for_backward.html",
    "save_for_backward": "generated/torch.autograd.function.FunctionCtx.save_for_backward.html",
    "FunctionCtx.save_for_backward": "generated/torch.autograd.function.FunctionCtx.save_for_backward.html",
    "ctx.mark_dirty": "generated/torch.autograd.function.FunctionCtx.mark_dirty.html",
    "mark_dirty": "generated/torch.autograd.function.FunctionCtx.mark_dirty.html",
    "ctx.mark_non_differentiable":
        "generated/torch.autograd.function.FunctionCtx.mark_non_differentiable.html",
    "ctx.set_materialize_grads": "generated/torch.autograd.function.FunctionCtx.set_materialize_grads.html",
    "setup_context": "notes/extending.html#combining-forward-context",
    "torch.no_grad": "generated/torch.no_grad.html",
    "torch.inference_mode": "generated/torch.autograd.grad_mode.inference_mode.html",
    "torch.Tensor.backward": "generated/torch.Tensor.backward.html",
    "torch.Tensor.detach": "generated/torch.Tensor.detach.html",
    # torch.func, torch.library, torch.compile
    "torch.func": "func.html",
    "torch.func.grad": "generated/torch.func.grad.html",
    "torch.func.jvp": "generated/torch.func.jvp.html",
    "torch.func.vmap": "generated/torch.func.vmap.html",
    "vmap": "generated/torch.func.vmap.html",
    "jacfwd": "generated/torch.func.jacfwd.html",
    "torch.func.jacrev": "generated/torch.func.jacrev.html",
    "torch.library": "library.html",
    "torch.library.custom_op": "library.html#torch.library.custom_op",
    "torch.library.opcheck": "library.html#torch.library.opcheck",
    "opcheck": "library.html#torch.library.opcheck",
    "register_autograd": "library.html#torch.library.register_autograd",
    "torch.library.register_autocast": "library.html#torch.library.register_autocast",
    "torch.library.register_vmap": "library.html#torch.library.register_vmap",
    "torch.library.Library.define": "library.html#torch.library.Library.define",
    "torch.compile": "generated/torch.compile.html",
    "torch.compiler.allow_in_graph": "generated/torch.compiler.allow_in_graph.html",
    "torch.compiler.disable": "generated/torch.compiler.disable.html",
    "torch.export": "export.html",
    # mixed precision, memory, checkpointing
    "torch.autocast": "amp.html#torch.autocast",
    "torch.amp.custom_fwd": "amp.html#torch.amp.custom_fwd",
    "custom_fwd": "amp.html#torch.amp.custom_fwd",
    "torch.amp.custom_bwd": "amp.html#torch.amp.custom_bwd",
    "custom_bwd": "amp.html#torch.amp.custom_bwd",
    "torch.cuda": "cuda.html",
    "torch.cuda.max_memory_allocated": "generated/torch.cuda.max_memory_allocated.html",
    "torch.cuda.reset_peak_memory_stats": "generated/torch.cuda.reset_peak_memory_stats.html",
    "torch.utils.checkpoint": "checkpoint.html",
    "torch.utils.checkpoint.checkpoint": "checkpoint.html#torch.utils.checkpoint.checkpoint",
    # modules, functions and tensors the lessons build on
    "nn.Module": "generated/torch.nn.Module.html",
    "nn.Linear": "generated/torch.nn.Linear.html",
    "nn.Conv2d": "generated/torch.nn.Conv2d.html",
    "F.conv2d": "generated/torch.nn.functional.conv2d.html",
    "torch.nn.functional.layer_norm": "generated/torch.nn.functional.layer_norm.html",
    "torch.nn.functional.linear": "generated/torch.nn.functional.linear.html",
    "torch.nn.functional.softplus": "generated/torch.nn.functional.softplus.html",
    "torch.nn.functional.cross_entropy": "generated/torch.nn.functional.cross_entropy.html",
    "MSELoss": "generated/torch.nn.MSELoss.html",
    "torch.optim.SGD": "generated/torch.optim.SGD.html",
    "SGD": "generated/torch.optim.SGD.html",
    "torch.Generator": "generated/torch.Generator.html",
    "torch.from_numpy": "generated/torch.from_numpy.html",
    "torch.allclose": "generated/torch.allclose.html",
    "torch.where": "generated/torch.where.html",
    "torch.zeros": "generated/torch.zeros.html",
    "torch.rand": "generated/torch.rand.html",
    "torch.abs": "generated/torch.abs.html",
    "torch.sign": "generated/torch.sign.html",
    "torch.sin": "generated/torch.sin.html",
    "torch.tanh": "generated/torch.tanh.html",
    "torch.sigmoid": "generated/torch.sigmoid.html",
    "torch.log1p": "generated/torch.log1p.html",
    "torch.cdist": "generated/torch.cdist.html",
}

# torch.-qualified names the lessons write that get no link, and why
UNMAPPED = {
    "torch.float64": "a dtype, not an API with a page of its own",
    "torch.relu": "not in the documentation (torch.nn.functional.relu is)",
    "torch._dynamo.explain": "a private module, without a documentation page",
    "torch._dynamo.mark_dynamic": "a private module, without a page of its own (the dynamic shapes guide "
                                  "names it)",
    "torch.utils.flop_counter.FlopCounterMode": "not in the documentation",
    "torch.ops.aten.sin": "an operator's overload packet, not documented",
    "torch.ops.course.numpy_exp": "the lesson's own custom operator",
    "torch.ops.course.numpy_exp.default": "the lesson's own custom operator",
}

# Inline code that is a name: `name`, `name(...)`, `@name`, `with name():` (not an expression or a statement).
NAME = re.compile(r"^(?:@|with\s+)?(?P<name>[A-Za-z_][\w.]*)(?:\(.*\))?:?$")


def api_name(code: str) -> str | None:
    """The name an inline code names ("torch.no_grad" for `with torch.no_grad():`), or None."""
    match = NAME.match(code.strip())
    return match.group("name") if match else None


def url(name: str) -> str | None:
    page = API.get(name)
    return DOCS + page if page else None


def top_section(node) -> nodes.Node | None:
    """The section of the page (one level under its title) that holds the node."""
    chain = []
    while node is not None:
        if isinstance(node, nodes.section):
            chain.append(node)
        node = node.parent
    return chain[-2] if len(chain) > 1 else (chain[0] if chain else None)


def inside(node, kinds) -> bool:
    node = node.parent
    while node is not None:
        if isinstance(node, kinds):
            return True
        node = node.parent
    return False


def link_api_names(app, doctree) -> None:
    """The first mention of an API in each section becomes a link to its page."""
    linked: set[tuple[int, str]] = set()  # (section, page): one link per page and section
    for literal in list(doctree.findall(nodes.literal)):
        name = api_name(literal.astext())
        target = url(name) if name else None
        if target is None or inside(literal, (nodes.title, nodes.reference)):
            continue
        key = (id(top_section(literal)), target)
        if key in linked:
            continue
        linked.add(key)
        reference = nodes.reference("", "", internal=False, refuri=target, classes=["api-link"])
        literal.replace_self(reference)
        reference.append(literal)


def setup(app):
    app.connect("doctree-read", link_api_names)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
