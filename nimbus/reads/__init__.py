"""What nimbus answers reads with (summaries, UI page infos, history, component and task
figures), built from its model and ZooKeeper's records; the last answer kept while ZooKeeper
is away."""
