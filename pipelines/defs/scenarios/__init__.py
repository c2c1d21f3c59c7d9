"""Scenario split bundles compiled from the reference bundle (one partition per task)."""
