"""dshreplay: read DeepSeek Harness session logs offline and exactly."""

__version__ = "0.1.0"
