"""osint-eval: trained-vs-base evaluation on OSINT-v0 with confidence intervals and reports."""

from osint_eval.__about__ import __version__

__all__ = ["__version__"]
