"""Dagster assets for the pfs source."""
