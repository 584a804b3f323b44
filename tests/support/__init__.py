"""Shared test support: spies bound to FlashInfer's real signatures, call cases per family."""
