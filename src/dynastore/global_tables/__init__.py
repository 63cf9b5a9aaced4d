"""Global tables (docs/design.md "Global tables", docs/global-tables.md): replicas of a table in other regions,
kept in sync from the change log, last writer wins (DynamoDB's multi-region eventual consistency).

* ``hybrid_clock``: the timestamps that order the writes of every region (wall time plus a counter).
* ``versions``: each item's version (stamp, region, deleted) under the ``V`` key tag, and the conflict rule.
* ``changes``: a replicated change and its wire form between servers.
* ``links``: how a change reaches a region (``LocalLink``: a region of this same server).
* ``apply``: applying replicated changes to a replica, last writer wins.
* ``replicator``: the change log consumer that stamps versions and ships each region's changes to the others.
* ``replicas``: the replica set of a table on the catalog (add, update, remove a replica).
"""
