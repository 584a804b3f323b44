"""fi_compat's own version (SemVer, independent of FlashInfer's)."""

__version__ = "0.2.0"
