"""The `squall` command's subcommands, one module per command group."""
