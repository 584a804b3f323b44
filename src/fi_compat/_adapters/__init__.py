"""Adapter tables and hooks, one module per FlashInfer module."""
