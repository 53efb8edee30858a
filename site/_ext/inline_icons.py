"""The theme's few icons drawn inline, without Font Awesome's 1.5 MB script.

pydata-sphinx-theme writes its icons as `<i class="fa-solid fa-moon">` (or an empty <span>) and
loads Font Awesome's whole JavaScript library (every icon of every style, 1.56 MB) to replace each of
them with an <svg> when the page loads. Once the pages are written, this extension makes that
replacement itself: every icon becomes the same <svg> the library would have made (its classes,
attributes and path, taken from the theme's own copy of the library), the script is no longer loaded,
and its file is left out of the site. A page then weighs what it shows; an icon the library does not
have stops the build.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from sphinx.errors import ExtensionError

SCRIPT = "_static/scripts/fontawesome.js"
SCRIPT_TAG = re.compile(r'\s*<script[^>]*src="[^"]*scripts/fontawesome\.js[^"]*"[^>]*></script>')
ICON_TAG = re.compile(
    r'<(?P<tag>i|span) (?P<attrs>[^>]*\bclass="(?P<classes>[^"]*\bfa-[^"]*)"[^>]*)></(?P=tag)>')
# The packs of the library, each defined as `var b={name:[width,height,[aliases],"code","path"],...}`
# and registered with p("fas",b) (solid), p("far",b) (regular), p("fab",b) (brands).
PACK_END = re.compile(r'p\("(fas|far|fab)",b\)')
ICON = re.compile(r'(?:"(?P<quoted>[\w-]+)"|(?P<bare>[A-Za-z_$][\w$]*)):\[(?P<w>\d+),(?P<h>\d+),\[[^\]]*\],'
                  r'"[0-9a-f]*",(?P<path>"[^"]*"|\[[^\]]*\])\]')
PREFIXES = {"fa-solid": "fas", "fas": "fas", "fa-regular": "far", "far": "far", "fa-brands": "fab",
            "fab": "fab"}
STYLE_CLASSES = {"fa-solid", "fa-regular", "fa-brands", "fas", "far", "fab", "fa"}
SIZE_CLASSES = re.compile(r"^fa-(?:lg|sm|xs|2xs|xl|2xl|\dx|fw|spin|pulse|beat|fade|flip|shake|bounce)$")


def packs(library: str) -> dict[str, dict[str, tuple[int, int, str]]]:
    """{prefix: {icon name: (width, height, path)}} from the text of the library."""
    found: dict[str, dict[str, tuple[int, int, str]]] = {}
    start = 0
    for end in PACK_END.finditer(library):
        icons = found.setdefault(end.group(1), {})
        for icon in ICON.finditer(library, start, end.start()):
            path = icon.group("path")
            # a duotone icon's path is a list of two; the free packs have strings
            path = re.findall(r'"([^"]*)"', path)[-1] if path.startswith("[") else path[1:-1]
            icons.setdefault(icon.group("quoted") or icon.group("bare"),
                             (int(icon.group("w")), int(icon.group("h")), path))
        start = end.end()
    return found


def svg(match: re.Match, icons: dict) -> str:
    classes = match.group("classes").split()
    prefix = next((PREFIXES[c] for c in classes if c in PREFIXES), "fas")
    names = [c.removeprefix("fa-") for c in classes
             if c.startswith("fa-") and c not in STYLE_CLASSES and not SIZE_CLASSES.match(c)]
    name = next((n for n in names if n in icons.get(prefix, {})), None)
    if name is None:
        raise ExtensionError(f"inline_icons: Font Awesome has no icon for <i class=\"{' '.join(classes)}\">")
    width, height, path = icons[prefix][name]
    other = re.sub(r'\s*\bclass="[^"]*"', "", match.group("attrs")).strip()
    hidden = "" if "aria-hidden" in other else 'aria-hidden="true" '
    return (f'<svg class="svg-inline--fa {escape(" ".join(classes))}" {other + " " if other else ""}'
            f'{hidden}focusable="false" data-prefix="{prefix}" data-icon="{name}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}">'
            f'<path fill="currentColor" d="{path}"></path></svg>')


def inline_icons(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    script = out / SCRIPT
    if not script.exists():
        return
    icons = packs(script.read_text(encoding="utf-8"))
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        new = ICON_TAG.sub(lambda m: svg(m, icons), SCRIPT_TAG.sub("", html))
        if new != html:
            page.write_text(new, encoding="utf-8")
    script.unlink()
    for extra in script.parent.glob("fontawesome.js.*"):  # its source map and licence comments
        extra.unlink()


def setup(app):
    app.connect("build-finished", inline_icons)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
