"""Storm's blobstore and topology code on nimbus: uploads in progress, the SQL-backed store,
blob ACLs and per-user quotas."""
