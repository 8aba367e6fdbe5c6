"""Who may sign a bundle: the keys of a `--public-key` file, read as `ssh-keygen -Y verify`
reads an allowed_signers file (OpenSSH's sshsig.c and misc.c, ALLOWED SIGNERS in
ssh-keygen(1)).

A line is `PRINCIPALS [OPTIONS] KEYTYPE BASE64 [COMMENT]`. A signature is accepted when one
line, in the file's order, (1) lists a principal pattern matching the principal asked for
(`verify-export --principal`, as `ssh-keygen -Y verify -I`; patterns: `*`, `?`, `!` to
refuse, comma-separated), (2) parses (options `cert-authority`, `namespaces="..."`,
`valid-after="..."`, `valid-before="..."`, values double-quoted; anything else spoils
the line), (3) holds the signer's key itself (not as a `cert-authority`: dshreplay's
signatures are made by plain keys), (4) permits the namespace "dshreplay" (when it says
`namespaces`), and (5) is valid now: `valid-after` <= now <= `valid-before`, times given as
YYYYMMDD[HHMM[SS]], in UTC with a `Z` or `UTC` suffix, else local time. Every other line is
skipped. A line that starts with the key type is an OpenSSH public key (`KEY.pub`): its key is
trusted with no principal, namespace or time of its own. The tests run `ssh-keygen -Y verify`
beside `verify-export` on the same files and want the same answer in every case (29 of them).
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from typing import Any, Callable

KEY_TYPES = re.compile(rb"(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com"
                       rb"|sk-ecdsa-sha2-nistp256@openssh\.com)(-cert-v01@openssh\.com)?")  # (OpenSSH's key types)
_TIME_FIELDS = {8: 3, 12: 5, 14: 6}  # (length of YYYYMMDD[HHMM[SS]]: how many fields it gives)


@dataclass(frozen=True)
class SigOptions:
    """An allowed_signers line's options, as sshsigopt_parse reads them."""

    ca: bool = False
    namespaces: bytes | None = None
    valid_after: int = 0  # (seconds since the epoch; 0: not said)
    valid_before: int = 0


@dataclass(frozen=True)
class Allowed:
    """One line of a --public-key file that names a key (`blob`: its SSH wire form; `key`: as
    `load` made it). `line` is None for a public key line, which has no principals or options;
    `problem` says why an allowed_signers line cannot be used (ssh-keygen skips it)."""

    blob: bytes
    key: Any
    line: int | None = None
    principals: bytes = b""
    options: SigOptions = SigOptions()
    problem: str | None = None

    def refuses(self, principal: str, namespace: str, now: float) -> str | None:
        """Why this line does not let its key sign as `principal` in `namespace` at `now` (None: it does)."""
        if self.line is None:
            return None
        where = f"allowed_signers line {self.line}"
        if match_list(principal.encode(), self.principals) != 1:
            return (f"{where} lists the key for other principals than {principal!r} (name the one to trust with "
                    "--principal, as ssh-keygen -Y verify -I)")
        if self.problem is not None:
            return f"{where}: {self.problem}"
        opts = self.options
        if opts.ca:
            return f"{where} names the key as a cert-authority, and the signature is by the key itself"
        if opts.namespaces is not None and match_list(namespace.encode(), opts.namespaces) != 1:
            return f"{where} does not permit the key in namespace {namespace!r}"
        if opts.valid_after and now < opts.valid_after:
            return f"{where}: the key is not yet valid (valid-after {_utc(opts.valid_after)})"
        if opts.valid_before and now > opts.valid_before:
            return f"{where}: the key has expired (valid-before {_utc(opts.valid_before)})"
        return None


def read_signers(data: bytes, load: Callable[[bytes], tuple[bytes, Any] | None]) -> list[Allowed]:
    """The lines of a public key or allowed_signers file that name a key `load` reads
    (`load(b"KEYTYPE BASE64")`: (blob, key), or None when it is no key dshreplay checks)."""
    signers = []
    for n, raw in enumerate(data.split(b"\n"), 1):
        line = raw.lstrip(b" \t")
        if not line or line.startswith(b"#"):
            continue
        if KEY_TYPES.fullmatch(line.split(None, 1)[0]):  # a public key line (KEY.pub)
            loaded = load(b" ".join(line.split()[:2]))
            if loaded is not None:
                signers.append(Allowed(*loaded))
            continue
        signer = _allowed_line(n, line, load)
        if signer is not None:
            signers.append(signer)
    return signers


def _allowed_line(n: int, line: bytes, load: Callable[[bytes], tuple[bytes, Any] | None]) -> Allowed | None:
    """One allowed_signers line (None: it names no key `load` reads; then it can vouch for nothing)."""
    principals, rest = _token(line)
    rest = rest.lstrip(b" \t")
    words = rest.split()
    problem, options = None, SigOptions()
    if not (words and KEY_TYPES.fullmatch(words[0])):  # options first
        end = _options_end(rest)
        if end is None:
            return None
        text, rest = rest[:end], rest[end:].lstrip(b" \t")
        words = rest.split()
        parsed = parse_options(text)
        problem, options = (f"bad options: {parsed}", options) if isinstance(parsed, str) else (None, parsed)
    loaded = load(b" ".join(words[:2])) if len(words) >= 2 else None
    if loaded is None:
        return None
    return Allowed(*loaded, line=n, principals=principals, options=options, problem=problem)


def _token(line: bytes) -> tuple[bytes, bytes]:
    """The principals (the first word, or a double-quoted run) and what follows them."""
    if line.startswith(b'"'):
        end = line.find(b'"', 1)
        return (line[1:end], line[end + 1:]) if end > 0 else (line, b"")
    word = re.match(rb"[^ \t\r]*", line)
    assert word is not None  # (matches the empty string at least)
    return word.group(), line[word.end():]


def _options_end(text: bytes) -> int | None:
    """Where an options word ends (the first blank outside double quotes; `\\"` stays quoted);
    None when a quote is never closed."""
    quoted, at = False, 0
    while at < len(text) and (quoted or text[at] not in b" \t"):
        if text[at:at + 2] == b'\\"':
            at += 1
        elif text[at] == ord('"'):
            quoted = not quoted
        at += 1
    return None if quoted else at


def parse_options(text: bytes) -> SigOptions | str:
    """An allowed_signers line's options, or why they do not parse (sshsigopt_parse's words)."""
    found: dict[str, Any] = {}
    at = 0
    while at < len(text) and text[at] not in b" \t":
        low = text[at:].lower()
        if low.startswith(b"cert-authority"):
            found["ca"], at = True, at + len(b"cert-authority")
        else:
            name = next((k for k in ("namespaces", "valid-after", "valid-before") if low.startswith(k.encode() + b"=")),
                        None)
            if name is not None:
                if name in found:
                    return f'multiple "{name}" clauses'
                value, end = _dequote(text, at + len(name) + 1)
                if isinstance(end, str):
                    return end
                at = end
                found[name] = value if name == "namespaces" else absolute_time(value)
                if found[name] is None:
                    return f'invalid "{name}" time'
        if at >= len(text) or text[at] in b" \t":
            break
        if text[at] != ord(","):
            return "unknown key option"
        at += 1
        if at >= len(text):
            return "unexpected end-of-options"
    after, before = found.get("valid-after", 0), found.get("valid-before", 0)
    if after and before and before <= after:
        return '"valid-before" time is before "valid-after"'
    return SigOptions(found.get("ca", False), found.get("namespaces"), after, before)


def _dequote(text: bytes, at: int) -> tuple[bytes, int | str]:
    """The double-quoted value at `at` and where it ends, or why it is not one."""
    if at >= len(text) or text[at] != ord('"'):
        return b"", "missing start quote"
    value = bytearray()
    at += 1
    while at < len(text) and text[at] != ord('"'):
        if text[at:at + 2] == b'\\"':
            at += 1
        value.append(text[at])
        at += 1
    if at >= len(text):
        return b"", "missing end quote"
    return bytes(value), at + 1


def absolute_time(value: bytes) -> int | None:
    """YYYYMMDD[HHMM[SS]] as seconds since the epoch: UTC with a `Z` or `UTC` suffix, else local
    time (parse_absolute_time); None when it is not one, or not after the epoch."""
    text, utc = value, False
    if len(text) > 1 and text[-1:] in (b"Z", b"z"):
        text, utc = text[:-1], True
    elif len(text) > 3 and text[-3:].upper() == b"UTC":
        text, utc = text[:-3], True
    fields = _TIME_FIELDS.get(len(text))
    if fields is None or not text.isdigit():
        return None
    parts = [int(text[0:4]), *(int(text[i:i + 2]) for i in range(4, len(text), 2))]
    parts += [0] * (6 - fields)
    year, month, day, hour, minute, second = parts
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 60):
        return None
    stamp = (year, month, day, hour, minute, second, 0, 0, 0)
    try:
        seconds = calendar.timegm(stamp) if utc else int(time.mktime(stamp))
    except (OverflowError, ValueError):
        return None
    return seconds if seconds > 0 else None


def match_list(string: bytes, patterns: bytes) -> int:
    """OpenSSH's match_pattern_list: 1 when a pattern of the comma-separated list matches and
    none negated (`!`) does, -1 when a negated one matches, 0 otherwise."""
    positive = 0
    for sub in patterns.split(b","):
        negated = sub.startswith(b"!")
        sub = sub[1:] if negated else sub
        if len(sub) >= 1023:
            return 0
        if _match(string, sub):
            if negated:
                return -1
            positive = 1
    return positive


def _match(string: bytes, pattern: bytes) -> bool:
    """OpenSSH's match_pattern: `*` any run of bytes, `?` any one byte, the rest as written."""
    regex = b"".join(b".*" if c == ord("*") else b"." if c == ord("?") else re.escape(bytes([c])) for c in pattern)
    return re.fullmatch(regex, string, re.DOTALL) is not None


def _utc(seconds: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
