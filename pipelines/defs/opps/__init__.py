"""Dagster assets for the opps source (OPPS Addendum B)."""
