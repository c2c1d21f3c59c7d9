"""Dagster assets for the icd10cm source."""
