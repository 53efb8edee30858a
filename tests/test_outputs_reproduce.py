"""The committed outputs of solutions/ do not depend on the machine that wrote them.

`make test` runs nbval on the lessons with the machine's own kernels and thread count. Here nbval runs
them again as another machine would: one thread, and the plainest kernels of ATen (no SIMD), MKL
(SSE4.2) and oneDNN (SSE4.1). Those round differently (they add in another order, even draw random
numbers with other last bits), so a float printed to more digits than it means, or a plot of such
floats, differs here, and the failure names its cell (docs/STYLE.md, "Deterministic output"). The
sanitising is make test's own: timings, addresses and memory figures only.
"""

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

ANOTHER_MACHINE = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",  # torch.get_num_threads() is 1 in the kernel
    "ATEN_CPU_CAPABILITY": "default",  # PyTorch's own kernels without SIMD: other sums, other random draws
    "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",  # matrix products through MKL's SSE4.2 code
    "ONEDNN_MAX_CPU_ISA": "SSE41",  # convolutions through oneDNN's SSE4.1 code
}


def another_machine() -> dict:
    return {**os.environ, "PYTHONHASHSEED": "0", **ANOTHER_MACHINE}


def test_the_kernel_runs_as_another_machine():
    """Do the variables take effect (else the run below would repeat make test's own)?"""
    probe = "import torch; print(torch.get_num_threads(), torch.backends.cpu.get_cpu_capability())"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env=another_machine(), check=True)
    assert result.stdout.split() == ["1", "DEFAULT"]


@pytest.mark.slow
def test_committed_outputs_reproduce_on_another_machine():
    """nbval as make test runs it, in the environment above: does every committed output come back?"""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--color=no", "--nbval",
               "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "solutions"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=another_machine(),
                            timeout=1800, check=False)
    failed = [line for line in result.stdout.splitlines() if line.startswith("FAILED")]
    assert result.returncode == 0, (
        f"outputs differ with {ANOTHER_MACHINE}: print what the lesson means at the precision it means "
        "(docs/STYLE.md, 'Deterministic output').\n" + "\n".join(failed) + "\n" + result.stdout[-8000:])
