"""Bodies of command-line commands, Qt-free, so the entry module only parses and dispatches."""
