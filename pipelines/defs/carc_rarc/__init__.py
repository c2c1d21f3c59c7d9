"""Dagster assets for the carc_rarc source."""
