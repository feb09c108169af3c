"""Regime-conditional retrieval companion."""
