"""The attribute and span names of the OpenTelemetry GenAI semantic conventions that the
`otel` command writes, in one table of our own (the conventions are in development, and the
Python constants of `opentelemetry-semantic-conventions` for them are deprecated as they
move): change a name here and every span follows. Names under `dshreplay.` are ours: facts
of the log that no convention names."""

from __future__ import annotations

__all__ = ["ATTR", "OPERATION", "PROVIDER", "SPAN_KIND", "STATUS_ERROR", "USAGE", "SCOPE"]

SCOPE = "dshreplay"  # the instrumentation scope of every span

PROVIDER = "deepseek"  # gen_ai.provider.name of every model call dsh makes (the configured provider is
# kept apart, as dshreplay.provider)

# gen_ai.operation.name per kind of span; a span is named "{operation} {what}" (chat {model},
# execute_tool {tool}, invoke_agent dsh)
OPERATION = {"turn": "invoke_agent", "call": "chat", "auxiliary-call": "chat", "tool": "execute_tool"}

# OTLP span kinds (the protobuf enum's numbers, as OTLP/JSON writes them)
SPAN_KIND = {"internal": 1, "client": 3}
STATUS_ERROR = 2  # Status.code ERROR (0 unset, 1 ok)

ATTR = {
    # resource and session
    "service": "service.name",
    "session": "session.id",
    "conversation": "gen_ai.conversation.id",
    "agent_name": "gen_ai.agent.name",
    "agent_id": "gen_ai.agent.id",
    "parent_session": "dshreplay.parent_session.id",
    "seed_length": "dshreplay.seed_length",
    "origin": "dshreplay.session.origin",
    "depth": "dshreplay.delegation_depth",
    "axis": "dshreplay.time_axis",  # "time": the log's times; "seq": a log without times, one ms per seq
    "answered_up_to": "dshreplay.answered_up_to",
    "fold_error": "dshreplay.fold_error",
    # every span
    "operation": "gen_ai.operation.name",
    "kind": "dshreplay.span.kind",
    "start_seq": "dshreplay.seq.start",
    "end_seq": "dshreplay.seq.end",
    "turn": "dshreplay.turn",
    "step": "dshreplay.step",
    "turn_ending": "dshreplay.turn.ending",
    "error_type": "error.type",
    # model calls
    "provider": "gen_ai.provider.name",
    "configured_provider": "dshreplay.provider",
    "request_model": "gen_ai.request.model",
    "finish_reasons": "gen_ai.response.finish_reasons",
    "time_to_first_chunk": "gen_ai.response.time_to_first_chunk",  # seconds
    "call": "dshreplay.call",
    "call_kind": "dshreplay.call.kind",
    "retry": "dshreplay.call.retry",
    "message_count": "dshreplay.request.message_count",
    "input_messages": "gen_ai.input.messages",
    "input_messages_error": "dshreplay.input.messages.error",  # why a request's messages cannot be derived
    "output_messages": "gen_ai.output.messages",
    # tool calls
    "tool_name": "gen_ai.tool.name",
    "tool_call_id": "gen_ai.tool.call.id",
    "tool_type": "gen_ai.tool.type",
    "tool_outcome": "dshreplay.tool.outcome",
    "tool_arguments": "gen_ai.tool.call.arguments",
    "tool_result": "gen_ai.tool.call.result",
    # compactions
    "compaction_id": "dshreplay.compaction.id",
    "compaction_status": "dshreplay.compaction.status",
}

# gen_ai.usage.* per key of a call's logged usage
USAGE = {"inputTokens": "gen_ai.usage.input_tokens", "outputTokens": "gen_ai.usage.output_tokens",
         "cacheReadTokens": "gen_ai.usage.cache_read.input_tokens",
         "cacheWriteTokens": "gen_ai.usage.cache_creation.input_tokens",
         "reasoningTokens": "gen_ai.usage.reasoning.output_tokens"}
