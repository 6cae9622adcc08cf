"""Suite accuracy_vs_recall: does zero-shot classification accuracy predict retrieval R@1? Across
the models of a run, one line and two correlations per retrieval condition (docs/zeroshot.md)."""
