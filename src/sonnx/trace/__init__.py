"""Traceability: requirement links, their status, and reports."""
