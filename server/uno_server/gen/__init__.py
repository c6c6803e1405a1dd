"""Generated protocol code."""
