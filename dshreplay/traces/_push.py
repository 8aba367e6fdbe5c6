"""`otel --endpoint URL`: the same spans pushed over OTLP/HTTP (protobuf) with the maintained
exporter of the OpenTelemetry SDK (`opentelemetry-sdk`, `opentelemetry-exporter-otlp-proto-http`:
the `otel` extra, imported only here). The exporter retries what a collector asks to retry
(429, 502, 503, 504) with backoff until `timeout`; a refusal is an OutputError naming the
endpoint and why, in one line.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

from dshreplay.errors import OutputError, UsageError
from dshreplay.traces._conventions import SCOPE
from dshreplay.traces._otlp import OtelTrace

__all__ = ["Pusher"]

BATCH = 512  # spans per request (the SDK's batch processor sends at most 512 by default too)
EXPORTER_LOGGERS = ("opentelemetry",)  # (the exporter and the HTTP transport it sends with log under it)


class _Catch(logging.Handler):
    """Keeps the last warning or error the exporter logs (why a push failed), printing none."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text = f"{text}: {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.said.append(" ".join(text.split())[:300])

    @property
    def why(self) -> str:
        """The first thing the exporter said (the cause), and its last (how it gave up)."""
        said = self.said
        if not said:
            return "the exporter gave up"
        return said[0] if len(said) == 1 else f"{said[0]} ({said[-1]})"


class Pusher:
    """One exporter for a run: `push(traces)` sends each session's spans in one request."""

    def __init__(self, endpoint: str, headers: dict[str, str], timeout: float = 30.0) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as missing:
            raise UsageError("--endpoint needs the otel extra: pip install 'dshreplay[otel]' "
                             f"({missing.name or 'opentelemetry'} is not installed)") from None
        self.endpoint = endpoint
        self.exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers, timeout=timeout)
        self.catch = _Catch()
        for name in EXPORTER_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self.catch)
            logger.propagate = False

    def push(self, traces: Sequence[OtelTrace]) -> int:
        """Send the spans of `traces`; returns how many were sent (OutputError when refused)."""
        from opentelemetry.sdk.trace.export import SpanExportResult
        spans = [span for trace in traces for span in _readable(trace)]
        if not spans:
            return 0
        for start in range(0, len(spans), BATCH):  # (a collector bounds one request's size)
            self.catch.said = []
            result = self.exporter.export(spans[start:start + BATCH])
            if result is not SpanExportResult.SUCCESS:
                raise OutputError(f"{self.endpoint}: the OTLP endpoint refused the spans: {self.catch.why}")
        return len(spans)

    def close(self) -> None:
        self.exporter.shutdown()  # type: ignore[no-untyped-call]


def _readable(trace: OtelTrace) -> list[Any]:
    """The SDK's ReadableSpans of one trace (what its exporters take)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    from dshreplay import __version__
    resource = Resource(trace.resource)
    scope = InstrumentationScope(SCOPE, __version__)
    kinds = {1: SpanKind.INTERNAL, 3: SpanKind.CLIENT}

    def context(trace_id: bytes, span_id: bytes) -> SpanContext:
        return SpanContext(int.from_bytes(trace_id, "big"), int.from_bytes(span_id, "big"), is_remote=False,
                           trace_flags=TraceFlags(TraceFlags.SAMPLED))

    out = []
    for s in trace.spans:
        parent = None if s.parent_id is None else context(s.trace_id, s.parent_id)
        status = Status(StatusCode.ERROR, s.error) if s.error is not None else Status(StatusCode.UNSET)
        out.append(ReadableSpan(
            name=s.name, context=context(s.trace_id, s.span_id), parent=parent, resource=resource,
            attributes=s.attributes, events=[Event(n, a, t) for n, t, a in s.events],
            links=[Link(context(t, i), a) for t, i, a in s.links], kind=kinds[s.kind], status=status,
            start_time=s.start_ns, end_time=s.end_ns, instrumentation_scope=scope))
    return out
