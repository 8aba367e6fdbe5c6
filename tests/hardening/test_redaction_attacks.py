"""Redaction under attack: linear time whatever the text and the rules, rules
that cannot interfere, secrets used as member names, masked values that
findings quote, and a manifest that lets no one confirm a guessed rules file.

Exports run as `python -m dshreplay` in a child limited in CPU time and
address space (`attack`); inputs are generated here.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import resource
from pathlib import Path

import pytest
from test_attacks import attack  # (tests/hardening is on the path of its tests)

from dshreplay.redaction._engine import MIN_ADDRESS_SPACE
from dshreplay.testing.samples import LogBuilder

STAMP = "2026-01-01T00:00:00Z"


def one_message_log(path: Path, text: str) -> Path:
    """A clean log (exit 0 on export) whose one user message is `text`."""
    b = LogBuilder("hostile")
    b.start_turn()
    b.start_step()
    b.user(text)
    b.end_turn()
    return b.write(path)


# the address space that lets the secret engine's Go runtime start (it reserves gigabytes it never touches: under
# less it is off, and says so), so the engine runs on the hostile texts too
ENGINE_MB = (MIN_ADDRESS_SPACE >> 20) + 512


def export_cpu(tmp_path: Path, name: str, text: str, rules: dict | None) -> float:
    """The CPU seconds a child spends exporting a log of `text` (under a 10 s CPU limit)."""
    log = one_message_log(tmp_path / f"{name}.jsonl", text)
    args = ["export", log, "--out", tmp_path / f"{name}-bundle", "--timestamp", STAMP]
    if rules is not None:
        (tmp_path / "rules.json").write_text(json.dumps(rules))
        args += ["--redact", tmp_path / "rules.json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = attack(*args, seconds=10, mem_mb=ENGINE_MB)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.code == 0 and result.stderr == "", result.stderr
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


# each: a text of about n characters, and the rules file; the comment gives the backtracking engine's CPU time
HOSTILE = {
    "dots before token:": (lambda n: "x." * (n // 2) + " token: abcdefgh", None),  # 34 KB: 54 s
    "base64url before token:": (lambda n: "Ab-_" * (n // 4) + " token:", None),  # 100 KB: 208 s
    "eyJ- repeated": (lambda n: "eyJ-" * (n // 4), None),  # 200 KB: 13 s
    "BEGIN PRIVATE KEY repeated": (lambda n: "-----BEGIN PRIVATE KEY-----" * (n // 27), None),  # 200 KB: 13 s
    "dots with an empty rules file": (lambda n: "x." * (n // 2), {}),  # 20 KB: 20 s
    "(a+)+$ rule": (lambda n: "a" * n + "!", {"text": ["(a+)+$"]}),  # 32 characters: no end in 20 s
    "a secret every 24 characters": (lambda n: "password=hunter2hunter2 " * (n // 24), None),
    "dots as a member name of JSON text": (lambda n: json.dumps({"x." * (n // 2) + " token: abcdefgh": 1}), None),
    "a rule whose DFA has 2**20 states": (lambda n: "".join(random.Random(7).choices("ab", k=n)),
                                          {"text": ["(a|b)*a(a|b){20}c"]}),  # within RE2's memory budget
    # the rules and decoded views of #22: each match or decoding bounded by its own stretch of text
    "BEGIN OPENSSH PRIVATE KEY lines without END": (
        lambda n: "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n" * (n // 42), None),
    "quoted values compared with password": (lambda n: '"aaaa" == db_password ' * (n // 24), None),
    "mysql with a far -p": (lambda n: "mysql " + "a " * (n // 2) + "-pX", None),
    "base64 of password assignments": (
        lambda n: (__import__("base64").b64encode(b"password=hunter2 " * 40).decode() + " ") * (n // 908), None),
    "URL-encoded letters before password=": (lambda n: "%41" * (n // 3) + " password%3Dx", None),
    "backslash escapes before password=": (lambda n: "\\u0041" * (n // 6) + " password=x", None),
    # the forms of stop 32: escaped quotes in a quoted value, a key written as strings put together, a value
    # that runs on over the next name (each match is searched for again from just after its start)
    "escaped quotes after password=": (lambda n: 'password="a\\"' * (n // 13), None),
    "a key's lines as strings put together": (
        lambda n: "-----BEGIN RSA PRIVATE KEY-----" + '\\n" + "QUFBQUFB' * (n // 14), None),
    "authorization values running over the next name": (lambda n: "authorization: a/" * (n // 17), None),
    # the decoders of #34: URL encoding to any depth (one run of %25 undone from its end), escapes inside
    # escapes, escapes inside URL encoding, and base64 of binary frames whose printable runs hold secrets
    "nested %25 before a password": (lambda n: "password%" + "25" * (n // 2) + "3Dhunter2", None),
    "%25 runs between words": (lambda n: "%2541 " * (n // 6), None),
    "nested \\x escapes": (lambda n: "\\x5c" * (n // 4), None),
    "\\x escapes of URL escapes": (lambda n: "\\x2541%5Cx41" * (n // 12), None),
    "octal escapes": (lambda n: "\\147\\150" * (n // 8), None),
    "base64 of binary frames holding secrets": (lambda n: " ".join(
        __import__("base64").b64encode(bytes([k % 256, 0, 255]) + b"password=hunter2 ghp_abc" + bytes(range(40)))
        .decode() for k in range(n // 93)), None),
}


@pytest.fixture(scope="module")
def base_cpu(tmp_path_factory):
    """The CPU seconds of exporting a one-word log with these rules: start-up and the bundle's fixed cost,
    the least of three runs and of any run asked for again with `again` (a base measured while the machine
    was busy made a linear 200 KB export look ten times cheaper than its 400 KB one)."""
    known: dict[str, float] = {}

    def measure(rules: dict | None, again: bool = False) -> float:
        key = json.dumps(rules)
        runs = 3 if key not in known else 1 if again else 0
        for _ in range(runs):
            cpu = export_cpu(tmp_path_factory.mktemp("base"), "base", "hello", rules)
            known[key] = min(known.get(key, cpu), cpu)
        return known[key]
    return measure


# below a second over the base at 400 KB a ratio is noise: 0.11 s at 200 KB against 0.53 s at 400 KB
# failed a CI run whose machine was busy, where alone they take 0.15 and 0.40 s (and 0.45 s at 800 KB);
# the costs this guards against took 13 s and more at 200 KB
FLOOR = 1.0


@pytest.mark.parametrize("name", HOSTILE)
def test_redaction_time_grows_linearly_with_hostile_text(tmp_path, base_cpu, name):
    # the backtracking engine took from 13 s to no end on these (quadratic or exponential): past the
    # 10 s CPU limit at 200 KB; RE2 adds a few hundredths of a second, so the ratio only bites
    # should a cost grow measurable again
    # other work on the machine only ever adds CPU time: a pair that looks superlinear is measured again,
    # with the base, up to three times, and each keeps its least time
    make, rules = HOSTILE[name]
    small_cpu = large_cpu = float("inf")
    for attempt in range(3):
        small_cpu = min(small_cpu, export_cpu(tmp_path, f"small{attempt}", make(200_000), rules))
        large_cpu = min(large_cpu, export_cpu(tmp_path, f"large{attempt}", make(400_000), rules))
        base = base_cpu(rules, again=attempt > 0)
        small, large = small_cpu - base, large_cpu - base
        if large < max(3 * small, FLOOR):
            break
    assert large < max(3 * small, FLOOR), f"200 KB: {small:.2f} s, 400 KB: {large:.2f} s over the base: not linear"


def test_the_hostile_texts_are_still_redacted(tmp_path):
    log = one_message_log(tmp_path / "l.jsonl", "password=hunter2hunter2 " * 2000 + "x." * 5000 + " token: abcdefgh")
    assert attack("export", log, "--out", tmp_path / "b", "--timestamp", STAMP).code == 0
    events = (tmp_path / "b" / "hostile" / "events.csv").read_text()
    assert "hunter2" not in events and "abcdefgh" not in events and "[REDACTED]" in events


def test_a_secret_behind_thousands_of_url_encodings_is_still_redacted(tmp_path):
    log = one_message_log(tmp_path / "l.jsonl", "x " * 1000 + "password%" + "25" * 5000 + "3DDeepHunter2")
    assert attack("export", log, "--out", tmp_path / "b", "--timestamp", STAMP).code == 0
    assert all(b"DeepHunter2" not in data for data in bundle_bytes(tmp_path / "b").values())
    assert b"25" * 5000 + b"3D[REDACTED]" in (tmp_path / "b" / "hostile" / "transcript.md").read_bytes()


# -- rules that are valid, or that RE2 refuses ----------------------------------------------

def export_with_rules(tmp_path: Path, text: str, rules: dict, **kw):
    log = one_message_log(tmp_path / "l.jsonl", text)
    (tmp_path / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    return attack("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, "--redact", tmp_path / "rules.json",
                  seconds=10, **kw)


def bundle_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_rules_compiled_apart_cannot_interfere(tmp_path):
    # the same group name twice (was exit 70), a numbered group and flags of their own, next to the defaults
    rules = {"text": ["(?P<s>XYZZY-[0-9]+)", "(?P<s>PLUGH-[0-9]+)", "(FROB)(OZZ)-[0-9]", "(?i)grue-[0-9]+"]}
    result = export_with_rules(tmp_path, "XYZZY-42 PLUGH-7 FROBOZZ-1 GRUE-9 and sk-abcdefghijklmnop1234", rules)
    assert result.code == 0, result.stderr
    for path, data in bundle_bytes(tmp_path / "b").items():
        for secret in (b"XYZZY-42", b"PLUGH-7", b"FROBOZZ-1", b"GRUE-9", b"sk-abcdefghijklmnop"):
            assert secret not in data, (secret, path)
    counts = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["redaction"]["replacementsByRule"]
    assert {"text rule 1", "text rule 2", "text rule 3", "text rule 4", "sk- key"} <= set(counts)


@pytest.mark.parametrize("rule,construct", [
    ("(?x) XYZZY  # a comment", "(?x"),  # was exit 70
    ("(X)?(?(1)YZZY|nomatch)", "(?("),  # a conditional: silently matched nothing once joined to the defaults
    (r"(a)\1", r"\1"),
    ("XYZZY(?=-42)", "(?="),
    ("(?<!PLUGH)XYZZY", "(?<!"),
])
def test_a_construct_re2_cannot_run_is_a_usage_error_naming_file_rule_and_construct(tmp_path, rule, construct):
    result = export_with_rules(tmp_path, "XYZZY-42", {"text": ["harmless", rule]})
    assert result.code == 2
    line = result.one_line()
    assert line.startswith(f"dshreplay: usage error: {tmp_path / 'rules.json'}: redaction text rule 2 ")
    assert "cannot be used: invalid " in line and construct in line
    assert not (tmp_path / "b").exists()


def test_a_rule_too_large_for_its_memory_share_is_a_usage_error(tmp_path):
    result = export_with_rules(tmp_path, "x", {"text": [r"\pL{1000}"]})
    assert result.code == 2
    assert 'redaction text rule 1 "\\\\pL{1000}" cannot be used: pattern too large' in result.one_line()


@pytest.mark.parametrize("index", ["\u00b2", "1" * 5000, "01", "-1"])
def test_pointer_indices_are_ascii_digits_of_bounded_length(tmp_path, index):
    # "²".isdigit() and 5,000 digits (past int()'s limit) were exit 70
    rules = {"pointers": [f"/data/content/{index}/text", "/data/content/0/text"]}
    result = export_with_rules(tmp_path, "PLUGH-7", rules)
    assert result.code == 0, result.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    assert manifest["redaction"]["replacementsByRule"] == {"pointers": 1}
    assert all(b"PLUGH-7" not in data for data in bundle_bytes(tmp_path / "b").values())


def test_many_rules_run_in_bounded_memory(tmp_path):
    rules = {"text": [f"secret{n:05d}[a-z]{{0,40}}" for n in range(2000)]}  # about 50 KB of rules
    result = export_with_rules(tmp_path, "secret01999abc secret00000 " * 1000, rules, mem_mb=400)
    assert result.code == 0, result.stderr
    assert b"secret0" not in (tmp_path / "b" / "hostile" / "events.csv").read_bytes()


# -- secrets used as member names ------------------------------------------------------------

def test_a_secret_member_name_is_masked_and_colliding_names_are_numbered_apart(tmp_path):
    b = LogBuilder("keys")
    b.start_turn()
    b.start_step()
    b.user("hello")
    arguments = json.dumps({"sk-proj-abcdefghijklmnopqrstu": "a", "sk-proj-zyxwvutsrqponmlkjihg1": "b",
                            "[REDACTED]#2": "c", "plain": "d"})
    b.tool_round("bash", arguments, json.dumps({"ghp_" + "a" * 36: "result"}))
    b.end_turn()
    log = b.write(tmp_path / "keys.jsonl")
    result = attack("export", log, "--out", tmp_path / "b", "--timestamp", STAMP)
    assert result.code == 0, result.stderr
    for path, data in bundle_bytes(tmp_path / "b").items():
        for secret in (b"abcdefghijklmnopqrstu", b"zyxwvutsrqponmlkjihg1", b"ghp_aaaa"):
            assert secret not in data, (secret, path)
    [row] = csv.DictReader(io.StringIO((tmp_path / "b" / "keys" / "tools.csv").read_text()))
    assert json.loads(row["arguments"]) == {"[REDACTED]": "a", "[REDACTED]#3": "b", "[REDACTED]#2": "c", "plain": "d"}
    assert row["resultPreview"] == '[result bash call-0002] {"[REDACTED]": "result"}'  # (labelled; as written)
    counts = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["redaction"]["replacementsByRule"]
    assert counts["keys numbered apart"] >= 1


# -- values masked whole, quoted back by findings ---------------------------------------------

def test_values_masked_by_pointer_and_keys_rules_are_masked_where_findings_quote_them(tmp_path):
    b = LogBuilder("quoted")
    b.start_turn()
    b.start_step()
    b.user("hello")

    def message(**fields):
        data = {"content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}, "role": "user",
                "id": b.new_id("m")}
        b.add("user/message", {**data, **fields}, surfaceOp="append")

    message(id=["ID-SECRET"])  # the finding: '["ID-SECRET"] is not of type 'string'
    message(id=["LONG-SECRET-" * 40])  # quoted, then cut by the message's 300-character cap
    message(content=[{"type": "text", "text": {"pin": "PIN\nSECRET"}}])  # quoted as 'PIN\\nSECRET'
    b.end_turn()
    log = b.write(tmp_path / "quoted.jsonl")
    (tmp_path / "rules.json").write_text(json.dumps({"keys": ["pin"], "pointers": ["/data/id"]}))
    result = attack("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, "--redact", tmp_path / "rules.json")
    assert result.code == 1  # (the findings are errors)
    for path, data in bundle_bytes(tmp_path / "b").items():
        assert b"SECRET" not in data, path
    findings = json.loads((tmp_path / "b" / "quoted" / "findings.json").read_bytes())["files"][0]["findings"]
    assert [f["message"] for f in findings if f["code"] == "DSH-E005"] == [
        '["[REDACTED]"] is not of type \'string\'', '["[REDACTED]... is not of type \'string\'',
        '{"pin":"[REDACTED]"} is not of type \'string\'']


def test_finding_text_masks_quoted_values_pointer_segments_and_escaped_secrets():
    from dshreplay.redaction.redactor import load_redactor
    redactor = load_redactor(None)
    redactor.counting = True
    record = {"type": "x", "data": {"password": "p'w\"1", "sk-abcdefghijklmnop1234": {"note": "x"}}}
    redactor.value(record)
    redactor.counting = False
    finding = {"code": "DSH-E005",
               "message": "'p\\'w\"1' and \"p'w\\\"1\" and 'other' and 'Bearer\\tabcdefghijklmnop1'",
               "pointer": "/data/sk-abcdefghijklmnop1234/note"}
    assert redactor.finding(finding) == {
        "code": "DSH-E005", "message": "'[REDACTED]' and \"[REDACTED]\" and 'other' and 'Bearer\\t[REDACTED]'",
        "pointer": "/data/[REDACTED]/note"}


def test_a_quote_cut_inside_a_secret_is_masked_as_the_value_it_begins():
    # findings quote values cut short (an object or array at 80 characters: analyses.schemas); a secret
    # cut before a rule can recognise it (no "@" after a URL's password) is masked because the export's
    # pass saw the whole value and remembered it as one the rules changed
    from dshreplay.redaction.redactor import load_redactor
    redactor = load_redactor(None)
    redactor.counting = True
    redactor.value({"data": {"note": "redis://:R3d1sPassw0rdXy@cache:6379", "plain": "redis://cache:6379"}})
    redactor.counting = False
    assert redactor.message("""{"note":"redis://:R3d1sPassw... is not of type 'string'""") == \
        """{"note":"[REDACTED]... is not of type 'string'"""
    assert redactor.message("""{"plain":"redis://cach... is not of type 'string'""") == \
        """{"plain":"redis://cach... is not of type 'string'"""


# -- what the manifest says of the rules file -------------------------------------------------

def test_the_manifest_lets_no_one_confirm_a_guessed_rules_file(tmp_path):
    rules = {"text": ["hunter2"], "pointers": ["/data/header/system"], "keys": ["cwd", "pin"]}
    result = export_with_rules(tmp_path, "hello", rules)
    assert result.code == 0, result.stderr
    raw = (tmp_path / "rules.json").read_bytes()
    manifest = (tmp_path / "b" / "manifest.json").read_bytes()
    assert json.loads(manifest)["redaction"]["rules"] == {"text": 1, "pointers": 1, "keys": 2}
    for data in bundle_bytes(tmp_path / "b").values():
        assert hashlib.sha256(raw).hexdigest().encode() not in data and b"hunter2" not in data
    assert b"rulesSha256" not in manifest
