"""The commands that check: validate (logs) and verify-export (a bundle and its inputs).

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from dshreplay.cli import (
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    mapper_for,
    options_of,
    reporter_for,
    say_error,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    jobs_options,
    output_options,
    snapshot_option,
)
from dshreplay.cli._params import CODES
from dshreplay.options import Options


@click.command(cls=DshCommand)
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@snapshot_option
@click.option("--select", type=CODES, metavar="CODES",
              help="Report only these finding codes or prefixes, comma-separated (e.g. DSH-E1,DSH-W).")
@click.option("--ignore", type=CODES, metavar="CODES",
              help="Never report these finding codes or prefixes, comma-separated.")
@click.option("--all-findings", is_flag=True,
              help="List every finding (by default 1,000 per code are listed and the rest counted); a "
                   "record lists 20 schema errors at most either way, then one finding says it has more.")
@jobs_options
@output_options
def validate(logs: tuple[str, ...], strict: bool, snapshot: bool, select: frozenset[str] | None,
             ignore: frozenset[str] | None, all_findings: bool, jobs: int | None, quiet: bool, output: Output) -> None:
    """Check that logs are intact and well-formed, in one streaming pass each.

    Checks every record against the JSON Schemas, the format rules (seqs,
    layouts, packed rows, known types, torn tails), dsh's surface fold, and
    the relations between events (turns, steps, tool calls, compaction
    brackets, metering). Each finding has a stable code (docs/reference/findings.md),
    a severity, and its seq, line and JSON pointer. Exit 0 when no file has
    an error, 1 when one does (or a warning, with --strict), 2 when a file
    cannot be read to its end, as in every command (no header, a size
    ceiling: the findings of what was read are still listed). A line that
    is not JSON is a finding (DSH-E001): the lines after it are read; a
    corrupt zstd frame is one (DSH-E013): nothing after it can be read.
    When schema errors are snapshot placeholders, one line on stderr
    suggests --snapshot.

    Example: dshreplay validate sample_logs/broken-seq-gap.jsonl --json
    """
    options = options_of(snapshot=snapshot, select=select, ignore=ignore or frozenset(), jobs=jobs,
                         quiet=quiet, all_findings=all_findings)
    from dshreplay.io._store import discover
    found = discover(logs)
    reports = mapper_for(options, found)(_validate_one, [(log, options) for log in found])
    reporter_for(output).validate(reports)
    for report in reports:
        if report.unreadable is not None or report.stopped is not None:  # (the rest of a log was not read)
            say_error(report.unreadable or report.stopped)
    placeholders = sum(r.placeholder_errors for r in reports)
    if placeholders and not snapshot:  # (one hint for the run, however many findings they caused)
        are = "1 schema error is a value" if placeholders == 1 else f"{placeholders} schema errors are values"
        click.echo(f"dshreplay: hint: {are} such as \"{{{{tools}}}}\", the placeholders of dsh's test "
                   "snapshots: validate them with --snapshot", err=True)
    if any(r.unreadable or r.stopped for r in reports):
        sys.exit(EXIT_UNREADABLE)
    from dshreplay.analyses.findings import ERROR, WARNING
    failing = (ERROR, WARNING) if strict else (ERROR,)
    if any(r.count(severity) for r in reports for severity in failing):
        sys.exit(EXIT_FINDINGS)


def _validate_one(item: tuple[str, Options]) -> Any:
    log, options = item
    from dshreplay.analyses.validate import validate_log
    return validate_log(log, options)


@click.command("verify-export", cls=DshCommand)
@click.argument("bundle", type=click.Path(file_okay=False, path_type=Path))
@click.option("--inputs", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Look for the inputs only in DIR (by the path they were given as, an absolute one taken "
                   "as relative to DIR, then by name).")
@click.option("--bundle-only", is_flag=True, help="Check the bundle alone; inputs not found are listed, "
                                                  "not failed.")
@click.option("--grown", is_flag=True, help="Accept inputs that only grew since the export (the exported lines "
                                            "unchanged, byte for byte) and report what was appended.")
@click.option("--digest", metavar="HEX", help="The bundle digest written down at export time (sha256:..., "
                                             "what sha256sum manifest.json prints).")
@click.option("--public-key", type=click.Path(dir_okay=False), metavar="FILE",
              help="Check the bundle's signature with this Ed25519 public key: an OpenSSH public key "
                   "(ssh-ed25519 AAAA...), an allowed_signers file (read as ssh-keygen -Y verify reads it: "
                   "principals, namespaces, valid-after, valid-before), or PEM.")
@click.option("--principal", metavar="ID", default="dshreplay", show_default=True,
              help="Who must have signed the bundle, when --public-key is an allowed_signers file (as "
                   "ssh-keygen -Y verify -I ID).")
@click.option("--evidence-key", type=click.Path(dir_okay=False), metavar="FILE", envvar="DSHREPLAY_EVIDENCE_KEY",
              show_envvar=True, help="The evidence key the export was given: checks the inputs of a bundle "
                                     "whose export redacted (their hashes are keyed).")
@output_options
def verify_export_command(bundle: Path, inputs: Path | None, bundle_only: bool, grown: bool, digest: str | None,
                          public_key: str | None, principal: str, evidence_key: str | None,
                          output: Output) -> None:
    """Re-hash a bundle and its inputs; say what differs and what went unchecked.

    Shows when the bundle was made and each input's size at export.

    Every file of the bundle must match the manifest (size and SHA-256), no
    file may be missing or added, and each input must be found and match
    (unless --bundle-only). The manifest itself is checked only against
    --digest or the signature (--public-key); the inputs of a bundle whose
    export redacted only with --evidence-key. With --grown, what the bundle
    does not cover of a log that grew is reported. Exit 0 when everything
    checked matches, 1 on any difference or when neither --digest nor the
    signature vouched for the bundle's own files (inputs that match vouch
    for the inputs only; no session), 2 when BUNDLE is not a bundle.

    Example: dshreplay verify-export bundle --inputs ~/.dsh/sessions
    """
    from dshreplay.bundle.verify import verify_export
    result = verify_export(bundle, inputs=inputs, bundle_only=bundle_only, grown=grown, digest=digest,
                           public_key=public_key, evidence_key=evidence_key, principal=principal,
                           options=options_of())
    reporter_for(output).verify(result)
    if not result.ok:
        sys.exit(EXIT_FINDINGS)
