"""Several `grade` commands in one grader start, joined by `--and`:

    python -m autograder grade --assignment A --out DIR_A SUBMISSION... --and --assignment B --out DIR_B ...

Each part is a whole `grade` command line (the contract's, unchanged), run one after the other in one
process: torch is imported and the workers' clean parent is started once, warmed up for every
assignment named, instead of once per assignment. Every part is checked (its options, paths and
assignment) before anything is graded; each --out must be its own. The exit status is the worst part's.
A command line without `--and` is cli.main's, as it was.
"""

from __future__ import annotations

import sys

from autograder import settings

JOIN = "--and"


def parts(argv: list[str]) -> list[list[str]]:
    """A `grade` command line split at each --and into whole `grade` command lines; any other, as it is."""
    if not argv or argv[0] != "grade" or JOIN not in argv:
        return [argv]
    found, current = [], []
    for arg in argv[1:]:
        if arg == JOIN:
            found.append(current)
            current = []
        else:
            current.append(arg)
    return [["grade", *part] for part in [*found, current]]


def main(argv: list[str] | None = None) -> int:
    from autograder import cli

    argv = sys.argv[1:] if argv is None else argv
    runs = parts(argv)
    if len(runs) == 1:
        return cli.main(argv)
    parser = cli.build_parser()
    commands = [parser.parse_args(run) for run in runs]
    _check(commands, cli)
    from autograder.packages import missing_packages_said, not_on_linux_said

    said = missing_packages_said() or not_on_linux_said("grade")
    if said:
        cli.fail(said)
    try:
        return _grade_all(commands, cli)
    except KeyboardInterrupt:
        print("\nautograder: " + cli.INTERRUPTED[0], file=sys.stderr)
        return 130


def _check(commands, cli) -> None:
    outs = [c.out.resolve() for c in commands]
    if len(set(outs)) < len(outs):
        cli.fail(f"Each grade command joined by {JOIN} needs its own --out: the results of two assignments "
                 f"in one folder would replace each other. Give each part another --out.")
    if len({c.no_isolation for c in commands}) > 1:
        cli.fail(f"--no-isolation is given to some of the grade commands joined by {JOIN} and not to "
                 f"others, and all of them share one grader: give it to all of them or to none.")
    for c in commands:
        cli.check_seed(c.seed)
        try:  # every part's limits (its command line, its --out's grading.toml) before anything is graded
            settings.resolve(c, c.out)
        except settings.SettingError as error:
            cli.fail(f"{error} Nothing was graded.")
        cli.check_paths(c)


class _Lent:
    """The one clean parent, lent to each part: a part's pipeline closes what it was given when it is
    done, and this one is closed once, after the last part."""

    def __init__(self, server):
        self._server = server

    def __getattr__(self, name):
        return getattr(self._server, name)

    def close(self) -> None:
        pass


def _grade_all(commands, cli) -> int:
    from autograder.sandbox.parent import import_torch

    import_torch()  # once, before the clean parent is forked, which then shares it

    from autograder.pipeline import warm_up
    from autograder.sandbox import ContainerUnavailable, Server
    from autograder.torch_versions import tell

    tell(sys.stderr)
    try:
        server = Server(fork=True, fallback=commands[0].no_isolation)
    except ContainerUnavailable as error:
        cli.fail(str(error))
    try:
        modules, checks = [], set()  # the clean parent warms up once (Server.warm_up): for every part
        for c in commands:
            more, extra = warm_up(cli.lookup(cli.load_extras(c.extra), c.assignment))
            modules += [m for m in more if m not in modules]
            checks |= set(extra)
        server.warm_up(tuple(modules), tuple(sorted(checks)))
        status = 0
        for c in commands:
            print(f"autograder: {c.assignment} -> {c.out}", file=sys.stderr)
            status = max(status, cli._grade(c, _Lent(server)))
        return status
    finally:
        server.close()
