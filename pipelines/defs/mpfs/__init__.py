"""Dagster assets for the mpfs source."""
