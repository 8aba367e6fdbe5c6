"""The base engine of the default rules (Betterleaks, `redaction/_engine.py`): what it masks,
what it leaves alone, and that it runs in a process that forks its workers."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from dshreplay.redaction._engine import Engine, _pieces, _whole
from dshreplay.redaction._secretrules import KEEP
from dshreplay.redaction.redactor import MASK, load_redactor

MAILGUN = "key-3f9a8c2b7d6e5f4a1b0c9d8e7f6a5b4c"

# issue #34's false positives (and their neighbours): code that reads a secret, prose, LLM data members
NO_SECRETS = [
    "password: must be at least 12 characters", "Password: (leave blank for none)", "secret: !vault |",
    "getpass.getpass()", "api_key = settings.OPENAI_API_KEY", "key = os.environ['OPENAI_API_KEY']",
    "password=$(cat /run/secrets/db)", "tokens = tokenizer.encode(text)", "PGPASSWORD_FILE=/run/secrets/pg",
    "ghp_prefix_detection_is_enabled_for_repo", "class APDUResponseParser extends Base",
    '{"token": " the", "logprob": -0.1}', '{"next_page_token": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3"}',
    '{"authorization": "pending"}', "password: nothing", 'DB_PASSWORD="${DB_PASSWORD}"',
    "export GITHUB_TOKEN=$GITHUB_TOKEN", 'api_key: "YOUR_API_KEY"', "mailgun_key = $MAILGUN_KEY",
]


@pytest.fixture(scope="module")
def engine():
    return Engine(KEEP["reference"])


@pytest.mark.parametrize("text", NO_SECRETS)
def test_the_engine_finds_no_secret_in_what_only_names_or_reads_one(engine, text):
    assert engine.findings(text) == []


def test_a_kind_only_the_engine_knows_is_masked_and_counted_as_its_rule():
    redactor = load_redactor(None)
    redactor.counting = True
    assert redactor.string(f'mailgun: "{MAILGUN}" and again {MAILGUN}') == f'mailgun: "{MASK}" and again {MASK}'
    assert dict(redactor.by_rule) == {"betterleaks mailgun-private-api-token": 2}


def test_a_secret_in_a_file_name_or_ending_a_sentence_is_found(engine):
    # (the engine's rules end a value at a quote, a space or the text's end: not at `/`, `.jsonl` or a full stop)
    redactor = load_redactor(None)
    assert redactor.text(f"/in/k1 mailgun={MAILGUN}/mailgun={MAILGUN}.jsonl") == \
        f"/in/k1 mailgun={MASK}/mailgun={MASK}.jsonl"
    assert redactor.string(f"set it to mailgun={MAILGUN}. Then run") == f"set it to mailgun={MASK}. Then run"


def test_a_rule_whose_group_is_part_of_a_token_masks_the_whole_token():
    # microsoft-teams-webhook's group 1 is a repeated `xxxx-` of a UUID; jwt-base64's a header's first letters
    url = ("https://contoso.webhook.office.com/webhookb2/7f3c9a1e-5b2d-4e8f-9a6c-0d3b7e1f5a9c@2e8b4d6f-1a3c-4e5b-"
           "8d7f-9c0a2b4d6e8f/IncomingWebhook/9f2c7e4a1b8d3f6e0c5a2b9d7e4f1a8c/4d8e2f6a-3b7c-4e9f-8a1d-5c0b3e7f9a2d")
    assert _whole("9a6c-", url) == url
    token = "ZXlKd01uTWlPaU2nqwCKTYhqlLLsfbolOGQKGOkBRFAytwW363a1mUwpoV"
    assert _whole("d01uTWlPaU", token) == token
    assert _whole(MAILGUN, f'mailgun_key = "{MAILGUN}"') == MAILGUN


def test_a_long_text_is_scanned_in_pieces_cut_at_line_ends():
    line = "x" * 1000 + "\n"
    pieces = _pieces(line * 600)  # 600,600 characters
    assert [len(p) for p in pieces] == [261261, 261261, 78078]  # (261 whole lines of 1,001 characters)
    assert "".join(pieces) == line * 600
    long = "y" * 600_000  # no line end: cut where it must, 1,024 characters again in the next piece
    assert [len(p) for p in _pieces(long)] == [262144, 262144, 77760]


def test_the_engine_pickles_as_its_recipe(engine):
    again = pickle.loads(pickle.dumps(engine))
    assert again.findings(f"mailgun={MAILGUN}") == engine.findings(f"mailgun={MAILGUN}") != []


def test_a_process_running_the_engine_forks_no_worker():
    """The engine's Go runtime runs threads Python does not count; a child forked from it hangs."""
    code = ("from dshreplay.core._parallel import start_method; print(start_method()); "
            "from dshreplay.redaction.redactor import load_redactor; "
            f"load_redactor(None).string('mailgun={MAILGUN}'); print(start_method())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["fork", "forkserver"]


def test_under_an_address_space_too_small_for_the_engine_export_says_it_is_off(tmp_path):
    """The Go runtime dies (a fatal error, exit 2, no bundle) where `ulimit -v` refuses what it reserves."""
    import resource

    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("small-space")
    b.start_turn()
    b.user(f"mailgun: {MAILGUN} and ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2")
    b.end_turn()
    log = b.write(tmp_path / "l.jsonl")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (800 << 20, 800 << 20))

    out = subprocess.run([sys.executable, "-m", "dshreplay", "export", str(log), "--out", str(tmp_path / "b"),
                          "--timestamp", "2026-01-01T00:00:00Z", "-q"], capture_output=True, text=True,
                         timeout=60, preexec_fn=limit)
    assert (out.returncode, out.stderr) == (0, (
        "dshreplay: warning: the secret engine (Betterleaks) is off: its runtime needs 4 GiB of address space and "
        "`ulimit -v` allows 800 MiB; secrets are masked by the RE2 rules only (docs/reference/redaction.md)\n"))
    written = b"".join(p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert b"ghp_Z9y8X7w6V5u4T3s2R1q0" not in written and MAILGUN.encode() in written  # (the RE2 rules' kind only)
