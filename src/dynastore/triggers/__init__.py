"""Triggers: a table's stream drives handlers (a command, an HTTP endpoint, a Python callable) with Lambda's
event source mapping semantics (docs/triggers.md)."""
