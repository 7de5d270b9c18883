"""Reusable graph nodes: each is a small function of state and runtime."""
