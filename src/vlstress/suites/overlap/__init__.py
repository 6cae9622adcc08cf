"""Data overlap: near-duplicates of test images in a training collection, found by embedding with
faiss, and accuracy on the overlapping vs the clean subset (docs/overlap.md)."""
