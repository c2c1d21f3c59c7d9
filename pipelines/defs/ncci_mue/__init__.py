"""Dagster assets for the ncci_mue source."""
