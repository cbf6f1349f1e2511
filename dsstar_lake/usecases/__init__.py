"""The use cases below the facade: ask and resume, load an entry, doctor, watch a lake, and the index's warm-up.

Each gets what it needs from a RunSetup (or the Catalog), never from Lake.
"""
