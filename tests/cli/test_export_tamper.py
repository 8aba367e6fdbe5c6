"""Tamper evidence: a bundle's digest, its file list, and its inputs, checked by verify-export."""

from __future__ import annotations

import json
import shutil

import pytest
import rfc8785

from conftest import SAMPLES

STAMP = "2026-01-01T00:00:00Z"


@pytest.fixture
def exported(cli, tmp_path):
    """Two inputs exported; returns (bundle, inputs folder, digest printed as the last line)."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name in ("prune.jsonl", "compaction.jsonl"):
        shutil.copy(SAMPLES / name, inputs / name)
    result = cli("export", inputs / "prune.jsonl", inputs / "compaction.jsonl", "--out", tmp_path / "b",
                 "--timestamp", STAMP)
    last = result.stdout.splitlines()[-1]
    assert last.startswith("bundle digest: sha256:") and len(last) == len("bundle digest: sha256:") + 64
    return tmp_path / "b", inputs, last.removeprefix("bundle digest: ")


def problems(cli, *args, expect=1) -> list:
    out = cli("verify-export", *args, "--json", expect=expect).json()
    return [(d["path"], d["problem"]) for d in out["differences"]]


def test_the_digest_is_the_sha256_of_the_manifest_written_in_its_rfc8785_form(exported):
    import hashlib

    import rfc8785
    bundle, _, digest = exported
    written = (bundle / "manifest.json").read_bytes()
    assert digest == "sha256:" + hashlib.sha256(written).hexdigest()  # `sha256sum manifest.json`
    manifest = json.loads(written)
    assert rfc8785.dumps(manifest) == written  # its own canonical form, and nothing else (no newline)
    assert manifest["integrity"]["canonical"] == "rfc8785"
    assert manifest["format"] == 4


def test_a_file_edited_with_its_manifest_entry_passes_alone_but_not_against_the_digest(cli, exported):
    bundle, _, digest = exported
    report = bundle / "sample-prune" / "report.html"
    report.write_text(report.read_text() + "<!-- edited -->")
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    from dshreplay.bundle._layout import sha256_file
    for entry in manifest["files"]:
        if entry["path"] == "sample-prune/report.html":
            entry["size"], entry["sha256"] = report.stat().st_size, sha256_file(report)
    (bundle / "manifest.json").write_bytes(rfc8785.dumps(manifest))
    # consistent with itself, and the inputs match (the evidence key checks them): but nothing the
    # user holds vouched for report.html, so neither "ok" nor "verified" (it said both)
    out = cli("verify-export", bundle, "--json", expect=1).json()
    assert out["differences"] == [] and out["inputsVerified"] == 2
    assert (out["ok"], out["bundleVerified"], out["manifestCheckedBy"]) == (False, False, [])
    assert cli("verify-export", bundle, expect=1).stdout.splitlines()[-1] == (
        f"{bundle}: not verified: every input matches the manifest, but no digest or signature vouched for the "
        "bundle's own files, and a manifest rewritten with them matches too (give --digest or --public-key)")
    [(path, problem)] = problems(cli, bundle, "--digest", digest)  # ...but not what was written down
    assert path == "manifest.json" and problem.startswith("the bundle digest is sha256:")
    assert problem.endswith(f"not the {digest} written down at export")


def test_an_edited_a_deleted_and_an_added_file_are_each_named(cli, exported):
    bundle, _, digest = exported
    (bundle / "sample-prune" / "events.csv").write_text("seq\n")
    (bundle / "sample-compaction" / "transcript.md").unlink()
    (bundle / "smuggled.txt").write_text("x")
    assert problems(cli, bundle, "--digest", digest) == [
        ("sample-compaction/transcript.md", "listed in the manifest but missing"),
        ("sample-prune/events.csv", f"size changed: 4 bytes, manifest says "
                                    f"{_listed_size(bundle, 'sample-prune/events.csv')}"),
        ("smuggled.txt", "not listed in the manifest (added)")]


def _listed_size(bundle, path) -> int:
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    return next(f["size"] for f in manifest["files"] if f["path"] == path)


def test_two_inputs_swapped_are_both_caught(cli, exported):
    bundle, inputs, _ = exported
    a, b = (inputs / "prune.jsonl").read_bytes(), (inputs / "compaction.jsonl").read_bytes()
    (inputs / "prune.jsonl").write_bytes(b)
    (inputs / "compaction.jsonl").write_bytes(a)
    assert sorted(p for p, _ in problems(cli, bundle)) == [str(inputs / "compaction.jsonl"),
                                                          str(inputs / "prune.jsonl")]


def test_from_another_folder_inputs_must_be_found_or_the_check_said_to_be_bundle_only(cli, exported, tmp_path,
                                                                                       monkeypatch):
    bundle, inputs, digest = exported
    moved = tmp_path / "elsewhere"
    shutil.move(inputs, moved)
    monkeypatch.chdir(tmp_path)
    assert [p for _, p in problems(cli, bundle)] == ["input not found (give its folder with --inputs, or "
                                                     "--bundle-only to check the bundle alone)"] * 2
    assert problems(cli, bundle, "--inputs", moved, "--digest", digest, expect=0) == []
    out = cli("verify-export", bundle, "--bundle-only", "--digest", digest, "--json").json()
    assert out["ok"] and len(out["inputsNotChecked"]) == 2
    assert out["notChecked"] == ["2 inputs not found (--bundle-only): give --inputs DIR to check them"]
    alone = cli("verify-export", bundle, "--bundle-only", "--json", expect=1).json()  # nothing vouched for it
    assert not alone["ok"] and alone["differences"] == [] and alone["manifestCheckedBy"] == []


def old_bundle(cli, tmp_path, log, fmt: int):
    """A bundle as dshreplay wrote it before #22 (format 1 or 2): plain SHA-256 of its inputs
    (no redaction), no integrity member, its manifest indented as orjson writes it."""
    import orjson
    cli("export", log, "--out", tmp_path / "old", "--timestamp", STAMP, "--no-default-redaction")
    manifest = json.loads((tmp_path / "old" / "manifest.json").read_bytes())
    del manifest["integrity"]
    manifest["format"] = fmt
    if fmt == 1:
        del manifest["format"]
        manifest["files"] = {f["path"]: f["sha256"] for f in manifest["files"]}
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    (tmp_path / "old" / "manifest.json").write_bytes(data)
    return tmp_path / "old"


@pytest.mark.parametrize("fmt", [1, 2])
def test_bundles_of_format_1_and_2_are_still_verified_with_their_digest(cli, exported, tmp_path, fmt):
    import hashlib

    from dshreplay._jsvalues import json_bytes
    _, inputs, _ = exported
    bundle = old_bundle(cli, tmp_path, inputs / "prune.jsonl", fmt)
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    digest = "sha256:" + hashlib.sha256(json_bytes(manifest, sort_keys=True)).hexdigest()  # (their digest)
    out = cli("verify-export", bundle, "--digest", digest, "--json").json()
    assert out["manifestCheckedBy"] == ["digest"] and out["inputs"][0]["status"] == "matches"
    (bundle / "index.html").write_text("changed")
    changed = "content changed (SHA-256 differs)" if fmt == 1 else "size changed: 7 bytes, manifest says " \
        f"{next(f['size'] for f in manifest['files'] if f['path'] == 'index.html')}"
    assert problems(cli, bundle) == [("index.html", changed)]  # (format 1 lists no sizes)


def test_a_log_that_only_grew_is_accepted_with_grown_and_its_appended_lines_named(cli, exported):
    bundle, inputs, digest = exported
    log = inputs / "prune.jsonl"
    lines_before = log.read_bytes().count(b"\n")
    extra = b'{"type":"session/title","seq":999,"time":1,"data":{"title":"later"}}\n'
    with log.open("ab") as fh:
        fh.write(extra * 3)
    assert [p for _, p in problems(cli, bundle)][0].startswith("input size changed")
    out = cli("verify-export", bundle, "--grown", "--digest", digest, "--json").json()
    assert out["ok"] and out["differences"] == []
    detail = (f"lines {lines_before + 1}..{lines_before + 3} appended ({3 * len(extra)} bytes, 3 events): "
              "the bundle does not cover them")
    assert out["inputsGrown"] == [{"input": str(log), "detail": detail}]


def test_a_line_rewritten_inside_the_exported_prefix_is_named_even_with_grown(cli, exported):
    bundle, inputs, _ = exported
    log = inputs / "compaction.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    target = next(i for i, line in enumerate(lines) if b"argparse" in line)  # a message in the middle
    lines[target] = lines[target].replace(b"argparse", b"ARGPARSE", 1)
    log.write_bytes(b"".join(lines) + b'{"type":"x"}\n')
    assert problems(cli, bundle, "--grown") == [
        (str(log), f"rewritten inside the exported prefix: line {target + 1} differs")]


def test_events_csv_names_each_raw_line_and_its_hmac_under_the_evidence_key(exported, evidence_key_file):
    import csv
    import hmac
    bundle, inputs, _ = exported
    key = bytes.fromhex(evidence_key_file.read_text())
    lines = (inputs / "prune.jsonl").read_bytes().splitlines(keepends=True)
    with open(bundle / "sample-prune" / "events.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(row["rawSha256"] == hmac.digest(key, lines[int(row["line"]) - 1], "sha256").hex()
                        for row in rows if row["rawSha256"])
    assert sum(1 for row in rows if row["rawSha256"]) == len(lines) - 1  # (every line but the header's)
