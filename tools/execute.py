"""Executes notebooks in place so their committed outputs are fresh: python -m tools.execute NB.ipynb...

Cells tagged `raises-exception` may fail (the "what goes wrong here" demonstrations); any other error
stops with the cell that raised it.
"""

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def merged_streams(outputs: list) -> list:
    """Consecutive writes to the same stream as one output: how the kernel split them depends on the
    machine's load, and would otherwise change the committed notebook from one run to the next."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (previous is not None and output.output_type == previous.output_type == "stream"
                and output.name == previous.name):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def execute(path: Path, timeout: int = 600) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)
    nbformat.write(nb, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # C++ warnings (vmap's fallback in lesson 8) go to the kernel's stderr straight, reaching a cell's
    # outputs or not depending on when the kernel reads it: left out, so that outputs reproduce.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    for path in args.notebooks:
        print(f"executing {path}", flush=True)
        try:
            execute(path)
        except CellExecutionError as error:
            print(f"{path}: a cell failed and is not tagged raises-exception:\n{error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
