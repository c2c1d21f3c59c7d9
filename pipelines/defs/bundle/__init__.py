"""Dagster assets for the bundle source."""
