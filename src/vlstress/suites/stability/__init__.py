"""Stability under small changes: ImageNet-P style perturbation sequences, flip probability and
top-5 distance (docs/stability.md)."""
