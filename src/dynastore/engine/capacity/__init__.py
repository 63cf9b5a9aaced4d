"""Capacity as DynamoDB meters and limits it (docs/capacity.md).

* units.py: capacity units of reads and writes (integer half-units).
* partitions.py: the hash-range partition map, its splits and measurements.
* buckets.py: token buckets per partition and table (burst, adaptive capacity, account limits).
* state.py: the capacity model of one dynastore (``ctx.capacity``): per table and GSI their partitions and buckets.
* admission.py: what every data-plane operation calls before and after it reads or writes.
* contributors.py: Contributor Insights' counters of the most used keys; insights.py: turning them on and off.
* history.py: the last hour of every partition's use and throttles, in 5-second buckets (memory only).
* view.py: the partition and contributor views the admin endpoints and the partitions CLI show.
* decreases.py: the daily limit on provisioned-throughput decreases (UpdateTable).
"""
