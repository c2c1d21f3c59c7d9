"""deductive_liability: find the patient's correct balance through EOB, ledger and plan."""
