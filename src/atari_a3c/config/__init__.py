"""Everything about the config: its schema, the checks of its values, the job's effective config,
the command line's hints and help, and whether a resume may go on."""
