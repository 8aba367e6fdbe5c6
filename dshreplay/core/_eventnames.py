"""The names of the event types dsh writes, and what one event of each records: the fold's
knowledge of which types exist, low enough for it (`core` may not read `analyses`).

FORMAT.md §3: an event of a type not named here is unknown; a reader may skip it only when it
says `"ignorable": true`, and must refuse the log otherwise (the fold fails there: `core.surface`).
The registry of event types (`analyses.eventtypes`: schema file, one-line rendering) is built
from this table, one entry per name, and a test checks it against `schemas/events/` both ways.
"""

from __future__ import annotations

__all__ = ["EVENT_TYPE_TEXTS", "KNOWN_TYPES"]

# name -> what one event of it records, in one line (its schema's description begins with it)
EVENT_TYPE_TEXTS: dict[str, str] = {
    "agent-preset/selected": "The agent preset was picked after creation, while the session was still empty.",
    "agent/inbox/spliced": "One edit of an agent's pending-message queues: remove some, insert others.",
    "approval/asked": "A permission question about a tool was raised (audit only).",
    "approval/decided": "The answer to an earlier approval question with the same id.",
    "approval/policy": "The session switched its approval policy; the last one wins.",
    "assistant/chunk": "One raw model stream chunk of an open turn and step.",
    "assistant/message": "The assembled assistant message of a step, with its token usage when known.",
    "command/done": "A slash command finished, successfully or not.",
    "command/run": "A slash command started running.",
    "compaction/end": "Closes a compaction bracket; `error` marks a failed attempt.",
    "compaction/prune": "Token price of a model-free prune; the replacing surface event follows directly.",
    "compaction/start": "Opens a compaction bracket.",
    "compaction/summary": "The summary produced by a compaction and the facts of the call that wrote it.",
    "feedback/record": "A remark a human left about the session.",
    "goal/change": "The full goal state after a mutation, or a tombstone when the goal was cleared.",
    "hook/invoked": "A hook command ran at a hook point.",
    "hook/result": "The outcome of a hook command, paired to hook/invoked by handlerId.",
    "llm/retry": "A retry of a failed model request was scheduled.",
    "llm/retry-started": "The wait before a retry ended and the next attempt begins.",
    "permission/preset": "A permission preset was selected.",
    "plan/mode": "Plan mode switched on or off; the last one wins.",
    "request/context": "Route metadata (provider, model, context window) for the coming requests.",
    "request/header": "The full request header in force from here on, logged when it changes.",
    "sandbox/mode": "The session switched its sandbox mode; the last one wins.",
    "schedule/change": "A versioned change to the session's reminders: create, delete or dispatch.",
    "session/end-seed": "Marks where the inherited (seed) part of the log ends; the payload is always empty.",
    "session/title": "The latest session title and who set it.",
    "session/title-llm-request": "The exact model request about to be sent to generate a session title.",
    "step/end": "Closes a step of a turn.",
    "step/start": "Opens a step of a turn: one model call and the tool runs it asks for.",
    "subagent/descriptor":
        "Identity and lifecycle mode of a subagent child session; continuable children also record what is "
        "needed to resume them.",
    "team/member": "The whole state of one teammate, kept in the team lead's session.",
    "team/message/delivered": "Confirms the target session recorded a team message.",
    "team/message/queued": "A team message was put in the mailbox before delivery.",
    "team/task": "The whole state of one shared team task, kept in the team lead's session.",
    "todo/write": "The complete todo list as of now; the last write wins.",
    "tool-workflow/agent-end": "One workflow member finished.",
    "tool-workflow/agent-start": "One workflow member started in its own child session.",
    "tool-workflow/run-end": "A workflow run finished.",
    "tool-workflow/run-start": "A top-level workflow run began.",
    "tool/call": "The model asked for one tool call; `arguments` is the raw JSON text.",
    "tool/code-dispatch": "A tool call made from inside a run_code program finished.",
    "tool/code-dispatch-start": "A tool call made from inside a run_code program started.",
    "tool/result":
        "The model-facing result of a tool call, with optional failure identity and tool-private presentation"
        " data.",
    "turn/end": "Closes a turn and says why it ended.",
    "turn/start": "Opens a turn.",
    "user/message": "A user-role message on the model surface: a human prompt or injected context.",
    "web/deepseek-search-llm-request": "The secret-free DeepSeek search request about to be sent.",
}
KNOWN_TYPES = frozenset(EVENT_TYPE_TEXTS)
