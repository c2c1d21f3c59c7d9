"""The ``medical_coding`` arena: seeded clinical notes to be coded in ICD-10-CM and CPT.

``catalog`` loads and validates the authored conditions/procedures, ``notes`` turns a seed into
three cases (easy, medium, hard) with their expected codes, and ``reward`` scores a submission
deterministically with hierarchical partial credit.
"""
