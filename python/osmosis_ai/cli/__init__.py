"""The `osmosis` command line (click). Subcommands are imported only when they run."""
