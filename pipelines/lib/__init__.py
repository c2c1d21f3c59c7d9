"""Pure functions for CMS release files: parsing, normalizing, fee math, bundle writing.

Nothing in here imports Dagster, so every function can be unit-tested on bytes in memory.
"""
