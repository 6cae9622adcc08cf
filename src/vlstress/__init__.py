"""vlstress: reproducible stress tests of vision-language models (RoCOCO and beyond)."""

__version__ = "0.1.0"
