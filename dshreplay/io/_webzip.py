"""dsh's web export ZIP (the Session-log download) read in place, as logs.

The ZIP holds `session.jsonl` (the root session, in dsh's runtime layout), then
`subagents/<id>/session.jsonl` for each subagent, then `media/sha256:<hex>.<ext>` for
each image; no manifest. Nothing is extracted to disk: an entry is inflated in memory
after its declared size is checked against the ceilings (--max-bytes for a log), and
zipfile checks its CRC-32 as it reads. A ZIP a dsh export cannot be is refused in one
line before anything is inflated: a name with `..`, an absolute name, a name given
twice, an entry that is a link, a method other than stored or DEFLATE, an entry that
inflates more than a DEFLATE stream can (a bomb).
"""

from __future__ import annotations

import hashlib
import re
import stat
import zipfile
from dataclasses import dataclass
from typing import BinaryIO

from dshreplay.errors import ReadError
from dshreplay.options import Options

__all__ = ["ROOT", "WebZip", "Media"]

ROOT = "session.jsonl"
MAX_RATIO = 200  # a log deflates 3-5 to 1, a run of near-identical chunk lines about 25 to 1; a bomb about 1000
MAX_ENTRIES = 100_000
_SUBAGENT = re.compile(r"subagents/([^/]+)/session\.jsonl")
_MEDIA = re.compile(r"media/sha256:([0-9a-f]{64})\.[A-Za-z0-9]+")


@dataclass(frozen=True)
class Media:
    """An image entry: its name, size, SHA-256 of its bytes, and whether the name's hash is it."""

    name: str
    size: int
    sha256: str
    matches: bool

    def to_json(self) -> dict[str, object]:
        return {"path": self.name, "size": self.size, "sha256": self.sha256, "nameMatches": self.matches}


class WebZip:
    """One export ZIP, its entries checked (see the module's docstring)."""

    def __init__(self, fh: BinaryIO, shown: str) -> None:
        self.shown = shown
        try:
            self.zip = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            fh.close()
            raise ReadError(f"not a readable ZIP: {exc}", path=shown) from None
        try:
            self.entries = self._checked()
        except BaseException:
            self.zip.close()
            fh.close()
            raise
        self._fh = fh

    def close(self) -> None:
        self.zip.close()
        self._fh.close()

    def __enter__(self) -> WebZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _checked(self) -> dict[str, zipfile.ZipInfo]:
        infos = self.zip.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ReadError(f"holds {len(infos)} entries: not a dsh export (refused)", path=self.shown)
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if name in entries:
                raise ReadError(f"holds the entry {name!r} twice: not a dsh export (refused)", path=self.shown)
            parts = name.split("/")
            if name.startswith("/") or "\\" in name or ".." in parts or (len(name) > 1 and name[1] == ":"):
                raise ReadError(f"holds the entry {name!r}, a path outside the export: refused", path=self.shown)
            if info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16):
                raise ReadError(f"holds the entry {name!r}, a symbolic link: refused", path=self.shown)
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ReadError(f"entry {name!r} uses compression method {info.compress_type}; dsh's export "
                                "uses DEFLATE: refused", path=self.shown)
            if info.file_size > MAX_RATIO * max(info.compress_size, 1) + 1024:
                raise ReadError(f"entry {name!r} inflates {info.file_size} bytes from {info.compress_size}, more than "
                                f"{MAX_RATIO} to 1 (no log compresses so): a ZIP bomb, refused", path=self.shown)
            entries[name] = info
        _check_apart(infos, self.shown)
        if ROOT not in entries:
            raise ReadError(f"holds no {ROOT}: not a dsh session export", path=self.shown)
        return entries

    def logs(self) -> list[str]:
        """The fragments naming each session: "" for the root, `subagents/<id>` for each subagent."""
        return [""] + [name[:-len("/session.jsonl")] for name in self.entries if _SUBAGENT.fullmatch(name)]

    def entry_name(self, fragment: str) -> str:
        """The entry holding the session a fragment names ("" the root; `subagents/<id>`)."""
        name = ROOT if not fragment else fragment if fragment.endswith("/session.jsonl") \
            else fragment + "/session.jsonl"
        if name not in self.entries or (name != ROOT and not _SUBAGENT.fullmatch(name)):
            held = ", ".join(f for f in self.logs() if f) or "no subagent"
            raise ReadError(f"no session {fragment!r} in the export (it holds {held})", path=self.shown)
        return name

    def read(self, name: str, limit: int) -> bytes:
        """An entry's bytes, its declared size checked against `limit` before it is inflated."""
        info = self.entries[name]
        if info.file_size > limit:
            raise ReadError(f"entry {name!r} holds {info.file_size} bytes, over the {limit}-byte --max-bytes "
                            "ceiling", path=self.shown)
        try:
            with self.zip.open(info) as fh:
                data = fh.read(limit + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise ReadError(f"cannot inflate the entry {name!r}: {exc}", path=self.shown) from None
        if len(data) != info.file_size:
            raise ReadError(f"entry {name!r} inflates to {len(data)} bytes where it declares {info.file_size}",
                            path=self.shown)
        return data

    def session_text(self, fragment: str, options: Options) -> bytes:
        return self.read(self.entry_name(fragment), options.max_bytes)

    def media(self, options: Options) -> list[Media]:
        """Each image entry with the SHA-256 of its bytes, checked against the hash in its name."""
        found = []
        for name in self.entries:
            if name.startswith("media/"):
                data = self.read(name, options.max_bytes)
                digest = hashlib.sha256(data).hexdigest()
                match = _MEDIA.fullmatch(name)
                found.append(Media(name, len(data), digest, match is not None and match.group(1) == digest))
        return found


def _check_apart(infos: list[zipfile.ZipInfo], shown: str) -> None:
    """Refuse entries whose data overlap (a bomb that inflates one stream under many names):
    each entry's local header and data must end before the next one begins."""
    ordered = sorted(infos, key=lambda info: info.header_offset)
    for info, after in zip(ordered, ordered[1:]):
        end = info.header_offset + 30 + len(info.filename.encode()) + info.compress_size
        if after.header_offset < end:
            raise ReadError(f"entries {info.filename!r} and {after.filename!r} overlap in the file (a ZIP bomb): "
                            "refused", path=shown)
