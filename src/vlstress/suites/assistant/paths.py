"""Where the assistant suite keeps its questions and records (path templates)."""

from __future__ import annotations

OPTIONS = "data/assistant/{asked}.json"  # one test set's questions: options and the answer
ANSWERS = "results/metrics/{model}/assistant-{asked}.json"  # an assistant's answers (record)
CHOICES = "results/metrics/{model}/options-{asked}.json"  # a classifier's choice among the options
