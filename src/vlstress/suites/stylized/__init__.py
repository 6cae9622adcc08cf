"""Stylized test sets: AdaIN style transfer of a test set, as Stylized-ImageNet is made
(docs/stylized.md)."""
