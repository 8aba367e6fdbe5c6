"""Moved to `dshreplay.redaction.secretrules` (this path re-exports it for one release)."""

from dshreplay.redaction.secretrules import (
    COVERED,
    KEEP,
    LEFT_OUT,
    OURS,
    PLUGIN_GROUPS,
    PLUGINS,
    SECRET_MEMBER_IN_JSON,
    SECRET_MEMBERS,
    DefaultRule,
    default_rules,
    plain_member,
    plain_member_value,
    redaction_doc,
)

__all__ = ["COVERED", "KEEP", "LEFT_OUT", "OURS", "PLUGIN_GROUPS", "PLUGINS", "SECRET_MEMBER_IN_JSON",
           "SECRET_MEMBERS", "DefaultRule", "default_rules", "plain_member", "plain_member_value", "redaction_doc"]
