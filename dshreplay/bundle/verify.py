"""`verify-export`: re-hash a bundle and its inputs, check its digest and signature,
and say what was checked and what was not."""

from __future__ import annotations

import os
import time
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from dshreplay._jsvalues import (
    MISSING,
    json_pointer,
    shown,
)
from dshreplay.analyses.validate import duplicate_key
from dshreplay.bundle._layout import MANIFEST, OLD_SIGNATURE, SIGNATURE, dumps, pinned_path, read_manifest
from dshreplay.bundle._storepin import container_session
from dshreplay.errors import DshReplayError, ReadError
from dshreplay.integrity._chain import (
    EntryError,
    Exported,
    check_growth,
    is_count,
    is_sha256,
)
from dshreplay.integrity._evidence import KEYED, PLAIN, PLAIN_HASH, InputHash, load_key
from dshreplay.integrity._signing import (
    NAMESPACE,
    canonical,
    check_legacy_signature,
    check_ssh_signature,
    legacy_digest,
    manifest_digest,
    trusted_keys,
    usable_keys,
)
from dshreplay.io.reader import read_small_file, shown_path, sized_file
from dshreplay.options import Options
from dshreplay.results._reports import Difference, InputCheck, Verification

__all__ = ["verify_export", "Verification"]

MAX_DIFFERENCES = 10_000  # listed; a doctored manifest can name millions of files: the rest are counted


# -- reading a bundle ---------------------------------------------------------


class _Differences:
    """The differences found: the first MAX_DIFFERENCES listed, the rest counted."""

    def __init__(self) -> None:
        self.listed: list[Difference] = []
        self.more = 0

    def add(self, path: str, problem: str) -> None:
        if not self.counted():
            self.listed.append(Difference(path, problem))

    def add_file(self, rel: str, problem: str) -> None:
        """A difference in a file of the bundle, named by its path inside it (printable)."""
        if not self.counted():
            self.listed.append(Difference(_printable_name(rel), problem))

    def counted(self) -> bool:
        """Whether the next difference is only counted (and now is): a caller that
        would spend time on its text asks first."""
        if len(self.listed) < MAX_DIFFERENCES:
            return False
        self.more += 1
        return True

    def result(self) -> list[Difference]:
        if not self.more:
            return self.listed
        return [*self.listed, Difference("...", f"{self.more} more differences, not listed")]


def verify_export(bundle: Path, *, inputs: Path | None = None, bundle_only: bool = False, grown: bool = False,
                  digest: str | None = None, public_key: str | None = None, evidence_key: str | None = None,
                  principal: str = NAMESPACE, options: Options | None = None) -> Verification:
    """Re-hash a bundle and its inputs; say what matched, what differs and what was not checked.

    An input that cannot be found (beside the path it was given as, or in
    `inputs`) is a difference unless `bundle_only`. `digest` is the digest
    written down at export time; `public_key` checks the bundle's signature;
    `principal` is who must have signed it, when `public_key` is an allowed_signers file (as
    `ssh-keygen -Y verify -I`); `evidence_key` the inputs' hashes of a bundle whose export redacted (they
    are keyed). The manifest is untrusted: a key it holds twice, bytes that
    are not its canonical form, an entry of the wrong type, a path that leaves
    the bundle are differences; a manifest that is no regular file, too large
    or not JSON is a UsageError; none is a hang or a crash. `options` gives the
    ceilings for reading the inputs. Bundles of formats 1 and 2 are read too."""
    data, manifest = read_manifest(bundle)
    found = _Differences()
    integrity = manifest.get("integrity", MISSING)
    legacy = integrity is MISSING  # (formats 1 and 2: plain hashes, orjson's sorted form, manifest.sig)
    if not legacy and type(integrity) is not dict:
        found.add("manifest.json", f"/integrity: expected an object, got {shown(integrity, 60)}")
    integrity = integrity if type(integrity) is dict else {}
    result = Verification(bundle, manifest.get("format", 1), manifest.get("generatedAt"), len(manifest["sessions"]),
                          [], [], [], [])
    actual = legacy_digest(manifest) if legacy else manifest_digest(data)
    _check_form(data, manifest, legacy, found)
    if digest is not None:
        if digest.removeprefix("sha256:").lower() != actual.removeprefix("sha256:"):
            found.add("manifest.json", f"the bundle digest is {actual}, not the {digest} written down at export")
        else:
            result.manifest_checked_by.append("digest")
    signature = OLD_SIGNATURE if legacy else SIGNATURE
    _check_signature(bundle, signature, integrity, actual if legacy else data, public_key, principal, found, result)
    del data
    if not result.manifest_checked_by:
        result.not_checked.append("the manifest itself: give --digest (written down at export) or --public-key; "
                                  "files that match a manifest rewritten with them prove nothing")
    verified = _check_files(bundle, manifest["files"], found, signature)
    hasher = _input_hash(integrity, evidence_key, result, found)
    result.inputs = _check_inputs(manifest["sessions"], verified, found, bundle=bundle, inputs=inputs,
                                  bundle_only=bundle_only, grown=grown, options=options or Options(), hasher=hasher)
    absent = sum(i.status == "not found" for i in result.inputs) if bundle_only else 0
    if absent:
        result.not_checked.append(f"{absent} inputs not found (--bundle-only): give --inputs DIR to check them")
    unpinned = sum(i.status == "not checked" and i.size is None for i in result.inputs)
    if unpinned:
        result.not_checked.append(f"{unpinned} inputs the export could not read at all: the manifest pins none "
                                  "of their bytes")
    if not result.sessions:
        result.not_checked.append("any session: the bundle holds none")
    result.differences = found.result()
    return result


def _check_form(data: bytes, manifest: dict[str, Any], legacy: bool, found: _Differences) -> None:
    """manifest.json's bytes must be the form export writes: no key twice, and (since
    format 3) its RFC 8785 canonical form, so that `sha256sum manifest.json` is the digest
    and the signature covers what every reader sees."""
    try:
        written = dumps(manifest) if legacy else canonical(manifest)
    except ValueError as exc:
        found.add("manifest.json", f"holds a value RFC 8785 cannot write exactly ({exc}); export writes none")
        return
    if written == data:
        return
    twice = duplicate_key(data, manifest)
    if twice is not None:
        key, pointer = twice
        where = pointer + json_pointer([key])  # (the key's JSON pointer)
        found.add("manifest.json", f"{where}: key {shown(key, 60)} appears twice in one object: readers "
                                   "disagree on which value counts; dshreplay writes no key twice")
    elif not legacy:
        found.add("manifest.json", "is not in its RFC 8785 canonical form, as export writes it (so `sha256sum "
                                   "manifest.json` is not the bundle digest, and its signature cannot match)")


def _check_signature(bundle: Path, name: str, integrity: dict[str, Any], signed: Any, public_key: str | None,
                     principal: str, found: _Differences, result: Verification) -> None:
    """The signature file against the manifest and the key given: `signed` is what it
    signs (a format 1 or 2 bundle's `manifest.sig`, the text of the digest; since, an SSH
    signature `manifest.json.sig`, manifest.json's bytes)."""
    named = integrity.get("signature")
    present = os.path.lexists(bundle / name)
    if type(named) is dict and not present:
        found.add(name, "missing: the manifest says the bundle is signed")
    if public_key is None:
        if present:
            result.not_checked.append(f"the signature: {name} is present, give --public-key to check it")
        return
    keys = trusted_keys(public_key)
    now = time.time()  # (as ssh-keygen -Y verify checks valid-after and valid-before)
    try:
        signature = read_small_file(bundle / name, 4096, name)
    except ReadError:
        if not (type(named) is dict and not present):
            found.add(name, "no signature in the bundle")
        return
    if name == OLD_SIGNATURE:
        if not check_legacy_signature(usable_keys(keys, principal, now), signed,
                                      signature.decode("ascii", "replace")):
            found.add(name, "the signature does not match the bundle digest and this public key")
            return
    else:
        problem, signer = check_ssh_signature(signature, signed, keys, principal, now)
        if problem is not None:
            found.add(name, f"the signature does not hold: {problem}")
            return
        key = named.get("key") if type(named) is dict else None
        if key is not None and key != signer:
            found.add("manifest.json", f"names the signing key {shown(key, 60)}, but the signature is by {signer}")
            return
    result.manifest_checked_by.append("signature")


def _input_hash(integrity: dict[str, Any], evidence_key: str | None, result: Verification,
                found: _Differences) -> InputHash | None:
    """The hash the bundle's input facts are in (None: keyed, and the right key was not given)."""
    kind = integrity.get("inputHash", PLAIN)
    if kind not in (PLAIN, KEYED):
        found.add("manifest.json", f'/integrity/inputHash: expected "{PLAIN}" or "{KEYED}", got {shown(kind, 40)}')
        return None
    if kind == PLAIN:
        return PLAIN_HASH
    if evidence_key is None:
        result.not_checked.append("the inputs: their hashes are keyed (HMAC-SHA256, the export redacted), "
                                  "give --evidence-key to check them")
        return None
    hasher = InputHash(load_key(evidence_key, create=False))
    if hasher.fingerprint != integrity.get("evidenceKey"):
        result.not_checked.append(f"the inputs: the evidence key given (fingerprint {str(hasher.fingerprint)[:16]}...) "
                                  f"is not the one this bundle was made with")
        return None
    return hasher


def _bundle_tree(bundle: Path, found: _Differences) -> dict[str, bool]:
    """Every file in the bundle folder, by its path inside it, and whether it is a
    regular file: one walk that follows no link and opens nothing."""
    tree: dict[str, bool] = {}
    folders: list[tuple[str, str | Path]] = [("", bundle)]
    while folders:
        prefix, folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append((f"{prefix}{entry.name}/", entry.path))
                    else:
                        tree[prefix + entry.name] = entry.is_file(follow_symlinks=False)
        except OSError as exc:
            found.add(_printable_name(prefix or "."), f"cannot be listed: {exc.strerror or exc}")
    return tree


def _check_files(bundle: Path, files: Any, found: _Differences, signature: str) -> set[str]:
    """Each file entry against the file the bundle holds, then the files no entry
    names (but the manifest and its `signature`). An entry's path is looked up among
    the files one walk of the bundle found, so no path leaves the bundle and no entry
    costs a file-system call of its own. Returns the files that match their entries."""
    tree = _bundle_tree(bundle, found)
    verified: set[str] = set()
    seen: set[str] = set()
    format_1 = type(files) is dict
    for n, entry in enumerate(({"path": k, "sha256": v} for k, v in files.items()) if format_1 else files):
        rel = entry.get("path") if type(entry) is dict else None
        if type(rel) is not str:
            if not found.counted():
                found.add("manifest.json", f"/files/{n}: a file entry without a path: {shown(entry, 60)}")
            continue
        size, sha256 = entry.get("size"), entry.get("sha256")
        if not (is_sha256(sha256) and (size is None and format_1 or is_count(size))):
            if not found.counted():
                found.add_file(rel, f"the manifest gives no valid size and SHA-256: {shown(size, 20)}, "
                                    f"{shown(sha256, 70)}")
            continue
        regular = tree.pop(rel, None)
        if regular is None:
            found.add_file(rel, "listed twice in the manifest" if rel in seen else "listed in the manifest but missing")
            continue
        seen.add(rel)
        if not regular:
            found.add_file(rel, "listed in the manifest but not a regular file (a link, a pipe or a device)")
            continue
        try:
            problem = _content_problem(bundle / rel, size, sha256)
        except (OSError, ReadError) as exc:
            problem = f"cannot be read: {exc.message if isinstance(exc, ReadError) else exc.strerror or exc}"
        if problem is None:
            verified.add(rel)
        else:
            found.add_file(rel, problem)
    for rel in sorted(tree):
        if rel not in (MANIFEST, signature):
            found.add_file(rel, "not listed in the manifest (added)")
    return verified


def _content_problem(path: Path, size: int | None, sha256: str, hasher: InputHash = PLAIN_HASH) -> str | None:
    """How a file differs from the size and hash its entry gives (None: it does not): a
    bundle's file, by SHA-256; an input, by the bundle's hash of input bytes. It is opened
    as every input is (`sized_file`), and its size compared before a byte is read."""
    digest = hasher.new()
    with sized_file(path, shown_path(path)) as (stream, actual):
        if size is not None and actual != size:
            return f"size changed: {actual} bytes, manifest says {size}"
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
        if stream.raw.beyond():
            return f"size changed while it was read: it holds more than the {actual} bytes it gave"
    if digest.hexdigest() == sha256:
        return None
    return f"content changed ({hasher.label} differs)"


def _check_inputs(sessions: list[Any], verified: set[str], found: _Differences, *, bundle: Path,
                  inputs: Path | None, bundle_only: bool, grown: bool, options: Options,
                  hasher: InputHash | None) -> list[InputCheck]:
    """Each input against its session entry; with `grown`, one that changed may only have
    grown. `hasher` is None when the inputs' hashes are keyed and the key is not at hand."""
    checks: list[InputCheck] = []
    with ExitStack() as stack:  # (a session in a store or a ZIP is checked in a temporary copy of its text)
        _check_each(sessions, verified, found, checks, stack, bundle=bundle, inputs=inputs,
                    bundle_only=bundle_only, grown=grown, options=options, hasher=hasher)
    return checks


def _check_each(sessions: list[Any], verified: set[str], found: _Differences, checks: list[InputCheck],
                stack: ExitStack, *, bundle: Path, inputs: Path | None, bundle_only: bool, grown: bool,
                options: Options, hasher: InputHash | None) -> None:
    for n, entry in enumerate(sessions):
        where = f"/sessions/{n}"
        given = entry.get("input") if type(entry) is dict else None
        if type(given) is not str:
            if not found.counted():
                found.add("manifest.json", f"{where}: a session entry without an input: {shown(entry, 60)}")
            continue
        if "sha256" not in entry and "size" not in entry:  # its bytes could not be read at export
            checks.append(InputCheck(given, None, "not checked", "the export could not read its bytes: the "
                                                                  "manifest pins none"))
            continue
        size, sha256 = entry.get("size"), entry.get("sha256")
        if not (is_count(size) and is_sha256(sha256)):
            if not found.counted():
                found.add("manifest.json", f"{where}: expected the input's size and hash, got "
                                           f"{shown(size, 20)} and {shown(sha256, 70)}")
            continue
        # (the log file: a session folder's, else the input; its bytes when its name is not UTF-8)
        named = pinned_path(entry, "file") or entry["file"] if "file" in entry else pinned_path(entry, "input") or given
        if type(named) is not str:
            found.add(given, "the manifest names its file with something not a path")
            continue
        if hasher is None:
            checks.append(InputCheck(given, size, "not checked", "its hash is keyed: give --evidence-key"))
            continue
        target = _find_input(named, inputs) if "container" not in entry else \
            stack.enter_context(container_session(entry, given, inputs, options, _find_input,
                                                  partial(found.add, given)))
        if target is None:
            if bundle_only:
                checks.append(InputCheck(given, size, "not found", "input not found (--bundle-only)"))
            else:
                problem = "input not found (give its folder with --inputs, or --bundle-only to check the bundle alone)"
                found.add(given, problem)
                checks.append(InputCheck(given, size, "not found", problem))
            continue
        checks.append(_check_input(target, given, entry, where, size, sha256, found, bundle=bundle,
                                   verified=verified, grown=grown, options=options, hasher=hasher))


def _check_input(target: Path, given: str, entry: dict[str, Any], where: str, size: int, sha256: str,
                 found: _Differences, *, bundle: Path, verified: set[str], grown: bool, options: Options,
                 hasher: InputHash) -> InputCheck:
    """One input found at `target` against its entry."""
    def differs(problem: str) -> InputCheck:
        found.add(given, problem)
        return InputCheck(given, size, "differs", problem)
    try:
        problem = _content_problem(target, size, sha256, hasher)
        if problem is None:
            return InputCheck(given, size, "matches")
        if not grown:
            return differs(f"input {problem}")
        if "chain" not in entry:
            return differs(f"input {problem}; it was unreadable at export, so only its exact bytes are pinned "
                           "(no line chain to show it only grew)")
        try:
            exported = Exported.of(entry, where)
        except EntryError as exc:
            found.add("manifest.json", f"{exc} (what the export recorded of {given})")
            return InputCheck(given, size, "differs", str(exc))
        folder = entry.get("folder")
        events = f"{folder}/events.csv" if type(folder) is str else None
        growth = check_growth(target, exported, bundle / events if events in verified else None, options, hasher)
        if not growth.accepted:
            return differs(growth.detail)
        appended = None if growth.appended is None else growth.appended.to_json()
        detail = growth.detail + ": the bundle does not cover them" if appended else growth.detail
        return InputCheck(given, size, "grew" if appended else "matches", detail, appended)
    except (OSError, DshReplayError) as exc:
        reason = exc.message if isinstance(exc, DshReplayError) else (exc.strerror or str(exc))
        return differs(f"input cannot be read: {reason}")


def _find_input(named: str, inputs: Path | None) -> Path | None:
    """The input file: where it was given; or, with `inputs`, only inside that folder, by
    its path as given (an absolute one taken as relative to it; one that climbs out with
    `..` is not followed) and then by its name."""
    if inputs is None:
        candidates = [Path(named)]
    else:
        path = Path(named)
        relative = Path(*path.parts[1:]) if path.is_absolute() else path
        candidates = [inputs / relative] if relative.parts and ".." not in relative.parts else []
        candidates.append(inputs / path.name)
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except (OSError, ValueError):
            continue
    return None


def _printable_name(name: str) -> str:
    return shown_path(name) if isinstance(name, str) else shown(name)
