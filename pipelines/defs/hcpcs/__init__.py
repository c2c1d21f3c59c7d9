"""Dagster assets for the hcpcs source."""
