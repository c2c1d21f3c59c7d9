"""Dagster assets for the asc source (ASC Addendum AA)."""
