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
    doc = (ROOT / "docs" / "findings.md").read_text()
    for code in CODES:
        assert f"| `{code}` |" in doc


def test_readme_mentions_every_command():
    readme = (ROOT / "README.md").read_text()
    for name in cli.commands:
        assert f"dshreplay {name}" in readme, name


def documented_sections() -> dict[str, str]:
    """docs/cli.md's sections, by title (`dshreplay`, `dshreplay fold`, `dshreplay fleet validate`, ...)."""
    text = (ROOT / "docs" / "cli.md").read_text()
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
                    assert f"  {flag}" in body or f", {flag}" in body, f"{title}: {flag} is not in docs/cli.md"
            else:
                assert (param.metavar or param.name.upper()) in body.split("\n", 3)[2], f"{title}: {param.name}"


def test_global_options_are_documented_before_and_after_the_command():
    sections = documented_sections()
    for title in ("dshreplay", "dshreplay fold", "dshreplay validate", "dshreplay fleet export"):
        for flag in ("--max-bytes SIZE", "--max-line SIZE", "--debug"):
            assert f"  {flag}" in sections[title], (title, flag)


def readme_row_keys(command: str) -> set[str]:
    """The keys README's paragraph on `command` gives a JSON row (`JSON: [{"a","b":[{...}]}]`),
    at the row's own level."""
    import re
    readme = (ROOT / "README.md").read_text()
    paragraph = readme.split(f"**`dshreplay {command} ", 1)[1].split("\n\n", 1)[0]
    listing = "JSON: `[{" in paragraph
    shape = paragraph.split("JSON: `[{" if listing else "JSON:\n`{" if "JSON:\n`{" in paragraph else "JSON: `{",
                            1)[1].split("}]`" if listing else "}`", 1)[0]
    depth, top = 0, []
    for part in re.split(r"([\[\]{}])", shape):
        if part in "[{" and part:
            depth += 1
        elif part in "]}" and part:
            depth -= 1
        elif depth == 0:
            top.append(part)
    return set(re.findall(r'"(\w+)"', "".join(top)))


def test_readme_names_every_key_of_each_listing_row_and_no_other(cli, builder, write_log):
    b = builder()
    first = b.user("one")
    b.tool_round("bash", '{"command":"ls"}', "a\n")
    b.compaction(first, first, "The user said one.")
    log = write_log(b)
    for command in ("shadows", "brackets", "provenance"):
        rows = cli(command, log, "--json").json()
        assert rows and all(set(row) == readme_row_keys(command) for row in rows), command
    assert readme_row_keys("provenance") == {"index", "seq", "type", "op", "sources", "origins", "spills",
                                             "replacedBy"}


def test_readme_names_every_key_of_inspect_and_usage_json(cli, builder, write_log):
    b = builder()
    b.user("one")
    b.assistant("two", usage={"inputTokens": 5, "outputTokens": 1})
    log = write_log(b)
    assert set(cli("inspect", log, "--json").json()) == readme_row_keys("inspect")
    usage = cli("usage", log, "--json").json()
    assert set(usage) == readme_row_keys("usage") == {"by", "rows", "total", "unpricedModels", "foldFailures",
                                                              "duplicates"}
    assert set(usage["total"]) == set(usage["rows"][0]) == {"key", "sessions", "calls", "failedCalls", "failedByCode",
                                                             "retries", "compactions", "tokens", "cost"}


def test_every_command_help_gives_one_example_of_itself():
    for name, command in all_commands():
        examples = [line.strip() for line in command.help.splitlines() if line.strip().startswith("Example:")]
        assert len(examples) == 1, name
        assert examples[0].startswith(f"Example: dshreplay {name} "), (name, examples[0])


def test_json_help_names_the_readme_section_and_paragraph_that_give_the_shape():
    import re
    readme = (ROOT / "README.md").read_text()
    sections = {m.group(1): m.start() for m in re.finditer(r"^### (.+)$", readme, re.M)}
    helps = {name: next(p.help for p in command.params if p.name == "as_json")
             for name, command in all_commands() if any(p.name == "as_json" for p in command.params)}
    assert helps["shadows"] == ('Print machine-readable JSON (its shape: README.md, section "Forensics", paragraph '
                                '"dshreplay shadows").')
    assert helps["fold"] == 'Print machine-readable JSON (its shape: README.md, section "dshreplay fold").'
    for name, text in helps.items():
        section, paragraph = re.fullmatch(r'Print machine-readable JSON \(its shape: README\.md, section "([^"]+)"'
                                          r'(?:, paragraph "([^"]+)")?\)\.', text).groups()
        start = next(at for title, at in sections.items() if title.startswith(section))
        end = min((at for at in sections.values() if at > start), default=len(readme))
        if paragraph is not None:
            assert f"**`{paragraph} " in readme[start:end] and paragraph == f"dshreplay {name.split()[-1]}", name
        assert "JSON" in readme[start:end] or "--json" in readme[start:end], name


def test_the_readme_inspect_sample_is_what_the_command_prints(cli, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    shown = readme.split("$ dshreplay inspect sample_logs/torn-tail.jsonl\n", 1)[1].split("```", 1)[0]
    lines = shown.splitlines()
    assert lines[-1] == "..." and len(lines) > 10  # (the counts by type left out)
    monkeypatch.chdir(ROOT)  # (the sample names the log as given, from the repository's folder)
    printed = cli("inspect", "sample_logs/torn-tail.jsonl").stdout.splitlines()
    assert printed[:len(lines) - 1] == lines[:-1]
