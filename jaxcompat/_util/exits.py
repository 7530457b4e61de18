"""The exit codes every subcommand shares (defined once)."""

EXIT_OK, EXIT_FAILING, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 1, 2, 130
