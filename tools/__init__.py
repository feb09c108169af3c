"""The project's own tools: run from a checkout, never part of the built package."""
