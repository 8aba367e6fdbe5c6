"""docs/reference/sql.md: the index's tables (from `rows.TABLES`) and the example queries.

The examples are kept here, once: the reference shows them and the tests run
them against a store our own builder writes (tests/stores.py `audit_store`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.sql.rows import OPTIONAL, TABLES


@dataclass(frozen=True)
class Example:
    name: str
    question: str
    sql: str
    note: str = ""


EXAMPLES = (
    Example("unapproved-commands", "Every tool call that ran `rm -rf` or `curl` without an approval, in July 2026",
            """\
SELECT session_id, seq, line, call_id, json_extract_string(arguments, '$.command') AS command,
       approval_outcome, outcome
FROM tool_calls
WHERE started_at >= TIMESTAMP '2026-07-01' AND started_at < TIMESTAMP '2026-08-01'
  AND regexp_matches(json_extract_string(arguments, '$.command'), '(^|[;&| ])(rm -rf|curl)( |$)')
  AND call_seq IS NOT NULL                             -- it ran
  AND approval_outcome IS DISTINCT FROM 'allowed-once' -- and no approval allowed it
  AND NOT inherited                                    -- in this session (not a fork's copy of its parent's)
ORDER BY session_id, seq""",
            "For last month: `started_at >= date_trunc('month', now()) - INTERVAL 1 MONTH AND started_at < "
            "date_trunc('month', now())`. `dshreplay events LOG --lines N` shows the line."),
    Example("context-window", "Sessions that hit CONTEXT_WINDOW_EXCEEDED, and what the next compaction dropped",
            """\
SELECT c.session_id, c.seq AS failed_seq, c.line AS failed_line, r.seq AS replaced_at,
       r.tokens AS tokens_dropped, m.seq AS dropped_seq, m.role, m.text
FROM model_calls c
JOIN replacements r ON r.log = c.log AND r.kind = 'summary'
 AND r.seq = (SELECT min(x.seq) FROM replacements x WHERE x.log = c.log AND x.kind = 'summary' AND x.seq > c.seq)
JOIN messages m ON m.log = r.log AND list_contains(r.shadowed_seqs, m.seq)
WHERE c.error_code = 'CONTEXT_WINDOW_EXCEEDED' AND NOT c.inherited
ORDER BY c.session_id, c.seq, m.seq""",
            "Needs an index built with `--messages` (the `messages` table)."),
    Example("tokens-per-model-per-day", "Tokens and failed calls per model per day",
            """\
SELECT CAST(first_chunk_at AS DATE) AS day, model, count(*) AS calls,
       sum(input_tokens) AS input, sum(output_tokens) AS output, sum(cache_read_tokens) AS cached,
       count(*) FILTER (WHERE failed) AS failed, string_agg(DISTINCT error_code, ', ') AS codes
FROM model_calls
WHERE NOT inherited
GROUP BY ALL
ORDER BY day, model""",
            "`dshreplay usage --db FILE --by day` gives the same figures, with costs."),
    Example("shared-seed", "Sessions that share a seed with the session under investigation (here `fork-1`)",
            """\
WITH me AS (SELECT session_id, parent_session, seed_length FROM sessions WHERE session_id = 'fork-1')
SELECT s.session_id, s.log,
       CASE WHEN s.parent_session = me.session_id THEN 'child'
            WHEN s.session_id = me.parent_session THEN 'parent'
            ELSE 'sibling' END AS relation,
       CASE WHEN s.parent_session = me.session_id THEN s.seed_length
            WHEN s.session_id = me.parent_session THEN me.seed_length
            ELSE least(s.seed_length, me.seed_length) END AS shared_events
FROM sessions s, me
WHERE s.session_id <> me.session_id
  AND (s.parent_session = me.session_id OR s.session_id = me.parent_session
       OR (s.parent_session = me.parent_session AND s.seed_length IS NOT NULL))
ORDER BY s.session_id""",
            "A fork repeats its parent's first seed_length events: its children, its parent and its siblings "
            "share that many events with it. `dshreplay lineage` checks that the seeds really match."),
)

INTRO = """\
# The SQL index

Generated from `dshreplay/sql/rows.py` and `dshreplay/sql/_doc.py` by
`python scripts/make_docs.py`; do not edit.

`dshreplay index PATH... --db FILE` builds a DuckDB database with one row per
session, turn, model call, tool call, approval, replacement, compaction
bracket and finding (and, with `--messages`, per model message) of every log
found under the PATHs (files, session folders, store roots). Every row names
its `log` (the key of its session in every table: the log file's absolute path,
redacted as the bundle names its inputs; where the rules mask part of it,
followed by `#` and 16 hex digits of the keyed hash of the real path), its `session_id`, and the
`seq` and `line` of the event it stands for: `dshreplay events LOG --lines N`
shows the line, `dshreplay fold LOG --at SEQ` the model's view there. Times are
UTC `TIMESTAMP`s; JSON values are JSON text (`json_extract_string(arguments,
'$.command')`). Text from the logs is redacted as `export` redacts it
(`--redact FILE`, the default secret rules unless `--no-default-redaction`);
findings are validate's, redacted as in the bundle.

Running `index` again reads only what changed: a log with the size and SHA-256
it had is not read line by line; for one that grew, the line chain (as `export`
records it for `verify-export --grown`) proves the indexed lines unchanged, and
only the lines appended are parsed: the pass goes on from the state it was in
where the log ended (kept in the database), so its rows are those of a whole
read. A log rewritten inside the indexed lines is indexed again whole and
reported (exit 1); one that vanished keeps its rows, its session marked
`vanished` (exit 1). A kept pass holds its log's content unredacted, so it is
sealed with a key only the log itself gives (AES-GCM over a SHA-256 of the
log's bytes, a key never stored): the database alone reveals none of it. A kept
state is input all the same (whoever holds the log can seal one): one that does
not open, inflates past 8 times its log's bytes (and 1 MiB), or holds anything
but a pass's objects is not used, and the log is read whole, with a note on
stderr. The facts kept of a log (JSON text, as the export records them) are
checked too: facts of another shape make the log be indexed again whole and
reported as rewritten (exit 1). A database whose settings are not JSON, or whose
tables have other columns or types than the index gives them, is refused in one
line (exit 2), as `usage --db` refuses one that lacks the tables it reads.
When anything is redacted, those hashes (each log's, its line chain's, the
seal's) are HMAC-SHA256 under the evidence key (`--evidence-key FILE` or
`DSHREPLAY_EVIDENCE_KEY`, as `export` takes it), so none of them confirms a
guess at what was masked; the index records `inputHash` and the key's
fingerprint among its settings, and refuses to be updated with another key or
without one.
Two runs over the same files give the same tables. An index remembers the
settings it was built with (`--messages`, the redaction rules, the tables'
format): another run with other settings, or by a dshreplay whose tables have
another format, is refused (index into a new `--db`); an index is never
rebuilt or mixed in place. `--db` and `--parquet` reach DuckDB as the absolute
paths checked (a leading `~` is a name, not the home folder).

`--parquet DIR` also writes every table as Parquet partitioned by the
session's day, `DIR/TABLE/day=YYYY-MM-DD/data.parquet` (a run rewrites the days
that changed), which DuckDB, Spark, Trino or Dask read as they are:
`SELECT * FROM read_parquet('DIR/tool_calls/*/*.parquet', hive_partitioning = true)`.
A run removes only partition folders it writes: a `DIR/TABLE` that is a link, or a
`DIR/TABLE/day=*` that is a link or holds any file but `data.parquet` (another tool's
partitions), is refused in one line before anything is deleted.

`dshreplay sql FILE "SELECT ..."` runs a query on the database (read-only, with
no access to other files) and prints a table, `--json`, `--jsonl` or `--csv`;
`duckdb FILE` opens it too.
"""


def sql_doc() -> str:
    parts = [INTRO, "## Tables", ""]
    for name, columns in TABLES.items():
        when = " (only with `--messages`)" if name in OPTIONAL else ""
        parts += [f"### {name}{when}", "", "| column | type | meaning |", "| --- | --- | --- |"]
        parts += [f"| `{c.name}` | {c.type} | {c.doc.replace('|', '&#124;')} |" for c in columns]
        parts.append("")
    parts += ["## Example queries", "",
              "Each is tested against a store our own builder writes (tests/stores.py `audit_store`).", ""]
    for example in EXAMPLES:
        parts += [f"### {example.question}", "", "```sql", example.sql, "```", ""]
        if example.note:
            parts += [example.note, ""]
    return "\n".join(parts)


def example(name: str) -> Example:
    return next(e for e in EXAMPLES if e.name == name)
