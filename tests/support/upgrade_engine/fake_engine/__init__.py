"""A stand-in serving engine calling FlashInfer the ways vLLM and SGLang do (read by
tests/static/test_upgrade_tools.py with ``fi_compat scan`` / ``migrate``; never run)."""
