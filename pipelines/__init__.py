"""Clarus reference-data pipeline (Dagster code location)."""
