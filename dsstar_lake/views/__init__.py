"""How results look on every surface: search hit lines, notebook tables and reprs, the status view, and the --json contract.
"""
