"""CSV text cells a spreadsheet will not run: grades.csv and the Canvas import hold ids that come from
students' file names (and names from a roster), and a cell such as `=HYPERLINK(...)` or
`-2+3+cmd|' /C calc'!A0` is a formula to Excel, LibreOffice and Google Sheets.

Following OWASP's advice on CSV injection, a text cell that starts with =, +, -, @, a tab, a carriage
return or a line feed gets a leading apostrophe, which spreadsheets show as text. Plain numbers are left
alone (a number is no formula), and so that the grader reads back exactly what it wrote (export reads
grades.csv), a cell that starts with an apostrophe gets one more. A carriage return inside a cell
becomes a line feed: Python's csv module (with "\n" line ends) would not quote it, and a spreadsheet
would start a new row there.
"""

from __future__ import annotations

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def cell(value: str) -> str:
    """A text cell, neutralised when a spreadsheet could read it as a formula."""
    value = str(value).replace("\r\n", "\n").replace("\r", "\n")
    if value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value) or value.startswith("'"):
        return "'" + value
    return value


def read_cell(value: str) -> str:
    """The text that cell() was given."""
    if value.startswith("'") and (value[1:].startswith(FORMULA_START + ("'",))):
        return value[1:]
    return value
