"""Subcommands of the empath-gate CLI; one module per command (see empath_gate.cli)."""
