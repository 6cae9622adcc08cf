"""Image stress-tests: mixed images (mix / patch) and their text-to-image metrics.

- `variants`: seeded partner permutation, CutMix boxes, the MIXERS registry, and the
  two modes (faithful: official-release files; clean: mixing after the model's preprocessing).
- `metrics`: text-to-image Recall@K against a gallery of original + mixed images.
"""
