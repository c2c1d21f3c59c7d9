"""Dagster assets for the plan_templates source."""
