"""Does the course web site work in a real browser, offline?

Chromium (Debian's, driven by Playwright) opens build/site/ served on 127.0.0.1. Every request that would
leave this machine is recorded and refused, so a page that needs the network fails here. The site is
built first when build/site/ is missing or older than its sources. A full-page screenshot of every
page is left in build/site-screenshots/ to look at.
"""

from __future__ import annotations

import functools
import http.server
import ipaddress
import json
import runpy
import shutil
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import ROOT
from tools import build_site

pytestmark = pytest.mark.browser

SITE = ROOT / "build" / "site"
SCREENSHOTS = ROOT / "build" / "site-screenshots"
LESSONS = [path.stem for path in build_site.lessons(ROOT / "solutions")]
PAGES = sorted(path.stem for path in (ROOT / "site").glob("*.md") if path.stem != "index")  # instructors, ...
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 60_000  # generous: CI machines are small and MathJax typesets whole lessons


def newest_source() -> float:
    paths = [*(ROOT / "solutions").glob("*.ipynb"), *(ROOT / "course").glob("*.ipynb"),
             *(p for p in (ROOT / "site").rglob("*") if p.is_file()),
             ROOT / "tools" / "build_site.py", ROOT / "tools" / "make_student.py"]
    return max(p.stat().st_mtime for p in paths)


@pytest.fixture(scope="session")
def site() -> Path:
    """build/site/, with solutions, built now if it is missing or older than any of its sources."""
    stamp = SITE / build_site.STAMP
    fresh = (
        stamp.exists()
        and json.loads(stamp.read_text()).get("solutions") is True
        and stamp.stat().st_mtime >= newest_source()
    )
    if not fresh:
        build_site.build(with_solutions=True)
    return SITE


@pytest.fixture(scope="session")
def base_url(site):
    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(QuietHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Chromium is not installed: run `make setup-browser` (it installs Debian's chromium).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    host = parts.hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Page:
    """A browser tab that records console errors, failed loads and requests that leave the machine."""

    def __init__(self, context, base_url: str):
        self.base_url = base_url
        self.problems: list[str] = []
        self.external: list[str] = []
        context.route("**/*", self._route)
        self.tab = context.new_page()
        self.tab.set_default_timeout(TIMEOUT_MS)
        self.tab.on("console",
                    lambda m: m.type == "error" and self.problems.append(f"console error: {m.text}"))
        self.tab.on("pageerror", lambda e: self.problems.append(f"uncaught exception: {e}"))
        self.tab.on("requestfailed", self._failed)
        self.tab.on("response",
                    lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))

    def _route(self, route):
        if is_local(route.request.url):
            route.continue_()
        else:
            self.external.append(route.request.url)
            route.abort("blockedbyclient")

    def _failed(self, request):
        if is_local(request.url):
            self.problems.append(f"failed to load {request.url}: {request.failure}")

    def open(self, path: str):
        self.tab.goto(self.base_url + path, wait_until="load")
        # MathJax typesets after the load event: wait until it is done (or failed, which then shows).
        self.tab.evaluate("() => window.MathJax?.startup?.promise ?? null")
        return self.tab

    @property
    def path(self) -> str:
        return self.tab.url.removeprefix(self.base_url).split("#")[0].split("?")[0]


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Page(context, base_url)
    context.close()


def lesson_with(site: Path, marker: str) -> str:
    """The first lesson page whose HTML contains `marker`."""
    for name in LESSONS:
        if marker in (site / f"{name}.html").read_text():
            return name
    pytest.skip(f"no lesson has {marker!r} yet")


def test_there_are_lessons_to_show():
    """Is there at least one lesson notebook in solutions/ for the site to show?"""
    assert LESSONS, "solutions/ has no NN-slug.ipynb lesson"


@pytest.mark.parametrize("name", ["index", *LESSONS, *PAGES])
def test_page_loads_offline_without_errors(page, site, name):
    """Does the page load with no console error, no broken resource and no request off this machine?"""
    tab = page.open(f"{name}.html")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)
    assert page.external == [], f"{name}.html asked for resources off this machine"
    assert page.problems == []
    broken = tab.evaluate("() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                          ".map(i => i.getAttribute('src'))")
    assert broken == [], "images that did not load"
    if tab.locator("article .math").count():
        assert tab.locator("article mjx-container").count() > 0, "the local MathJax typeset no formula"


def test_next_goes_through_the_lessons_in_order(page, site):
    """Starting from the home page, does "next" visit every lesson in order, then the instructors page?"""
    tab = page.open("index.html")
    visited = []
    while tab.locator("a.right-next").count():
        tab.locator("a.right-next").first.click()
        tab.wait_for_load_state("load")
        visited.append(page.path.removesuffix(".html"))
        assert len(visited) <= len(LESSONS) + 5, f"'next' goes round in circles: {visited}"
    assert visited == [*LESSONS, "instructors"]
    # and "previous" goes back
    tab.locator("a.left-prev").first.click()
    tab.wait_for_load_state("load")
    assert page.path == f"{LESSONS[-1]}.html"
    assert page.problems == [] and page.external == []


def test_search_finds_the_gradcheck_lesson(page, site):
    """Does typing "gradcheck" in the search box list the gradcheck lesson?"""
    gradcheck = [name for name in LESSONS if "gradcheck" in name]
    if not gradcheck:
        pytest.skip("no gradcheck lesson yet")
    tab = page.open("index.html")
    tab.locator(".search-button-field, .search-button__button").first.click()
    field = tab.locator("#pst-search-dialog input[name=q]")
    field.fill("gradcheck")
    field.press("Enter")
    tab.wait_for_url("**/search.html?q=gradcheck*")
    results = tab.locator("#search-results ul.search li a")
    results.first.wait_for()
    hrefs = [results.nth(i).get_attribute("href") for i in range(results.count())]
    assert any(gradcheck[0] in href for href in hrefs), hrefs
    assert page.problems == [] and page.external == []


def test_every_graph_is_drawn(page, site):
    """Is every autograd graph (an SVG cell output) on every lesson page visible, with a non-zero size?"""
    graphs_seen = 0
    for name in LESSONS:
        tab = page.open(f"{name}.html")
        graphs = tab.locator("div.cell_output img[src$='.svg']")
        for i in range(graphs.count()):
            graph = graphs.nth(i)
            graph.scroll_into_view_if_needed()
            box = graph.bounding_box()
            assert graph.is_visible(), f"{name}: graph {i + 1} is hidden"
            assert box and box["width"] > 10 and box["height"] > 10, f"{name}: graph {i + 1} is {box}"
            assert graph.evaluate("img => img.naturalWidth") > 0, f"{name}: graph {i + 1} did not load"
        graphs_seen += graphs.count()
    assert graphs_seen > 0, "no lesson shows an autograd graph"
    assert page.problems == [] and page.external == []


def test_code_solution_toggle_opens_and_closes(page, site):
    """Is a code solution collapsed behind "Show solution", and does a click open and close it?"""
    name = lesson_with(site, "hide above-input")
    tab = page.open(f"{name}.html")
    details = tab.locator("div.cell details.hide.above-input").first
    code = details.locator(".cell_input")
    summary = details.locator("summary")
    summary.scroll_into_view_if_needed()
    assert not code.is_visible()
    assert summary.inner_text().strip() == "Show solution"
    summary.click()
    code.wait_for(state="visible")
    assert summary.inner_text().strip() == "Hide solution"
    summary.click()
    code.wait_for(state="hidden")
    assert summary.inner_text().strip() == "Show solution"


def test_written_answer_toggle_opens_and_closes(page, site):
    """Is a written answer (a Predict exercise) collapsed behind "Show solution", opening on a click?"""
    name = lesson_with(site, 'class="toggle docutils container"')
    tab = page.open(f"{name}.html")
    details = tab.locator("details.toggle-details").first
    answer = details.locator(".toggle-details__container")
    summary = details.locator("summary")
    summary.scroll_into_view_if_needed()
    assert not answer.is_visible()
    assert summary.inner_text().strip() == "Show solution"
    summary.click()
    answer.wait_for(state="visible")
    assert summary.inner_text().strip() == "Hide solution"
    summary.click()
    answer.wait_for(state="hidden")


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_links_its_student_notebook(page, site, name):
    """Does the lesson link the student notebook (served by the site) and open it in Binder and Colab?"""
    tab = page.open(f"{name}.html")
    download = tab.locator(".lesson-links a.download")
    response = tab.request.get(page.base_url + download.get_attribute("href"))
    assert response.ok
    assert response.body() == (ROOT / "course" / f"{name}.ipynb").read_bytes(), "not the student version"

    repository = urlsplit(build_site_config("REPOSITORY")).path.strip("/")
    branch = build_site_config("BRANCH")
    binder = tab.locator(".lesson-links a.launch-binder").get_attribute("href")
    colab = tab.locator(".lesson-links a.launch-colab").get_attribute("href")
    assert binder == f"https://mybinder.org/v2/gh/{repository}/{branch}?urlpath=lab/tree/course/{name}.ipynb"
    assert colab == f"https://colab.research.google.com/github/{repository}/blob/{branch}/course/{name}.ipynb"


@functools.cache
def _conf() -> dict:
    return runpy.run_path(str(ROOT / "site" / "conf.py"))


def build_site_config(name: str):
    """A value of site/conf.py, as the build saw it (the same environment variables apply)."""
    return _conf()[name]
