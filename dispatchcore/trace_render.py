"""Renderers for a recorded trace (placeholder-free minimal text renderer; others follow)."""
