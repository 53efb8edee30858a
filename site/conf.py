"""Sphinx configuration of the course web site, built by `make site` (tools/build_site.py).

tools/build_site.py copies this folder into build/site-src/ together with the lesson notebooks (their
committed outputs are rendered, nothing is executed) and a local copy of MathJax, then runs
sphinx-build with warnings as errors.
"""

import sys
from pathlib import Path

from autograder import RELEASE, REPOSITORY

# course_html (toggles, alt text, code lines), api_links, inline_icons (the theme's icons without a 1.5 MB script)
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

# The course's public repository and release are named in one place, autograder/__init__.py: the Binder
# and Colab launch links open the student notebooks of that release, whose first cell installs the
# package from the same release, and the repository button points there too. A fork changes it there.
BRANCH = RELEASE  # the git reference the launch links open
STUDENT_FOLDER = "course"  # where the student notebooks live in the repository (the launch links open them)
BINDER = "https://mybinder.org"
COLAB = "https://colab.research.google.com"

project = "autograd-course"
author = "the autograd-course authors"
copyright = "the autograd-course authors"
html_title = "Custom autograd Functions"

extensions = ["myst_nb", "sphinx_copybutton", "course_html", "api_links", "inline_icons", "search_terms"]
exclude_patterns = ["_build", "_ext/*", "_student/*", "_generated/*", "**.ipynb_checkpoints", "jupyter_execute"]

# The notebooks are shown with the outputs committed in solutions/: nothing is executed here, so the site
# shows exactly what the lessons' authors ran and checked.
nb_execution_mode = "off"
nb_output_stderr = "show"
nb_merge_streams = True
nb_ipywidgets_js = {}  # no widgets in the course, and never require.js from a CDN
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# Solutions are collapsed: tools/build_site.py wraps each written solution in a {course-toggle} that
# says what it hides (site/_ext/course_html.py), and marks code solutions with these prompts.
nb_code_prompt_show = "Show solution"
nb_code_prompt_hide = "Hide solution"

# MathJax is served by the site itself (tools/build_site.py puts it into _static/mathjax/), so pages
# work offline and load nothing from a CDN.
# Sphinx loads it only on pages with a formula. Its components, not the combined bundle: the TeX input and
# the CommonHTML output with the hidden MathML that screen readers read, without the 0.43 MB context menu.
mathjax_path = "mathjax/startup.js"
mathjax3_config = {
    "loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]},
    "options": {"enableMenu": False},
}

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["course.css"]
# Deferred, so that it runs after searchtools.js, which the theme loads at the end of every page's head.
html_js_files = [("course-search.js", {"defer": "defer"})]
html_favicon = "_static/favicon.svg"
html_context = {"default_mode": "light"}  # graphs and plots are drawn on white
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": BRANCH,
    "path_to_docs": STUDENT_FOLDER,
    "use_repository_button": True,
    "use_download_button": False,  # each lesson links its student notebook instead
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "launch_buttons": {"binderhub_url": BINDER, "colab_url": COLAB, "notebook_interface": "jupyterlab"},
    "navigation_with_keys": False,
    "navbar_persistent": [],  # the sidebar has the search field: no header bar above the page
}

copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"


def launch_url(service: str, docname: str) -> str:
    """The Binder or Colab address that opens the student version of lesson `docname`."""
    owner_repo = REPOSITORY.removeprefix("https://github.com/").strip("/")
    path = f"{STUDENT_FOLDER}/{docname}.ipynb"
    if service == "binder":
        return f"{BINDER}/v2/gh/{owner_repo}/{BRANCH}?urlpath=lab/tree/{path}"
    if service == "colab":
        return f"{COLAB}/github/{owner_repo}/blob/{BRANCH}/{path}"
    raise ValueError(f"unknown launch service {service!r} (binder or colab)")


def launch_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """{launch}`binder` or {launch}`colab`: a link that opens this lesson's student notebook there."""
    from docutils import nodes

    docname = inliner.document.settings.env.docname
    service = text.strip().lower()
    try:
        url = launch_url(service, docname)
    except ValueError as error:
        message = inliner.reporter.error(str(error), line=lineno)
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    label = {"binder": "Open in Binder", "colab": "Open in Colab"}[service]
    node = nodes.reference(rawtext, label, refuri=url, classes=["launch-link", f"launch-{service}"])
    return [node], []


def setup(app):
    app.add_role("launch", launch_role)
