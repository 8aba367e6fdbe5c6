"""Every encoding the README names is undone before the rules look (`redaction/_decode.py`), and
the secret is masked in place as the encoded text that wrote it: through the gate over a record's
line (which once undid only JSON escapes and one level of URL encoding, so these records were kept
as written) and in the strings themselves."""

from __future__ import annotations

import json

import orjson
import pytest

from dshreplay.redaction._decode import base64_runs, unescape, url_decoded
from dshreplay.redaction.redactor import load_redactor

# text as logged -> the same text as exported (each leaked from a record before)
MASKED = {
    "printf '\\x67\\x68\\x70\\x5fH3xPr3f1xT0kenAbCdEfGhIjKlMnOpQr'": "printf '[REDACTED]'",
    "printf '\\x67hp_M1xedXEsc4peT0kenAbCdEfGhIjKlMnOpQr'": "printf '[REDACTED]'",
    "printf '\\147hp_0ct4lEsc4peT0kenAbCdEfGhIjKlMnOpQrS'": "printf '[REDACTED]'",
    "echo $'\\147\\150\\160\\137' 0ct4lOnlyPrefix": "echo $'\\147\\150\\160\\137' 0ct4lOnlyPrefix",  # (no token)
    # base64 of a binary frame holding a token: msgpack {"token": ...}, protobuf field 1, a 4-byte length
    # prefix, CBOR {"token": ...}: the whole run is masked
    "frame gaV0b2tlbtkoZ2hwX01zZ1A0Y2tGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFFy end": "frame [REDACTED] end",
    "frame CihnaHBfUHIwdDBidWZGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFEQAQ== end": "frame [REDACTED] end",
    "frame AAAAKGdocF9MM25QcjNmMXhGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5P end": "frame [REDACTED] end",
    "frame oWV0b2tlbngoZ2hwX0NiMHJGcjRtZVQwa2VuQWJDZEVmR2hJaktsTW5PcFFyU3Q= end": "frame [REDACTED] end",
    # URL encoding to any depth, masked where the value stands
    "curl -d 'password%253DD0ubleUrlPassw0rd'": "curl -d 'password%253D[REDACTED]'",
    "curl -d 'password%" + "25" * 12 + "3DDeepUrlPassw0rd'": "curl -d 'password%" + "25" * 12 + "3D[REDACTED]'",
    # a kubeconfig's client-key-data (base64 of a PEM key) URL-encoded: its base64 and its %3D%3D
    "client-key-data%3A%20LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBa3ViM0MwbmYxZ0tleUIwZHl"
    "BYkNkRWZHaElqCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg%3D%3D x": "client-key-data%3A%20[REDACTED] x",
    # combinations: \x escapes URL-encoded, base64 of URL-encoded text, URL-encoded base64 of \x escapes
    "q=%5Cx67hp_C0mb0UrlEscT0kenAbCdEfGhIjKlMnOpQr": "q=[REDACTED]",
    "echo Y3VybCAtZCBwYXNzd29yZCUzREMwbWIwQjY0VXJsUGFzc3cwcmQgeA== | base64 -d": "echo [REDACTED] | base64 -d",
    "x=XHg2N2hwX0IwdGhMYXllcnNUMGtlbkFiQ2RFZkdoSWpLbE1uT3BRcg%3D%3D": "x=[REDACTED]",
}


@pytest.mark.parametrize("text", MASKED)
def test_a_secret_behind_any_encoding_is_masked_in_place_through_the_gate(text):
    redactor = load_redactor(None)
    record = {"type": "user/message", "data": {"text": text, "args": json.dumps({"command": text})}}
    masked = redactor.record(record, orjson.dumps(record))
    assert masked["data"]["text"] == MASKED[text]
    assert json.loads(masked["data"]["args"]) == {"command": MASKED[text]}


def test_url_encoding_is_undone_to_any_depth_in_one_pass():
    # (`%2%34%31` gives `%241`, then `$1`; an escape of a byte past ASCII stays)
    assert url_decoded(b"%252541 %2%34%31 %%41 %e2%82%ac %7e") == b"A $1 %A %e2%82%ac ~"
    assert url_decoded(b"%" + b"25" * 1000 + b"41") == b"A"


def test_one_table_of_escapes_serves_views_and_quotes():
    assert unescape("\\x67\\150\\u0070\\U0000005f\\n\\'\\\\x41") == "ghp_\n'\\x41"
    assert unescape("\\q and \\U00110000 stay") == "\\q and \\U00110000 stay"


def test_a_binary_frame_gives_its_printable_runs_and_a_hash_gives_nothing():
    import base64
    frame = base64.b64encode(b"\x00\x01\x02\xffshort\x00password=Fr4mePw1\xfe\xfdsecond run\x00").decode()
    assert [plain for _, _, plain in base64_runs(f"x {frame} y")] == ["password=Fr4mePw1\nsecond run"]
    digest = base64.b64encode(__import__("hashlib").sha256(b"a").digest()).decode()  # (no run of 8 printable bytes)
    assert digest == "ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs=" and list(base64_runs(digest)) == []
    # a run that decodes to nothing whole is tried between its `/`: a path of base64 names
    name = base64.b64encode(b"ghp_" + b"P4thT0ken" * 4).decode()
    assert [(s, e, plain) for s, e, plain in base64_runs(f"/home/{name}/x")] == [(6, 6 + len(name),
                                                                                  "ghp_" + "P4thT0ken" * 4)]
