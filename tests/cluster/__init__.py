"""Fault injection against a three-node cluster in network namespaces (docs/fault-injection.md)."""
