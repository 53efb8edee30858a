"""Do the two descriptions of the environment, requirements.txt and environment.yml, agree?"""


import yaml

from tests.conftest import ROOT


def requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def environment_pip() -> list[str]:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    sections = [item["pip"] for item in environment["dependencies"]
                if isinstance(item, dict) and "pip" in item]
    assert len(sections) == 1, "environment.yml should have one pip: section under dependencies"
    return [str(line).strip() for line in sections[0]]


def pins(lines: list[str]) -> dict[str, str]:
    """{normalised package name: version} of `name==version` lines."""
    result = {}
    for line in lines:
        name, _, version = line.partition("==")
        result[name.strip().lower().replace("_", "-")] = version.strip()
    return result


def test_every_requirement_is_pinned():
    """Is every line of requirements.txt and of environment.yml's pip section pinned with `==`?"""
    loose = [line for line in requirements() + environment_pip() if "==" not in line]
    assert loose == [], "pin these to one version (name==version)"


def test_requirements_and_environment_pin_the_same_versions():
    """Do requirements.txt and environment.yml's pip section pin exactly the same packages and versions?"""
    assert pins(requirements()) == pins(environment_pip())


def test_no_package_is_listed_twice():
    """Is each package pinned once only in each file?"""
    for lines in (requirements(), environment_pip()):
        names = list(pins(lines))
        assert len(names) == len(lines), "a package is listed twice"
