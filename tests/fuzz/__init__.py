"""A structure-aware fuzzer of the data plane: requests shaped like DynamoDB's, mutated at and just past its limits.

``python -m tests.fuzz --help`` runs it from the command line (docs/operations.md, "Fuzzing"); tests/e2e/test_fuzz.py
runs a short seeded run in the normal suite.
"""
