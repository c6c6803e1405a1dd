"""Bundled example configurations (package data)."""
