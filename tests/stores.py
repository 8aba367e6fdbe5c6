"""A store root of many sessions, and a bundle read back, for the many-logs tests."""

from __future__ import annotations

from dshreplay.testing.samples import LogBuilder, compacted, multi_turn, pruned


def build_root(root, count: int = 50):
    """A store root: <root>/<project>/<session>/session.jsonl[.zstd], 50 sessions."""
    makers = [multi_turn, compacted, pruned]
    for n in range(count):
        builder: LogBuilder = makers[n % 3]()
        builder.header["id"] = f"session-{n:02d}"
        folder = root / f"project-{n % 4}" / f"s{n:02d}"
        folder.mkdir(parents=True)
        name = "session.jsonl.zstd" if n % 5 == 0 else "session.jsonl"
        if n == 7:  # one broken log
            (folder / name).write_bytes(builder.to_bytes()[:-200] + b"\n{broken\n" + b"\n")
        else:
            builder.write(folder / name, pack=n % 2 == 0)
    return root


def bundle(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
