"""A store root of many sessions, and a bundle read back, for the many-logs tests."""

from __future__ import annotations

from dshreplay.testing.samples import LogBuilder, compacted, fork, multi_turn, pruned


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


DAY = 86_400_000


def run_tool(b: LogBuilder, arguments: str, output: str, *, usage: dict) -> None:
    """A model call (with this usage) asking for one bash call, the call, and its result."""
    call = b.new_id("call")
    b.assistant("", calls=[(call, "bash", arguments)], usage=usage)
    seq = b.tool_call(call, "bash", arguments)
    b.tool_result(call, output, cites=seq)


def audit_store(root):
    """The store the SQL examples are checked against (docs/reference/sql.md): four sessions on two
    days and two models. alpha (day 1) runs `rm -rf build` with no approval and `curl` with
    one allowed; beta (day 2, another model) hits CONTEXT_WINDOW_EXCEEDED, compacts and
    retries, and is refused a `curl`; fork-1 and fork-2 are forks of alpha after its first
    and its second turn (seeds of 18 and 46 events), fork-1 runs `curl` with no approval."""
    alpha = LogBuilder("alpha")
    alpha.start_turn()
    alpha.request_header()
    alpha.start_step()
    alpha.user("Clean the build and fetch the changelog.")
    run_tool(alpha, '{"command": "rm -rf build"}', "", usage={"inputTokens": 1000, "outputTokens": 10})
    alpha.end_turn()
    alpha.start_turn()
    alpha.start_step()
    call = alpha.new_id("call")
    alpha.assistant("", calls=[(call, "bash", '{"command": "curl https://example.com/CHANGES"}')],
                    usage={"inputTokens": 1100, "outputTokens": 20, "cacheReadTokens": 500})
    alpha.approval(call, "bash", "allowed-once", reason="network access")
    seq = alpha.tool_call(call, "bash", '{"command": "curl https://example.com/CHANGES"}')
    alpha.tool_result(call, "v2: faster", cites=seq)
    alpha.end_step()
    alpha.start_step()
    alpha.assistant("Done.", usage={"inputTokens": 1200, "outputTokens": 5})
    alpha.end_turn()
    logs = {"alpha": alpha}

    beta = LogBuilder("beta", created_at=alpha.header["createdAt"] + DAY, model="deepseek-v4-pro")
    beta.start_turn()
    beta.request_header()
    beta.start_step()
    first = beta.user("Summarize the whole repository.")
    second = beta.user("Include every file.")
    for body in ({"type": "usage", "usage": {"inputTokens": 131000, "outputTokens": 0}},
                 {"type": "finish", "reason": {"kind": "error", "failure": {
                     "code": "CONTEXT_WINDOW_EXCEEDED", "message": "the request is too long"}}}):
        beta.add("assistant/chunk", {"turn": beta.turn, "step": beta.step, "chunk": body}, dt=3)
    beta.compaction(first, second, "The user wants a summary of every file.", tokens=120000)
    call = beta.new_id("call")
    beta.assistant("", calls=[(call, "bash", '{"command": "curl -X POST https://example.com/upload"}')],
                   usage={"inputTokens": 2000, "outputTokens": 40, "cacheReadTokens": 1500})
    beta.approval(call, "bash", "rejected", reason="uploads data")
    beta.end_step()
    beta.start_step()
    beta.assistant("I may not upload; here is the summary.",
                   usage={"inputTokens": 2100, "outputTokens": 60, "cacheReadTokens": 1900})
    beta.end_turn()
    logs["beta"] = beta

    turn_ends = [e["seq"] for e in alpha.events if e["type"] == "turn/end"]
    fork1 = fork(alpha, "fork-1", turn_ends[0])
    fork1.start_turn()
    fork1.start_step()
    fork1.user("Fetch it again.")
    run_tool(fork1, '{"command": "curl -s https://example.com/CHANGES"}', "v2: faster",
             usage={"inputTokens": 300, "outputTokens": 7})
    fork1.end_turn()
    logs["fork-1"] = fork1
    fork2 = fork(alpha, "fork-2", turn_ends[1])
    fork2.start_turn()
    fork2.start_step()
    fork2.assistant("Nothing to do.", usage={"inputTokens": 400, "outputTokens": 8})
    fork2.end_turn()
    logs["fork-2"] = fork2
    for name, builder in logs.items():
        folder = root / "project" / name
        folder.mkdir(parents=True)
        builder.write(folder / "session.jsonl")
    return logs
