"""Dagster definitions, one folder per CMS source (assets + their checks)."""
