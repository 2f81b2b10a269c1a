"""Development tools of sonnx (not shipped in the wheel)."""
