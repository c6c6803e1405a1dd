"""Bots the tournament runner ships for tests and examples."""
