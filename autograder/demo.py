"""`make demo`: grades the bundled example class of each assignment and shows where the feedback is.

    python -m autograder.demo [OUT]      (default OUT: demo-feedback/)
"""

import sys
import time
from pathlib import Path

from autograder.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(out: Path) -> int:
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        print(f"\n== assignment {folder.name}: {len(list(folder.iterdir()))} submissions in {folder}")
        start = time.monotonic()
        status = main(["grade", "--assignment", folder.name, "--out", str(out / folder.name), "--force",
                       str(folder)])
        print(f"graded in {time.monotonic() - start:.1f} s")
        if status:
            return status
    print(f"\nOpen the feedback pages in a browser, e.g. "
          f"{out.resolve() / 'custom-functions' / 'bob' / 'feedback.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("demo-feedback")))
