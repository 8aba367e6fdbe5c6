"""The one RE2 set that gates redaction: what a scan finds, the rules it names, and that it
travels to worker processes (--jobs)."""

from __future__ import annotations

import base64
import pickle

from dshreplay.redaction._decode import base64_runs as _base64_runs
from dshreplay.redaction._rules import BASE64_RUN, ENGINE, PERCENT, SECRET, Gate
from dshreplay.redaction.redactor import load_redactor


def test_a_scan_names_what_a_text_holds():
    gate = load_redactor(None).rules.gate
    assert gate.scan(b"nothing to see here") == 0
    assert gate.scan(b'{"password": 1}') & ~ENGINE == SECRET  # a secret member's name as JSON writes it
    # (no base64 of text starts with `g`: a continuation byte)
    assert gate.scan(b"ghp_" + b"a1" * 18) & ~ENGINE == SECRET
    assert gate.scan(b"a%41b") == PERCENT
    assert gate.scan(b"QWxhZGRpbjpvcGVu") == BASE64_RUN
    # (a run of mixed case: base64 of a binary frame may start with any byte; it decodes to no printable run)
    assert gate.scan(b'{"shadowedTokenCount": 1}') == BASE64_RUN
    assert not load_redactor(None)._may_change(b'{"shadowedTokenCount": 1}')


def test_the_same_scan_says_whether_a_text_holds_a_keyword_of_the_engines_rules():
    # (the engine's keywords had a scan of their own, on every text and every layer of it: one scan now says all)
    redactor = load_redactor(None)
    gate, engine = redactor.rules.gate, redactor.rules.engine
    assert engine is not None and engine.keywords is not None
    assert gate.scan(b"the mailgun key") == ENGINE and gate.scan(b"the MailGun key") == ENGINE
    assert gate.scan(b"the deepseek token count") == 0  # (OURS_KEYWORDS: our rules cover what the engine finds)
    assert gate.scan(b"the build log") == 0
    assert Gate(("ghp_[a-z]{4}",), "").scan(b"plain") == ENGINE  # (no keyword pattern: every text may hold one)
    assert Gate(("ghp_[a-z]{4}",)).scan(b"mailgun") == 0  # (no engine)


def test_every_run_of_base64_that_decodes_to_text_is_flagged():
    gate = load_redactor(None).rules.gate
    texts = ["user:pass", "\tindented", "\nnew line", "\rreturn", "~tilde and more", " space first", "é accent",
             "日本語のテキスト", "🔑 key emoji", "ghp_" + "a1" * 18, "Z" * 12, "@home"]
    for text in texts:
        text += " (and some more words)"  # (16 characters of base64 or more)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            run = encode(text.encode()).rstrip(b"=")
            line = b'{"x": "see ' + run + b' here"}'
            assert [t for _, _, t in _base64_runs(line)] == [text], text
            assert gate.scan(line) & BASE64_RUN, text


def test_a_run_of_one_case_is_flagged_only_when_base64_of_text_may_hide_in_it():
    gate = load_redactor(None).rules.gate
    for word in (b"deepseek-official", b"assistant/message", b"compaction/summary-of-everything"):
        line = b'{"x": "' + word + b'"}'
        assert list(_base64_runs(line)) == [] and gate.scan(line) == 0  # (lower case only: no run to decode)
    # a run whose upper case letter comes first, in its first 16 characters, or after them; or with no letter
    for run in (b"Q" + b"x" * 20, b"dGVzdA" + b"x" * 20, b"d" * 20 + b"X", b"1234567890123456", b"QRSTUVWXYZABCDEF"):
        assert gate.scan(b'{"x": "' + run + b'"}') & BASE64_RUN, run


def test_the_rules_a_text_matches_are_named_in_rule_order():
    rules = load_redactor(None).rules
    token = b"x ghp_" + b"a1" * 18
    names = [rules.defaults[n].name for n in rules.gate.rules(token)]
    assert names == ["GitHub Token", "GitHub token, any length"]
    assert rules.gate.rules(b"plain words") == []


def test_a_scan_the_set_gives_up_on_is_answered_by_the_regexps():
    gate = Gate(("ghp_[a-z]{4}",))
    gate._set = type("GivesUp", (), {"Match": lambda self, data: None})()
    assert gate.scan(b"ghp_abcd") == SECRET | BASE64_RUN
    assert gate.scan(b"plain") == BASE64_RUN  # (runs of base64 are then looked for)
    assert gate.scan(b"%41") == PERCENT | BASE64_RUN
    assert gate.rules(b"ghp_abcd") == [0] and gate.rules(b"plain") == []


def test_a_gate_pickles_for_a_worker_process():
    gate = pickle.loads(pickle.dumps(Gate(("ghp_[a-z]{4}",), "mailgun")))
    assert gate.scan(b"ghp_abcd") == SECRET and gate.scan(b"plain") == 0 and gate.scan(b"mailgun") == ENGINE


def test_a_member_named_like_a_secret_with_a_final_line_end_is_masked_through_the_gate():
    # (SECRET_MEMBERS takes `password\n` as a secret's name; the gate over the raw line missed it, and the
    # record was kept as it was, its value in the clear)
    import orjson
    redactor = load_redactor(None)
    inner = orjson.dumps({"Token\n": "inner2secretvalue"}).decode()
    record = {"type": "x", "data": {"password\n": "hunter2secretvalue", "args": inner}}
    masked = redactor.record(record, orjson.dumps(record))
    assert masked == {"type": "x", "data": {"password\n": "[REDACTED]", "args": '{"Token\\n":"[REDACTED]"}'}}
