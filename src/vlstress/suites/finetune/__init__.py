"""Robust fine-tuning with the semantic and visual contrastive losses RoCOCO proposes
(docs/finetune.md)."""
