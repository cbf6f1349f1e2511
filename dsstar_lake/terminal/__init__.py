"""The command line's front door below cli.py: shared options and errors (common.py), help, the consoles, and what each command prints on a terminal (results.py, runs.py, report.py).
"""
