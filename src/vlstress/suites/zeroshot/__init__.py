"""Zero-shot classification: prompt templates, the classifier built from a model's text tower,
metrics."""
