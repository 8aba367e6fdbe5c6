"""The base engine of the default rules: Betterleaks' rule set, run in this process.

Betterleaks (the successor of gitleaks, by its author) ships the gitleaks
lineage of default rules: some 460 kinds of secret, each a Go RE2 regex
behind an Aho-Corasick keyword prefilter, with entropy and placeholder
filters. `betterleaks-py` runs its Go engine through ctypes; a text with
none of its keywords costs a few microseconds. The engine only says *what*
the secret is (each finding's value and the text it matched); where it
stands, and how it is masked, stays redaction's own (`redactor`: in place,
behind escapes, URL encoding and base64, keyed hashes): every place a
finding's matched text stands in the string is a span, and inside it the
value.

Nothing leaves the machine. Betterleaks can check a secret against its
service's API (the `validate` expressions of its configuration), but only its
command line asks for that: `scan_string` builds a scanner that compiles and
evaluates the rules' *filter* expressions only (the disassembly of the
binding: no call path from `ScanStringCGO` reaches the validation runtime or
an HTTP client), and a scan of every kind of `tests/secret_kinds.py` under
`strace -f -e trace=network` makes no socket at all.

What the engine finds still passes our tests of a value that is no secret
(a placeholder, a `$VAR` reference: `secretrules.KEEP`), and its generic
rules (`generic-api-key`, `generic-password`...) are disabled
(`betterleaks.toml`) and left to our assignment rules, whose keep tests know a
type name, a count or prose after `token:`.

Speed: a call costs microseconds, and an export asks whether each record may
hold a secret; so the engine is called only for a text that holds a keyword of
one of its rules (the keywords of the configuration the library embeds, one
more pattern of the gate's RE2 set, `rules.Gate`, so the scan that gates the
default rules answers for the engine too; when they cannot be read, every
text is scanned), but for OURS_KEYWORDS, which every session holds and whose
rules our rules cover.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

ENGINE = "betterleaks"
# the engine's rules whose shape our assignment rules catch with their keep tests (`secretrules.OURS`)
LEFT_TO_OURS = ("generic-api-key", "generic-password", "generic-username", "generic-credential-uri")
# what ends a value where the engine's rules want a quote, a space or the end: a path's `/`, a file's extension, a
# sentence's full stop or comma (`mailgun=key-....jsonl`, `the key is mailgun=key-....`); the text is scanned
# again with each of them made a line end
_CUTS = re.compile(r"/|[.,](?![A-Za-z0-9_-]{7})")
MIN_ADDRESS_SPACE = 4 << 30  # what the engine's Go runtime may reserve as it starts (it failed at 800 MiB)
CONFIG = Path(__file__).with_name("betterleaks.toml")  # the default rules, the generic ones disabled
MAX_SCAN = 256 * 1024  # characters per engine call: a longer text is scanned in pieces cut at line ends
Span = tuple[int, int, str]  # (start, end, rule name) in bytes of the UTF-8 text


def unusable() -> str | None:
    """Why the engine cannot run in this process (None: it can). Its Go runtime reserves some
    gigabytes of address space as it starts, and dies (a fatal error, no exception) where an
    address-space limit (`ulimit -v`, RLIMIT_AS) refuses them: then the default rules run
    without it, and the command says so."""
    import resource
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY or limit >= MIN_ADDRESS_SPACE:
        return None
    return (f"the secret engine (Betterleaks) is off: its runtime needs {MIN_ADDRESS_SPACE >> 30} GiB of address "
            f"space and `ulimit -v` allows {limit >> 20} MiB; secrets are masked by the RE2 rules only "
            "(docs/reference/redaction.md)")


def rule_name(rule_id: str) -> str:
    """A finding's rule as the manifest counts it."""
    return f"{ENGINE} {rule_id}"


class Engine:
    """Betterleaks' default rules. Pickles as its recipe (a worker process loads its own
    library); the library loads once per process, at the first scan."""

    def __init__(self, keep: Callable[[str], bool]) -> None:
        import betterleaks  # (lazily: only a command that redacts pays its 80 ms and 60 MB)
        self._scan: Callable[[str, str], list[Any]] = betterleaks.scan_string
        self._config = str(CONFIG)
        self._keep = keep
        self.keywords = keyword_pattern(Path(betterleaks.__file__).parent)  # (None: every text may hold a secret)
        self._keywords = _keyword_gate(self.keywords)

    def __reduce__(self) -> tuple[type[Engine], tuple[Callable[[str], bool]]]:
        return Engine, (self._keep,)

    def findings(self, text: str) -> list[tuple[str, str, str]]:
        """(rule name, matched text, secret value) of each finding in `text` that our keep
        test and LEFT_TO_OURS do not spare."""
        found: list[tuple[str, str, str]] = []
        text = text.replace("\0", "\n")  # (the binding passes a C string: a NUL ends it)
        cut = _CUTS.sub("\n", text)
        for piece in _pieces(text if cut == text else f"{text}\n{cut}"):  # (one call: each costs microseconds)
            for finding in self._scan(piece, self._config):
                rule_id, value = finding.rule_id, finding.match.value
                if rule_id in LEFT_TO_OURS or not value or self._keep(value):
                    continue
                full = finding.match.full or value
                finding_ = (rule_name(rule_id), full if value in full else value, _whole(value, full))
                if finding_ not in found:
                    found.append(finding_)
        return found

    def holds(self, data: bytes) -> bool:
        """Whether the engine finds a secret in `data` (UTF-8)."""
        return self._may_hold(data) and bool(self.findings(data.decode("utf-8", "replace")))

    def _may_hold(self, data: bytes) -> bool:
        """Whether `data` holds a keyword of a rule (else no rule runs on it: the engine's
        own prefilter would say the same, after a call that costs more than this scan)."""
        found = None if self._keywords is None else self._keywords.Match(data)
        return found is None or len(found) > 1

    def spans(self, data: bytes, spans: list[Span]) -> None:
        """Adds the span of each finding's secret in `data` (UTF-8): inside every place its
        matched text stands, and, when it is long enough to name nothing else, everywhere."""
        found: set[Span] = set()
        if not self._may_hold(data):
            return
        for rule, full, value in self.findings(data.decode("utf-8", "replace")):
            full_b, value_b = full.encode(), value.encode()
            inside = max(0, full_b.find(value_b))
            head = full_b[:inside + len(value_b)]  # (the match to the secret's end, not the `\n` a cut put after)
            at = data.find(head)
            while at >= 0:
                found.add((at + inside, at + inside + len(value_b), rule))
                at = data.find(head, at + 1)
            if len(value_b) >= 12:
                at = data.find(value_b)
                while at >= 0:
                    found.add((at, at + len(value_b), rule))
                    at = data.find(value_b, at + 1)
        spans += sorted(found)


def keyword_pattern(package: Path) -> str | None:
    """One RE2 pattern of every keyword of the engine's rules (but LEFT_TO_OURS's and
    OURS_KEYWORDS): the engine runs no rule on a text that holds none. Read from the default
    configuration the library embeds; None (the engine scans every text) when it cannot be
    read, or a rule has none."""
    try:
        import tomllib
    except ImportError:  # (Python 3.10: every text is scanned)
        return None
    for library in sorted(package.glob("*betterleaks*.*")):
        if library.suffix not in (".so", ".dylib", ".dll"):
            continue
        data = library.read_bytes()
        start = data.find(b'\ntitle = "betterleaks config"')
        end = data.find(b"\0", data.rfind(b"[[rules]]"))
        try:
            rules = tomllib.loads(data[start:end].decode("utf-8"))["rules"]
        except (ValueError, KeyError, UnicodeDecodeError):
            return None
        words: set[str] = set()
        for rule in rules:
            if rule.get("id") in LEFT_TO_OURS or ("regex" not in rule and "path" in rule):
                continue  # (disabled; a rule on file names only)
            if not rule.get("keywords"):
                return None
            words.update(word.lower() for word in rule["keywords"])
        if not words:
            return None
        return "(?i)" + "|".join(re.escape(w) for w in sorted(words - set(OURS_KEYWORDS)))
    return None


def _keyword_gate(pattern: str | None) -> Any:
    """`pattern` as an RE2 set (one DFA scan, none of a regex object's Python around it);
    None when there is no pattern."""
    if pattern is None:
        return None
    import re2
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    gate = re2.Set.SearchSet(options)
    gate.Add(pattern)
    gate.Add(r"\A")  # (matches every text: a scan that finds nothing is one the DFA gave up on)
    gate.Compile()
    return gate


# keywords that every session's text holds (a model's name, its token counts and prose about tokens), and that
# only rules whose secrets our rules catch wherever they stand need: the engine is not called for them alone
OURS_KEYWORDS = {
    "token": "`aws-secret-access-key` (40 characters after `token =`): our `key or token assignment`",
    "deepseek": "`deepseek-api-key` (an `sk-` key after `deepseek =`): our `sk- key`",
}


def _pieces(text: str) -> list[str]:
    """`text` cut at line ends into pieces of at most MAX_SCAN characters (a line longer
    than that: cut where it must, with its last 1,024 characters again in the next piece)."""
    if len(text) <= MAX_SCAN:
        return [text]
    pieces, at = [], 0
    while at < len(text):
        end = min(len(text), at + MAX_SCAN)
        cut = text.rfind("\n", at, end) + 1 if end < len(text) else end
        if cut <= at:
            pieces.append(text[at:end])
            at = end - 1024
        else:
            pieces.append(text[at:cut])
            at = cut
    return pieces


def _whole(value: str, full: str) -> str:
    """The secret a finding names: its value, or, where the rule's group is a part of a token
    (a repeated part of a URL, one of the alternatives a token starts with), the whole token
    its match holds around it; a value shorter than 8 characters names its whole match."""
    at = full.find(value)
    if at < 0:
        return value
    if len(value) < 8:
        return full
    start, end = at, at + len(value)
    if value[0].isalnum():
        while start > 0 and full[start - 1].isalnum():
            start -= 1
    if value[-1].isalnum():
        while end < len(full) and full[end].isalnum():
            end += 1
    return full[start:end]
