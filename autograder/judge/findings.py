"""What a check's judgement returns: a `Finding` (failed: the cause in one sentence, details and
pictures; or a note on a pass that costs nothing), and the `Figure`s drawn with it (heat maps of a
tensor or a Jacobian, autograd graphs), built from plain data in the trusted process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from autograder.judge.reference import reference_graph
from autograder.judge.untrusted import float64

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


@dataclass
class Figure:
    """A picture to draw with the explanation: heat maps of matrices, or autograd graphs.

    For heat maps, each panel is a matrix (nested lists): a tensor is laid out as it prints (a vector as
    one row, a matrix as itself). `legend` says what a square is; `values` prints each entry's value in
    its square (small tensors)."""

    kind: str  # "heatmaps" or "graphs"
    title: str
    panels: list[tuple[str, Any]]  # (caption, matrix as nested lists | Graph dict)
    legend: str = ""
    values: bool = False


@dataclass
class Finding:
    """What a check's judgement found: a failure (passed=False) or a note on a pass that costs nothing."""

    passed: bool
    message: str
    details: str = ""
    figures: list[Figure] = field(default_factory=list)


def fail(message: str, details: str = "", figures: list[Figure] | None = None) -> Finding:
    return Finding(False, message, details, figures or [])


def note(message: str) -> Finding:
    """An observation that changes no result: shown with a passed check, it costs nothing."""
    return Finding(True, "Note (costs nothing): " + message)


def torch_words(check: str, said: Any) -> str:
    """What torch.autograd.gradcheck (or gradgradcheck) said, whole lines only: its first lines, without
    the matrices it prints after them (the pictures show those)."""
    lines = str(said).splitlines()
    kept = []
    for line in lines:
        if line.startswith(("numerical:", "analytical:")) or len(kept) >= 6:
            break
        kept.append(line)
    left = len(lines) - len(kept)
    more = f" ({left} more lines of PyTorch's message, the numerical and analytical Jacobians, are left " \
        f"out)" if left else ""
    return f"torch.autograd.{check} says: " + "\n".join(kept) + more


def as_grid(values: Any, shape: tuple[int, ...]) -> list[list[float]]:
    """A tensor's values laid out as it prints: a number as one square, a vector as one row, a matrix as
    itself, more dimensions as rows of the last one."""
    flat = float64(values).reshape(-1)
    if len(shape) <= 1:
        return [flat.tolist()]
    return flat.reshape(-1, shape[-1]).tolist()


def shaped_panels(title: str, shape: tuple[int, ...], name: str, panels: list[tuple[str, Any]],
                  what: str) -> Figure:
    """Side-by-side panels shaped like one tensor (the last one the difference of the first two), on one
    colour scale."""
    mine, right = float64(panels[0][1]).reshape(-1), float64(panels[1][1]).reshape(-1)
    grids = [(caption, as_grid(v, shape)) for caption, v in panels]
    grids.append(("difference (first − second)", as_grid((mine - right).tolist(), shape)))
    size = int(torch.tensor(shape).prod()) if shape else 1
    layout = f"shaped like {name} {tuple(shape)}" if len(shape) > 1 else \
        f"one square per entry of {name}" if shape else f"{name} is a single number"
    return Figure("heatmaps", title, grids, legend=f"Each square is one entry of {what}, {layout}.",
                  values=size <= 24)


def jacobian_panels(title: str, name: str, out_name: str, mine: torch.Tensor, right: torch.Tensor,
                    captions: tuple[str, str]) -> Figure:
    return Figure("heatmaps", title, [(captions[0], mine.tolist()), (captions[1], right.tolist()),
                                      ("difference (first − second)", (mine - right).tolist())],
                  legend=f"Rows: entries of {out_name}; columns: entries of {name} (both flattened).")


def graph_figures(view: Judging) -> list[Figure]:
    """The graph of the student's backward beside the reference's (where the student's was measured)."""
    mine = view.data.graph
    if not isinstance(mine, dict):
        return []
    right, names = reference_graph(view.problem, view.seed)
    if isinstance(right, dict):
        right = _relabelled(right, names, view.names)
    return [Figure("graphs", "The graph of backward, built with create_graph=True and drawn by torchviz: "
                             "yours, then the reference's", [("yours", mine), ("reference", right)])]


def _relabelled(graph: dict, old: list[str], new: list[str]) -> dict:
    """The reference's graph with its tensors named as the learner named them."""
    names = {}
    for a, b in zip(old, new):
        names[a], names[f"grad_{a}"] = b, f"grad_{b}"
    nodes = []
    for node, label, kind in graph.get("nodes", []):
        head, sep, rest = str(label).partition("\n")
        nodes.append([node, names.get(head, head) + sep + rest if kind != "op" else label, kind])
    return dict(graph, nodes=nodes)
