"""Which partitions a scan may skip: the one pruning rule (``hits``) and pruning by join ranges."""
