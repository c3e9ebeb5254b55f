"""Task placement as Storm's IScheduler: every topology scheduled from one frozen cluster
snapshot (cluster_scheduler.py), by the even scheduler or the resource-aware strategies.
Pure functions over plain data; nimbus's core calls them, nothing here calls out."""
