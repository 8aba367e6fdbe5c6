"""Traces: a session's spans (`analyses.spans`) rendered for the tools that draw or collect
traces: Chrome Trace Event JSON for Perfetto and chrome://tracing (`chrome`), and
OpenTelemetry traces under the GenAI semantic conventions, to a file as OTLP/JSON (`otlp`)
or pushed to a collector over OTLP/HTTP (`push`, the `otel` extra). A surface here renders
the spans; it derives no fact of its own.
"""
