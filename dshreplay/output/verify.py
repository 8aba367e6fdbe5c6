"""`verify-export`: re-hash a bundle and its inputs, check its digest and signature."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from dshreplay.analyses.validate import duplicate_key
from dshreplay.errors import DshReplayError, ReadError
from dshreplay.io.reader import read_small_file, shown_path, sized_file
from dshreplay.jsvalues import (
    json_pointer,
    shown,
)
from dshreplay.options import Options
from dshreplay.output.bundle import SIGNATURE, dumps, read_manifest
from dshreplay.output.chain import (
    EntryError,
    Exported,
    check_growth,
    is_count,
    is_sha256,
)
from dshreplay.output.signing import check_signature, manifest_digest

MAX_DIFFERENCES = 10_000  # listed; a doctored manifest can name millions of files: the rest are counted


# -- reading a bundle ---------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    problem: str

    def to_json(self) -> dict:
        return {"path": self.path, "problem": self.problem}


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
                  digest: str | None = None, public_key: str | None = None, options: Options | None = None
                  ) -> tuple[list[Difference], list[str], list[Difference]]:
    """Re-hash a bundle and its inputs. Returns (differences, inputs not checked,
    inputs that only grew since the export: accepted with `grown`).

    An input that cannot be found (beside the path it was given as, or in
    `inputs`) is a difference unless `bundle_only`. `digest` is the digest
    written down at export time; `public_key` checks the bundle's signature.
    The manifest is untrusted: a key it holds twice, an entry of the wrong
    type, a path that leaves the bundle are differences; a manifest that is
    no regular file, too large or not JSON is a UsageError; none is a hang or
    a crash. `options` gives the ceilings for reading the inputs. Bundles of
    format 1 are read too."""
    data, manifest = read_manifest(bundle)
    found = _Differences()
    actual = manifest_digest(manifest)
    if digest is not None and digest.removeprefix("sha256:").lower() != actual.removeprefix("sha256:"):
        found.add("manifest.json", f"the bundle digest is {actual}, not the {digest} written down at export")
    if public_key is not None:
        try:
            signature = read_small_file(bundle / SIGNATURE, 4096, SIGNATURE).decode("ascii", "replace")
        except ReadError:
            found.add(SIGNATURE, "no signature in the bundle")
        else:
            if not check_signature(public_key, actual, signature):
                found.add(SIGNATURE, "the signature does not match the bundle digest and this public key")
    twice = None if dumps(manifest) == data else duplicate_key(data, manifest)  # (as export writes it: none)
    del data
    if twice is not None:
        key, pointer = twice
        where = pointer + json_pointer([key])  # (the key's JSON pointer)
        found.add("manifest.json", f"{where}: key {shown(key, 60)} appears twice in one object: readers "
                                   "disagree on which value counts (the digest and the signature see the last); "
                                   "dshreplay writes no key twice")
    verified = _check_files(bundle, manifest["files"], found)
    unchecked, appended = _check_inputs(manifest["sessions"], verified, found, bundle=bundle, inputs=inputs,
                                        bundle_only=bundle_only, grown=grown, options=options or Options())
    return found.result(), unchecked, appended


def _bundle_tree(bundle: Path, found: _Differences) -> dict[str, bool]:
    """Every file in the bundle folder, by its path inside it, and whether it is a
    regular file: one walk that follows no link and opens nothing."""
    tree: dict[str, bool] = {}
    folders = [("", bundle)]
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


def _check_files(bundle: Path, files, found: _Differences) -> set[str]:
    """Each file entry against the file the bundle holds, then the files no entry
    names. An entry's path is looked up among the files one walk of the bundle
    found, so no path leaves the bundle and no entry costs a file-system call
    of its own. Returns the files that match their entries."""
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
        if rel not in ("manifest.json", SIGNATURE):
            found.add_file(rel, "not listed in the manifest (added)")
    return verified


def _content_problem(path: Path, size: int | None, sha256: str) -> str | None:
    """How a file differs from the size and SHA-256 its entry gives (None: it does not).
    It is opened as every input is (`sized_file`), and its size compared before a byte is read."""
    digest = hashlib.sha256()
    with sized_file(path, shown_path(path)) as (stream, actual):
        if size is not None and actual != size:
            return f"size changed: {actual} bytes, manifest says {size}"
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
        if stream.raw.beyond():
            return f"size changed while it was read: it holds more than the {actual} bytes it gave"
    return None if digest.hexdigest() == sha256 else "content changed (SHA-256 differs)"


def _check_inputs(sessions: list, verified: set[str], found: _Differences, *, bundle: Path,
                  inputs: Path | None, bundle_only: bool, grown: bool, options: Options
                  ) -> tuple[list[str], list[Difference]]:
    """Each input against its session entry; with `grown`, one that changed may only have grown."""
    unchecked, appended = [], []
    for n, entry in enumerate(sessions):
        where = f"/sessions/{n}"
        given = entry.get("input") if type(entry) is dict else None
        if type(given) is not str:
            if not found.counted():
                found.add("manifest.json", f"{where}: a session entry without an input: {shown(entry, 60)}")
            continue
        if "sha256" not in entry:  # an input that could not be read at export: no facts to check
            continue
        named = entry.get("file") or given
        if type(named) is not str:
            found.add(given, "the manifest names its file with something not a path")
            continue
        size, sha256 = entry.get("size"), entry.get("sha256")
        if not (is_count(size) and is_sha256(sha256)):
            if not found.counted():
                found.add("manifest.json", f"{where}: expected the input's size and SHA-256, got "
                                           f"{shown(size, 20)} and {shown(sha256, 70)}")
            continue
        target = _find_input(named, inputs)
        if target is None:
            if bundle_only:
                unchecked.append(given)
            else:
                found.add(given, "input not found (give its folder with --inputs, or --bundle-only to check the "
                                 "bundle alone)")
            continue
        try:
            problem = _content_problem(target, size, sha256)
            if problem is None:
                continue
            if not grown:
                found.add(given, f"input {problem}")
                continue
            try:
                exported = Exported.of(entry, where)
            except EntryError as exc:
                found.add("manifest.json", f"{exc} (what the export recorded of {given})")
                continue
            folder = entry.get("folder")
            events = f"{folder}/events.csv" if type(folder) is str else None
            growth = check_growth(target, exported, bundle / events if events in verified else None, options)
            if growth.accepted:
                appended.append(Difference(given, growth.detail))
            else:
                found.add(given, growth.detail)
        except (OSError, DshReplayError) as exc:
            reason = exc.message if isinstance(exc, DshReplayError) else (exc.strerror or str(exc))
            found.add(given, f"input cannot be read: {reason}")
    return unchecked, appended


def _find_input(named: str, inputs: Path | None) -> Path | None:
    """The input file: in `inputs` (by its path as given, then by its name), else where it was given."""
    candidates = [Path(named)] if inputs is None else [inputs / named, inputs / Path(named).name]
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except (OSError, ValueError):
            continue
    return None


def _printable_name(name: str) -> str:
    return shown_path(name) if isinstance(name, str) else shown(name)
