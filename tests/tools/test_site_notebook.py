"""Does the site show a traceback as the learner needs it: the learner's cells and the message in full,
each run of frames inside torch or Python folded into one line, and no path of the machine that ran it?
And do the lessons' section references take the site's numbers?"""

import nbformat

from tools.site_notebook import ANSI, link_references, scrub_outputs, scrub_paths, short_traceback

# An error output as IPython 8 writes it (ANSI colours, a header, frames, the message last).
TRACEBACK = [
    "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m",
    "\x1b[0;31mRuntimeError\x1b[0m                              Traceback (most recent call last)",
    ("Cell \x1b[0;32mIn[4], line 16\x1b[0m\n\x1b[1;32m     14\x1b[0m y \x1b[38;5;241m=\x1b[39m f(x)\n"
    "\x1b[0;32m---> 16\x1b[0m y\x1b[38;5;241m.\x1b[39mbackward()"),
    ("File \x1b[0;32m/work/project/.venv/lib/python3.11/site-packages/torch/_tensor.py:648\x1b[0m, in "
    "\x1b[0;36mTensor.backward\x1b[0;34m(self, gradient, retain_graph)\x1b[0m\n\x1b[1;32m    638\x1b[0m "
    "\x1b[38;5;28;01mif\x1b[39;00m has_torch_function_unary(\x1b[38;5;28mself\x1b[39m):"),
    ("File \x1b[0;32m/work/project/.venv/lib/python3.11/site-packages/torch/autograd/__init__.py:353"
     "\x1b[0m, in \x1b[0;36mbackward\x1b[0;34m(tensors, grad_tensors)\x1b[0m\n\x1b[1;32m    348\x1b[0m "
     "    retain_graph"),
    ("File \x1b[0;32m/home/someone/.pyenv/versions/3.11.7/lib/python3.11/contextlib.py:81\x1b[0m, in "
    "\x1b[0;36mContextDecorator.__call__.<locals>.inner\x1b[0;34m(*args)\x1b[0m\n    81 return func(*args)"),
    ("Cell \x1b[0;32mIn[3], line 9\x1b[0m, in \x1b[0;36mSquare.backward\x1b[0;34m(ctx, grad_out)\x1b[0m\n"
    "\x1b[0;32m----> 9\x1b[0m \x1b[38;5;28;01mreturn\x1b[39;00m grad_out \x1b[38;5;241m*\x1b[39m x"),
    ("\x1b[0;31mRuntimeError\x1b[0m: The size of tensor a (3) must match the size of tensor b (4) at "
    "non-singleton dimension 1 (saved in /tmp/run-123/cache/x.pt)"),
]


def plain(entries: list[str]) -> list[str]:
    return [ANSI.sub("", entry) for entry in entries]


def test_frames_inside_packages_fold_into_one_line_and_the_learners_stay():
    shown = plain(short_traceback(TRACEBACK))
    assert len(shown) == len(TRACEBACK) - 2  # three frames inside torch and Python: one line
    assert shown[2].startswith("Cell In[4], line 16") and "---> 16" in shown[2]
    assert shown[3] == ("File .../torch/_tensor.py:648, in Tensor.backward() (and 2 more frames inside "
                        "torch, contextlib)")
    assert shown[4].startswith("Cell In[3], line 9, in Square.backward") and "return grad_out * x" in shown[4]
    assert shown[-1].startswith("RuntimeError: The size of tensor a (3) must match")


def test_no_path_of_the_machine_is_left():
    text = "\n".join(plain(short_traceback(TRACEBACK)))
    assert not any(path in text for path in ("/work/", "/home/", "/tmp/", "site-packages"))
    assert "(saved in .../cache/x.pt)" in text
    assert scrub_paths("see /home/ana/course/data.csv and ~/.venv/lib/python3.11/site-packages/torch/nn.py") \
        == "see .../course/data.csv and .../torch/nn.py"


def test_every_output_of_a_notebook_is_scrubbed():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("f()", outputs=[
        nbformat.v4.new_output("error", ename="RuntimeError", evalue="x", traceback=TRACEBACK),
        nbformat.v4.new_output("stream", name="stdout", text="wrote /tmp/run-1/out.txt\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "PosixPath('/home/ana/x.py')"},
                               execution_count=1)])]
    scrub_outputs(nb)
    error, stream, result = nb.cells[0].outputs
    assert len(error.traceback) == len(TRACEBACK) - 2
    assert stream.text == "wrote .../run-1/out.txt\n"
    assert result.data["text/plain"] == "PosixPath('.../ana/x.py')"


def test_section_references_take_the_numbers_the_site_gives_the_headings():
    """The site numbers lesson 2's "## 4. ..." as "2.4.": "section 4" in lesson 2 reads "section 2.4",
    "Lesson 7, §8" reads "Lesson 7, §7.8"; headings, code and a number already dotted are left alone."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(
        "## 4. Keeping tensors\nAs section 4 explains, and Section 5 shows (see Lesson 7, §8), "
        "`section 3` stays code; section 2.4 is already numbered.")]
    link_references(nb, {2: "02-custom-functions", 7: "07-modern-functions"}, "02-custom-functions")
    text = nb.cells[0].source
    assert text.startswith("## 4. Keeping tensors\n")
    assert "As section 2.4 explains, and Section 2.5 shows" in text
    assert "{doc}`Lesson 7 <07-modern-functions>`, §7.8" in text
    assert "`section 3` stays code; section 2.4 is already numbered." in text
