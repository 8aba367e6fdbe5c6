"""The export command: an audit bundle of many logs (bundle.export writes it).

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dshreplay.cli import (
    EXIT_BUG,
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    mapper_for,
    options_of,
    reporter_for,
    safe_text,
    say_answered_for,
    warn,
    warn_torn_tail,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    jobs_options,
    output_options,
    snapshot_option,
)
from dshreplay.io.reader import TornTail


@click.command(cls=DshCommand)
@click.argument("logs", nargs=-1, required=True, metavar="LOG_OR_DIR...")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The bundle folder to write (must be empty or absent).")
@click.option("--redact", "rules", type=click.Path(dir_okay=False),
              help='A JSON rules file: {"text": [RE2 regex], "pointers": [JSON pointer], "keys": [name]}.')
@click.option("--no-default-redaction", is_flag=True,
              help="Do not mask secrets by default (the rules of docs/reference/redaction.md: detect-secrets' "
                   "plugins and ours).")
@click.option("--timestamp", metavar="ISO", help="The generated-at time to record (default: "
              "SOURCE_DATE_EPOCH, else now); fix it for byte-identical bundles.")
@click.option("--force", is_flag=True, help="Replace an existing bundle in --out.")
@snapshot_option
@click.option("--sign-key", type=click.Path(dir_okay=False), metavar="KEY",
              help="Sign manifest.json with this Ed25519 private key (an OpenSSH key file, as ssh-keygen -t "
                   "ed25519 makes, or PEM; without a passphrase), writing manifest.json.sig as ssh-keygen -Y sign "
                   "-n dshreplay does; needs the sign extra.")
@click.option("--evidence-key", type=click.Path(dir_okay=False), metavar="FILE", envvar="DSHREPLAY_EVIDENCE_KEY",
              show_envvar=True,
              help="The evidence key that keys the inputs' hashes (HMAC-SHA256) when the export redacts: "
                   "required then, made if absent (mode 0600), refused inside --out. Keep it with the logs, "
                   "never with the bundle.")
@jobs_options
@output_options
def export(logs: tuple[str, ...], out: Path, rules: str | None, no_default_redaction: bool, timestamp: str | None,
           force: bool, snapshot: bool, sign_key: str | None, evidence_key: str | None, jobs: int | None, quiet: bool,
           output: Output) -> None:
    """Write an audit bundle: manifest, findings, events, every model request,
    shadows, brackets, approvals, transcript and an HTML report per session.

    Redaction applies to everything written, never to the inputs; when
    anything is redacted, the hashes of the inputs' bytes are keyed with
    --evidence-key, so none of them tells what was masked. The same inputs,
    rules, key and --timestamp give a byte-identical bundle. The last line is
    the bundle digest (`sha256sum manifest.json`: the manifest is written in
    its RFC 8785 canonical form): write it down, and `verify-export --digest`
    proves later that nothing in the bundle changed. Exit 1 when a session's
    verdict has errors, 2 when an input cannot be read (the others are still
    exported in both cases), or when the bundle cannot be written (a full
    disk: no bundle is left, an old one is kept whole). --force replaces
    only a folder that is a dshreplay bundle and holds no input; - reads
    standard input.

    Example: dshreplay export ~/.dsh/sessions --out bundle --evidence-key evidence.key
    """
    from dshreplay.bundle.export import ExportOptions
    from dshreplay.bundle.export import export as write_bundle
    from dshreplay.io._store import discover
    from dshreplay.redaction.redactor import engine_off, load_redactor
    redactor = load_redactor(rules, defaults=not no_default_redaction)
    read = options_of(jobs=jobs, quiet=quiet, redactor=redactor, snapshot=snapshot)
    options = ExportOptions(out, read, rules, timestamp, force, not no_default_redaction, sign_key, evidence_key)
    found = discover(logs)
    manifest = write_bundle(found, options, mapper_for(read, found))
    reporter_for(output).exported(out, manifest, manifest.digest)
    exported = any(e.get("verdict") not in ("unreadable", "internal-error") for e in manifest["sessions"])
    if exported and (off := engine_off(redactor)) is not None:  # (once sessions are written: how they were masked)
        warn(off)
    for entry in manifest["sessions"]:
        if entry.get("tornTail") is not None:
            warn_torn_tail(entry["input"], TornTail.from_json(entry["tornTail"], entry["encoding"]), " (not exported)")
        if entry.get("failure") is not None:
            say_answered_for(entry["input"], entry["failure"])
        if entry.get("verdict") in ("unreadable", "internal-error"):
            click.echo(f"dshreplay: {entry['verdict']}: {safe_text(entry['input'])}: {safe_text(entry['error'])}",
                       err=True)
    if any(e.get("verdict") == "internal-error" for e in manifest["sessions"]):
        sys.exit(EXIT_BUG)
    if any(e.get("verdict") == "unreadable" for e in manifest["sessions"]):
        sys.exit(EXIT_UNREADABLE)
    if any(e.get("verdict") == "errors" for e in manifest["sessions"]):
        sys.exit(EXIT_FINDINGS)
