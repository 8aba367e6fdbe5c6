"""dshreplay: read DeepSeek Harness session logs offline and exactly."""

__version__ = "0.1.0"


def open(source, **options):  # noqa: A001 - the notebook entry point: dshreplay.open(path)
    """Open a session log (a .jsonl or .jsonl.zstd file, a session folder, or "-").

    Returns a `dshreplay.session.Session`: `.header`, `.events`, `.fold(at)`,
    `.calls()`, `.request(n)`, `.diff(a, b)`, `.validate()`, `.to_records()`.
    """
    from dshreplay.session import Session
    return Session(source, **options)
