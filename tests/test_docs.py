"""The user documentation (README.md, docs/*.md, the report's workflow description) against the
code and params it describes: it speaks to the tool's users, names every suite, task and figure,
its links resolve, and the demo's counts are those of params.yaml."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
INDEX = REPO / "docs" / "index.md"

# words about how the documentation was written rather than about the tool
NOT_FOR_USERS = re.compile(
    r"\bsessions?\b|\bthe issue\b|\bthis issue\b|\bissue's\b|\bissue \d+|\bsearch tool\b"
    r"|\bagents?\b|\bhelpers?\b|\blent\b",
    re.IGNORECASE,
)
# the legitimate uses: code helpers, and an upstream bug report by its name
ALLOWED = re.compile(
    r"figure and table helpers|shared helpers|upstream issue\s+\S+#\d+", re.IGNORECASE
)


def user_docs() -> list[Path]:
    return [README, *DOCS]


def suites():
    from vlstress.suites import registry

    return registry.suites()


def forbidden_phrases(text: str) -> list[str]:
    """The phrases of `text` that speak of the authoring rather than the tool (with line
    numbers)."""
    found = []
    for number, line in enumerate(ALLOWED.sub("", text).splitlines(), 1):
        found += [
            f"{number}: {m.group(0)!r} in {line.strip()!r}" for m in NOT_FOR_USERS.finditer(line)
        ]
    return found


def test_the_phrase_check_catches_authoring_talk_and_allows_code_helpers():
    assert forbidden_phrases("No GPU was lent to the session that measured this.")
    assert forbidden_phrases("found with the search tool")
    assert forbidden_phrases("the issue's scale")
    assert forbidden_phrases("before this issue")
    assert forbidden_phrases("a helper wrote it")
    assert not forbidden_phrases("report/ (records, task registry, figure and table helpers)")
    assert not forbidden_phrases("(upstream issue\nHarry24k/adversarial-attacks-pytorch#205)")


@pytest.mark.parametrize("path", user_docs(), ids=lambda p: p.name)
def test_docs_speak_to_the_tools_users(path):
    found = forbidden_phrases(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(REPO)}:\n" + "\n".join(found)


# --------------------------------------------------------------------------- links of the index


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped (not - or _),
    spaces to hyphens."""
    text = heading.strip().lower()
    kept = [
        c
        for c in text
        if c in " -_" or unicodedata.category(c)[0] in "LN"  # letters and digits
    ]
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a # in a code block is no heading
    return {github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.M)}


def test_github_anchor_matches_githubs_rules():
    assert github_anchor("Models (`models:` in `params.yaml`)") == "models-models-in-paramsyaml"
    assert github_anchor("Pricing a grid (`vlstress cost`)") == "pricing-a-grid-vlstress-cost"
    assert github_anchor("Both front ends, safely") == "both-front-ends-safely"


@pytest.mark.parametrize("path", [INDEX, README], ids=lambda p: p.name)
def test_relative_links_resolve(path):
    """Every relative link of the index (and the README) names a file that exists and, with a
    #fragment, a heading of it."""
    broken = []
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, fragment = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no heading #{fragment} in {linked.name}")
    assert not broken, "\n".join(broken)


def test_readme_starts_with_the_index():
    head = "\n".join(README.read_text(encoding="utf-8").splitlines()[:8])
    assert "(docs/index.md)" in head


# --------------------------------------------------------------------------- suites, tasks, figures


def figure_names() -> set[str]:
    """Every figure a suite's stages write (`results/figures/<name>.png`; a name per model or set
    keeps its placeholders as <...>)."""
    found = set()
    for suite in suites():
        for stage in suite.stages:
            for out in stage.outputs.values():
                m = re.fullmatch(r"results/figures/(.+)\.png", out.path)
                if m:
                    found.add(re.sub(r"\{(\w+)\}", r"<\1>", m.group(1)))
    return found


def test_index_answers_for_every_suite_and_shows_every_figure():
    text = INDEX.read_text(encoding="utf-8")
    results = text.split("## Read the results", 1)[1].split("\n## ", 1)[0]
    gallery = text.split("## Gallery", 1)[1].split("\n## ", 1)[0]
    missing = [
        s.name
        for s in suites()
        if f"| `{s.name}` (" not in results and f"| `{s.name}` |" not in results
    ]
    assert not missing, f"suites without a row in 'Read the results': {missing}"
    tasks = {task for s in suites() for task in s.tasks}
    assert not [t for t in tasks if f"`{t}`" not in results], "record tasks missing"
    normalise = lambda name: re.sub(r"<\w+>", "<>", name)  # noqa: E731
    shown = {normalise(n) for n in re.findall(r"`([\w<>-]+)\.png`", gallery)}
    missing = sorted(n for n in figure_names() if normalise(n) not in shown)
    assert not missing, f"figures missing from the gallery: {missing}"


def test_readme_lists_every_suite_and_record_task():
    text = README.read_text(encoding="utf-8")
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    records = text.split("**Records.**", 1)[1].split("\n\n", 1)[0]
    switches = text.split("**Suites.**", 1)[1].split("\n\n", 1)[0]
    for suite in suites():
        assert re.search(rf"\b{suite.name}\b", layout), f"{suite.name} missing from the Layout"
        if not suite.always:
            assert f"`{suite.name}`" in switches, f"{suite.name} missing from 'Suites.'"
        for task in suite.tasks:
            assert f"`{task}`" in records, f"task {task} ({suite.name}) missing from 'Records.'"


def test_architecture_map_lists_every_suite():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = text.split(" suites: ", 1)[1].split("```", 1)[0].split()
    assert sorted(listed) == sorted(s.name for s in suites())


# --------------------------------------------------------------------------- the demo's numbers

NUMBERS = "zero one two three four five six seven eight nine ten eleven twelve".split()


def test_readme_gives_the_demos_object_views_as_params_make_them():
    """The zero-shot set `objects` keeps some of the demo's labelled photos, six views each:
    the README's count is that of params.yaml."""
    from vlstress.testsets.materialised_kinds import DEMO_VIEWS

    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    kept = [c.strip() for c in params["zeroshot"]["testsets"]["objects"]["keep"].split(",")]
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert (
        f"classifies {len(kept) * len(DEMO_VIEWS)} views of {NUMBERS[len(kept)]} of those photos"
        in text
    )
    for name in kept:
        assert name in text


# ----------------------------------------------------------------------- the report's description


def render_workflow_description(config: dict) -> str:
    """workflow/report/workflow.rst as `snakemake --report` renders it (its Jinja environment and
    context), then through docutils, which stops at any warning."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    class Snakemake:
        pass

    Snakemake.config = config  # type: ignore[attr-defined]
    source = (REPO / "workflow" / "report" / "workflow.rst").read_text(encoding="utf-8")
    text = (
        Environment(trim_blocks=True, lstrip_blocks=True)
        .from_string(source)
        .render(snakemake=Snakemake, categories={}, files={})
    )
    publish_parts(text, writer="html", settings_overrides={"halt_level": 2, "report_level": 5})
    return text


def test_report_describes_every_suite_that_is_on():
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    names = [s.name for s in suites() if not s.always]
    text = render_workflow_description({**params, "suites": dict.fromkeys(names, True)})
    for name in names:
        line = next((x for x in text.splitlines() if x.startswith(f"- ``{name}``: ")), None)
        assert line is not None, f"suite {name} not described"
        assert "see the suite's documentation" not in line, f"suite {name} has no description"
    off = render_workflow_description({**params, "suites": {"zeroshot": True, "ood": False}})
    assert "- ``zeroshot``: " in off and "- ``ood``: " not in off
    assert "Switched off: ``ood``." in off
    none = render_workflow_description({**params, "suites": {}})
    assert "original retrieval only" in none
