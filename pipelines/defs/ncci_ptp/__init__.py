"""Dagster assets for the ncci_ptp source."""
