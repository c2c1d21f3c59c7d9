"""Runnable training examples; a package so the tests import exactly the code users run."""
