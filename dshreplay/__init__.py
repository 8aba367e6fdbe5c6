"""dshreplay: read DeepSeek Harness session logs offline and exactly."""

__version__ = "0.1.0"


def open(source, options=None, **settings):  # noqa: A001 - the notebook entry point: dshreplay.open(path)
    """Open a session log (a .jsonl or .jsonl.zstd file, a session folder, "-" or bytes).

    `options` is a `dshreplay.Options` (or give its fields as keywords, e.g.
    `max_bytes=...`). Returns a `dshreplay.session.Session`: `.header`,
    `.events`, `.fold(at)`, `.states(seqs)`, `.validate()`, `.shadows()`,
    `.brackets()`, `.provenance()`, `.diff(a, b)`, `.calls()`, `.request(n)`, `.tools()`,
    `.transcript()`, `.query(filter)`, `.inspect()`, `.stats()`, `.to_records()`;
    `dshreplay.lineage(paths)` and `dshreplay.export(paths, out)` take many logs.
    """
    from dshreplay.options import Options
    from dshreplay.session import Session
    if options is None:
        options = Options(**settings)
    elif settings:
        options = options.with_(**settings)
    return Session(source, options)


def __getattr__(name):
    # the library's other entry points, imported on first use (the CLI starts faster)
    if name == "Options":
        from dshreplay.options import Options
        return Options
    if name == "lineage":
        from dshreplay.analyses.lineage import lineage
        return lineage
    if name == "export":
        from dshreplay.output.bundle import export_bundle
        return export_bundle
    raise AttributeError(f"module 'dshreplay' has no attribute {name!r}")
