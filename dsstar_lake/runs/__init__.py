"""A run: what a use case is handed (setup.py: RunSetup), its record on disk (record.py), and its view of a lake in object storage (lakeview.py).

Records store plain data: the agent turns them into its objects.
"""
