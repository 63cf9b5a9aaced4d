"""Three replicas over etcd (docs/cluster.md): etcd's Raft is the replicated log, every dynastore node an LMDB
replica applying it; one node holds the write lease and executes writes, every node routes requests."""
