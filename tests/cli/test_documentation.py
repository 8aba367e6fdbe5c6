"""Every command has help text, and the generated reference is current."""

from __future__ import annotations

import importlib.util

from dshreplay.cli import cli

from conftest import ROOT


def load_reference_script():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_commands():
    for name, command in cli.commands.items():
        yield name, command
        for child, sub in getattr(command, "commands", {}).items():
            yield f"{name} {child}", sub


def test_every_command_has_help_text():
    for name, command in all_commands():
        assert command.help and len(command.help.strip()) > 20, name
        for param in command.params:
            if param.param_type_name == "option":
                assert param.help, f"{name} {param.opts}"


def test_generated_docs_are_current():
    for path, text in load_reference_script().generated().items():
        assert path.read_text() == text, f"{path} is stale: run python scripts/make_docs.py"


def test_every_finding_code_is_documented():
    from dshreplay.analyses.findings import CODES
    doc = (ROOT / "docs" / "reference" / "findings.md").read_text()
    for code in CODES:
        assert f"| `{code}` |" in doc


def test_readme_mentions_every_command():
    readme = (ROOT / "README.md").read_text()
    for name in cli.commands:
        assert f"dshreplay {name}" in readme, name


def documented_sections() -> dict[str, str]:
    """docs/reference/cli.md's sections, by title (`dshreplay`, `dshreplay fold`, `dshreplay fleet validate`, ...)."""
    text = (ROOT / "docs" / "reference" / "cli.md").read_text()
    sections = {}
    for part in text.split("\n## ")[1:]:
        title, _, body = part.partition("\n")
        sections[title.strip()] = body
    return sections


def test_every_command_and_option_is_documented_in_the_reference():
    sections = documented_sections()
    commands = [("dshreplay", cli), *((f"dshreplay {name}", command) for name, command in all_commands())]
    assert sorted(sections) == sorted(title for title, _ in commands)
    for title, command in commands:
        assert command.help and len(command.help.strip()) > 20, title
        body = sections[title]
        for param in command.params:
            if param.param_type_name == "option":
                assert param.help, f"{title} {param.opts}: no help text"
                for flag in (*param.opts, *param.secondary_opts):
                    assert f"  {flag}" in body or f", {flag}" in body, \
                        f"{title}: {flag} is not in docs/reference/cli.md"
            else:
                assert (param.metavar or param.name.upper()) in body.split("\n", 3)[2], f"{title}: {param.name}"


def test_global_options_are_documented_before_and_after_the_command():
    sections = documented_sections()
    for title in ("dshreplay", "dshreplay fold", "dshreplay validate", "dshreplay fleet export"):
        for flag in ("--max-bytes SIZE", "--max-line SIZE", "--debug"):
            assert f"  {flag}" in sections[title], (title, flag)


JSON_SHAPES = ROOT / "docs" / "reference" / "json.md"


def shape_sections() -> dict[str, str]:
    """docs/reference/json.md's sections, by title (`dshreplay fold`, ...)."""
    return {part.partition("\n")[0].strip(): part.partition("\n")[2]
            for part in JSON_SHAPES.read_text().split("\n## ")[1:]}


def shape_keys(command: str) -> set[str]:
    """The keys docs/reference/json.md's section on `command` gives a JSON row (`JSON: `[{"a","b":[{...}]}]``),
    at the row's own level."""
    import re
    section = shape_sections()[f"dshreplay {command}"]
    listing = "JSON: `[{" in section
    shape = section.split("JSON: `[{" if listing else "JSON: `{", 1)[1].split("}]`" if listing else "}`", 1)[0]
    depth, top = 0, []
    for part in re.split(r"([\[\]{}])", shape):
        if part in "[{" and part:
            depth += 1
        elif part in "]}" and part:
            depth -= 1
        elif depth == 0:
            top.append(part)
    return set(re.findall(r'"(\w+)"', "".join(top)))


def test_the_reference_names_every_key_of_each_listing_row_and_no_other(cli, builder, write_log):
    b = builder()
    first = b.user("one")
    b.tool_round("bash", '{"command":"ls"}', "a\n")
    b.compaction(first, first, "The user said one.")
    log = write_log(b)
    for command in ("shadows", "brackets", "provenance"):
        rows = cli(command, log, "--json").json()
        assert rows and all(set(row) == shape_keys(command) for row in rows), command
    assert shape_keys("provenance") == {"index", "seq", "type", "op", "sources", "origins", "spills",
                                             "replacedBy"}


def test_the_reference_names_every_key_of_inspect_and_usage_json(cli, builder, write_log):
    b = builder()
    b.user("one")
    b.assistant("two", usage={"inputTokens": 5, "outputTokens": 1})
    log = write_log(b)
    assert set(cli("inspect", log, "--json").json()) == shape_keys("inspect")
    usage = cli("usage", log, "--json").json()
    assert set(usage) == shape_keys("usage") == {"by", "rows", "total", "unpricedModels", "foldFailures",
                                                              "duplicates"}
    assert set(usage["total"]) == set(usage["rows"][0]) == {"key", "sessions", "calls", "failedCalls", "failedByCode",
                                                             "retries", "compactions", "tokens", "cost"}


def test_every_command_help_gives_one_example_of_itself():
    for name, command in all_commands():
        examples = [line.strip() for line in command.help.splitlines() if line.strip().startswith("Example:")]
        assert len(examples) == 1, name
        assert examples[0].startswith(f"Example: dshreplay {name} "), (name, examples[0])


def test_json_help_names_the_reference_section_that_gives_the_shape():
    import re
    sections = shape_sections()
    helps = {name: next(p.help for p in command.params if p.name == "as_json")
             for name, command in all_commands() if any(p.name == "as_json" for p in command.params)}
    assert helps["shadows"] == ('Print machine-readable JSON (its shape: docs/reference/json.md, section '
                                '"dshreplay shadows").')
    assert helps["fleet stats"] == helps["stats"]
    for name, text in helps.items():
        section = re.fullmatch(r'Print machine-readable JSON \(its shape: docs/reference/json\.md, '
                               r'section "([^"]+)"\)\.', text).group(1)
        assert section == f"dshreplay {name.split()[-1]}", name
        assert re.search(r"JSON.{0,40}?`\[?\{", sections[section], re.I | re.S), name  # (a shape is given)


def test_the_bundle_reference_lists_each_csv_file_s_columns_in_order(cli, tmp_path):
    import re
    doc = (ROOT / "docs" / "reference" / "bundle.md").read_text()
    out = tmp_path / "bundle"
    cli("export", str(ROOT / "sample_logs" / "audit-demo.jsonl"), "--out", str(out), "--evidence-key",
        str(tmp_path / "key"))
    written = sorted(out.glob("*/*.csv"))
    assert [p.name for p in written] == ["approvals.csv", "events.csv", "tools.csv"]
    for path in written:
        table = doc.split(f"\n### {path.name}\n", 1)[1].split("\n#", 1)[0]
        columns = re.findall(r"^\| `(\w+)` \|", table, re.M)
        assert columns == path.read_text().splitlines()[0].split(","), path.name


def test_every_relative_link_of_the_docs_reaches_a_file_and_its_heading():
    import re

    def slug(heading: str) -> str:  # (as GitHub makes a heading's anchor)
        return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")

    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", file.read_text(), re.M)
                if anchor not in {slug(h) for h in headings}:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken
