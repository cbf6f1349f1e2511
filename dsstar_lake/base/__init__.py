"""What every room of dsstar_lake stands on: the error kinds, the settings, the model names and flags, untrusted text made inert.

It imports nothing else of dsstar_lake.
"""
