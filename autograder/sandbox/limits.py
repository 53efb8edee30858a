"""What one submission may take in a worker: its times, memory, processes, files and output, and which of
the kernel's confinements it gets. Plain data, read on any system (the grader's settings and keys name it);
confine.py applies it, on Linux.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder import config


@dataclass(frozen=True)
class Limits:
    """Per submission. Times are wall-clock seconds, counted by the grader alone."""

    load_seconds: float = config.LOAD_SECONDS  # running all cells
    # measuring one problem (and, once more, explaining its failure); with scale_to_reference, the most a
    # problem gets: its own budget is budget.scaled() of its reference's time (pipeline.problem_jobs)
    problem_seconds: float = config.PROBLEM_SECONDS
    scale_to_reference: bool = True  # False where the instructor set problem_seconds: every problem gets it
    # address space on top of the clean parent's (the cgroup's: a bit above)
    memory_bytes: int = config.MEMORY_BYTES
    processes: int = config.PROCESSES  # processes and threads of the worker (its cgroup, or its user id)
    file_bytes: int = config.FILE_BYTES  # largest file a worker may write
    open_files: int = config.OPEN_FILES
    output_bytes: int = config.OUTPUT_BYTES  # printed output kept for the feedback
    tmp_bytes: int = config.TMP_BYTES  # a worker's own /tmp and folder, in a container (a tmpfs)
    # Keep CAP_DAC_READ_SEARCH after dropping to the worker uid (an interpreter under /root still imports);
    # Landlock then limits reading to the interpreter, its packages and the system's libraries. False drops
    # every capability: the worker reads only what its uid may, so a folder of mode 700 (Gradescope's
    # /autograder/source) is closed to it; Python must then be world-readable.
    keep_read_search: bool = True
    landlock: bool = True  # confine reads, writes, network and signals with Landlock where the kernel has it
    cgroups: bool = True  # a memory, CPU-share and process cgroup per worker where one can be written

    @staticmethod
    def problem_time(seconds: float | None) -> dict:
        """The fields for a problem time: a number given is every problem's; None, each problem's is scaled
        to its reference (the default)."""
        return {"scale_to_reference": True} if seconds is None else \
            {"problem_seconds": seconds, "scale_to_reference": False}

    def __post_init__(self):
        for name in ("load_seconds", "problem_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {getattr(self, name)!r}")
