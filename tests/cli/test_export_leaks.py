"""No secret of a kind the default rules name reaches an export bundle, wherever
the log holds it.

Each of the 34 kinds of issue #22 (the 22 that leaked, then the 12 already
caught), the edge cases of named kinds and their near misses (other lengths,
forms and neighbours: stop 32) is planted, one kind at a time, in
every field that reaches the bundle: message text and reasoning, tool names,
arguments and results (plain, JSON, JSON inside JSON), the system prompt,
titles, slash commands and what they answered, todo lists, approval reasons,
hook stderr, retry details, provider errors (a call's finish, a turn's end),
a finding's quote cut short, the header (session id, cwd, parentSession,
agentPreset, origin, an unknown field) and the input's file and folder names
(for the kinds a file name can hold: no `/`), readable or not. The bundle is
written, and every byte of every file, every file and folder name, and what
the command printed are searched for each secret's distinctive parts, and for
their first 10 characters (a quote cut short must not leak a prefix).
"""

from __future__ import annotations

import json
from pathlib import Path

from dshreplay.testing.samples import LogBuilder

# kind -> (the text as planted, its distinctive parts: none of them, nor their first 10 characters, may
# appear anywhere in the bundle)
LEAKED = {  # the 22 kinds that came out verbatim before
    "Stripe sk_live_": ("charge with sk_live_4eC39HqLyjWDarjtT1zdp7dc9Z8Yx7W6AbCdEfGh",
                        ["4eC39HqLyjWDarjtT1zd", "9Z8Yx7W6AbCdEfGh"]),
    "Stripe rk_live_": ("restricted rk_live_51Hx9Qk2eZvKYlo2C8xYz3RlmNopQrStUvWx",
                        ["51Hx9Qk2eZvKYlo2", "RlmNopQrStUvWx"]),
    "GitLab glpat-": ("GL=glpat-xR7k9Qm2Vw4Zt8Ln3Bp6", ["xR7k9Qm2Vw4Zt8Ln3Bp6"]),
    "npm npm_": ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", ["a1B2c3D4e5F6g7H8i9J0", "k1L2m3N4o5P6q7R8"]),
    "Hugging Face hf_": ("use hf_QwErTyUiOpAsDfGhJkLzXcVbNm12345678", ["QwErTyUiOpAsDfGhJkLz"]),
    "GitHub github_pat_": ("github_pat_11ABCDEFG0Fin3Gr41nedT0kenAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef",
                           ["Fin3Gr41nedT0kenAbCd", "OpQrStUvWxYz0123456789"]),
    "Slack xapp-": ("xapp-1-A0123456789-1234567890123-Sl4ckAppT0kenAbCdEf0123456789", ["Sl4ckAppT0kenAbCdEf"]),
    "Slack webhook URL": ("post to https://hooks.slack.com/services/T0A1/B0B2/W3bh00kS3cr3tAbCdEfGhIj",
                          ["W3bh00kS3cr3tAbCdEf"]),
    "SendGrid SG.": ("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",
                     ["bTnFDxPscOdt1VThe92OsR", "gRPletsjInycZbRTogQ"]),
    "Azure AccountKey=": ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Az5t0rageK3yAbCdEfGhIjKl+/Mn0123"
                          "==;EndpointSuffix=core.windows.net", ["Az5t0rageK3yAbCdEf"]),
    "Azure SAS sig=": ("https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&sr=b&sig=S4sS1gn4tur3ValueAbCd%2B%3D"
                       "&se=2030-01-01", ["S4sS1gn4tur3ValueAbCd"]),
    "redis://:pw@": ("redis://:R3d1sPassw0rdXy@cache.internal:6379/0", ["R3d1sPassw0rdXy"]),
    "URL password holding /": ("postgres://app:Pg9Pa55w0rdSl4sh/S3c0ndH4lfOfPw@db.internal:5432/app",
                               ["Pg9Pa55w0rdSl4sh", "S3c0ndH4lfOfPw"]),
    "short password= value": ("run with password=Qz9x!", ["Qz9x!"]),
    "mysql -pPW": ("mysql -u root -pMy5qlPassw0rd app", ["My5qlPassw0rd"]),
    "docker login --password / -p": ("docker login --password D0ck3rPassw0rdA reg.example.com && docker login -u bob "
                                     "-p D0ck3rPassw0rdB reg", ["D0ck3rPassw0rdA", "D0ck3rPassw0rdB"]),
    "Cookie: header": ("curl -H 'Cookie: session_id=C00k1eSess10nVal; theme=dark' https://x", ["C00k1eSess10nVal"]),
    "OpenSSH key cut before END": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n"
                                   "AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBvYWJjZGVmZ2hpamts",
                                   ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "AAAAMwAAAAtzc2gtZWQyNTUx"]),
    "PGP private key block": ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGRwZ1BHUHNlY3JldEtleUJvZHlMaW5lMTIz\n"
                              "=Ab12\n-----END PGP PRIVATE KEY BLOCK-----", ["lQOYBGRwZ1BHUHNlY3Jld"]),
    "base64-encoded credentials": ("echo Z2hwXzJIZnRoSWxTcnYyZWV1RXB0Vzl5SDB6bVE4SEJMZ1dvRVZHSw== | base64 -d",
                                   ["Z2hwXzJIZnRoSWxTcnYy"]),
    "URL-encoded credentials": ("GET /login?next=%2Fhome&q=password%3DUrlEnc0dedPw99%21", ["UrlEnc0dedPw99"]),
    "GCP private_key_id": ('{"type": "service_account", "project_id": "demo", '
                           '"private_key_id": "3f2a9c8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"}', ["3f2a9c8b7d6e5f4a3b2c"]),
}
EDGES = {  # edge cases of named kinds that leaked, and the kinds the list of ours adds
    "AIza key ending in -": ("maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6-", ["SyA1b2C3d4E5f6G7h8I9"]),
    "token glued to a word": ("GITHUB_TOKEN_ghp_G1uedT0kenAbCdEfGhIjKlMnOpQrStUvWx", ["G1uedT0kenAbCdEfGh"]),
    "Anthropic sk-ant-": ("sk-ant-api03-AnThR0p1cK3yAbCdEfGhIjKlMnOpQrStUvWxYz-_0123", ["AnThR0p1cK3yAbCdEf"]),
    "secret behind \\u escapes": ("printf '\\u0067hp_EsCaPeDT0kenAbCdEfGhIjKlMnOpQrStUvW'", ["EsCaPeDT0kenAbCdEf"]),
}
NEAR = {  # near misses of named kinds that came out verbatim (or, cut short in a finding's quote, their start)
    "PGP key cut before END, with armor headers": (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: k\nlQOYBGRwZ1BHUHNlY3JldEtleUJvZHlMaW5lMTIz\n"
        "QXJtb3JlZEJvZHlMaW5lVHdvQWJjZA==\n=Ab12", ["lQOYBGRwZ1BHUHNlY3Jld", "QXJtb3JlZEJvZHlMaW5lVHdv"]),
    "OpenSSH key cut before END on one line": (
        "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE AAAAMwAAAAtzc2gtZWQyNTUxOQAAACBv",
        ["b3BlbnNzaC1rZXktdjEAAAAA", "AAAAMwAAAAtzc2gtZWQyNTUx"]),
    "Bearer token of letters only": ("echo bearer LettersOnlyBearerTokenQwErTy", ["LettersOnlyBearerTokenQwErTy"]),
    "docker login -pPW glued, podman login": (
        "docker login -u bob -pD0ck3rGlu3dPw reg && podman login -p 'P0dm4nPassw0rd' reg",
        ["D0ck3rGlu3dPw", "P0dm4nPassw0rd"]),
    "SendGrid key of other lengths": ("SG.bTnFDxPscOdt1VThe92Os.gRPletsjInycZbRTogQIdGxlOP1LACx70ReWphFoUK",
                                      ["bTnFDxPscOdt1VThe92Os", "gRPletsjInycZbRTogQIdGx"]),
    "ghp_ token cut short": ("token ghp_Sh0rtT0kenAbCdEfGhIjKlMn", ["Sh0rtT0kenAbCdEfGhIjKlMn"]),
    "glpat- token cut short": ("glpat-Sh0rtGlT0ken12345", ["Sh0rtGlT0ken12345"]),
    "Slack workflow webhook": ("https://hooks.slack.com/workflows/T0A1/A0B2/1234/W0rkfl0wS3cr3tAbCdEf",
                               ["W0rkfl0wS3cr3tAbCdEf"]),
    "Slack webhook without scheme, with -": ("hooks.slack.com/services/T0A1/B0B2/Wh00k-S3cr3tAbCdEfGhIjKl",
                                             ["S3cr3tAbCdEfGhIjKl"]),
    "AWS secret key given with a space": (
        "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ["wJalrXUtnFEMI/K7MDENG"]),
    "password => value": ("config password => 'Rub7H4shPw'", ["Rub7H4shPw"]),
    "MYSQL_PWD=": ("MYSQL_PWD=My5qlEnvPw mysql -u root", ["My5qlEnvPw"]),
    "--account-key, AZURE_STORAGE_KEY=": (
        "az storage blob list --account-key Az5t0rageFl4gKey+/Mn0123== && AZURE_STORAGE_KEY=Az5t0rageEnvKey+/Mn0123==",
        ["Az5t0rageFl4gKey", "Az5t0rageEnvKey"]),
    "Authorization: ApiKey": ("authorization: ApiKey Ap1K3ySch3meValue", ["Ap1K3ySch3meValue"]),
}
CAUGHT = {  # the 12 kinds already caught
    "AWS access key id": ("aws AKIAQ3EGUXDVB7JNS4TQ", ["Q3EGUXDVB7JNS4TQ"]),
    "GitHub ghp_": ("token ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", ["Z9y8X7w6V5u4T3s2R1q0"]),
    "OpenAI sk-": ("key sk-proj-Op3nA1KeyAbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ["Op3nA1KeyAbCdEfGhIj"]),
    "JWT": ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJsZWFrdGVzdC0yMiJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6y",
            ["eyJzdWIiOiJsZWFrdGVzdC0yMiJ9", "SflKxwRJSMeKKF2QT4fw"]),
    "Slack xoxb-": ("slack xoxb-123456789012-1234567890123-Sl4ckB0tT0kenAbCdEfGh", ["Sl4ckB0tT0kenAbCdEf"]),
    "Bearer header": ("Authorization: Bearer Be4rerT0kenValue.xyz123", ["Be4rerT0kenValue"]),
    "PEM private key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfnKQIDAQAB\n"
                        "-----END RSA PRIVATE KEY-----", ["MIIEpAIBAAKCAQEA0Z3VS5JJ"]),
    "basic-auth URL": ("git clone https://deploy:Ba51cAuthPassw0rd@git.example.com/repo.git", ["Ba51cAuthPassw0rd"]),
    "Twilio": ("twilio ACa1b2c3d4e5f60718293a4b5c6d7e8f90 SKf1e2d3c4b5a60718293a4b5c6d7e8f91",
               ["a1b2c3d4e5f60718293a4b5c6d7e8f90", "f1e2d3c4b5a60718293a4b5c6d7e8f91"]),
    "Google AIza": ("maps AIzaSyB1c2D3e4F5g6H7i8J9k0L1m2N3o4P5q6R", ["SyB1c2D3e4F5g6H7i8J9"]),
    "curl -u user:password": ("curl -u admin:CurlPassw0rdXy https://api.example.com", ["CurlPassw0rdXy"]),
    "secret-named assignment": ("DB_PASSWORD=Ass1gnedSecretValue", ["Ass1gnedSecretValue"]),
}
MORE = {  # kinds no rule named before stop 32 (they came out verbatim)
    "DigitalOcean token": ("doctl auth init -t dop_v1_" + "9e" * 32, ["9e9e9e9e9e9e9e9e9e9e"]),
    "Shopify token": ("X-Shopify-Access-Token shpat_" + "a1" * 16, ["a1a1a1a1a1a1a1a1a1a1"]),
    "Groq key": ("GROQ gsk_Gr0qKeyAbCdEfGhIjKlMnOpQrStUvWxYz0123456789", ["Gr0qKeyAbCdEfGhIjKlMn"]),
    "Vault token": ("vault login hvs.CAESIVau1tT0kenAbCdEfGhIjKl", ["CAESIVau1tT0kenAbCdEf"]),
    "Databricks token": ("host dapi0123456789abcdef0123456789abcdef", ["0123456789abcdef0123456789abcdef"]),
    "Google OAuth": ("ya29.a0AfH6SMBgo0gleOAuthT0kenValue and GOCSPX-G00gleCl1entSecretValue1",
                     ["a0AfH6SMBgo0gleOAuthT0ken", "G00gleCl1entSecretValue1"]),
    "age key": ("AGE-SECRET-KEY-1QYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQSZQGPQYQS",
                ["QYQSZQGPQYQSZQGPQYQSZQGP"]),
    "Sentry DSN": ("dsn https://fedcba9876543210fedcba9876543210@o1.ingest.sentry.io/2",
                   ["fedcba9876543210fedcba9876543210"]),
    "redis-cli -a": ("redis-cli -a Red1sCl1Passw0rd get k", ["Red1sCl1Passw0rd"]),
    "XML password": ("<password>XmlPassw0rdValue</password>", ["XmlPassw0rdValue"]),
    "ADO Pwd=": ("Server=db;Uid=sa;Pwd=Ad0Passw0rdValue;", ["Ad0Passw0rdValue"]),
}
ENCODED = {  # the encodings of issue #34 (each came out verbatim): masked in place as the text that wrote them
    "\\x escapes": ("printf '\\x67\\x68\\x70\\x5fH3xPr3f1xT0kenAbCdEfGhIjKlMnOpQr'", ["H3xPr3f1xT0kenAbCdEf"]),
    "\\x escape and text": ("printf '\\x67hp_M1xedXEsc4peT0kenAbCdEfGhIjKlMnOpQr'", ["M1xedXEsc4peT0kenAbCd"]),
    "octal escape": ("printf '\\147hp_0ct4lEsc4peT0kenAbCdEfGhIjKlMnOpQrS'", ["0ct4lEsc4peT0kenAbCd"]),
    "base64 of msgpack": ("gaV0b2tlbtkoZ2hwX01zZ1A0Y2tGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFFy",
                          ["Z2hwX01zZ1A0Y2tGcjRt"]),
    "base64 of protobuf": ("CihnaHBfUHIwdDBidWZGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFEQAQ==", ["CihnaHBfUHIwdDBidWZG"]),
    "base64 of a length-prefixed frame": ("AAAAKGdocF9MM25QcjNmMXhGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5P",
                                          ["KGdocF9MM25QcjNmMXhG"]),
    "base64 of CBOR": ("oWV0b2tlbngoZ2hwX0NiMHJGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFFyU3Q=", ["Z2hwX0NiMHJGcjRtZVQw"]),
    "double URL encoding": ("curl -d 'password%253DD0ubleUrlPassw0rd'", ["D0ubleUrlPassw0rd"]),
    "URL-encoded kubeconfig client-key-data": (
        "client-key-data%3A%20LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBa3ViM0MwbmYxZ0tleUIwZHl"
        "BYkNkRWZHaElqCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg%3D%3D",
        ["LS0tLS1CRUdJTiBSU0Eg", "a3ViM0MwbmYxZ0tleUIw"]),
    "URL-encoded \\x escape": ("q=%5Cx67hp_C0mb0UrlEscT0kenAbCdEfGhIjKlMnOpQr", ["C0mb0UrlEscT0kenAbCd"]),
}
KINDS = {**LEAKED, **CAUGHT, **EDGES, **NEAR, **MORE, **ENCODED}
assert len(LEAKED) == 22 and len(CAUGHT) == 12
STAMP = "2026-01-01T00:00:00Z"
WIDTH = 80  # a finding quotes an object or array cut to this many characters ("..." included)


def probes(kind: str) -> list[str]:
    """What must appear nowhere: each distinctive part, and its first 10 characters."""
    return [p for marker in KINDS[kind][1] for p in (marker, marker[:10])]


def cut_quote(text: str, marker: str) -> dict:
    """An object whose quote in a finding is cut 10 characters into `marker`: `text` after
    padding (from a space, `;`, `&` or `?` before the marker when all of it does not fit)."""
    for start in [0] + [n + 1 for n in range(text.index(marker)) if text[n] in " ;&?"]:
        escaped = json.dumps(text[start:])[1:-1]
        shown = escaped.index(marker) + min(10, len(marker))  # characters of the text the quote keeps
        pad = (WIDTH - 3) - len('{"pad":"","v":"') - shown
        if pad >= 0:
            return {"pad": "x" * pad, "v": text[start:]}
    raise AssertionError(f"no cut fits {text!r}")


def plant(b: LogBuilder, n: int, text: str, marker: str) -> None:
    """One turn holding `text` in every field an event can give the bundle."""
    b.start_turn()
    b.add("session/title", {"title": f"title {text}", "messageSeqs": [], "source": {"kind": "user"}})
    b.add("command/run", {"commandId": f"cmd{n}", "name": "deploy", "args": text, "source": {"kind": "user"}})
    b.add("command/done", {"commandId": f"cmd{n}", "kind": "error", "text": f"failed: {text}"})
    b.add("todo/write", {"todos": [{"content": f"rotate {text}", "status": "pending"}]})
    b.request_header(reason="change", system=f"system prompt {text}")
    b.start_step()
    b.user(f"please use {text} now")
    arguments = json.dumps({"command": text, "note": f"x {text}"})
    b.tool_round("bash", arguments, f"output: {text}", text=f"running {text}", reasoning=f"thinking {text}")
    b.end_step()
    b.start_step()
    result = json.dumps({"stdout": text, "inner": json.dumps({"deep": text})}, indent=2)
    call_id = b.new_id("call")
    b.assistant("", calls=[(call_id, f"tool {text}", json.dumps({"path": text}))])
    b.approval(call_id, f"tool {text}", reason=f"approve {text}")
    call = b.tool_call(call_id, f"tool {text}", json.dumps({"path": text}))
    b.tool_result(call_id, result, cites=call, is_error=True)
    b.hook_invoked("PostToolUse", f"h{n}")
    b.add("hook/result", {"turn": b.turn, "point": "PostToolUse", "handlerId": f"h{n}", "decision": "block",
                          "exitCode": 2, "stderrSummary": f"blocked: {text}", "durationMs": 1})
    b.end_step()
    b.start_step()
    b.add("llm/retry", {"mode": "normal", "retryId": f"r{n}", "turn": b.turn, "step": b.step, "provider": "p",
                        "policyKey": "k", "retry": 1, "maxRetries": 3, "delayMs": 10,
                        "failure": {"code": "RATE_LIMIT", "status": 429, "message": f"rate limited: {text}"}})
    b.assistant("", finish={"kind": "error", "failure": {"code": "PROVIDER", "message": f"provider said: {text}"}})
    b.add("session/title", {"title": cut_quote(text, marker), "messageSeqs": [], "source": {"kind": "user"}})
    b.end_step()
    b.turn_open = False
    b.add("turn/end", {"turn": b.turn, "reason": {"kind": "error", "error": {"code": "PROVIDER",
                                                                             "message": f"turn failed: {text}"}}})


def main_log() -> LogBuilder:
    b = LogBuilder("leaky-session")
    for n, (text, markers) in enumerate(KINDS.values()):
        plant(b, n, text, markers[0])
    return b


def header_logs(root: Path) -> list[Path]:
    """For each kind, a log whose header holds it (session id, cwd, parentSession, agentPreset
    quoted cut short, origin, an unknown field) in a folder and a file named with it (when a file
    name can hold it), and an unreadable input beside it."""
    inputs = []
    for n, (text, markers) in enumerate(KINDS.values()):
        name = text if "/" not in text else f"kind{n}"
        folder = root / f"k{n} {name}"
        folder.mkdir(parents=True)
        b = LogBuilder(text, cwd=f"/home/{text}", parentSession=text, agentPreset=cut_quote(text, markers[0]),
                       origin=text, title=text)
        b.start_turn()
        b.user("hello")
        b.end_turn()
        inputs.append(b.write(folder / f"{name}.jsonl"))
        broken = folder / f"{name}.broken.jsonl"
        broken.write_bytes(b"not a log\n")
        inputs.append(broken)
    return inputs


def search(out: Path, printed: str, kinds) -> list[str]:
    """Every place a probe of `kinds` shows: bundle files' bytes, file and folder names, printed text."""
    found = []
    places = [(p.relative_to(out).as_posix(), p.read_bytes() if p.is_file() else b"") for p in out.rglob("*")]
    for kind in kinds:
        for probe in probes(kind):
            needle = probe.encode()
            found += [f"{kind}: {probe!r} in {rel}" for rel, data in places if needle in data]
            found += [f"{kind}: {probe!r} in the name {rel}" for rel, _ in places if probe in rel]
            found += [f"{kind}: {probe!r} printed" for _ in [0] if probe in printed]
    return found


def test_no_kind_of_secret_reaches_any_byte_or_name_of_the_bundle(cli, tmp_path):
    log = main_log().write(tmp_path / "main.jsonl")
    inputs = [log, *header_logs(tmp_path / "in")]
    raw = b"".join(p.read_bytes() for p in inputs)
    for kind in KINDS:  # planted
        assert all(m.encode() in raw for m in KINDS[kind][1]), kind
    validated = cli("validate", log, "--json", "--all-findings", expect=1).stdout
    for _, markers in KINDS.values():  # the quotes cut short show the first 10 characters of each secret
        assert markers[0][:10] in validated, markers[0]
    out = tmp_path / "bundle"
    result = cli("export", *inputs, "--out", out, "--timestamp", STAMP, expect=2)  # (the unreadable inputs)
    assert search(out, result.stdout + result.stderr, KINDS) == []
    manifest = json.loads((out / "manifest.json").read_bytes())
    assert [e["verdict"] for e in manifest["sessions"]] == ["errors"] + ["errors", "unreadable"] * len(KINDS)
    assert all(p.read_bytes() for p in inputs)  # the inputs are untouched
    assert raw == b"".join(p.read_bytes() for p in inputs)


def test_no_kind_of_secret_reaches_the_bundle_of_a_log_with_packed_rows(cli, tmp_path):
    log = main_log().write(tmp_path / "packed.jsonl", pack=True)
    assert b"text-chunks" in log.read_bytes()
    out = tmp_path / "bundle"
    result = cli("export", log, "--out", out, "--timestamp", STAMP, "--json", expect=1)
    assert search(out, result.stdout + result.stderr, KINDS) == []


def test_a_password_member_in_json_arguments_is_masked_and_the_arguments_stay_json():
    from dshreplay.redaction.redactor import MASK, load_redactor
    redactor = load_redactor(None)
    arguments = json.dumps({"command": "ls", "password": "pw", "apiKey": "abc", "inputTokens": 12})
    masked = json.loads(redactor.string(arguments))
    assert masked == {"command": "ls", "password": MASK, "apiKey": MASK, "inputTokens": 12}
    assert redactor.string('{"command": "ls"}') == '{"command": "ls"}'  # unchanged text stays as written


def test_a_keys_rule_reaches_members_of_json_text_inside_strings(tmp_path):
    from dshreplay.redaction.redactor import MASK, load_redactor
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"keys": ["command"]}))
    redactor = load_redactor(str(rules), defaults=False)
    record = {"data": {"arguments": json.dumps({"command": "rm -rf /", "cwd": "/"}),
                       "tools": [{"properties": {"command": {"type": "string"}}}]}}
    out = redactor.value(record)
    assert json.loads(out["data"]["arguments"]) == {"command": MASK, "cwd": "/"}
    assert out["data"]["tools"] == [{"properties": {"command": MASK}}]


def test_secret_calls_are_found_only_once_their_deltas_are_put_together(tmp_path):
    from dshreplay.analyses.validate import validate_log
    from dshreplay.redaction.redactor import ArgumentDeltas, load_redactor
    b = LogBuilder("deltas")
    b.start_turn()
    b.start_step()
    b.tool_round("bash", json.dumps({"command": "ls", "password": "correcthorsebattery"}), "done")
    b.end_turn()
    log = b.write(tmp_path / "l.jsonl")
    deltas = ArgumentDeltas()
    validate_log(log, observers=[deltas])
    redactor = load_redactor(None)
    pieces = [p for parts in deltas.parts.values() for p in parts]
    assert not any("correcthorsebattery" in p for p in pieces)  # no single delta holds the whole secret
    assert deltas.secret_calls(redactor) == {(1, 1, 0)}  # turn 1, step 1, block 0: the bash call


def test_findings_are_computed_on_the_original_and_written_redacted(cli, tmp_path):
    log = tmp_path / "x.jsonl"
    b = LogBuilder("finding-leak")
    b.start_turn()
    b.add("unknown/AKIAIOSFODNN7EXAMPLE", {"x": 1})
    b.write(log)
    out = tmp_path / "b"
    cli("export", log, "--out", out, expect=None)
    findings = json.loads((out / "finding-leak" / "findings.json").read_bytes())["files"][0]["findings"]
    assert [f["code"] for f in findings][:1] == ["DSH-E004"] or "DSH-E006" in [f["code"] for f in findings]
    assert "AKIAIOSFODNN7EXAMPLE" not in (out / "finding-leak" / "findings.json").read_text()
    assert any("[REDACTED]" in f["message"] for f in findings)
    assert "AKIAIOSFODNN7EXAMPLE" in Path(log).read_text()


def test_a_secret_split_at_any_point_between_two_streamed_argument_deltas_is_masked(cli, tmp_path):
    """A tool call streamed in two deltas, cut at every character of the secret, in plain and packed rows."""
    kinds = ["GitHub ghp_", "short password= value", "PEM private key", "docker login -pPW glued, podman login"]
    b = LogBuilder("split-deltas")
    firsts = []  # the first delta of each call
    b.start_turn()
    b.start_step()
    for kind in kinds:
        text, markers = KINDS[kind]
        arguments = json.dumps({"command": text})
        at = arguments.index(json.dumps(markers[0])[1:-1])
        for cut in range(at + 1, at + len(json.dumps(markers[0])) - 2):
            b.assistant("", calls=[(b.new_id("call"), "bash", [arguments[:cut], arguments[cut:]])])
            firsts.append(arguments[:cut])
    b.end_turn()
    for pack in (False, True):
        log = b.write(tmp_path / f"split{pack}.jsonl", pack=pack)
        raw = log.read_bytes()
        assert all(json.dumps(first).encode() in raw for first in firsts)  # (the deltas as streamed)
        out = tmp_path / f"bundle{pack}"
        result = cli("export", log, "--out", out, "--timestamp", STAMP, expect=None)
        assert result.exit_code in (0, 1), result.stderr
        assert search(out, result.stdout + result.stderr, kinds) == []


# values that look like secrets' neighbours and are none: the bundle must keep them as they are
KEPT = ["docker run -u 1000:1000 app", "git checkout rk-foo", "pip install sk-learn", "token: 4096000",
        '{"maxTokens": 8192}', 'fetch(url, {credentials: "same-origin"})', "the API uses bearer authentication",
        "Use Bearer Authentication", "authorization: required", "cookie: none", "docker login -u bob reg.example.com",
        "git add -p src/app.py", "aws configure set region us-east-1", "cd /srv; PWD=/srv/app; ls",
        "<tokenCount>42</tokenCount>", "<maxTokens>4096</maxTokens>", "use the gsk_ prefix",
        # the false positives of #34: prose, code that reads a secret, a path to a secret's file, identifiers,
        # the data members of a model's output (each was masked, words and spaces around it too)
        "password: must be at least 12 characters", "Password: (leave blank to keep the current one)",
        "secret: !vault |", "password = getpass.getpass()", "api_key = settings.OPENAI_API_KEY",
        "token = os.environ['OPENAI_API_KEY']", "DB_PASSWORD=$(cat /run/secrets/db)", "token = tokenizer.encode(text)",
        "PGPASSWORD_FILE=/run/secrets/pg", "ghp_prefix_detection_is_enabled_for_repo",
        "class APDUResponseParser extends Base", '{"token": " the", "logprob": -0.25}',
        '{"next_page_token": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBp", "items": []}', '{"authorization": "pending"}']


def test_values_that_only_look_like_secrets_reach_the_bundle_intact(cli, tmp_path):
    b = LogBuilder("kept-values")
    for text in KEPT:
        b.start_turn()
        b.request_header(system=f"system {text}")
        b.start_step()
        b.user(text)
        b.tool_round("bash", json.dumps({"command": text}), f"output: {text}", text=f"running {text}")
        b.end_turn()
    out = tmp_path / "b"
    cli("export", b.write(tmp_path / "kept.jsonl"), "--out", out, "--timestamp", STAMP)
    manifest = json.loads((out / "manifest.json").read_bytes())
    assert manifest["sessions"][0]["redactions"] == {"replacements": 0, "byRule": {}}
    messages = (out / "kept-values" / "messages.jsonl").read_text()
    transcript = (out / "kept-values" / "transcript.md").read_text()
    for text in KEPT:
        assert json.dumps(text)[1:-1] in messages, text  # the user's message
        assert json.dumps(json.dumps({"command": text}))[1:-1] in messages, text  # the tool call's arguments
        assert text in transcript, text


def test_the_progress_bar_shows_a_log_path_as_the_bundle_writes_it(tmp_path):
    """On a terminal, a long pass over one log draws a bar labelled with its path: the path as the
    bundle writes it (the table export prints afterwards already was)."""
    import io

    from dshreplay.bundle.export import export_bundle
    from dshreplay.cli._meter import TerminalMeter
    from dshreplay.core.driver import TICK
    from dshreplay.options import Options

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    text, markers = KINDS["GitHub ghp_"]
    b = LogBuilder("progress")
    b.start_turn()
    for _ in range(TICK + 10):  # (a pass tells its meter how far it got every TICK records)
        b.add("todo/write", {"todos": []})
    b.end_turn()
    log = b.write(tmp_path / f"in {text.split()[-1]}.jsonl")
    shown = Terminal()
    export_bundle([log], tmp_path / "b", Options(progress=TerminalMeter(shown, delay=0.0), jobs=1),
                  timestamp=STAMP, evidence_key=str(tmp_path / "evidence.key"))
    drawn = shown.getvalue()
    assert "in [REDACTED].jsonl  [" in drawn  # (the bar's label: the last 40 characters of the path)
    assert not any(p in drawn for p in probes("GitHub ghp_")), drawn[:200]
