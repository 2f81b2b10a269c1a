"""The profile's operators, one module each."""
